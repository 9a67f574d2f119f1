"""The skewness-corrected t tests set beside compare()'s in bench/skew.py: each against a hand computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from hrbench.stats import cluster_se
from hrbench.testing._oracles import bootstrap_t, clustered_t_p, hall_t, johnson_t_p, skewed_t

LEFT = np.array([0.2, 0.2, 0.2, 0.2, -0.4])  # one item a cluster: the textbook one-sample case


def test_skewness_of_the_mean_is_the_unbiased_third_moment_over_n_squared_for_one_item_a_cluster():
    x, n = LEFT, LEFT.size
    m3 = n / ((n - 1) * (n - 2)) * float(np.sum((x - x.mean()) ** 3))  # -0.0432
    s = float(x.std(ddof=1))
    p = skewed_t(x, np.arange(n), n)
    assert p is not None
    assert p.se == pytest.approx(s / math.sqrt(n))
    assert p.skew == pytest.approx((m3 / n**2) / (s / math.sqrt(n)) ** 3) and p.skew == pytest.approx(-1.0)
    assert p.df == n - 1


def test_skewness_of_the_mean_over_unequal_clusters_is_taken_on_the_clusters_residual_totals():
    d = np.array([0.1, 0.3, 0.2, -0.5, 0.4, 0.0, 0.2])
    g = np.array([0, 0, 1, 1, 1, 2, 3])
    p = skewed_t(d, g, 4)
    assert p is not None
    e = np.array([0.4, 0.1, 0.0, 0.2]) - np.array([2, 3, 1, 1]) * d.mean()  # cluster totals less n_c mean
    assert p.skew * p.se**3 == pytest.approx(np.sum(e**3) / 7**3 * 16 / (3 * 2))
    assert p.se == pytest.approx(cluster_se(d, g, 4))


def test_johnson_t_is_johnson_s_1978_formula():
    x, n = LEFT, LEFT.size
    m3 = n / ((n - 1) * (n - 2)) * float(np.sum((x - x.mean()) ** 3))
    s2 = float(x.var(ddof=1))
    # Johnson (1978) eq.: t1 = [(xbar - mu) + m3 / (6 s^2 n) + m3 / (3 s^4) (xbar - mu)^2] / (s / sqrt(n))
    t1 = (x.mean() + m3 / (6 * s2 * n) + m3 / (3 * s2 * s2) * x.mean() ** 2) / math.sqrt(s2 / n)
    assert t1 == pytest.approx(0.351852, abs=1e-6)
    assert johnson_t_p(x, np.arange(n), n) == pytest.approx(2 * stats.t.sf(abs(t1), n - 1))


def test_hall_s_interval_inverts_its_test_and_leans_toward_the_long_tail():
    x, n = LEFT, LEFT.size
    lo, hi, p = hall_t(x, np.arange(n), n)
    # a = -1/3, b = -1/6, c = t(0.975, 4): T in [g^-1(-c), g^-1(c)], g^-1(x) = ((3a(x - b) + 1)^(1/3) - 1) / a
    c = stats.t.ppf(0.975, 4)
    a, b = -1 / 3, -1 / 6
    inv = [(np.cbrt(3 * a * (v - b) + 1) - 1) / a for v in (c, -c)]
    assert (lo, hi) == pytest.approx((0.08 - inv[0] * 0.12, 0.08 - inv[1] * 0.12))
    assert (
        hi - 0.08 < 0.08 - lo
    )  # left-skewed data: the interval reaches further down, where a rare loss lies
    # the test at the interval's ends gives p = 0.05 exactly: it is the test's inversion
    for end in (lo, hi):
        assert hall_t(x - end, np.arange(n), n)[2] == pytest.approx(0.05, abs=1e-9)
    assert p > 0.05 and lo < 0 < hi


def test_without_skew_the_corrections_are_the_clustered_t_test():
    d = np.array([0.3, -0.1, 0.2, 0.0, 0.4, 0.1])  # symmetric about its mean 0.15
    g = np.arange(6)
    p = skewed_t(d, g, 6)
    assert p is not None and p.skew == pytest.approx(0.0, abs=1e-12)
    t_p = clustered_t_p(d, g, 6)
    assert johnson_t_p(d, g, 6) == pytest.approx(t_p)
    assert hall_t(d, g, 6)[2] == pytest.approx(t_p)


def test_bootstrap_t_on_many_symmetric_clusters_is_near_the_t_interval():
    rng = np.random.default_rng(5)
    d = rng.normal(0.1, 0.3, 400)
    g = np.repeat(np.arange(80), 5)
    lo, hi, p = bootstrap_t(d, g, 80, np.random.default_rng(6), n_boot=2000)
    se = cluster_se(d, g, 80)
    assert se is not None
    c = stats.t.ppf(0.975, 79)
    assert lo == pytest.approx(d.mean() - c * se, abs=0.25 * se)
    assert hi == pytest.approx(d.mean() + c * se, abs=0.25 * se)
    assert (p < 0.05) == (lo > 0 or hi < 0)


def test_no_spread_gives_no_test_and_two_clusters_no_correction():
    assert skewed_t(np.array([0.2, 0.2, 0.2]), np.arange(3), 3) is None  # no spread: t is not defined
    assert johnson_t_p(np.array([0.2, 0.2, 0.2]), np.arange(3), 3) == 1.0
    assert hall_t(np.array([0.2, 0.2, 0.2]), np.arange(3), 3) == (-1.0, 1.0, 1.0)
    two = np.array([0.1, 0.3, 0.2, 0.6])
    g = np.array([0, 0, 1, 1])
    p = skewed_t(two, g, 2)
    assert p is not None and p.skew == 0.0  # a third moment needs 3 clusters: the t test itself
    assert johnson_t_p(two, g, 2) == pytest.approx(clustered_t_p(two, g, 2))
    assert hall_t(two, g, 2)[2] == pytest.approx(clustered_t_p(two, g, 2))
    assert bootstrap_t(two, g, 2, np.random.default_rng(0)) == (-1.0, 1.0, 1.0)  # 2 clusters: no bootstrap
