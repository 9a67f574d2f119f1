"""Judge-vs-label agreement on the shipped SQuAD answers, with a loopback judge.

Input: the bundled real answers (Llama-3.2-3B on SQuAD 2.0 dev, ``runs/*.jsonl``; one arm per
file) and their labels, from the data folder (``$HRBENCH_DATA``, default ``<repo>/../shared/data``).
The judge is the loopback OpenAI-compatible server answering CORRECT or INCORRECT as
``answer_contains`` would, except for a share of garbage replies (``--garbage``, default 5%,
chosen by a hash of the prompt). It prints:

- the agreement of the judge's verdicts with ``answer_contains`` and with ``exact`` on the
  runs the judge graded (a perfect judge of this kind agrees 100% with answer_contains), and
  how many judgements were errors (the garbage: never a silent wrong);
- the judge's requests, paid USD and list-price USD, then the same for a rerun served from the
  cache (no request: paid 0, list price unchanged);
- judged scores/s, cold (every judgement a request) and from the cache, as a ratio.

Usage: .venv/bin/python bench/judge.py [--garbage 0.05]
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from _common import data_dir, header

import hrbench as hb
from hrbench.reading import answer_scorer, qa_reference
from hrbench.testing import LoopbackServer

PRICING = hb.Pricing(overrides={"judge-1": {"input": 0.15, "output": 0.6}})  # USD per million tokens


def load(data: Path) -> tuple[hb.Reference, dict[str, dict[str, str]]]:
    base = data / "squad2-dev-llama32-3b"
    ref = qa_reference(base / "questions.jsonl")
    arms = {}
    for f in sorted((base / "runs").glob("*.jsonl")):
        rows = [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
        arms[f.stem] = {r["qid"]: r["prediction"] for r in rows}
    return ref, arms


def judge_fn(garbage: float) -> Any:
    grade = answer_scorer()
    ref_re = re.compile(r"Reference answer: (.*)\n")
    out_re = re.compile(r"Answer to grade: (.*)\nIs the answer", re.S)

    def reply(prompt: str, seed: Any, call: int) -> str:
        h = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:4], "big") / 2**32
        if h < garbage:
            return "Looks right to me, I would say it is CORRECT."
        ref_m, out_m = ref_re.search(prompt), out_re.search(prompt)
        assert ref_m and out_m
        s = grade(None, out_m.group(1), ref_m.group(1).split(" | "))
        return "CORRECT" if s.correct else "INCORRECT"

    return reply


def main() -> int:
    garbage = float(sys.argv[sys.argv.index("--garbage") + 1]) if "--garbage" in sys.argv else 0.05
    data = data_dir()
    if not (data / "squad2-dev-llama32-3b").is_dir():
        print(f"no real data under {data} (set HRBENCH_DATA)", file=sys.stderr)
        return 2
    header(
        "judge: judge_scorer() on the shipped SQuAD 2.0 answers (one arm per run file), one run each",
        {
            "judge": "hb.benchmark() with judge_scorer(OpenAIClient) against a loopback judge answering as "
            f"answer_contains would, {garbage:.0%} garbage replies; cold (every judgement a request) and "
            "rerun from the Cache in a SQLite store",
            "labels": "the same benchmark scored by answer_contains and by exact: the agreement's baselines",
        },
        "each run timed once; the rerun's ratio is cold / from the cache",
    )
    ref_all, outputs = load(data)
    ref = ref_all
    arms = [hb.Arm(name, lambda item, ctx, t=table: t.get(ctx.item_id)) for name, table in outputs.items()]
    warnings.simplefilter("ignore")
    with LoopbackServer(reply_fn=judge_fn(garbage)) as srv, tempfile.TemporaryDirectory() as tmp:
        store = hb.Store(Path(tmp) / "state.db")
        client = hb.OpenAIClient("judge-1", base_url=srv.base_url, api_key_env=None)
        judge = hb.judge_scorer(client, max_tokens=5)
        kw: dict[str, Any] = dict(
            runs=1,
            pricing=PRICING,
            split=list(hb.reference.SPLITS),
            governor=hb.Governor(max_calls=100_000, max_usd=1.0),
        )
        start = time.perf_counter()
        graded = hb.benchmark(arms, ref, scorer=judge, cache=hb.Cache(store), store=store, **kw)
        cold = time.perf_counter() - start
        n_requests = len(srv.requests)
        start = time.perf_counter()
        again = hb.benchmark(arms, ref, scorer=judge, cache=hb.Cache(store), store=store, **kw)
        warm = time.perf_counter() - start
        contains = hb.benchmark(arms, ref, scorer=hb.answer_scorer(), **kw)
        exact = hb.benchmark(arms, ref, scorer=hb.exact_scorer(), **kw)
        reruns = len(srv.requests) - n_requests
    asked = [  # the runs the judge was asked about: a labelled answer
        i for i, r in enumerate(graded.rows) if any(st.kind == "request" for st in graded.traces[r.ledger_id])
    ]
    errors = [i for i in asked if graded.rows[i].failure_kind == "error"]
    judged = [i for i in asked if graded.rows[i].failure_kind != "error"]
    labelled = asked

    def agree(other: hb.Bench) -> float:
        return sum(graded.rows[i].correct == other.rows[i].correct for i in judged) / max(1, len(judged))

    print(
        f"{len(graded.rows)} runs ({len(arms)} arms x {len(ref.ids)} items), {len(asked)} labelled answers "
        f"judged; garbage share {garbage:.0%}"
    )
    print(f"  judge errors (unparsable replies): {len(errors)} ({len(errors) / max(1, len(labelled)):.1%})")
    print(
        f"  agreement on {len(judged)} judged: answer_contains {agree(contains):.3f}, exact {agree(exact):.3f}"
    )
    for name, b in (("first run", graded), ("rerun", again)):
        s = b.summary()
        paid = sum(x["usd"] or 0.0 for x in s)
        listed = sum(x["usd_list"] or 0.0 for x in s)
        print(f"  {name:<9}: paid ${paid:.6f}, list price ${listed:.6f}")
    print(f"  judge requests: first run {n_requests}, rerun {reruns}")
    print(
        f"  judged scores/s: cold {len(labelled) / cold:,.0f}, from the cache {len(labelled) / warm:,.0f} "
        f"(ratio {cold / warm:.1f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
