"""evaluate() harness overhead: rows per second against baselines measured in the same run.

1. An instant ``module_fn`` and ``exact_match`` over N rows (default 20,000):
   - evaluate();
   - a plain Python loop doing the same work (call the function, SQuAD exact match, mean);
   - benchmark() on the same work (a sync arm calling the same function, one run per item,
     ``exact_scorer``).
2. A model module with an instantly answering mock client (one model call per row through the
   governor/cache/trace machinery) against benchmark() with an arm that makes the same call.

Every side: one untimed warm-up run, then the least wall time of ``--repeat`` timed runs
(``bench/_timing.py``).

Usage: ``.venv/bin/python bench/evaluate.py [--rows 20000] [--model-rows 5000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections.abc import Callable
from typing import Any

from _common import header
from _timing import statistic, timed

import hrbench.metrics as metrics
from hrbench.evaluation.evaluate import evaluate
from hrbench.evaluation.modules import module, module_fn
from hrbench.models import MockClient
from hrbench.runner import Governor


def rule_fn(text: str) -> str:
    return "positive" if "love" in text.lower() or "great" in text.lower() else "negative"


def make_rows(n: int) -> list[dict[str, Any]]:
    texts = ["I love it!", "Awful.", "Great value", "Not great"]
    labels = ["positive", "negative", "positive", "negative"]
    return [{"text": f"{texts[i % 4]} #{i}", "sentiment": labels[i % 4]} for i in range(n)]


def best_of(repeat: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    """The least wall seconds of ``repeat`` timed runs of ``fn`` after one untimed warm-up, and its last result."""
    out: list[Any] = []
    t = timed(fn, lambda result: out.append(result) or 1, repeat, 1)
    return t.wall_s, out[-1]


def plain_loop(rows: list[dict[str, Any]]) -> float:
    total = 0.0
    for row in rows:
        pred = rule_fn(text=row["text"])
        total += metrics.squad_exact(pred, row["sentiment"])
    return total / len(rows)


def bench_benchmark(rows: list[dict[str, Any]], arm_fn: Callable[..., Any], client: Any = None) -> Any:
    from hrbench import benchmark
    from hrbench.arm import Arm
    from hrbench.reference import Reference
    from hrbench.scoring import exact_scorer

    ref = Reference(
        items={f"r{i}": r["text"] for i, r in enumerate(rows)},
        labels=[r["sentiment"] for r in rows],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return benchmark(
            Arm("rule", arm_fn), ref, runs=1, client=client, scorer=exact_scorer(), governor=Governor(),
            concurrency=8,
        )  # fmt: skip


def line(label: str, n: int, seconds: float, note: str = "") -> None:
    print(f"  {label:<22} {n / seconds:>10,.0f} rows/s   {note}".rstrip())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--model-rows", type=int, default=5_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    header(
        "evaluate: evaluate() against a plain loop and against benchmark() on the same work",
        {
            "plain loop": "for each row: the module's function, SQuAD exact match, then the mean",
            "evaluate()": "hrbench.evaluation.evaluate(module_fn(...), rows, exact_match) (and return_format="
            "'simple'); with a model: a module on an instant MockClient, one call per row, no cache",
            "benchmark()": "hb.benchmark() of a sync arm calling the same function (with a model: the same "
            "call through ctx.call / ctx.acall), one run per item, exact_scorer, Governor(), concurrency 8",
        },
        statistic(args.repeat, 1),
    )

    rows = make_rows(args.rows)
    mod = module_fn("text -> sentiment", rule_fn)
    metric = metrics.exact_match(field="sentiment")

    t_loop, loop_mean = best_of(args.repeat, lambda: plain_loop(rows))
    t_eval, result = best_of(args.repeat, lambda: evaluate(mod, rows, metric))
    assert abs(result.mean_score - loop_mean) < 1e-12, (result.mean_score, loop_mean)
    t_bench, _ = best_of(args.repeat, lambda: bench_benchmark(rows, lambda item, ctx: rule_fn(item)))
    t_simple, _ = best_of(args.repeat, lambda: evaluate(mod, rows, metric, return_format="simple"))

    n = args.rows
    print(f"module_fn + exact_match, {n:,} rows (best of {args.repeat})")
    line("plain Python loop", n, t_loop)
    line("evaluate()", n, t_eval, f"evaluate is {t_eval / t_loop:.2f}x the loop's time")
    line("evaluate(simple)", n, t_simple, f"evaluate is {t_simple / t_loop:.2f}x the loop's time")
    line("benchmark()", n, t_bench, f"benchmark is {t_bench / t_eval:.2f}x evaluate's time")

    m = args.model_rows
    mrows = rows[:m]

    def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        return json.dumps({"sentiment": rule_fn(messages[-1]["content"])})

    client = MockClient(reply)
    lm = module("text -> sentiment: enum('positive', 'negative')", model=client)
    big = Governor()
    t_lm, lm_result = best_of(args.repeat, lambda: evaluate(lm, mrows, metric, governor=big, cache=False))
    assert lm_result.n_errors == 0

    def arm(item: str, ctx: Any) -> str:
        out = ctx.call(lm.messages({"text": item}))
        return json.loads(out.text)["sentiment"]

    async def arm_async(item: str, ctx: Any) -> str:
        out = await ctx.acall(lm.messages({"text": item}))
        return json.loads(out.text)["sentiment"]

    t_bench_lm, _ = best_of(args.repeat, lambda: bench_benchmark(mrows, arm, MockClient(reply)))
    t_bench_lm_async, _ = best_of(args.repeat, lambda: bench_benchmark(mrows, arm_async, MockClient(reply)))
    print(f"model module, instant mock client, {m:,} rows (one call per row, no cache)")
    line("evaluate()", m, t_lm)
    line("benchmark() sync arm", m, t_bench_lm, f"benchmark is {t_bench_lm / t_lm:.2f}x evaluate's time")
    line(
        "benchmark() async arm",
        m,
        t_bench_lm_async,
        f"benchmark is {t_bench_lm_async / t_lm:.2f}x evaluate's time",
    )


if __name__ == "__main__":
    main()
