"""Planning: how many items (and runs) a paired comparison needs, :func:`power`."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from hrbench._util.warn import warn_at_caller
from hrbench.errors import ConfigError
from hrbench.stats.intervals import FEW_CLUSTERS, _cluster_se, _compact, _components, _sps
from hrbench.stats.records import PilotClustersWarning, PowerPlan, PowerPoint
from hrbench.stats.table import MIN_RUNS, _arm_code, _items, _Table, _table

_TRADEOFF_RUNS = (1, 2, 3, 5, 10, 20)


def power(
    diff: float,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    var_within: float | None = None,
    var_between: float | None = None,
    var_cluster: float | None = None,
    runs: int | None = None,
    bench: Any = None,
    arm_a: str | None = None,
    arm_b: str | None = None,
    design_effect: float | None = None,
    items_per_cluster: float | None = None,
    n_items: int | None = None,
    accuracy: float | None = None,
) -> PowerPlan:
    """Items needed to detect a difference ``diff`` between two arms in a paired comparison.

    Miller (2024) §5, with clusters: with ``K`` runs per item the variance of one item's
    difference is ``var_between + var_within / K``, and the clusters add ``var_cluster``, the
    variance between clusters of their mean true difference (an arm better on some clusters
    and worse on others: an arm x cluster effect), so the mean difference over ``n`` items in
    ``G`` clusters has variance ``(var_between + var_within / K) / n + var_cluster / G``.
    Stating a ``design_effect`` instead takes it as ``design_effect * (var_between +
    var_within / K) / n``. The test is the one :func:`~hrbench.stats.compare` makes (the same
    reference distribution): Student's t on ``G - 1`` degrees of freedom, with ``G =
    ceil(n / items_per_cluster)``. Its power at ``n`` items is that of the noncentral t,
    ``P(|T| > t_{1 - alpha/2, G - 1})`` with ``T ~ nct(G - 1, diff / sd(mean difference))``,
    and ``n_items`` is the smallest ``n`` (at least 2) whose power reaches ``power``. With few
    clusters that is far more than the normal approximation ``(z_{1-alpha/2} + z_power)**2 *
    variance / diff**2`` promises (5 clusters: the normal approximation sized a design whose
    real power was 0.69 for a promised 0.90).

    With few clusters (10 or fewer at the plan's items) and the arms' accuracy known (stated
    as ``accuracy``, or from ``bench``), the power is instead that of compare()'s own test,
    simulated: near the ceiling or with 2-5 clusters the noncentral t is not its power
    (compare()'s Wilson/MOVER test rejected 0.331 of benchmarks of 3 clusters of 10 items
    where the noncentral t promised 0.363; at 10 clusters of 3 items at accuracy 0.97 the t
    test itself reached 0.30 of a promised 0.34). A parametric bootstrap (Efron & Tibshirani
    1993, ch. 6): 4,000 benchmarks of the plan's clusters (as equal as the items allow) and
    runs are drawn from logit-normal arms, ``logit p = mu_arm + s_item + o_arm,cluster +
    o_arm,item``, fitted to the components (``mu_arm`` to the arms' accuracies, ``accuracy
    -+ diff / 2``; the sd of ``s + o`` to ``var_within``; the sd of ``o`` to ``var_between +
    var_cluster``; its cluster part to ``var_cluster``, each on the probability scale they are
    stated on, by Gauss-Hermite quadrature), and each goes through
    :func:`~hrbench.stats.intervals.difference_interval`'s test, vectorised. What this
    assumes beyond the components: the arms' item probabilities are logit-normal, and what the
    arms share varies by item, not by cluster. The seed is fixed, so a plan is the same on
    every call; its Monte Carlo error is at most 0.008. The runs trade-off and ``min_items``
    stay on the noncentral t. More runs per item shrink only the
    ``var_within`` term: ``min_items`` is the floor as ``K`` grows. ``bench/coverage.py``
    simulates compare() on every design it lists, with and without an arm x cluster effect:
    this power is within 0.03 of compare()'s, from components stated (with the accuracy) or
    estimated from a pilot.

    The variance components are stated (``var_within``, ``var_between``, ``var_cluster``) or
    taken from ``bench``, a pilot: with ``arm_a`` and ``arm_b`` (by default its first two
    arms) from their paired per-item differences (``var_within`` is the sum of the two arms'
    run-to-run variances, ``var_between`` the moment estimate of the true differences'
    variance between items of a cluster, ``var_cluster`` the pilot's clustered (CR2) variance
    of the mean difference less its items' share, times its clusters, so that it carries the
    spread of the pilot's cluster sizes; ``items_per_cluster`` the mean over its clusters);
    with a single arm, as if comparing two uncorrelated arms like it (twice its components: a
    conservative plan). Stated values override the benchmark's.

    A pilot whose items are all in one cluster cannot show how clusters differ. Decided: unless
    ``var_cluster`` or ``design_effect`` is stated, the plan is then conservative, as if the
    items of a cluster were copies of one another (``design_effect`` = items per cluster: a
    cluster counts as one item), and :class:`~hrbench.stats.PilotClustersWarning` says so.

    Args:
        diff: the difference in accuracy to detect (proportion units, e.g. 0.03).
        alpha: two-sided significance level.
        power: the probability of detecting ``diff`` when it is real.
        var_within: run-to-run variance of a per-run score difference (for two arms with
            run-to-run variances ``s_a**2`` and ``s_b**2``, their sum).
        var_between: variance across the items of a cluster of the true per-item difference.
        var_cluster: variance across clusters of the cluster's mean true difference (default:
            from ``bench``, else 0).
        runs: runs per item (default: the benchmark's, else 5).
        bench: a benchmark (as for :func:`report`) to estimate the components from.
        arm_a: the first arm of ``bench`` to plan for (default: its first arm).
        arm_b: the second arm (default: the next arm; none when ``bench`` has one arm).
        design_effect: variance inflation from clusters, in place of ``var_cluster``.
        items_per_cluster: items per cluster, which sets the clusters and so the degrees of
            freedom (default: from ``bench``, else 1: every item its own cluster).
        n_items: evaluate the plan at this many items instead of solving for them: the plan's
            ``achieved`` is then the power those items give.
        accuracy: the two arms' mean accuracy (proportion; default: ``bench``'s, else
            unknown): with 10 or fewer clusters the power is then simulated (above). Both arms,
            ``accuracy -+ diff / 2``, must lie strictly between 0 and 1 (a pilot at the ceiling
            falls back to the noncentral t).

    Returns:
        A :class:`PowerPlan` with ``n_items``, its clusters, the power it achieves and the
        runs-per-item trade-off; its ``design_effect`` is the variance inflation at ``runs``.

    Raises:
        ConfigError: ``diff`` is 0, ``alpha``/``power`` are not in (0, 1), the variance
            components are missing (no ``bench``) or negative, both ``design_effect`` and
            ``var_cluster`` are stated, or ``items_per_cluster``, ``n_items`` or ``accuracy``
            are out of range.

    Example:
        >>> plan = power(0.05, var_within=0.2, var_between=0.04, runs=5)
        >>> plan.n_items, plan.min_items, round(plan.achieved, 3)
        (254, 128, 0.801)
        >>> few = power(0.05, var_within=0.2, var_between=0.04, runs=5, items_per_cluster=60)
        >>> few.n_clusters, few.n_items > plan.n_items
        (7, True)
        >>> arms_differ = power(0.05, var_within=0.2, var_between=0.04, var_cluster=0.002, runs=5,
        ...                     items_per_cluster=20)
        >>> arms_differ.n_clusters, round(arms_differ.design_effect, 2)
        (21, 1.49)
    """
    if not diff or not math.isfinite(diff):
        raise ConfigError("diff", diff, "must be a non-zero difference in accuracy, e.g. 0.03")
    for field, v in (("alpha", alpha), ("power", power)):
        if not 0 < v < 1:
            raise ConfigError(field, v, "must be strictly between 0 and 1")
    if design_effect is not None and var_cluster is not None:
        raise ConfigError(
            "design_effect", design_effect, "state design_effect or var_cluster, not both (they say the same)"
        )
    source = "assumed"
    if bench is not None:
        t = _table(bench)
        if arm_a is None:
            arm_a = t.arms[0]
        if arm_b is None and arm_a != t.arms[-1] and len(t.arms) > 1:
            arm_b = next(a for a in t.arms if a != arm_a)
        got = _bench_components(t, arm_a, arm_b)
        source = f"bench: {arm_a} vs {arm_b}" if arm_b else f"bench: {arm_a} (x2, as two uncorrelated arms)"
        var_within = got.within if var_within is None else var_within
        var_between = got.between if var_between is None else var_between
        if got.clusters < 2 and design_effect is None and var_cluster is None:
            m_one = float(got.items) if items_per_cluster is None else float(items_per_cluster)
            design_effect = m_one
            source += ", one cluster: planned as if a cluster counted as one item"
            warn_at_caller(
                f"power: the pilot's {got.items} items are all in one cluster, so how clusters differ "
                f"cannot be estimated; planned conservatively, as if the items of a cluster were copies of "
                f"one another (design effect {m_one:g} = items per cluster). Pilot on several clusters, or "
                "state var_cluster (or design_effect).",
                PilotClustersWarning,
            )
        elif design_effect is None and var_cluster is None:
            var_cluster = got.cluster
        items_per_cluster = (
            got.items / max(got.clusters, 1) if items_per_cluster is None else items_per_cluster
        )
        runs = t.runs if runs is None else runs
        if accuracy is None:
            accuracy = got.accuracy
    if var_within is None or var_between is None:
        raise ConfigError(
            "var_within/var_between", (var_within, var_between), "state both, or pass bench= to estimate them"
        )
    if var_within < 0 or var_between < 0 or (var_cluster is not None and var_cluster < 0):
        raise ConfigError(
            "var_within/var_between/var_cluster",
            (var_within, var_between, var_cluster),
            "must not be negative",
        )
    runs = MIN_RUNS if runs is None else int(runs)
    if runs < 1:
        raise ConfigError("runs", runs, "must be at least 1")
    m = 1.0 if items_per_cluster is None else float(items_per_cluster)
    if not (math.isfinite(m) and m >= 1):
        raise ConfigError("items_per_cluster", items_per_cluster, "must be a number, at least 1")
    if n_items is not None and not (isinstance(n_items, int) and n_items >= 2):
        raise ConfigError("n_items", n_items, "must be a whole number, at least 2")
    if design_effect is not None and not (math.isfinite(design_effect) and design_effect > 0):
        raise ConfigError("design_effect", design_effect, "must be a positive number")
    vc = 0.0 if var_cluster is None else float(var_cluster)
    d = abs(float(diff))
    if accuracy is not None and not (
        math.isfinite(accuracy) and 0 < accuracy - d / 2 and accuracy + d / 2 < 1
    ):
        if bench is None:
            raise ConfigError(
                "accuracy", accuracy, f"must leave both arms (accuracy -+ {d / 2:g}) strictly between 0 and 1"
            )
        accuracy = None  # a pilot at the ceiling: the noncentral t plan
    fitted: list[_Logit] = []
    simulated: dict[int, float] = {}

    def simulate(n: int) -> float:
        """compare()'s power at ``n`` items and ``runs`` runs, simulated (few clusters, arms known)."""
        if n not in simulated:
            if not fitted:
                assert accuracy is not None
                fitted.append(_fit_logit(accuracy + d / 2, accuracy - d / 2, var_within, var_between, vc))
            g = clusters(n)
            sizes = np.full(g, n // g) + (np.arange(g) < n % g)
            simulated[n] = _simulated_power(fitted[0], sizes, runs, alpha)
        return simulated[n]

    def plan(n: int) -> float:
        """The power the plan promises at ``n`` items and ``runs`` runs."""
        if accuracy is not None and design_effect is None and clusters(n) <= FEW_CLUSTERS and n >= 2:
            return simulate(n)
        return achieved(n, runs)

    def clusters(n: int) -> int:
        return max(2, math.ceil(n / m - 1e-9))

    def variance(n: int, k: float) -> float:
        items = var_between + var_within / k
        if design_effect is not None:
            return float(design_effect) * items / n
        return items / n + vc / clusters(n)

    def achieved(n: int, k: float) -> float:
        var = variance(n, k)
        if var <= 0:
            return 1.0
        return _t_test_power(d / math.sqrt(var), clusters(n) - 1, alpha)

    def need(k: float, at: Any = None, start: int = 2) -> int:
        how = (lambda n: achieved(n, k)) if at is None else at
        lo, hi, grow = 1, 2, 2.0  # how(lo) < power <= how(hi) (lo = 1 is never tried)
        if start > 2:  # a bracket from a first guess, in steps of a third
            grow = 4 / 3
            if how(start) >= power:
                lo, hi = max(1, start * 3 // 4), start
                while lo > 1 and how(lo) >= power:
                    lo, hi = max(1, lo * 3 // 4), lo
            else:
                lo, hi = start, int(start * grow) + 1
        while how(hi) < power:
            lo, hi = hi, int(hi * grow) + 1
            if hi > 2**40:
                raise ConfigError("diff", diff, "needs more than 2**40 items: too small to detect")
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if how(mid) >= power else (mid, hi)
        return hi

    # the noncentral t's answer is the first guess of the simulated plan's (a few simulations, not a dozen)
    n = need(runs, plan, need(runs)) if n_items is None else n_items
    if accuracy is not None and design_effect is None and clusters(n) <= FEW_CLUSTERS:
        source += f", power simulated for {clusters(n)} clusters (compare()'s own test, arms at {accuracy:g} -+ {d / 2:g})"
    tradeoff = [
        PowerPoint(runs=k, n_items=need(k), total_runs=k * need(k)) for k in sorted({*_TRADEOFF_RUNS, runs})
    ]
    per_items = var_between + var_within / runs
    deff = (
        float(design_effect)
        if design_effect is not None
        else (variance(n, runs) * n / per_items if per_items > 0 else 1.0)
    )
    return PowerPlan(
        diff=d,
        alpha=float(alpha),
        power=float(power),
        runs=runs,
        n_items=n,
        var_within=float(var_within),
        var_between=float(var_between),
        var_cluster=vc,
        design_effect=deff,
        min_items=need(math.inf),
        tradeoff=tradeoff,
        source=source,
        items_per_cluster=m,
        n_clusters=clusters(n),
        achieved=plan(n),
    )


def _t_test_power(ncp: float, df: int, alpha: float) -> float:
    """Power of the two-sided t test at ``alpha`` on ``df`` df when the noncentrality is ``ncp``."""
    sps = _sps()
    crit = float(sps.t.ppf(1 - alpha / 2, df))
    return float(sps.nct.sf(crit, df, ncp) + sps.nct.cdf(-crit, df, ncp))


class _Pilot(NamedTuple):
    """Variance components of a paired difference estimated from a pilot benchmark."""

    within: float  # run-to-run variance of a per-run difference
    between: float  # variance of the items' true differences within a cluster
    cluster: float  # variance between clusters of the mean true difference (size spread included)
    items: int
    clusters: int
    accuracy: float  # the mean accuracy of the two arms (of the one arm) over the items


def _bench_components(t: _Table, arm_a: str, arm_b: str | None) -> _Pilot:
    """The variance components of a paired difference (or of one arm, doubled) in a pilot."""
    ia = _items(t, _arm_code(t, arm_a, "arm_a"))
    if arm_b is None:
        w, _ = _components(ia)
        if w is None:
            raise ConfigError(
                "bench", t.runs, "needs at least 2 runs per item to estimate variance components"
            )
        has = ia.k > 1
        noise = float(np.mean(ia.s2[has] / ia.k[has]))
        got = _split(ia.y, ia.cluster, noise)
        return _Pilot(2 * w, 2 * got[0], 2 * got[1], int(ia.y.size), got[2], float(ia.y.mean()))
    ib = _items(t, _arm_code(t, arm_b, "arm_b"))
    common, pa, pb = np.intersect1d(ia.idx, ib.idx, assume_unique=True, return_indices=True)
    ka, kb = ia.k[pa], ib.k[pb]
    has = (ka > 1) & (kb > 1)
    if common.size < 2 or not has.any():
        raise ConfigError("bench", t.runs, "needs at least 2 common items with 2 or more runs each")
    sa, sb = ia.s2[pa][has], ib.s2[pb][has]
    d = ia.y[pa] - ib.y[pb]
    within = float(np.mean(sa) + np.mean(sb))
    noise = float(np.mean(sa / ka[has] + sb / kb[has]))
    between, cluster, n_g = _split(d, t.item_cluster[common], noise)
    accuracy = float((ia.y[pa].mean() + ib.y[pb].mean()) / 2)
    return _Pilot(within, between, cluster, int(d.size), n_g, accuracy)


def _split(v: np.ndarray, cluster: np.ndarray, noise: float) -> tuple[float, float, int]:
    """(var_between, var_cluster, clusters) of per-item values ``v`` holding run noise ``noise``.

    ``var_between`` is the within-cluster mean square less the run noise (one-way ANOVA; with one
    item per cluster, or one cluster, the whole spread of ``v`` less the noise); ``var_cluster``
    is ``G`` times the CR2 clustered variance of ``mean(v)`` less the items' share
    ``(var_between + noise) / n``: for clusters of equal size the ANOVA estimate, and with
    unequal ones it carries their spread (what it weighs on an item-weighted mean), floored at 0.
    """
    g, n_g = _compact(cluster)
    n = v.size
    if n_g < 2 or n_g == n:
        return max(float(np.var(v, ddof=1)) - noise, 0.0), 0.0, n_g
    sizes = np.bincount(g, minlength=n_g).astype(float)
    means = np.bincount(g, weights=v, minlength=n_g) / sizes
    msw = float(np.sum((v - means[g]) ** 2)) / (n - n_g)
    se = _cluster_se(v, g, n_g)
    clustered = 0.0 if se is None else se * se
    return max(msw - noise, 0.0), max(n_g * (clustered - msw / n), 0.0), n_g


_SIM_BENCHMARKS = 4000
"""Benchmarks behind a simulated power (its Monte Carlo error is then at most 0.008)."""

_SIM_SEED = 20261201
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(48)
_GH_W = _GH_W / math.sqrt(2 * math.pi)


class _Logit(NamedTuple):
    """Logit-normal arms: ``logit p = mu + s + o_cluster + o_item`` (``s`` shared, ``o`` each arm's own)."""

    mu_a: float
    mu_b: float
    sd_shared: float
    sd_own_cluster: float
    sd_own_item: float


def _expit(x: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    return np.asarray(expit(x))


def _moments(mu: float, sd: float) -> tuple[float, float]:
    """``(E p, E p**2)`` for ``p = expit(mu + sd Z)``, ``Z`` standard normal (Gauss-Hermite)."""
    p = _expit(mu + sd * _GH_X)
    return float(np.sum(_GH_W * p)), float(np.sum(_GH_W * p * p))


def _solve_mu(accuracy: float, sd: float) -> float:
    from scipy.optimize import brentq

    return float(brentq(lambda m: _moments(m, sd)[0] - accuracy, -60.0, 60.0, xtol=1e-12))


def _fit_logit(
    acc_a: float, acc_b: float, var_within: float, var_between: float, var_cluster: float
) -> _Logit:
    """The logit-normal arms whose accuracies, run-to-run variance and true-difference variance are these.

    The marginal logit sd ``tau`` sets ``E[p (1 - p)]`` of each arm, so it is solved from
    ``var_within`` (the sum over the arms); the arms' own part ``sd_own`` (``<= tau``) sets how
    far their item probabilities differ, so it is solved from ``var_diff = var_between +
    var_cluster``; ``share_cluster`` of its square is put on the clusters. Each is held at its
    range's end when the components lie beyond what the model can give.
    """
    from scipy.optimize import brentq

    def mus(tau: float) -> tuple[float, float]:
        return _solve_mu(acc_a, tau), _solve_mu(acc_b, tau)

    def within(tau: float) -> float:
        ma, mb = mus(tau)
        return sum(m1 - m2 for m1, m2 in (_moments(ma, tau), _moments(mb, tau)))

    hi_tau = 12.0
    if within(0.0) <= var_within:
        tau = 0.0
    elif within(hi_tau) >= var_within:
        tau = hi_tau
    else:
        tau = float(brentq(lambda x: within(x) - var_within, 0.0, hi_tau, xtol=1e-6))
    ma, mb = mus(tau)

    def diff_var(own: float) -> float:
        shared = math.sqrt(max(tau * tau - own * own, 0.0))
        s = shared * _GH_X
        ea = np.array([_moments(ma + x, own)[0] for x in s])  # E[p_a | s]
        eb = np.array([_moments(mb + x, own)[0] for x in s])
        ea2 = np.array([_moments(ma + x, own)[1] for x in s])
        eb2 = np.array([_moments(mb + x, own)[1] for x in s])
        second = float(np.sum(_GH_W * (ea2 + eb2 - 2 * ea * eb)))
        return second - (acc_a - acc_b) ** 2

    var_diff = var_between + var_cluster
    if tau == 0.0 or diff_var(0.0) >= var_diff:
        own = 0.0
    elif diff_var(tau) <= var_diff:
        own = tau
    else:
        own = float(brentq(lambda x: diff_var(x) - var_diff, 0.0, tau, xtol=1e-6))
    shared = math.sqrt(max(tau * tau - own * own, 0.0))

    def cluster_var(sc: float) -> float:  # the variance over clusters of E[p_a - p_b | cluster]
        rest = math.sqrt(max(tau * tau - sc * sc, 0.0))
        out = 0.0
        for mu in (ma, mb):
            f = np.array([_moments(mu + sc * x, rest)[0] for x in _GH_X])
            out += float(np.sum(_GH_W * f * f)) - float(np.sum(_GH_W * f)) ** 2
        return out

    if own == 0.0 or var_cluster <= 0.0:
        sc = 0.0
    elif cluster_var(own) <= var_cluster:
        sc = own
    else:
        sc = float(brentq(lambda x: cluster_var(x) - var_cluster, 0.0, own, xtol=1e-6))
    return _Logit(ma, mb, shared, sc, math.sqrt(max(own * own - sc * sc, 0.0)))


def _simulated_power(model: _Logit, sizes: np.ndarray, runs: int, alpha: float) -> float:
    """The share of simulated benchmarks of ``model`` in ``sizes`` clusters whose paired test rejects."""
    rng = np.random.default_rng(_SIM_SEED)
    g = np.repeat(np.arange(sizes.size), sizes)
    n, s = int(sizes.sum()), _SIM_BENCHMARKS
    shared = rng.normal(0.0, model.sd_shared, (s, n))
    counts = []
    for mu in (model.mu_a, model.mu_b):
        logit = mu + shared + rng.normal(0.0, model.sd_own_item, (s, n))
        logit += rng.normal(0.0, model.sd_own_cluster, (s, sizes.size))[:, g]
        counts.append(rng.binomial(runs, _expit(logit)))
    d = (counts[0] - counts[1]) / runs
    return float(np.mean(_rejects(d, g, int(sizes.size), alpha, float(n * runs))))


def _rejects(d: np.ndarray, g: np.ndarray, n_g: int, alpha: float, trials: float) -> np.ndarray:
    """Whether :func:`~hrbench.stats.intervals.difference_interval` rejects at ``alpha``, per row of ``d``.

    The same test, vectorised over benchmarks (rows of per-item differences ``d``, shape (S, n),
    the runs known: ``trials``): the MOVER limits of the two discordance rates' equal-tailed
    Wilson intervals on their effective sizes, nested over the lower levels of the grid, and a
    rejection where that interval excludes 0 (exactly where its p-value is below ``alpha``).
    """
    from hrbench.stats.intervals import _ALPHAS, _VAR_RTOL, _t_isf_v, design_df

    s, n = d.shape
    onehot = np.zeros((n, n_g))
    onehot[np.arange(n), g] = 1.0
    inflate = 1.0 / (1.0 - onehot.sum(axis=0) / n)
    a, b = np.maximum(d, 0.0), np.maximum(-d, 0.0)
    both = a + b
    ta, tb, tc = ((x - x.mean(axis=1, keepdims=True)) @ onehot for x in (a, b, both))

    def cov(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.sum(u * v * inflate, axis=1) / (n * n)

    va, vb, vc, cab = cov(ta, ta), cov(tb, tb), cov(tc, tc), cov(ta, tb)
    pa, pb, pc = a.mean(axis=1), b.mean(axis=1), both.mean(axis=1)

    def fit(p: np.ndarray, v: np.ndarray) -> np.ndarray:
        return (p > 0) & (p < 1) & (v > _VAR_RTOL * p * (1 - p) / n)

    def size(p: np.ndarray, v: np.ndarray, ok: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(ok, p * (1 - p) / np.where(ok, v, 1.0), float(n))

    fa, fb = fit(pa, va), fit(pb, vb)
    pooled = size(pc, vc, fit(pc, vc))
    na = np.where(fa, size(pa, va, fa), np.where((pa > 0) & (pa < 1) & fb, np.inf, pooled))
    nb = np.where(fb, size(pb, vb, fb), np.where((pb > 0) & (pb < 1) & fa, np.inf, pooled))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(fa & fb, np.clip(cab / np.sqrt(va * vb), -1.0, 1.0), 0.0)
    sizes = np.bincount(g, minlength=n_g)
    if sizes.min() == sizes.max():
        df = np.full(s, max(n_g - 1, 1))
    else:
        df = np.array([design_df(row, g, n_g) for row in d])
    above = int(np.searchsorted(_ALPHAS, alpha, side="right"))
    alphas = np.concatenate([[alpha], _ALPHAS[above:]])
    z = np.empty((s, alphas.size))
    for k in np.unique(df):
        z[df == k] = _t_isf_v(alphas / 2, int(k))

    # the hull over lower levels only widens: a benchmark whose interval at alpha holds 0 keeps it
    cand = _mover(pa, pb, na, nb, r, z[:, :1])
    keep = np.flatnonzero(cand & (d.mean(axis=1) != 0.0))
    out = np.zeros(s, dtype=bool)
    if keep.size:
        out[keep] = _mover(pa[keep], pb[keep], na[keep], nb[keep], r[keep], z[keep])
    return out


def _mover(
    pa: np.ndarray, pb: np.ndarray, na: np.ndarray, nb: np.ndarray, r: np.ndarray, z: np.ndarray
) -> np.ndarray:
    """Whether the MOVER interval of ``pa - pb`` excludes 0 at every quantile of ``z`` (rows: benchmarks)."""

    def wilson(p: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p, m = p[:, None], m[:, None]
        zz = z * z / m
        centre = (p + zz / 2) / (1 + zz)
        half = z / (1 + zz) * np.sqrt(np.maximum(p * (1 - p), 0.0) / m + zz / (4 * m))
        return np.maximum(0.0, np.minimum(centre - half, p)), np.minimum(1.0, np.maximum(centre + half, p))

    la, ua = wilson(pa, na)
    lb, ub = wilson(pb, nb)
    ea, eb, rr = pa[:, None], pb[:, None], r[:, None]
    low = (ea - eb) - np.sqrt(
        np.maximum((ea - la) ** 2 + (ub - eb) ** 2 - 2 * rr * (ea - la) * (ub - eb), 0.0)
    )
    high = (ea - eb) + np.sqrt(
        np.maximum((ua - ea) ** 2 + (eb - lb) ** 2 - 2 * rr * (ua - ea) * (eb - lb), 0.0)
    )
    return (np.min(np.maximum(-1.0, low), axis=1) > 0) | (np.max(np.minimum(1.0, high), axis=1) < 0)
