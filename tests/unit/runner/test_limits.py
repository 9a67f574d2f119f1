"""A budget limit that is NaN, infinite or negative is refused everywhere.

One validator (:func:`hrbench.runner._governor.check_limit`) behind the governor, the environment
overrides (the library's and the daemon's, at start and per request), ``hb.options`` and a
spec's ``[governor]``; each refusal names the field and the value.
"""

from __future__ import annotations

import math

import pytest

import hrbench as hb
from hrbench._util.environ import use_caller_env
from hrbench.errors import ConfigError
from hrbench.runner import default_governor
from hrbench.runner._governor import check_limit
from hrbench.specs import build_governor

BAD = ["nan", "NaN", "inf", "-inf", "Infinity", "-1", "-0.5", "abc", ""]
BAD_NUMBERS = [math.nan, math.inf, -math.inf, -1, -0.001, True]
FIELDS = ["max_calls", "max_usd", "max_tokens"]


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("value", [v for v in BAD if v])
def test_an_environment_override_that_is_not_a_finite_number_is_refused(
    monkeypatch: pytest.MonkeyPatch, field: str, value: str
) -> None:
    name = "HRBENCH_" + field.upper()
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=f"^{name}: .*\\(got '{value}'\\)"):
        default_governor()
    monkeypatch.delenv(name)
    with use_caller_env({name: value}), pytest.raises(ConfigError, match=f"^{name}: "):
        default_governor()  # the caller's shell, through the daemon


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_a_limit_that_is_not_a_finite_number_is_refused_in_python_and_in_a_spec(
    field: str, value: float
) -> None:
    with pytest.raises(ConfigError, match=f"^{field}: "):
        hb.Governor(**{field: value})
    with pytest.raises(ConfigError, match=f"{field}"):
        build_governor({field: value})
    before = getattr(hb.options, field)
    with pytest.raises(ConfigError, match=f"^hrbench.options.{field}: "):
        setattr(hb.options, field, value)
    assert getattr(hb.options, field) == before  # unchanged


@pytest.mark.parametrize(
    ("text", "kind", "want"),
    [("0.5", float, 0.5), ("0", float, 0.0), ("40", int, 40), ("1e3", int, 1000), (" 2 ", float, 2.0)],
)
def test_good_limits_pass(text: str, kind: type, want: float) -> None:
    assert check_limit("f", text, kind) == want


def test_a_whole_limit_refuses_a_fraction() -> None:
    with pytest.raises(ConfigError, match=r"HRBENCH_MAX_CALLS: expected a whole number \(got '2.5'\)"):
        check_limit("HRBENCH_MAX_CALLS", "2.5", int)
    hb.options.max_calls = 400  # a good value is kept
    assert default_governor().max_calls == 400
