"""A refusal's USD amounts print with digits enough to differ, never as -0."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hrbench as hb
from hrbench.runner import Governor

AMOUNT = re.compile(r"\$(-?[\d.]+)")


@given(
    cap=st.floats(0.0001, 10.0),
    spent=st.floats(0.0, 1.0),
    need=st.floats(1e-9, 1.0),
)
def test_a_cost_refusal_shows_amounts_that_differ(cap: float, spent: float, need: float) -> None:
    gov = Governor(max_usd=cap)
    gov.restore({"calls": 0, "usd": min(spent, cap) * 1.0000001, "tokens": 0})
    try:
        gov.reserve(usd=need)
    except hb.BudgetRefused as exc:
        why = str(exc).split(")); ", 1)[1]
        assert not any(float(a) < 0 or a.startswith("-") for a in AMOUNT.findall(why)), why
        got = re.match(r"the next request's worst case \(\$([\d.]+)\) is more than the \$([\d.]+) left", why)
        if got is None:
            assert "does not fit: no room is left" in why
        else:
            assert got[1] != got[2] and float(got[1]) > float(got[2])


@pytest.mark.parametrize(("spent", "need"), [(0.0094, 0.00061), (0.00999999, 0.00001)])
def test_a_refusal_near_the_cap_shows_no_equal_zero_or_negative_amount(spent: float, need: float) -> None:
    gov = Governor(max_usd=0.01)
    gov.restore({"calls": 0, "usd": spent, "tokens": 0})
    with pytest.raises(hb.BudgetRefused) as info:
        gov.reserve(usd=need)
    why = str(info.value)
    assert "($0.0006) is more than the $0.0006 left" not in why and "$-0" not in why
    assert not re.search(r"\(\$0\.0+\)|the \$0\.0+ left", why), why  # a need or room shown as 0
