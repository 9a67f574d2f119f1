"""A negative, NaN or infinite price is refused wherever prices come in.

``HRBENCH_PRICES`` read by the library (and by the daemon at start, tests/clients/test_cli_budget.py)
and ``Pricing(overrides=...)``; the error names ``prices.<model>.<part>`` and the value.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import hrbench as hb
from hrbench.errors import ConfigError

BAD = [-0.0004, -1.0, math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("part", ["input", "cached_input", "output"])
@pytest.mark.parametrize("value", BAD)
def test_a_bad_price_in_the_table_file_or_an_override_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part: str, value: float
) -> None:
    entry = {"input": 0.15, "output": 0.6, part: value}
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"models": {"m": entry}}))  # json writes NaN / Infinity as Python reads them
    monkeypatch.setenv("HRBENCH_PRICES", str(path))
    with pytest.raises(
        ConfigError, match=rf"^prices\.m\.{part}: expected a finite number .* \(got {value}\)"
    ):
        hb.Pricing()
    monkeypatch.delenv("HRBENCH_PRICES")
    with pytest.raises(ConfigError, match=rf"^prices\.m\.{part}: "):
        hb.Pricing(overrides={"m": entry})


@pytest.mark.parametrize("value", [0.0, 1e-9, 2.5, 1e6])
def test_a_good_price_is_kept(value: float) -> None:
    assert hb.Pricing(overrides={"m": {"input": value, "output": value}}).price("m") == hb.Pricing(
        overrides={"m": {"input": value, "cached_input": value, "output": value}}
    ).price("m")
