"""pass^k and the flip rate across runs: by hand, with clustered intervals, in report, compare and gate."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.records import Row
from hrbench.stats import gate, proportion_interval
from hrbench.stats._intervals import _compact


def _rows(right: dict[str, list[int]], runs: int = 5, per_cluster: int = 2) -> list[Row]:
    """Rows of arms whose item ``i`` is right on its first ``right[arm][i]`` runs (clusters of ``per_cluster``)."""
    return [
        Row(
            cluster=f"c{i // per_cluster}",
            item=f"q{i}",
            arm=arm,
            run=r,
            split="test",
            correct=r < k,
            outcome=None,
            failure_kind=None,
        )
        for arm, ks in right.items()
        for i, k in enumerate(ks)
        for r in range(runs)
    ]


STEADY = [5, 5, 5, 0, 5, 5, 0, 5, 5, 5, 5, 0]  # every item right on every run or on none
SHAKY = [4, 5, 3, 1, 5, 2, 0, 5, 4, 3, 5, 1]


def test_pass_k_and_the_flip_rate_are_the_per_item_estimates_averaged_with_the_accuracy_s_interval():
    rep = hb.report(_rows({"steady": STEADY, "shaky": SHAKY}))
    shaky = rep.arm("shaky")
    want_pass = np.array([comb(c, 5) / comb(5, 5) for c in SHAKY])
    want_flip = np.array([c * (5 - c) / comb(5, 2) for c in SHAKY])
    assert shaky.pass_k_runs == 5
    assert shaky.pass_k == pytest.approx(want_pass.mean())
    assert shaky.flip_rate == pytest.approx(want_flip.mean())
    g, n_g = _compact(np.arange(12) // 2)
    iv = proportion_interval(want_flip, g, n_g, 0.95)
    assert (shaky.flip_rate_low, shaky.flip_rate_high) == (pytest.approx(iv.low), pytest.approx(iv.high))
    assert 0 < shaky.pass_k_low < shaky.pass_k < shaky.pass_k_high < 1
    # an arm that answers each item the same way every time never flips; its interval still has width
    steady = rep.arm("steady")
    assert steady.flip_rate == 0.0 and steady.flip_rate_low == 0.0 and steady.flip_rate_high > 0
    assert steady.pass_k == pytest.approx(steady.accuracy)
    # pass^2: C(c, 2) / C(5, 2) per item
    two = hb.report(_rows({"shaky": SHAKY}), pass_k=2).arm("shaky")
    assert two.pass_k_runs == 2 and two.pass_k == pytest.approx(np.mean([comb(c, 2) / 10 for c in SHAKY]))


def test_the_report_text_shows_pass_k_and_the_flip_rate_with_two_or_more_runs_only():
    text = str(hb.report(_rows({"steady": STEADY, "shaky": SHAKY})))
    assert (
        "Repeat consistency (pass^5: 5 runs of an item all right; flip rate: two runs of an item disagree)"
        in text
    )
    line = next(
        ln for ln in text.splitlines() if ln.startswith(" shaky") and "[" in ln and "Repeat" not in ln
    )
    assert line  # the accuracy table
    assert any(
        ln.split()[:2] == ["shaky", f"{np.mean([c == 5 for c in SHAKY]):.3f}"] for ln in text.splitlines()
    )
    one = hb.report(_rows({"shaky": SHAKY}, runs=1), descriptive=True)
    assert "Repeat consistency" not in str(one) and one.arm("shaky").flip_rate is None
    assert one.arm("shaky").pass_k_runs == 1


def test_compare_and_the_gate_compare_pass_k_and_the_flip_rate_on_the_items_both_ran():
    rows = _rows({"steady": STEADY, "shaky": SHAKY})
    c = hb.compare(rows, "steady", "shaky", metric="pass^k")
    want = np.mean([float(a == 5) - float(b == 5) for a, b in zip(STEADY, SHAKY, strict=True)])
    assert (c.metric, c.pass_k_runs) == ("pass^k", 5) and c.diff == pytest.approx(want)
    assert c.ci_low < c.diff < c.ci_high and 0 < c.p_value <= 1
    f = hb.compare(rows, "steady", "shaky", metric="flip_rate")
    assert f.diff == pytest.approx(-np.mean([c * (5 - c) / 10 for c in SHAKY]))
    from hrbench.stats import report_payload

    payload = report_payload(rows, compare_pair=("steady", "shaky"), metric="pass^k")
    assert payload["comparisons"][0]["metric"] == "pass^k"
    assert "Paired differences of pass^5 (arm_a - arm_b" in payload["text"]
    assert "Paired differences (arm_a - arm_b" in str(hb.report(rows))  # all pairs: accuracy
    with pytest.raises(ConfigError, match="^metric:"):
        hb.compare(rows, "steady", "shaky", metric="pass@k")
    with pytest.raises(ConfigError, match="^pass_k:"):
        hb.compare(rows, "steady", "shaky", metric="pass^k", pass_k=6)
    # the gate on pass^k: a candidate that flips fails where its accuracy alone would pass
    cand = _rows({"new": [4] * 40}, per_cluster=1)
    base = _rows({"old": [5] * 40}, per_cluster=1)
    assert gate(cand, base, max_drop=0.25).decision == "pass"  # accuracy 0.8 vs 1.0: no drop of 0.25 shown
    g = gate(cand, base, max_drop=0.25, metric="pass^k")
    assert g.decision == "fail" and g.metric == "pass^k" and g.pass_k_runs == 5 and "in pass^5" in g.reason
    flips = gate(cand, base, max_drop=0.25, metric="flip_rate")
    assert flips.decision == "fail" and "lower bound" in flips.reason and flips.diff == pytest.approx(0.4)
    assert gate(base, base, metric="flip_rate").decision == "pass"
