"""A misspelt keyword is refused by the function the user called, with the closest known name.

``hb.benchmark(..., clinet=None)`` must not raise ``TypeError: benchmark_async() got an
unexpected keyword argument 'clinet'``, naming a function the user never called.
"""

from __future__ import annotations

import anyio
import pytest

import hrbench as hb


def _ref() -> hb.Reference:
    return hb.Reference({"q1": "France"}, labels=["Paris"])


def _arm() -> hb.Arm:
    return hb.Arm("ask", lambda item, ctx: "Paris")


def test_benchmark_names_itself_and_the_closest_keyword() -> None:
    with pytest.raises(TypeError) as caught:
        hb.benchmark(_arm(), _ref(), clinet=None)
    text = str(caught.value)
    assert text.startswith("benchmark() got an unexpected keyword argument 'clinet' (did you mean 'client'?)")
    assert "concurrency" in text  # what it takes


def test_benchmark_stream_names_itself() -> None:
    async def first() -> None:
        async for _ in hb.benchmark_stream(_arm(), _ref(), concurency=2):
            pass

    with pytest.raises(
        TypeError,
        match=r"^benchmark_stream\(\) got an unexpected keyword argument 'concurency' \(did you mean 'concurrency'\?\)",
    ):
        anyio.run(first)


def test_a_known_keyword_still_runs() -> None:
    with pytest.warns(hb.FewRunsWarning):
        bench = hb.benchmark(_arm(), _ref(), runs=1, concurrency=1, keep_rows=True)
    assert [r.correct for r in bench.rows] == [True]
