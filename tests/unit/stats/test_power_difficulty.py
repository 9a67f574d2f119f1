"""power() with clusters of different difficulty: ``var_cluster_accuracy``.

A cluster both arms find easy shows a smaller difference on the probability scale, so part of
``var_cluster`` (the spread of the clusters' mean differences) comes from the clusters'
difficulty, not from an arm x cluster effect. compare()'s test loses less power to that part;
the plan's model puts it on the clusters both arms share when ``var_cluster_accuracy`` says how
much the clusters differ in difficulty.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hrbench.errors import ConfigError
from hrbench.stats import power
from hrbench.testing import Design, simulate, stated_components
from hrbench.testing._designs import UNEQUAL, arm_rows

# 15 clusters of 2-40 items at accuracy 0.90: clusters differ in difficulty (logit sd 0.5, both
# arms alike), the arms by 0.04, with no arm x cluster effect (bench/coverage.py's "equal" row)
EQUAL = Design("15 cl of 2-40 @0.90", UNEQUAL, 5, 0.9, diff=0.04)


def _stated(d: Design, seed: int, accuracy: bool = True) -> dict[str, float]:
    c = stated_components(d, seed)
    if not accuracy:
        del c["var_cluster_accuracy"]
    return c


def test_the_fitted_arms_put_a_cluster_s_difficulty_on_the_clusters_both_arms_share():
    from hrbench.stats._power_sim import _fit_logit

    c = _stated(EQUAL, 7)
    assert c["var_cluster"] > 5e-5  # the difficulty alone spreads the clusters' mean differences
    model = _fit_logit(
        0.9, 0.86, c["var_within"], c["var_between"], c["var_cluster"], c["var_cluster_accuracy"]
    )
    assert model.sd_shared_cluster == pytest.approx(EQUAL.sd_cluster, abs=0.03)
    assert model.sd_own_cluster < 0.03  # no arm x cluster effect found where there is none
    # without the difficulty, all of var_cluster is taken for an arm x cluster effect
    assert _fit_logit(0.9, 0.86, c["var_within"], c["var_between"], c["var_cluster"]).sd_own_cluster > 0.06
    refit = stated_components(
        Design(
            "fit",
            UNEQUAL,
            5,
            0.9,
            diff=0.04,
            sd_cluster=model.sd_shared_cluster,
            sd_item=math.sqrt(model.sd_shared**2 - model.sd_shared_cluster**2),
            sd_arm_item=model.sd_own_item,
            sd_arm_cluster=model.sd_own_cluster,
        ),
        8,
    )
    for k in c:
        assert refit[k] == pytest.approx(c[k], rel=0.1, abs=2e-5), k


def test_power_with_unequal_clusters_of_different_difficulty_is_compare_s_power():
    """The stated components' plan was 0.025 below compare()'s power (0.875 for 0.90).

    compare()'s test (vectorised: tests/unit/stats/test_stats_few_clusters.py shows it is
    difference_interval's) runs on 20,000 benchmarks of the design itself (Monte Carlo error
    0.002); the plan's own error is 0.005 (4,000 benchmarks).
    """
    from hrbench.stats._power_sim import _rejects

    c = _stated(EQUAL, 7)
    kwargs = dict(runs=5, n_items=EQUAL.n_items, accuracy=0.88, cluster_sizes=EQUAL.sizes)
    plan = power(EQUAL.diff, **c, **kwargs)
    before = power(EQUAL.diff, **_stated(EQUAL, 7, accuracy=False), **kwargs)
    assert plan.simulated and before.simulated
    sim = simulate(EQUAL, 20000, np.random.default_rng(11))
    total = float(EQUAL.n_items * EQUAL.runs)
    simulated = float(np.mean(_rejects(sim.ya - sim.yb, EQUAL.cluster, len(EQUAL.sizes), 0.05, total)))
    assert abs(plan.achieved - simulated) < 0.012, (plan.achieved, simulated)
    assert simulated - before.achieved > 0.015  # all of var_cluster an arm x cluster effect: pessimistic


def test_a_pilot_gives_the_clusters_difficulty():
    from hrbench.stats._power_pilot import _bench_components
    from hrbench.stats._table import _table

    d = Design("pilot", (10,) * 20, 5, 0.7, diff=0.05, sd_cluster=1.0)
    t = _table(arm_rows(d, np.random.default_rng(3), copies=30))
    got = _bench_components(t, "a", "b")
    want = stated_components(d, 9)["var_cluster_accuracy"]
    assert got.cluster_accuracy == pytest.approx(want, rel=0.2)
    # and the plan uses it: stated 0 (the item-only model) plans otherwise
    kwargs = dict(bench=arm_rows(d, np.random.default_rng(3), copies=1), n_items=100, runs=5)
    planned = power(0.05, var_within=0.3, var_between=0.02, var_cluster=0.002, **kwargs)
    flat = power(
        0.05, var_within=0.3, var_between=0.02, var_cluster=0.002, var_cluster_accuracy=0.0, **kwargs
    )
    assert planned.simulated and planned.achieved != flat.achieved


@pytest.mark.parametrize("bad", [-0.01, 0.3, math.nan])
def test_var_cluster_accuracy_out_of_range_is_a_config_error(bad):
    with pytest.raises(ConfigError, match="var_cluster_accuracy"):
        power(0.05, var_within=0.3, var_between=0.02, var_cluster_accuracy=bad, accuracy=0.7)
