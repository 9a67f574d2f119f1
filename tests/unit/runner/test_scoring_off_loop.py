"""Which scorer calls leave the event loop, in the runner (case S12a).

The rule (:func:`hrbench.runner.runtime.off_loop`): a scorer that declares ``offload = True`` (the
pattern scorer) and any reply or label longer than :data:`hrbench.runner.runtime.INLINE_CHARS` are
scored in a worker thread; a short reply with a scorer that does not declare itself heavy is
scored inline on the loop (a thread hop per row would cost more than the scorer). Same rows
either way.
"""

from __future__ import annotations

import threading
import time
import warnings
from typing import Any

import anyio
import pytest

import hrbench as hb
from hrbench.runner import benchmark_async
from hrbench.runner.runtime import INLINE_CHARS, off_loop, offloaded
from hrbench.specs import build_scorer


async def _echo(item: str, ctx: Any) -> str:  # an async arm: it runs on the loop's thread
    return item


def _run(items: dict[str, str], labels: list[Any], scorer: Any, **kw: Any) -> tuple[hb.Bench, set[int]]:
    """The benchmark's rows and the threads its scorer was called in."""
    seen: set[int] = set()
    inner = scorer

    def fn(item: Any, output: Any, label: Any) -> Any:
        seen.add(threading.get_ident())
        return inner(item, output, label)

    wrapped = hb.scorer(fn, getattr(scorer, "name", "s"))
    if offloaded(scorer):
        wrapped.offload = True  # type: ignore[attr-defined]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = anyio.run(
            lambda: benchmark_async(
                hb.Arm("a", _echo), hb.Reference(items, labels=labels), 2, None, wrapped, **kw
            )
        )
    return bench, seen


def test_S12a_short_replies_with_a_plain_scorer_are_scored_on_the_loop() -> None:
    bench, seen = _run({"q0": "Paris", "q1": "Lyon"}, ["Paris", "Paris"], hb.exact_scorer())
    assert seen == {threading.get_ident()}  # the loop's thread: no hop per row
    assert [r.correct for r in bench.rows] == [True, True, False, False]


def test_S12a_a_scorer_that_declares_offload_is_scored_in_a_worker_thread() -> None:
    heavy = hb.exact_scorer()
    heavy.offload = True  # type: ignore[attr-defined]
    bench, seen = _run({"q0": "Paris", "q1": "Lyon"}, ["Paris", "Paris"], heavy)
    assert seen and threading.get_ident() not in seen
    assert [r.correct for r in bench.rows] == [True, True, False, False]  # same rows as inline


@pytest.mark.parametrize("where", ["reply", "label"])
def test_S12a_a_long_reply_or_label_is_scored_in_a_worker_thread(where: str) -> None:
    long = "Paris " * (INLINE_CHARS // 6 + 1)
    item, label = (long, long.strip()) if where == "reply" else ("Paris", ["Lyon"] * INLINE_CHARS + ["Paris"])
    bench, seen = _run({"q0": item}, [label], hb.exact_scorer())
    assert seen and threading.get_ident() not in seen
    assert [r.correct for r in bench.rows] == [True, True]


def test_S12a_an_offloaded_scorer_that_raises_is_an_error_row_naming_its_cause() -> None:
    def broken(item: Any, output: Any, label: Any) -> Any:
        raise hb.ScorerError("the pattern 'x' took longer than its time limit of 1 s")

    s = hb.scorer(broken, "pattern")
    s.offload = True  # type: ignore[attr-defined]
    bench, seen = _run({"q0": "Paris"}, ["Paris"], s)
    assert threading.get_ident() not in seen
    assert [r.failure_kind for r in bench.rows] == ["error", "error"]
    causes = [[st.error for st in bench.traces[r.ledger_id] if st.kind == "error"] for r in bench.rows]
    assert (
        causes
        == [["scorer 'pattern': the pattern 'x' took longer than its time limit of 1 s (ScorerError)"]] * 2
    )


def test_S12a_the_loop_goes_on_while_an_offloaded_scorer_works() -> None:
    """A slow offloaded scorer (0.3 s a row) leaves the loop free: a ticker task keeps ticking."""

    def slow(item: Any, output: Any, label: Any) -> bool:
        time.sleep(0.3)  # a worker thread: the loop is not blocked
        return bool(output == label)

    s = hb.scorer(slow, "slow")
    s.offload = True  # type: ignore[attr-defined]
    ticks_during: list[int] = []

    async def main() -> None:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await anyio.sleep(0.01)
                ticks += 1

        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                before = ticks
                await benchmark_async(hb.Arm("a", _echo), hb.Reference({"q0": "x"}, labels=["x"]), 1, None, s)
                ticks_during.append(ticks - before)
            tg.cancel_scope.cancel()

    anyio.run(main)
    assert ticks_during[0] >= 5  # inline, the 0.3 s sleep would have held the loop: 0 ticks


def test_S12a_the_pattern_scorer_declares_itself_heavy() -> None:
    """The pattern scorer's search may backtrack up to its time limit: it is scored off the loop."""
    assert offloaded(build_scorer("pattern", {"pattern": r"ANSWER: (\d+)"}))
    assert not offloaded(build_scorer("exact")) and not offloaded(build_scorer("numeric"))
    assert off_loop(build_scorer("pattern", {"pattern": "x"}), "short", "x")
