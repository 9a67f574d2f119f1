"""`make demo`: a real benchmark on real data, through the hrbench daemon.

Two document question-answering benchmarks on public data with real model answers (see each
folder's SOURCE.md under the data folder):

1. SQuAD 2.0 dev, 1,000 questions (489 unanswerable): two pipelines around Llama-3.2-3B-Instruct
   (the team's first gated pipeline and its final submission), scored with ``answer_contains``
   (seed 001: containment after folding, numbers matched whole, abstentions such as
   ``NO ANSWER`` right only on unanswerable items).
2. TAT-QA dev, 1,668 questions over financial tables and text: GPT-3 (text-davinci-002) and Codex
   (code-davinci-002), direct answers, chain of thought and program of thought, scored with the
   same number-aware scorer. The runs answered 1,667 of them (SOURCE.md names the missing one);
   the missing answer counts as a parse failure for every arm rather than vanishing.

Everything goes through a daemon started for the demo in its own state folder (``out/demo-home``,
or ``$HRBENCH_DEMO_HOME``): the references are stored, rows stream back as they are scored and are
kept in SQLite, and the reports are computed by the daemon from the stored rows. The predictions
are one greedy draw per item, so each arm runs once and the reports are labelled descriptive
(seed 002: interval reports need 5 runs or more).

Environment: ``HRBENCH_DATA`` (default ``../shared/data`` beside the repository).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from hrbench_client import connect, start_daemon, stop_daemon

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("HRBENCH_DATA") or REPO.parent / "shared" / "data").resolve()
OUT = REPO / "out"
HOME = Path(os.environ.get("HRBENCH_DEMO_HOME") or OUT / "demo-home").resolve()

SQUAD = DATA / "squad2-dev-llama32-3b"
TATQA = DATA / "tatqa-dev-llm"

BENCHMARKS = [
    {
        "title": "SQuAD 2.0 dev (1,000 questions): Llama-3.2-3B pipelines",
        "reference": {"name": "squad2-dev-llama32-3b", "path": SQUAD / "questions.jsonl", "format": "squad"},
        "arms": [
            {"kind": "outputs", "name": name, "path": SQUAD / "runs" / f"{name}.jsonl", "id_field": "qid"}
            for name in ("pipeline_v1_1000", "pipeline_v2_final_1000")
        ],
    },
    {
        "title": "TAT-QA dev (1,668 questions, 1,667 answered): GPT-3 and Codex, direct / CoT / program of thought",
        "reference": {"name": "tatqa-dev", "path": TATQA / "tatqa_dataset_dev.json", "format": "tatqa"},
        "arms": [
            {"kind": "outputs", "name": name, "path": TATQA / "runs" / f"{name}.jsonl", "format": "tatqa"}
            for name in (
                "gpt3_text-davinci-002_direct",
                "gpt3_text-davinci-002_cot",
                "codex_code-davinci-002_direct",
                "codex_code-davinci-002_cot",
                "codex_code-davinci-002_pot",
            )
        ],
    },
]


def progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        sys.stderr.write(f"\r  {done:,} / {total:,} rows")
        sys.stderr.flush()


def need(path: Path) -> str:
    if not path.exists():
        sys.exit(f"demo: {path} not found; set HRBENCH_DATA to the data folder (see README.md)")
    return str(path)


def main() -> int:
    need(DATA)
    OUT.mkdir(exist_ok=True)
    print(f"data:   {DATA}")
    print(f"daemon: state in {HOME}")
    t0 = time.perf_counter()
    pid = start_daemon(HOME)
    print(f"daemon: pid {pid}, up in {time.perf_counter() - t0:.1f} s\n")
    try:
        with connect(HOME, autostart=False) as hb:
            for spec in BENCHMARKS:
                run_one(hb, spec)
            stats = hb.cache_stats()
            print(f"store: {HOME / 'hrbench.sqlite3'} ({len(hb.references.list())} references kept)")
            print(f"cache: {stats.get('entries', 0)} entries (outputs arms make no model calls)")
    finally:
        stop_daemon(HOME)
        print("daemon: stopped")
    return 0


def run_one(hb: object, spec: dict) -> None:
    ref = spec["reference"]
    print("=" * 100)
    print(spec["title"])
    print("=" * 100)
    info = hb.references.put({"path": need(ref["path"]), "format": ref["format"]}, name=ref["name"])
    print(f"reference {ref['name']}: {info.n_items} items, hash {info.hash[:12]}")
    arms = [{**a, "path": need(a["path"])} for a in spec["arms"]]
    params = {
        "name": ref["name"],
        "reference": ref["name"],
        "arms": arms,
        "scorer": "answer_contains",
        "runs": 1,
        "governor": {},
        "concurrency": 64,
    }
    t = time.perf_counter()
    stream = hb.benchmark(params, on_progress=progress)
    kinds: dict[str, dict[str, int]] = {}
    rows_path = OUT / f"{ref['name']}.rows.jsonl"
    with rows_path.open("w", encoding="utf-8") as f:
        for row in stream:
            f.write(json.dumps({k: getattr(row, k) for k in row.__struct_fields__}) + "\n")
            kinds.setdefault(row.arm, {})
            kind = row.failure_kind or "right"
            kinds[row.arm][kind] = kinds[row.arm].get(kind, 0) + 1
    seconds = time.perf_counter() - t
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    result = stream.result
    print(
        f"benchmark {result.id}: {result.n_rows:,} rows streamed in {seconds:.2f} s "
        f"({result.n_rows / seconds:,.0f} rows/s through the daemon), kept in {rows_path.relative_to(REPO)}"
    )
    for w in result.warnings:
        print(f"  warning: {w}")
    print()
    print(result.text)
    print()
    print("outcomes per arm:")
    for arm, counts in kinds.items():
        print(f"  {arm:32s} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print()
    report = hb.report(result.id, descriptive=True)
    print(report["text"])
    print()


if __name__ == "__main__":
    sys.exit(main())
