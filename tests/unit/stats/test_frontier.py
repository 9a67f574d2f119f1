"""The report's cost-accuracy frontier: each arm with its interval, the paired differences along the frontier."""

from __future__ import annotations

import warnings
from pathlib import Path

import msgspec
import pytest

import hrbench as hb
from hrbench.records import Row
from hrbench.stats import frontier

# per arm: (USD a run, the items it gets right); twelve items, one cluster each
ARMS = {
    "low": (0.001, set(range(3))),
    "wasteful": (0.004, set(range(2))),  # dearer than low and less accurate: off the frontier
    "high": (0.003, set(range(11))),
    "max": (0.009, set(range(12))),
}


def _rows() -> list[Row]:
    return [
        Row(
            cluster=f"c{i}",
            item=f"q{i}",
            arm=arm,
            run=r,
            split="test",
            correct=i in right,
            outcome=None,
            failure_kind=None if i in right else "wrong",
            usd=usd,
        )
        for i in range(12)
        for arm, (usd, right) in ARMS.items()
        for r in range(1, 6)
    ]


def test_the_frontier_steps_from_the_cheapest_arm_leaving_out_the_dominated_one() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = hb.report(_rows())
    assert [(s.cheaper, s.dearer) for s in rep.frontier] == [("low", "high"), ("high", "max")]
    step = rep.frontier[0]
    assert step.usd_per_run_added == pytest.approx(0.002)
    c = hb.compare(_rows(), "high", "low", warn=False)
    held = next(x for x in rep.comparisons if {x.arm_a, x.arm_b} == {"high", "low"})
    assert step.diff == pytest.approx(c.diff) == pytest.approx(8 / 12)
    assert step.p_holm == held.p_holm  # the report's Holm-adjusted p for that pair
    sign = 1 if held.arm_a == "high" else -1
    assert (step.ci_low, step.ci_high) == pytest.approx(
        tuple(sorted((sign * held.ci_low, sign * held.ci_high)))  # type: ignore[operator]
    )
    assert [s.reads for s in rep.frontier] == ["gain", "interval includes 0"]
    text = str(rep)
    assert "Cost-accuracy frontier" in text and "low -> high" in text and "high -> max" in text
    assert "wasteful ->" not in text and "-> wasteful" not in text
    assert "`low` -> `high`" in rep.to_markdown()
    assert rep.to_dict()["frontier"][0]["cheaper"] == "low"


def test_a_step_whose_interval_holds_zero_says_so() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = hb.report(_rows())
    line = next(ln for ln in str(rep).splitlines() if ln.strip().startswith("high -> max"))
    assert line.rstrip().endswith("interval includes 0")  # one more item right: not a supported gain


def test_no_frontier_without_two_priced_arms() -> None:
    rows = [r for r in _rows() if r.arm == "low"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert hb.report(rows).frontier == []
    unpriced = [msgspec.structs.replace(r, usd=None) for r in _rows()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert hb.report(unpriced).frontier == []


def test_ties_in_cost_keep_the_more_accurate_arm() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = hb.report(_rows())
    arms = [a if a.arm != "wasteful" else msgspec.structs.replace(a, usd_per_run=0.001) for a in rep.arms]
    assert [(s.cheaper, s.dearer) for s in frontier(arms, rep.comparisons)] == [
        ("low", "high"),
        ("high", "max"),
    ]


def test_the_plot_draws_the_frontier(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = hb.report(_rows())
    out = rep.plot(tmp_path / "p.png")
    assert Path(out).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_gain_the_holm_adjusted_test_does_not_support_says_so() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = hb.report(_rows())
    held = [msgspec.structs.replace(c, p_holm=0.2) for c in rep.comparisons]
    assert [s.reads for s in frontier(rep.arms, held)][0] == "gain before Holm only"
