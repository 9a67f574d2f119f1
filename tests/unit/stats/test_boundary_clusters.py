"""Intervals at 0% and 100% accuracy are sized on clusters: failures may come a whole cluster at a time."""

from __future__ import annotations

import numpy as np
import pytest

from hrbench.stats import proportion_interval
from hrbench.stats._intervals import effective_clusters, zero_disagreement_bound
from hrbench.testing import Design, simulate

# scipy.stats is imported in the tests that use it: about 1 s of CPU each pytest-xdist worker
# would pay at collection, not only the workers that run them


def test_an_arm_right_on_all_200_items_of_10_clusters_gets_a_lower_bound_near_the_10_cluster_exact_one():
    from scipy import stats as sps

    g = np.repeat(np.arange(10), 20)
    iv = proportion_interval(np.ones(200), g, 10, 0.95, trials=1000.0)
    z2 = sps.t.ppf(0.975, 9) ** 2
    assert iv.n_eff == 10.0 and iv.low == pytest.approx(10 / (10 + z2)) and iv.high == 1.0
    exact = 0.025 ** (1 / 10)  # Clopper-Pearson for 10 of 10 clusters, two-sided 95%
    assert abs(iv.low - exact) < 0.04 and iv.low < 0.7  # sized on its items it was [0.975, 1]
    # the same near 0, and each item its own cluster keeps the items
    assert proportion_interval(np.zeros(200), g, 10, 0.95, 1000.0).high == pytest.approx(1 - iv.low)
    assert proportion_interval(np.ones(20), np.arange(20), 20, 0.95).n_eff == 20.0
    # clusters of unequal size count as Kish's effective number of them
    sizes = np.array([2, 2, 4, 12])
    g2 = np.repeat(np.arange(4), sizes)
    assert effective_clusters(g2, 4) == pytest.approx(400 / 168)
    assert proportion_interval(np.ones(20), g2, 4, 0.95).n_eff == pytest.approx(400 / 168)
    assert 1 - zero_disagreement_bound(10, 0.95) > iv.low  # never tighter than the one-sided exact bound


def test_with_whole_cluster_failures_an_arm_near_100_percent_is_covered_at_least_0_935():
    # 10 clusters of 20 items, every run right except that a cluster fails whole with chance 0.05
    d = Design("whole-cluster failures", (20,) * 10, 5, 1.0, cluster_failure=0.05)
    sim = simulate(d, 600, np.random.default_rng(20261201), diff=0.0)
    assert sim.truth_a == pytest.approx(0.95)
    covered = []
    for y in sim.ya:
        iv = proportion_interval(y, d.cluster, 10, 0.95, float(d.n_items * d.runs))
        covered.append(iv.low <= sim.truth_a <= iv.high)
    assert np.mean(covered) >= 0.935  # sized on items: 0.38 (every all-right benchmark missed)
