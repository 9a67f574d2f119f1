"""Per-run objects that can be in no reference cycle stay out of the cyclic garbage collector.

A sync arm's trip keeps a group's attempts alive across collections, and every call on the
runtime's fast path makes a :class:`~hrbench.runner.runtime.Counted`: neither is referred back
to by what it refers to, so both are msgspec Structs with ``gc=False`` (never tracked, never
traversed). A benchmark made of them leaves none of its runs' contexts alive.
"""

from __future__ import annotations

import gc
import warnings

import hrbench as hb
from hrbench.arm import Context
from hrbench.runner import Governor
from hrbench.runner._invoke import Attempt
from hrbench.runner.runtime._drain import Counted


def test_an_attempt_and_a_counted_call_are_not_tracked() -> None:
    ctx = Context("a", "q1", 1, 1, 0, None, "b/a/q1/1")
    att = Attempt(ctx)
    att.output, att.seconds = ["a list"], 0.5  # what it refers to may be tracked itself
    assert not gc.is_tracked(att)
    assert gc.is_tracked(ctx)
    assert not gc.is_tracked(Counted(Governor(), None, "b/a/q1/1"))


def test_a_benchmark_of_them_leaves_no_cycle_behind() -> None:
    ref = hb.Reference({f"q{i}": f"question {i}" for i in range(40)}, labels="Paris")
    client = hb.MockClient(lambda messages, params: "Paris")
    arms = [
        hb.Arm("sync", lambda item, ctx: ctx.call(item).text),
        hb.Arm("async", _ask),
    ]
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(arms, ref, runs=3, client=client, governor=hb.Governor(), concurrency=4)
    assert [r.correct for r in bench.rows] == [True] * 240
    gc.collect()
    # an untracked attempt in a cycle would never be collected, nor the context it holds
    assert [o for o in gc.get_objects() if isinstance(o, Context)] == []


async def _ask(item: str, ctx: Context) -> str:
    return (await ctx.acall(item)).text
