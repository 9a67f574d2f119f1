"""The records a benchmark keeps are not tracked by the garbage collector (``gc=False``).

A record holds strings, numbers, other records and a request's messages, never itself: it can
form no cycle, so tracking it only makes every full collection walk each row and trace step a
benchmark keeps (``bench/ab.py``, ``bench/overhead.py`` measure the CPU it costs).
"""

from __future__ import annotations

import gc
import warnings

import msgspec

import hrbench as hb
from hrbench.records import Billed, Request, Result, Row, Score, Step, Usage

MESSAGES = [{"role": "user", "content": "Capital of France?"}]


def test_records_holding_containers_and_records_are_untracked() -> None:
    usage = Usage(tokens_in=3, tokens_out=1)
    made = [
        Request(messages=MESSAGES, params={"seed": 1}, wire={"responder": "x"}),
        Result(text="Paris", usage=usage, retried=["HTTP 500"], retried_billed=[Billed(usage=usage)]),
        Step(ledger_id="b/a/q/1", messages=MESSAGES, usage=usage),
        Billed(usage=usage),
        Score(correct=True, outcome="Paris"),
        Row(
            cluster="c",
            item="q",
            arm="a",
            run=1,
            split="test",
            correct=True,
            outcome="Paris",
            failure_kind=None,
        ),
        usage,
    ]
    assert [type(r).__name__ for r in made if gc.is_tracked(r)] == []
    # what they hold is unchanged: the messages list is theirs to hold, and encodes as before
    step = made[2]
    assert isinstance(step, Step) and step.messages is MESSAGES
    assert msgspec.json.decode(msgspec.json.encode(step), type=Step) == step


def test_a_benchmarks_kept_rows_and_trace_steps_are_untracked() -> None:
    ref = hb.Reference({f"q{i}": f"Capital of France? ({i})" for i in range(20)}, labels="Paris")

    async def ask(item: str, ctx: hb.Context) -> str:
        return (await ctx.acall(item)).text

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(
            hb.Arm("ask", ask),
            ref,
            runs=3,
            client=hb.MockClient(lambda m, p: "Paris"),
            governor=hb.Governor(),
        )
    steps = [s for trace in bench.traces.values() for s in trace]
    assert (
        len(bench.rows) == 60 and len(steps) == 120 and all(r.correct for r in bench.rows)
    )  # a request, an output note
    assert not any(gc.is_tracked(r) for r in bench.rows)
    assert not any(gc.is_tracked(s) for s in steps)
