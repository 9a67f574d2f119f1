"""`make demo`: real benchmarks on real data, through the hrbench daemon and `hrb bench`.

Three document question-answering benchmarks on public data with real model answers (each data
folder's SOURCE.md gives origin and licence; examples/README.md says how TAT-QA scales are read):

1. ``squad2-shared-50.toml``: SQuAD 2.0 dev, four Llama-3.2-3B-Instruct pipelines on the 50
   questions they all answered, clustered by passage.
2. ``squad2-1000.toml``: the two pipelines that answered all 1,000 questions (489 unanswerable).
3. ``tatqa.toml``: TAT-QA dev, 1,668 questions over financial tables and text, GPT-3 and Codex
   (direct, chain of thought, program of thought), clustered by table. The runs answered 1,667;
   the missing answer is an error run of every arm (cause: ``no output for item ...``), counted
   wrong rather than vanishing.

Each is scored by the official metric of its data set, which decides every row and so the
accuracy, the intervals and the paired differences: the SQuAD v2.0 exact match (``scorer =
"squad"``) and the official TAT-QA exact match (``scorer = "tatqa"``: scale, rounding to 2
decimals, percent, multi-span bags). Beside the accuracy each summary shows the official F1
(``squad_f1``, ``tatqa_f1``) and ``answer_contains`` (seed 001), which has no rounding tolerance
and accepts verbose replies: it ranks some arms the other way round (examples/README.md), which is
why it is a side column and not the headline.
A daemon is started for the demo in its own
state folder (``out/demo-home``, or ``$HRBENCH_DEMO_HOME``); ``hrb bench`` streams every scored
row back as a JSON line; ``hrb report`` computes the report from the rows the daemon stored.
The predictions are one greedy draw per question, so each arm runs once and the reports are
labelled descriptive: their intervals cover the sampling of questions only (seed 002: intervals
that also cover run-to-run spread need 5 runs or more). The rows stay queryable afterwards with
``hrb rows ID`` (the command is printed); each report's plot is written to ``out/<spec>.png``.

Environment: ``HRBENCH_DATA`` (default ``../shared/data`` beside the repository).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("HRBENCH_DATA") or REPO.parent / "shared" / "data").resolve()
OUT = REPO / "out"
HOME = Path(os.environ.get("HRBENCH_DEMO_HOME") or OUT / "demo-home").resolve()
HRB = str(Path(sys.executable).with_name("hrb"))
SPECS = ["squad2-shared-50.toml", "squad2-1000.toml", "tatqa.toml"]
ENV = {**os.environ, "HRBENCH_HOME": str(HOME), "HRBENCH_DATA": str(DATA)}


def hrb(*args: str) -> subprocess.CompletedProcess[str]:
    """Run one `hrb` command; stop the demo with its message when it fails."""
    done = subprocess.run([HRB, *args], env=ENV, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"demo: `hrb {' '.join(args)}` failed (exit {done.returncode}): {done.stderr.strip()}")
    return done


def bench(spec: Path) -> str:
    """Run one spec through `hrb bench`, reading rows as they stream; returns the benchmark id."""
    t = time.perf_counter()
    proc = subprocess.Popen([HRB, "bench", str(spec)], env=ENV, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    result: dict = {}
    n = 0
    for line in proc.stdout:
        obj = json.loads(line)
        if "ledger_id" in obj:  # a row
            n += 1
            kinds[obj["arm"]][obj["failure_kind"] or "right"] += 1
        else:  # the last line: the result
            result = obj
    # the official TAT-QA runs leave out 1 of the 1,668 questions: with `missing = "error"` that
    # question is an error run of each arm, so `hrb bench` exits 3 (runs ended in errors)
    expected = {0, 3} if spec.name == "tatqa.toml" else {0}
    if proc.wait() not in expected or not result:
        sys.exit(f"demo: `hrb bench {spec}` failed (exit {proc.returncode})")
    seconds = time.perf_counter() - t
    print(f"benchmark {result['id']}: {n:,} rows streamed by `hrb bench` in {seconds:.2f} s")
    # (its warnings: `hrb bench` printed them on stderr above, each once)
    if proc.returncode == 3:
        print(
            "  expected: the official TAT-QA runs leave out 1 of the 1,668 questions, so that question"
            " is an error run of each arm (counted wrong; the notes say which)"
        )
    print()
    print(printout(result))
    print("\nfailure kinds per arm:")
    width = max(len(a) for a in kinds)
    for arm, counts in kinds.items():
        print(f"  {arm:<{width}}  " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return str(result["id"])


def printout(result: dict) -> str:
    """The benchmark's printout, less its stop note: the report printed after it says that under its header.

    Example:
        >>> printout({"text": "<hr_bench> 1 arm(s)" + chr(10) + "  Runs failed: 5 of 10 runs.", "stop_note": "5"})
        '<hr_bench> 1 arm(s)'
    """
    text = str(result["text"])
    if not result.get("stop_note"):
        return text
    said = ("Runs failed:", "Budget stopped:")  # the report below says it once, right under its header
    return "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith(said))


def main() -> int:
    if not DATA.is_dir():
        sys.exit(
            f"demo: data folder {DATA} not found: give `make demo DATA=/path/to/data`, or set "
            "HRBENCH_DATA when running examples/demo.py itself (see examples/README.md)"
        )
    OUT.mkdir(exist_ok=True)
    print(f"data:   {DATA}\nstate:  {HOME}")
    t0 = time.perf_counter()
    status = json.loads(hrb("daemon", "start").stdout.strip().splitlines()[-1])
    print(f"daemon: {status}, up in {time.perf_counter() - t0:.1f} s\n")
    ids = []
    try:
        for name in SPECS:
            spec = REPO / "examples" / name
            print("=" * 100)
            print(f"{name}: {spec.read_text(encoding='utf-8').splitlines()[0].lstrip('# ')}")
            print("=" * 100)
            bench_id = bench(spec)
            ids.append(bench_id)
            print()
            plot = OUT / f"{spec.stem}.png"
            print(hrb("report", bench_id, "--descriptive", "--text", "--plot", str(plot)).stdout.rstrip())
            print()
        print("The rows stay in the daemon's store; query them with, for example:")
        for bench_id in ids:
            print(f"  HRBENCH_HOME={HOME} {HRB} rows {bench_id} --limit 3")
    finally:
        hrb("daemon", "stop")
        print("daemon: stopped")
    print(f"demo: done in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
