"""Failures speak (ModelError, error rows, summaries, warnings at the caller)."""

from __future__ import annotations

import anyio
import pytest

import hrbench as hb

REF = hb.Reference({"q1": "France"}, labels=["Paris"])
ASK = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)


def test_warnings_point_at_the_callers_line() -> None:
    with pytest.warns(hb.FewRunsWarning) as got:
        hb.benchmark(ASK, REF, runs=1, client=hb.MockClient(lambda m, p: "Paris"))
    assert [w.filename for w in got] == [__file__]


def test_warnings_from_the_async_runner_point_at_the_callers_line() -> None:
    async def main() -> None:
        await hb.benchmark_async(ASK, REF, runs=2, client=hb.MockClient(lambda m, p: "Paris"))

    with pytest.warns(hb.FewRunsWarning) as got:
        anyio.run(main)
    assert [w.filename for w in got] == [__file__]
