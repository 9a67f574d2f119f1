"""evaluate()'s whole-number arguments are read as benchmark()'s runs, seed and concurrency are.

Rule (hrbench._util.forms.whole): any whole number but a bool, numpy's and pandas' integers
too; a float (``2.0``), a string or a bool is refused, naming the argument; the same value is
accepted or refused alike by ``benchmark()`` and ``evaluate()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.evaluation.evaluate import evaluate
from hrbench.evaluation.modules import module_fn, run_dataset

ROWS = [{"text": "I love it", "sentiment": "positive"}, {"text": "meh", "sentiment": "negative"}]


def _rule() -> Any:
    return module_fn("text -> sentiment", lambda text: "positive" if "love" in text else "negative")


def _same(prediction: Any, expected: Any) -> bool:
    return prediction.sentiment == expected.sentiment


@pytest.mark.parametrize("n", [np.int64(2), np.int32(2), np.uint8(2), 2])
def test_numpy_integers_are_taken_for_epochs_and_concurrency(n: Any) -> None:
    result = evaluate(_rule(), ROWS, _same, epochs=n, concurrency=n, cache=False)
    assert result.epochs == 2 and type(result.epochs) is int
    assert result.mean_score == 1.0
    assert len(run_dataset(_rule(), ROWS, concurrency=n, draw_index=n)) == 2


def _benchmark_refuses(field: str, value: Any) -> str | None:
    arm = hb.Arm("a", lambda item, ctx: item)
    ref = hb.Reference({"q1": "x"}, labels={"q1": "x"})
    try:
        hb.benchmark(arm, ref, **{field: value})
    except ConfigError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("value", [2.0, True, "2", 0, -1, 2.5])
@pytest.mark.parametrize(("field", "twin"), [("epochs", "runs"), ("concurrency", "concurrency")])
def test_a_value_benchmark_refuses_evaluate_refuses_in_the_same_words(
    field: str, twin: str, value: Any
) -> None:
    said = _benchmark_refuses(twin, value)
    assert said is not None, (twin, value)
    with pytest.raises(ConfigError) as info:
        evaluate(_rule(), ROWS, _same, cache=False, **{field: value})
    assert str(info.value) == said.replace(f"{twin}:", f"{field}:", 1), (str(info.value), said)
