"""A power plan's text says what its design is when the numbers alone would mislead.

Rule (hrbench.stats.power, PowerPlan): compare() tests no fewer than 2 clusters, so a plan
whose items fill less than 2 of the stated clusters takes them from 2 clusters and says so
(never a bare "2 clusters of 1" under 4 items a cluster); with every variance stated 0 the
noncentral t's power is 1 by assumption, which compare()'s own test never is from sampled
runs, and the text says that rather than "t on 1 df: power 1.000".
"""

from __future__ import annotations

import hrbench as hb


def test_zero_variances_say_the_power_is_assumed_and_where_the_two_clusters_come_from() -> None:
    plan = hb.power(0.05, var_within=0, var_between=0, runs=5, items_per_cluster=4)
    assert (plan.n_items, plan.n_clusters, plan.achieved) == (2, 2, 1.0)
    text = str(plan)
    assert "t on 1 df: power 1.000" not in text
    assert (
        "needs 2 items (2 clusters of 1, taken from 2 of your clusters of 4: compare() tests no fewer "
        "clusters; every variance is 0, so power 1 by assumption; compare()'s own test is never that "
        "sure from sampled runs: state accuracy= to simulate it)"
    ) in text, text


def test_a_plan_of_whole_clusters_keeps_its_plain_text() -> None:
    text = str(hb.power(0.05, var_within=0.2, var_between=0.04, runs=5, items_per_cluster=4))
    assert "needs 259 items (65 clusters of 3-4; t on 64 df: power 0.800)" in text, text
    text = str(hb.power(0.3, var_within=0.2, var_between=0.04, runs=5, items_per_cluster=4))
    assert "your clusters" not in text and "by assumption" not in text, text
