"""The skewed null's benchmarks that hold no skewed cluster: counted by simulate(), their false positives by check()."""

from __future__ import annotations

import numpy as np
import pytest

from hrbench.testing import SKEW_SHARE, Design, check, simulate
from hrbench.testing._designs import SKEW


def test_simulate_counts_each_benchmark_s_skewed_clusters_and_none_without_skew():
    d = Design("skewed 8x5x5", (5,) * 8, 5, 0.7, skew=SKEW)
    sim = simulate(d, 400, np.random.default_rng(1))
    bad = sim.extra["skewed_clusters"]
    assert bad.shape == (400,) and bad.min() >= 0 and bad.max() <= 8
    # each cluster is much worse with chance SKEW_SHARE: the share with none is 0.9 ** 8 = 0.43
    assert np.mean(bad == 0) == pytest.approx((1 - SKEW_SHARE) ** 8, abs=0.08)
    # a benchmark holding no skewed cluster has arm a ahead on every cluster's expectation: ahead on average
    clean = bad == 0
    assert (sim.ya[clean] - sim.yb[clean]).mean() > 0 > (sim.ya[bad >= 2] - sim.yb[bad >= 2]).mean()
    plain = simulate(Design("plain", (5,) * 8, 5, 0.7), 50, np.random.default_rng(1))
    assert not plain.extra["skewed_clusters"].any()


def test_check_splits_the_skewed_null_s_false_positives_by_whether_a_skewed_cluster_came_up():
    d = Design("skewed 5x20x5", (20,) * 5, 5, 0.7, skew=SKEW)
    r = check(d, 150, seed=3)
    assert r["clean"] == pytest.approx((1 - SKEW_SHARE) ** 5, abs=0.12)
    for part, whole in (("fpr_clean", "fpr"), ("fpr_t_clean", "fpr_t"), ("fpr_sf_clean", "fpr_sf")):
        assert 0 <= r[part] <= r[whole]
    assert r["fpr_sf_clean"] == 0  # the sign-flip test cannot reject on 5 clusters
    assert "clean" not in check(Design("plain 5x20x5", (20,) * 5, 5, 0.7), 20, seed=3)
