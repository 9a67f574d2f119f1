"""Simulated benchmark designs for checking interval coverage, test size and power.

A design is clusters of items, runs per item and two arms. Each arm's per-run correctness is
Bernoulli with ``p = expit(mu_arm + u_cluster + v_item + w_arm_item + c_arm_cluster)``: logit
random effects for clusters and items that both arms share (so the arms are correlated, as arms
on one reference are), an arm x item effect of their own and, when ``sd_arm_cluster`` is set,
an arm x cluster effect (arms that differ cluster by cluster around their average
difference). ``mu_arm`` is solved so that the arm's true accuracy (the population mean of ``p``
over clusters and items, by Gauss-Hermite quadrature) is the design's. The simulation works on
per-item mean scores (a binomial count over the runs), the level at which :mod:`hrbench.stats`
computes, so thousands of benchmarks take seconds; checks call the same interval functions
:func:`hrbench.stats.report` and :func:`hrbench.stats.compare` use, and set beside hrbench's
test the clustered t test (:func:`clustered_t_p`) and the exact cluster sign-flip test
(:func:`sign_flip_p`) on the same benchmarks. :func:`verdict` holds a result to the rules.

Used by ``bench/coverage.py`` (the full table of :data:`DESIGNS`, each under two nulls) and
``tests/unit/stats/test_stats.py`` (a small deterministic version).

Example:
    >>> d = Design("demo", sizes=(4,) * 6, runs=5, accuracy=0.7)
    >>> sim = simulate(d, 3, np.random.default_rng(0))
    >>> sim.ya.shape, round(sim.truth_a, 3)
    ((3, 24), 0.7)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hrbench.stats import difference_interval, proportion_interval
from hrbench.testing._oracles import clustered_t_p, disagreeing_clusters, sign_flip_p

__all__ = [
    "ARM_X_CLUSTER_SD",
    "Design",
    "Simulated",
    "arm_rows",
    "check",
    "clustered_t_p",
    "disagreeing_clusters",
    "lognormal_sizes",
    "DESIGNS",
    "SKEW",
    "SKEW_SHARE",
    "promised_power",
    "rows_for",
    "sign_flip_p",
    "simulate",
    "stated_components",
    "verdict",
]

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(96)


def _accuracy(mu: float, sd: float) -> float:
    """``E[expit(mu + sd * Z)]``, ``Z`` standard normal (Gauss-Hermite)."""
    from scipy.special import expit

    return float(np.sum(_GH_W * expit(mu + sd * _GH_X)) / math.sqrt(2 * math.pi))


def _solve_mu(accuracy: float, sd: float, skew: float = 0.0) -> float:
    """The logit mean whose arm has ``accuracy``, over its random effects (and a skew's two shifts)."""
    if accuracy >= 1.0:
        return math.inf
    if accuracy <= 0.0:
        return -math.inf
    from scipy.optimize import brentq

    shifts = _skew_shifts(skew)

    def acc(m: float) -> float:
        return sum(w * _accuracy(m + x, sd) for x, w in shifts)

    return float(brentq(lambda m: acc(m) - accuracy, -40.0, 40.0, xtol=1e-12))


SKEW_SHARE = 0.1
"""The share of clusters on which a skewed arm is much worse (:attr:`Design.skew`)."""

SKEW = 0.15
"""The skewed null's logit advantage on 90% of clusters (its loss on 10%: 9 times it; :func:`rows_for`)."""


def _skew_shifts(skew: float) -> list[tuple[float, float]]:
    """``(logit shift, probability)`` of a skewed arm's clusters: ``+skew`` on 90%, ``-9 skew`` on 10%."""
    if not skew:
        return [(0.0, 1.0)]
    return [(skew, 1.0 - SKEW_SHARE), (-skew * (1.0 - SKEW_SHARE) / SKEW_SHARE, SKEW_SHARE)]


def lognormal_sizes(clusters: int, median: float, sigma: float, seed: int = 0) -> tuple[int, ...]:
    """Cluster sizes drawn from a lognormal (``exp(N(log median, sigma))``, rounded, at least 1), seeded.

    Example:
        >>> lognormal_sizes(6, 8, 0.8)
        (9, 7, 13, 9, 5, 11)
    """
    rng = np.random.default_rng(seed)
    return tuple(max(1, round(float(x))) for x in np.exp(rng.normal(math.log(median), sigma, clusters)))


@dataclass(frozen=True)
class Design:
    """A benchmark design.

    Attributes:
        name: shown in tables.
        sizes: items in each cluster (one entry per cluster).
        runs: runs per item.
        accuracy: arm ``a``'s true accuracy.
        diff: arm ``a`` minus arm ``b`` for the coverage and power checks (0: no check).
        sd_cluster, sd_item, sd_arm_item: logit standard deviations of the random effects.
        sd_arm_cluster: the logit standard deviation of an arm x cluster effect, each arm its
            own: the arms then differ cluster by cluster around their average difference.
        descriptive: fewer than 5 runs (reported as descriptive).
        skew: arm ``a``'s skewed arm x cluster effect (logit units; 0: none): on each cluster,
            drawn independently, it is better by ``skew`` with probability 0.9 and worse by
            ``9 * skew`` with probability 0.1, its mean solved so that its accuracy stays
            ``accuracy``: with ``diff`` 0 the arms are equal on average, one a little better
            on most clusters and much worse on a few (a skewed null).
        cluster_failure: the chance that arm ``a`` fails every run of every item of a cluster
            (a whole cluster down at once); its true accuracy is then ``accuracy * (1 -
            cluster_failure)``.
    """

    name: str
    sizes: tuple[int, ...]
    runs: int
    accuracy: float
    diff: float = 0.0
    sd_cluster: float = 0.5
    sd_item: float = 1.5
    sd_arm_item: float = 0.5
    sd_arm_cluster: float = 0.0
    descriptive: bool = False
    skew: float = 0.0
    cluster_failure: float = 0.0

    @property
    def n_items(self) -> int:
        return int(sum(self.sizes))

    @property
    def cluster(self) -> np.ndarray:
        """Per-item cluster codes, shape (n_items,)."""
        return np.repeat(np.arange(len(self.sizes)), self.sizes)

    @property
    def sd(self) -> float:
        return math.sqrt(self.sd_cluster**2 + self.sd_item**2 + self.sd_arm_item**2 + self.sd_arm_cluster**2)


@dataclass
class Simulated:
    """``n`` simulated benchmarks of a design: per-item mean scores of each arm."""

    ya: np.ndarray  # (n, items)
    yb: np.ndarray  # (n, items)
    truth_a: float
    truth_b: float
    extra: dict[str, Any] = field(default_factory=dict)


def _draw(
    d: Design, n: int, rng: np.random.Generator, acc_b: float, runs: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-run correctness counts (n, items) for both arms, sharing cluster and item effects.

    The third array is each benchmark's number of clusters on which the skewed arm is much worse
    (shape (n,); all 0 without :attr:`Design.skew`).
    """
    from scipy.special import expit

    k = d.runs if runs is None else runs
    u = rng.normal(0.0, d.sd_cluster, (n, len(d.sizes)))[:, d.cluster]
    v = rng.normal(0.0, d.sd_item, (n, d.n_items))
    out = []
    bad = np.zeros(n, dtype=int)
    for arm, acc in enumerate((d.accuracy, acc_b)):
        skew = d.skew if arm == 0 else 0.0
        mu = _solve_mu(acc, d.sd, skew)
        w = rng.normal(0.0, d.sd_arm_item, (n, d.n_items))
        if d.sd_arm_cluster:
            w += rng.normal(0.0, d.sd_arm_cluster, (n, len(d.sizes)))[:, d.cluster]
        if skew:
            shift = _skew_draw(skew, rng, (n, len(d.sizes)))
            bad = (shift < 0).sum(axis=1)
            w += shift[:, d.cluster]
        if math.isinf(mu):
            counts = np.full((n, d.n_items), k if mu > 0 else 0)
        else:
            counts = rng.binomial(k, expit(mu + u + v + w))
        if arm == 0 and d.cluster_failure:
            down = rng.random((n, len(d.sizes))) < d.cluster_failure
            counts = np.where(down[:, d.cluster], 0, counts)
        out.append(counts)
    return out[0], out[1], bad


def _skew_draw(skew: float, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """A skewed arm's logit shift per cluster (:data:`SKEW_SHARE` of them much worse), shape ``shape``."""
    (good, _), (bad, _) = _skew_shifts(skew)
    return np.where(rng.random(shape) < SKEW_SHARE, bad, good)


def simulate(d: Design, n: int, rng: np.random.Generator, diff: float | None = None) -> Simulated:
    """``n`` benchmarks of design ``d`` with arm ``b`` at ``accuracy - diff`` (default ``d.diff``).

    Args:
        d: the design.
        n: how many benchmarks.
        rng: the random generator (seed it).
        diff: true accuracy of ``a`` minus ``b``; ``0`` for two arms equally good.

    Returns:
        Per-item mean scores of both arms, shape (n, items), and their true accuracies;
        ``extra["skewed_clusters"]``: each benchmark's number of clusters on which the skewed arm
        is much worse (shape (n,); all 0 without :attr:`Design.skew`).
    """
    delta = d.diff if diff is None else diff
    ca, cb, bad = _draw(d, n, rng, d.accuracy - delta)
    truth_a = d.accuracy * (1.0 - d.cluster_failure)
    return Simulated(ca / d.runs, cb / d.runs, truth_a, d.accuracy - delta, {"skewed_clusters": bad})


def arm_rows(d: Design, rng: np.random.Generator, copies: int = 1, runs: int | None = None) -> dict[str, Any]:
    """One benchmark of ``d`` (its clusters repeated ``copies`` times) as row columns for report().

    Returns:
        A mapping of the row columns (``cluster``, ``item``, ``arm``, ``run``, ``correct``, ...),
        numpy arrays for arms ``a`` and ``b``, as :func:`hrbench.stats.report` and
        :func:`hrbench.stats.power` accept.
    """
    from scipy.special import expit

    k = d.runs if runs is None else runs
    sizes = d.sizes * copies
    n_g, cl = len(sizes), np.repeat(np.arange(len(sizes)), sizes)
    n = cl.size
    shared = rng.normal(0.0, d.sd_cluster, n_g)[cl] + rng.normal(0.0, d.sd_item, n)
    correct = []
    for arm, acc in enumerate((d.accuracy, d.accuracy - d.diff)):
        skew = d.skew if arm == 0 else 0.0
        mu = _solve_mu(acc, d.sd, skew)
        own = rng.normal(0.0, d.sd_arm_item, n)
        if d.sd_arm_cluster:
            own = own + rng.normal(0.0, d.sd_arm_cluster, n_g)[cl]
        if skew:
            own = own + _skew_draw(skew, rng, (n_g,))[cl]
        p = np.full(n, 1.0 if mu > 0 else 0.0) if math.isinf(mu) else expit(mu + shared + own)
        correct.append((rng.random((n, k)) < p[:, None]).ravel())
    rows = 2 * n * k
    item = np.tile(np.repeat(np.arange(n), k), 2)
    return {
        "cluster": cl[item],
        "item": item,
        "arm": np.repeat(np.array(["a", "b"]), n * k),
        "run": np.tile(np.arange(1, k + 1), 2 * n),
        "correct": np.concatenate(correct),
        "failure_kind": [None] * rows,
        "usd": np.zeros(rows),
        "reportable": np.ones(rows, dtype=bool),
    }


ARM_X_CLUSTER_SD = 0.3
"""The logit sd of the second null's arm x cluster effect: arms that differ cluster by cluster, not on average."""


def stated_components(d: Design, seed: int = 0, clusters: int = 4000, items: int = 200) -> dict[str, float]:
    """The true variance components of ``d``'s paired difference, for :func:`hrbench.stats.power`.

    Computed from the model itself (the per-item probabilities, no runs drawn): ``var_within``
    is ``E[p_a (1 - p_a) + p_b (1 - p_b)]``, the run-to-run variance of a per-run difference;
    ``var_cluster`` the variance over clusters of the cluster's expected difference
    ``E[p_a - p_b | cluster]`` and ``var_between`` the variance of the items' true
    differences within a cluster (``clusters`` clusters of ``items`` items each, Monte Carlo;
    the finite-``items`` share removed from ``var_cluster``); ``var_cluster_accuracy`` the
    variance over clusters of the arms' cluster accuracy ``E[(p_a + p_b) / 2 | cluster]`` (its
    finite-``items`` share removed likewise).
    """
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    shape = (clusters, items)
    shared = rng.normal(0.0, d.sd_cluster, (clusters, 1)) + rng.normal(0.0, d.sd_item, shape)
    p = []
    for arm, acc in enumerate((d.accuracy, d.accuracy - d.diff)):
        skew = d.skew if arm == 0 else 0.0
        mu = _solve_mu(acc, d.sd, skew)
        own = rng.normal(0.0, d.sd_arm_item, shape) + rng.normal(0.0, d.sd_arm_cluster, (clusters, 1))
        if skew:
            own = own + _skew_draw(skew, rng, (clusters, 1))
        p.append(np.full(shape, 1.0 if mu > 0 else 0.0) if math.isinf(mu) else expit(mu + shared + own))
    diff = p[0] - p[1]
    within = float(np.mean(p[0] * (1 - p[0]) + p[1] * (1 - p[1])))
    between = float(np.mean(diff.var(axis=1, ddof=1)))
    cluster = max(float(diff.mean(axis=1).var(ddof=1)) - between / items, 0.0)
    both = (p[0] + p[1]) / 2
    accuracy = float(both.mean(axis=1).var(ddof=1)) - float(both.var(axis=1, ddof=1).mean()) / items
    return {
        "var_within": within,
        "var_between": between,
        "var_cluster": cluster,
        "var_cluster_accuracy": max(accuracy, 0.0),
    }


_CHECKS = (
    "arm_cover",
    "arm_width",
    "arm_naive",
    "arm_zero_width",
    "pair_cover",
    "pair_naive",
    "power",
    "power_t",
    "power_sf",
    "power_naive",
    "fpr",
    "fpr_t",
    "fpr_sf",
    "fpr_naive",
    "few_disagree",
    "pair_zero_width",
    "fpr_clean",
    "fpr_t_clean",
    "fpr_sf_clean",
    "clean",
)


def check(
    d: Design,
    n: int,
    seed: int,
    level: float = 0.95,
    alpha: float = 0.05,
    sd_arm_cluster: float | None = None,
    n_power: int | None = None,
) -> dict[str, float]:
    """Coverage, size and power of hrbench's intervals on ``n`` benchmarks of ``d``, beside other tests.

    The benchmarks are drawn with the arm x cluster effect ``sd_arm_cluster`` (default: the
    design's own): 0 for the null of two equally good arms, :data:`ARM_X_CLUSTER_SD` for the
    null of arms that differ cluster by cluster with no average difference. On the same
    benchmarks three tests are made: hrbench's (:func:`~hrbench.stats.difference_interval`),
    the clustered t test (:func:`clustered_t_p`) and the exact cluster sign-flip test
    (:func:`sign_flip_p`). The naive intervals treat every run as independent (Wald over all
    runs; the difference as two independent proportions), as many harnesses do.

    Returns:
        ``arm_cover`` (arm ``a``'s interval covers its true accuracy), ``arm_width``,
        ``arm_naive``, ``arm_zero_width`` (intervals of width under 1e-9: must be 0); when
        ``d.diff`` is set ``pair_cover``, ``pair_naive``, ``power``, ``power_t``,
        ``power_sf`` and ``power_naive`` (rejections at ``alpha`` when the difference is real);
        and unless every run is right, ``fpr``, ``fpr_t``, ``fpr_sf``, ``fpr_naive``
        (rejections when arm ``b`` is drawn at arm ``a``'s accuracy), ``few_disagree`` (the
        share of those null benchmarks in which 5 or fewer clusters hold any disagreement),
        ``pair_zero_width``; with :attr:`Design.skew`, ``clean`` (the share of null benchmarks
        holding no skewed cluster: to the data a real shift of arm ``a`` everywhere) and
        ``fpr_clean``, ``fpr_t_clean``, ``fpr_sf_clean`` (the share of null benchmarks that are
        clean and rejected, part of ``fpr``, ``fpr_t``, ``fpr_sf``: any test's false positives
        are at least ``clean`` times its power against that shift); ``min_p``, the smallest p-value hrbench gave; ``n_power``, the
        benchmarks behind the powers: ``n``, or ``n_power`` when that is more (the powers are
        then from ``n_power - n`` more benchmarks of the alternative besides: only the tests
        run on them, to bring the powers' Monte Carlo error down).
    """
    from scipy import stats

    if sd_arm_cluster is not None:
        d = replace(d, sd_arm_cluster=sd_arm_cluster)
    rng = np.random.default_rng(seed)
    g = d.cluster
    n_g = len(d.sizes)
    z = float(stats.norm.ppf(0.5 + level / 2))
    total = d.n_items * d.runs
    alt = simulate(d, n, rng)
    null = simulate(d, n, rng, diff=0.0)
    out: dict[str, list[float]] = {k: [] for k in _CHECKS}
    min_p = 1.0
    constant = d.accuracy >= 1.0 or d.accuracy <= 0.0  # every run alike: nothing to test
    for s in range(n):
        iv = proportion_interval(alt.ya[s], g, n_g, level, total)
        assert iv.low is not None and iv.high is not None
        out["arm_cover"].append(iv.low <= alt.truth_a <= iv.high)
        out["arm_width"].append(iv.high - iv.low)
        out["arm_zero_width"].append(iv.high - iv.low < 1e-9)
        p = float(alt.ya[s].mean())
        half = z * math.sqrt(p * (1 - p) / total)
        out["arm_naive"].append(abs(p - alt.truth_a) <= half)
        for sim, key in ((alt, "pair"), (null, "fpr")):
            if (key == "pair" and not d.diff) or (key == "fpr" and constant):
                continue
            dv = difference_interval(sim.ya[s], sim.yb[s], g, n_g, level, total)
            assert dv.low is not None and dv.high is not None and dv.p_value is not None
            min_p = min(min_p, dv.p_value)
            dd = sim.ya[s] - sim.yb[s]
            counts = np.rint(dd * d.runs)
            pa, pb = float(sim.ya[s].mean()), float(sim.yb[s].mean())
            se_naive = math.sqrt((pa * (1 - pa) + pb * (1 - pb)) / total)
            truth = sim.truth_a - sim.truth_b
            naive_reject = abs(pa - pb) > z * se_naive if se_naive > 0 else pa != pb
            rejects = (
                dv.p_value < alpha,
                clustered_t_p(dd, g, n_g) < alpha,
                sign_flip_p(counts, g, n_g) < alpha,
                naive_reject,
            )
            if key == "pair":
                out["pair_cover"].append(dv.low <= truth <= dv.high)
                out["pair_naive"].append(abs(pa - pb - truth) <= z * se_naive)
                for k, r in zip(("power", "power_t", "power_sf", "power_naive"), rejects, strict=True):
                    out[k].append(r)
            else:
                _tally_null(out, rejects, bool(null.extra["skewed_clusters"][s] == 0) if d.skew else None)
                out["few_disagree"].append(disagreeing_clusters(dd, g, n_g) <= 5)
                out["pair_zero_width"].append(dv.high - dv.low < 1e-9)
    extra = max(0, (n_power or 0) - n) if d.diff else 0
    more = simulate(d, extra, rng) if extra else None
    for s in range(extra):
        assert more is not None
        dv = difference_interval(more.ya[s], more.yb[s], g, n_g, level, total)
        assert dv.p_value is not None
        min_p = min(min_p, dv.p_value)
        dd = more.ya[s] - more.yb[s]
        out["power"].append(dv.p_value < alpha)
        out["power_t"].append(clustered_t_p(dd, g, n_g) < alpha)
        out["power_sf"].append(sign_flip_p(np.rint(dd * d.runs), g, n_g) < alpha)
    res = {k: float(np.mean(v)) for k, v in out.items() if v}
    res["min_p"] = min_p
    res["n_power"] = float(n + extra) if d.diff else float(n)
    if d.cluster_failure:  # all right but for whole clusters: discrete, judged from below only
        res["cover_floor"] = 1.0
    return res


def _tally_null(out: dict[str, list[float]], rejects: tuple[bool, ...], clean: bool | None) -> None:
    """A null benchmark's rejections; with a skew, whether it held no skewed cluster (a real shift to the data) too."""
    for k, r in zip(("fpr", "fpr_t", "fpr_sf", "fpr_naive"), rejects, strict=True):
        out[k].append(r)
    if clean is not None:
        out["clean"].append(clean)
        for k, r in zip(("fpr_clean", "fpr_t_clean", "fpr_sf_clean"), rejects[:3], strict=True):
            out[k].append(clean and r)


COVERAGE_BAND = (0.935, 0.965)
FPR_BAND = (0.035, 0.065)


def verdict(
    r: dict[str, float], n: int, promised: dict[str, float] | None = None, slack: float = 0.0
) -> list[str]:
    """What fails in a :func:`check` result by the rules of ``bench/coverage.py``; ``[]`` when it passes.

    * per-arm and paired coverage within :data:`COVERAGE_BAND` (93.5-96.5%);
    * the false-positive rate at most 0.065, always; and at least 0.035, or where the test
      cannot reach it (few clusters ever disagree), power at least that of both the clustered
      t test and the exact cluster sign-flip test on the same benchmarks, minus two Monte
      Carlo errors (``sqrt(p (1 - p) / n)`` of that power);
    * no interval of zero width (for a design whose every run is right, only this: its
      coverage is trivially 1; one right on every run but for clusters that fail whole,
      ``cluster_failure``, covers at least 0.935);
    * ``power()``'s promise (each value of ``promised``) within 0.03 of the simulated power.

    ``slack`` widens every band by that much on each side (a small ``n`` in the unit tests).
    """
    bad: list[str] = []
    lo, hi = COVERAGE_BAND
    constant = "fpr" not in r and "pair_cover" not in r  # every run right: any interval reaching 1 covers
    if r.get("cover_floor") and r["arm_cover"] < lo - slack:  # whole-cluster failures: at least 0.935
        bad.append(f"arm_cover {r['arm_cover']:.3f} below {lo - slack:.3f}")
    for k in ("arm_cover", "pair_cover"):
        if k in r and not constant and not lo - slack <= r[k] <= hi + slack:
            bad.append(f"{k} {r[k]:.3f} outside {lo - slack:.3f}-{hi + slack:.3f}")
    if "fpr" in r:
        if r["fpr"] > FPR_BAND[1] + slack:
            bad.append(f"fpr {r['fpr']:.3f} above {FPR_BAND[1] + slack:.3f}")
        if r["fpr"] < FPR_BAND[0] - slack:
            if "power" not in r:
                bad.append(f"fpr {r['fpr']:.3f} below {FPR_BAND[0] - slack:.3f} and no power to show")
            else:
                n_pow = r.get("n_power", n)
                for k in ("power_t", "power_sf"):
                    floor = r[k] - 2 * math.sqrt(r[k] * (1 - r[k]) / n_pow) - slack
                    if r["power"] < floor:
                        bad.append(
                            f"fpr {r['fpr']:.3f} below the band and power {r['power']:.3f} under {k} less 2 MC errors ({floor:.3f})"
                        )
    for k in ("arm_zero_width", "pair_zero_width"):
        if r.get(k):
            bad.append(f"{k} {r[k]:.4f}: intervals of zero width")
    for name, v in (promised or {}).items():
        if "power" in r and abs(v - r["power"]) > 0.03 + slack:
            bad.append(
                f"power() {name} {v:.3f} vs simulated {r['power']:.3f}: off by more than {0.03 + slack:.3f}"
            )
    return bad


def promised_power(
    d: Design, seed: int, pilot: bool = False, alpha: float = 0.05, clusters: int = 2000
) -> float:
    """What :func:`hrbench.stats.power` promises at ``d``'s items, from components stated or from a pilot.

    Stated: the model's own components (:func:`stated_components`, ``var_cluster_accuracy``
    among them), the arms' mean accuracy and the design's cluster sizes (with 10 or fewer clusters, or unequal ones, power() then
    simulates compare()'s test). From a pilot: ``power(bench=pilot)`` on one
    benchmark of ``d``'s clusters repeated to about ``clusters``, with 5 runs per item at least
    (as a user would plan from a pilot).
    """
    from hrbench.stats import power

    m = d.n_items / len(d.sizes)
    if pilot:
        rng = np.random.default_rng(seed)
        rows = arm_rows(d, rng, copies=max(1, clusters // len(d.sizes)), runs=max(d.runs, 5))
        return power(d.diff, alpha, bench=rows, runs=d.runs, items_per_cluster=m, n_items=d.n_items).achieved
    c = stated_components(d, seed)
    return power(
        d.diff,
        alpha,
        var_within=c["var_within"],
        var_between=c["var_between"],
        var_cluster=c["var_cluster"],
        runs=d.runs,
        items_per_cluster=m,
        n_items=d.n_items,
        var_cluster_accuracy=c["var_cluster_accuracy"],
        accuracy=d.accuracy - d.diff / 2,
        cluster_sizes=d.sizes,
    ).achieved


UNEQUAL = tuple(int(x) for x in np.linspace(2, 40, 15).round())  # 15 clusters of 2-40 items

DESIGNS = [
    Design("50x10x5", (10,) * 50, 5, 0.7, diff=0.04),
    Design("20x20x5 strong cluster", (20,) * 20, 5, 0.7, diff=0.05, sd_cluster=1.5),
    Design("5x40x5", (40,) * 5, 5, 0.7, diff=0.06),
    Design("10x10x5", (10,) * 10, 5, 0.7, diff=0.06),
    Design("40x2x10", (2,) * 40, 10, 0.7, diff=0.08),
    Design("15 cl of 2-40 @0.90", UNEQUAL, 5, 0.9, diff=0.04),
    Design("25x8x1 descriptive", (8,) * 25, 1, 0.7, diff=0.1, descriptive=True),
    Design("10x3x5 @0.97", (3,) * 10, 5, 0.97, diff=0.05),
    Design("3x10x5", (10,) * 3, 5, 0.7, diff=0.15),
    Design("2x20x5", (20,) * 2, 5, 0.7, diff=0.15),
    Design("5x27x5 0.60 vs 0.45", (27,) * 5, 5, 0.6, diff=0.15, sd_arm_cluster=ARM_X_CLUSTER_SD),
    Design("all correct, 5 items", (1,) * 5, 5, 1.0),
    Design("all correct, 30 items", (3,) * 10, 5, 1.0),
    Design("all correct, 300 items", (5,) * 60, 5, 1.0),
    Design("30 lognormal 1-40 @0.7", lognormal_sizes(30, 8, 0.8, 1), 5, 0.7, diff=0.05),
    Design("10x20x5 whole clusters fail", (20,) * 10, 5, 1.0, cluster_failure=0.05),
]
"""The designs ``bench/coverage.py`` checks (and, fewer benchmarks of some, the unit tests)."""


def rows_for(d: Design) -> list[tuple[str, Design]]:
    """The design under each null: ``"equal"`` (no arm x cluster effect), ``"axc"`` (sd 0.3) and ``"skew"``.

    In the ``"axc"`` row the alternative has the same arm x cluster effect (the 5x27x5 design's
    own); in the ``"skew"`` row arm ``a`` is better by :data:`SKEW` on the logit on 90% of
    clusters and worse by 9 times it on 10%, its accuracy unchanged (gains and losses that do
    not mirror each other), and so is its alternative. A design whose every run is right has one
    row, ``"-"``: there is nothing to test.
    """
    if d.accuracy >= 1.0:
        return [("-", d)]
    return [
        ("equal", replace(d, sd_arm_cluster=0.0)),
        ("axc", replace(d, sd_arm_cluster=d.sd_arm_cluster or ARM_X_CLUSTER_SD)),
        ("skew", replace(d, sd_arm_cluster=0.0, skew=SKEW)),
    ]
