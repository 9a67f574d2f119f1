"""Stop when sure: an anytime-valid sequential comparison of arms, cluster by cluster.

A benchmark normally runs every cluster of its reference. With a :class:`StopWhenSure` rule the
runner takes the clusters in a seeded random order, commits each finished cluster (in that
order) to a :class:`SequentialTest`, and stops as soon as the question is answered: which arm
is better (``goal="rank"``), how big the difference is to within a tolerance
(``goal="tolerance"``), either (``"rank_or_tolerance"``), or whether running the rest of the
reference could change the answer (``goal="full_run"``). The guarantee survives looking after
every cluster: whenever the benchmark stops, the chance that it declared a difference between
two arms that are equally good is at most ``alpha`` (over all the pairs at once), and every
confidence sequence holds at all looks at once with probability ``1 - alpha``.

The estimand is the mean difference over clusters like these: the reference's clusters are
treated as draws from a larger population of clusters (item-weighted: each cluster weighs by its
size). ``goal="full_run"`` is about this reference only: the difference a full run of every
cluster would show.

The exact test (``method="exact"``). After each committed cluster ``c`` and for each
pair ``(a, b)``: ``D_c`` is the cluster's mean over items of ``y_a - y_b`` (each ``y`` the mean
of ``correct`` over the item's runs), ``w_c`` the cluster's size over the reference's mean
cluster size (known before the cluster runs: a predictable weight), ``S += w D``,
``V += w**2 D**2``, and::

    log E = 1/2 log(rho / (V + rho)) + S**2 / (2 (V + rho))

the normal mixture (over the bet ``lambda ~ N(0, 1/rho)``) of de la Pena's self-normalised
supermartingale ``exp(lambda S - lambda**2 V / 2)`` (de la Pena 1999, "A general class of
exponential inequalities for martingales and ratios", Ann. Probab. 27), valid for any
distribution of the cluster differences that is symmetric under "no difference", which arms that
are equally good (or differ cluster by cluster with no average difference) give. ``E`` is an
e-process: Ville's inequality bounds by ``alpha / pairs`` the chance it ever reaches
``pairs / alpha``; so a pair is decided (for the arm with the higher mean) when it does, and
``p_anytime = min(1, 1 / max E so far)`` is an anytime-valid p-value. With several pairs a pair
is also decided once every set of pairs holding it has a mean ``E`` of at least ``1 / alpha``
(closed testing with the mean of e-processes, itself an e-process: :func:`~hrbench.stats._sequential_math.sure_closed`;
the asymptotic method keeps ``pairs / alpha``), which a pair reaching ``pairs / alpha`` always
meets. ``rho`` is set before the
first cluster so that the boundary is tightest where the plan (an :func:`~hrbench.stats.power`
result: its difference and variance components) expects to be decided (Howard, Ramdas,
McAuliffe & Sekhon 2021, "Time-uniform, nonparametric, nonasymptotic confidence sequences",
Ann. Statist. 49, the normal-mixture boundary); without a plan, for clusters whose differences
vary with sd 0.1 over the reference's clusters. Its confidence sequence inverts the same
e-process at every candidate difference.

``method="symmetric"``: the same mixture over the bet of the product of ``exp(lambda w D) /
cosh(lambda w D)`` over the clusters, an exact martingale under the same symmetry that is at least
de la Pena's bet by bet (``cosh x <= exp(x**2 / 2)``) and can reach ``pairs / alpha`` after 5
clusters rather than 10: in ``bench/sequential.py`` it ran 1.08-1.24 times the fixed design's
clusters at the planned difference where the exact method ran 1.24-1.60 (designs of 13 or more
planned clusters). Its confidence sequence inverts the same e-process at every candidate
difference (it keeps each cluster's ``w D`` for that), so a pair decided at ``pairs / alpha``
has a sequence that excludes 0 (one decided sooner by the closed step-down may not).

``method="asymptotic"``: the same boundary with ``V`` taken around the running mean, an
asymptotic confidence sequence (Waudby-Smith, Arnold, Wu, Wang & Ramdas 2023, "Time-uniform
central limit theory and asymptotic confidence sequences", Ann. Statist.; Howard et al. 2021):
narrower, valid as the clusters grow in number. ``method="strict"``: a hedged betting confidence
sequence for differences bounded in [-1, 1] (Waudby-Smith & Ramdas 2023, "Estimating means of
bounded random variables by betting", JRSS B 86), valid whatever the distribution and however few
the clusters, and the widest. ``goal="full_run"``: the betting confidence sequence for sampling
without replacement (Waudby-Smith & Ramdas 2020, "Confidence sequences for sampling without
replacement", NeurIPS) over the random order of this reference's clusters, for the difference a
full run would give.

``method="auto"`` (the default) runs ``"asymptotic"`` when the plan needs fewer than 2.5 times
the clusters the symmetric test needs to decide at all (under 13 for one pair at alpha 0.05;
without a plan, when the rule may run fewer than twice that) and the clusters are of similar
size, else ``"symmetric"`` (:meth:`StopWhenSure.resolved_method`): no test that is exact under
symmetry alone can decide a pair at alpha 0.05 on 4 or 5 clusters (2 to the power 5 is 32 sign
patterns), where a fixed design's t test already leans on the clusters' spread, and the
asymptotic sequence leans on it the same way; on clusters of unequal size it does not hold its
alpha (:meth:`StopWhenSure.validity_warning`). The choice is fixed before the first cluster and
stored with the benchmark, so a resume continues the same test.

Equal arms are not left to run to ``max_clusters``: with a plan, a pair is settled as no different
(``"equivalent"``) when it shows no difference beyond ``+-margin`` (1.75 times the plan's
difference) and the one seen is near 0 (:meth:`StopWhenSure.near_for`). One pair of interest (two
arms): settling it ends the benchmark, so it takes the stricter two-sided rule, its confidence
sequence within ``+-margin`` (wrong only when it missed the truth: within ``alpha``). Several
pairs, where a settled pair only stops waiting on that pair while the others run on: two
one-sided tests at ``pairs / alpha`` each (:func:`~hrbench.stats._sequential_math.within_margin`).

The clusters run in a seeded uniform order, or with ``order="informative"`` drawn with known
probabilities from how the paired difference varied on each in earlier benchmarks of the same
reference, each weighted by the inverse of its probability (:mod:`hrbench.stats._sequential_order`).

However large the difference, the exact test's ``E`` after ``n`` clusters is at most ``exp((n - 1) / 2) /
sqrt(n)`` (Cauchy-Schwarz: ``S**2 <= n V``), so one pair at ``alpha = 0.05`` is decided after 10
clusters at the earliest (the symmetric test's, after 5).

k arms: an arm decided worse on every pair of interest it is in stops being run; with
``best_arm=True`` the test stops once one arm is decided better than every other (and an arm
decided worse than any other stops being run). Resuming with :meth:`SequentialTest.from_state`
continues the same e-processes: e-values multiply, so optional continuation stays valid.

Example:
    >>> rule = StopWhenSure(pairs=[("new", "base")], seed=1)
    >>> test = rule.start(["new", "base"], {f"c{i}": 10 for i in range(40)})
    >>> for c in rule.cluster_order([f"c{i}" for i in range(40)]):
    ...     test.commit(c, {"new": {f"{c}-{j}": 0.9 for j in range(10)},
    ...                     "base": {f"{c}-{j}": 0.5 for j in range(10)}})
    ...     if test.stopped:
    ...         break
    >>> test.stopped, test.summary()["winner"], test.summary()["clusters"], test.summary()["method"]
    ('decided', 'new', 7, 'symmetric')
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from hrbench._util.forms import check_one_of
from hrbench.errors import ConfigError
from hrbench.stats import _sequential_math as sm
from hrbench.stats._sequential_order import cluster_spread, draw_probabilities, weighted_order
from hrbench.stats._sequential_test import REASONS, SequentialTest, _is_int

__all__ = ["GOALS", "METHODS", "ORDERS", "REASONS", "SequentialTest", "StopWhenSure", "cluster_spread"]

GOALS = ("rank", "tolerance", "rank_or_tolerance", "full_run")
METHODS = ("auto", "exact", "symmetric", "asymptotic", "strict")
ORDERS = ("uniform", "informative")
_DEFAULT_SD = 0.1  # without a plan: cluster differences assumed to vary with this sd
_HORIZON = 1.0  # the boundary is tightest at this multiple of the plan's clusters
_MARGIN = 1.75  # the default margin: this many times the plan's difference
_NEAR = 3.5  # a given margin settles a pair seen within margin / _NEAR
_AUTO_MARGIN = 2.5  # "auto": the asymptotic test (on similar sizes) when the plan has fewer than this many times the clusters the symmetric one needs
_SIMILAR = (
    0.8  # clusters count as of similar size when Kish's effective number of them is at least this share
)


def _similar(sizes: Sequence[float] | None) -> bool:
    """Whether clusters of ``sizes`` items are of similar size: Kish's effective number of them at least 0.8 of it.

    ``None`` (sizes not known) counts as similar.
    """
    if sizes is None or len(sizes) == 0:
        return True
    arr = np.asarray(sizes, dtype=float)
    return float(arr.sum() ** 2 / np.sum(arr**2)) >= _SIMILAR * arr.size


@dataclass(frozen=True)
class StopWhenSure:
    """A rule that stops a benchmark as soon as its question is answered, valid however often it looks.

    Args:
        pairs: the pairs of arms ``(a, b)`` of interest; ``None``: every pair (alpha is split
            over the pairs).
        goal: ``"rank"`` (which arm is better), ``"tolerance"`` (the difference to within
            ``tolerance``), ``"rank_or_tolerance"`` (each pair by either) or ``"full_run"``
            (would running the rest of this reference change the answer).
        tolerance: for the tolerance goals: stop when every pair's confidence sequence lies
            within the difference plus or minus this (proportion units, e.g. 0.02).
        alpha: the chance of any wrong decision, over all pairs and all looks.
        plan: an :func:`hrbench.power` result: its difference, variance components and clusters
            tune the test; ``None``: a default tuning.
        max_clusters: clusters run at most; default twice the plan's clusters (all the
            reference's without a plan, and for ``"full_run"``), never more than the reference's.
        min_clusters: clusters committed before any stop.
        method: ``"auto"`` (the default: ``"asymptotic"`` on a small plan of clusters of similar
            size, else ``"symmetric"``; :meth:`resolved_method`), ``"exact"``, ``"symmetric"``,
            ``"asymptotic"`` or ``"strict"`` (see the module's description).
        seed: seeds the order of the clusters.
        best_arm: stop as soon as one arm is decided better than every other.
        margin: for the ranking goals, also settle a pair as soon as it shows no difference
            beyond ``+-margin`` and the one seen is within ``margin / 3.5``; ``None`` (the
            default): 1.75 times the plan's difference (the one seen within :meth:`near_for`),
            none without a plan; ``0``: never. :meth:`margin_for`.
        order: ``"uniform"`` (the default: a seeded random order) or ``"informative"``: the
            clusters drawn with known probabilities from ``history``, each weighted by the
            inverse of its probability in the e-process (:mod:`hrbench.stats._sequential_order`);
            uniform when there is no history.
        history: for ``order="informative"``: per cluster the spread of the paired difference
            in earlier benchmarks of the same reference (``{cluster: spread}``), or those
            benchmarks themselves (:class:`~hrbench.Bench`, lists of rows), which are read into
            that mapping (:func:`cluster_spread`). The daemon reads its store's.

    Raises:
        ConfigError: a setting is out of range (the message names it).

    Example:
        >>> StopWhenSure(goal="tolerance", tolerance=0.03).cluster_order(["a", "b", "c", "d"])
        ['c', 'a', 'b', 'd']
    """

    pairs: tuple[tuple[str, str], ...] | None = None
    goal: str = "rank"
    tolerance: float | None = None
    alpha: float = 0.05
    plan: Any = None
    max_clusters: int | None = None
    min_clusters: int = 2
    method: str = "auto"
    seed: int = 0
    best_arm: bool = False
    margin: float | None = None
    order: str = "uniform"
    history: Any = None

    def __post_init__(self) -> None:
        if self.history is not None and not isinstance(self.history, Mapping):
            try:
                spread = cluster_spread(list(self.history))
            except (TypeError, AttributeError, KeyError):
                raise ConfigError(
                    "history", type(self.history).__name__, "must be earlier benchmarks or {cluster: spread}"
                ) from None
            object.__setattr__(self, "history", spread)
        if self.pairs is not None:
            try:
                pairs = tuple((str(a), str(b)) for a, b in self.pairs)
            except (TypeError, ValueError):
                raise ConfigError("pairs", self.pairs, "must be a list of (arm, arm) pairs") from None
            object.__setattr__(self, "pairs", pairs)
        self._validate()

    def _validate(self) -> None:
        check_one_of("goal", self.goal, GOALS)
        check_one_of("method", self.method, METHODS)
        if not (isinstance(self.alpha, (int, float)) and 0 < self.alpha < 1):
            raise ConfigError("alpha", self.alpha, "must be a number strictly between 0 and 1")
        needs_tol = self.goal in ("tolerance", "rank_or_tolerance")
        if needs_tol and self.tolerance is None:
            raise ConfigError("tolerance", None, f'goal "{self.goal}" needs a tolerance, e.g. 0.02')
        if self.tolerance is not None and not (
            isinstance(self.tolerance, (int, float)) and 0 < self.tolerance < 1
        ):
            raise ConfigError("tolerance", self.tolerance, "must be a difference between 0 and 1, e.g. 0.02")
        if self.max_clusters is not None and not (_is_int(self.max_clusters) and self.max_clusters >= 1):
            raise ConfigError("max_clusters", self.max_clusters, "must be a whole number, at least 1")
        if not (_is_int(self.min_clusters) and self.min_clusters >= 1):
            raise ConfigError("min_clusters", self.min_clusters, "must be a whole number, at least 1")
        if self.max_clusters is not None and self.max_clusters < self.min_clusters:
            raise ConfigError(
                "max_clusters", self.max_clusters, f"must be at least min_clusters ({self.min_clusters})"
            )
        if not _is_int(self.seed):
            raise ConfigError("seed", self.seed, "must be a whole number")
        if self.margin is not None and not (
            isinstance(self.margin, (int, float))
            and not isinstance(self.margin, bool)
            and 0 <= self.margin < 1
        ):
            raise ConfigError("margin", self.margin, "must be a difference from 0 (never) up to 1, e.g. 0.05")
        check_one_of("order", self.order, ORDERS)
        if self.history is not None:
            bad = [
                (k, v)
                for k, v in self.history.items()
                if not (
                    isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
                )
            ]
            if bad:
                raise ConfigError("history", dict(bad[:1]), "each spread must be a number, 0 or more")
        if self.plan is not None:
            for f in ("diff", "var_within", "var_between", "runs", "items_per_cluster", "n_clusters"):
                if not hasattr(self.plan, f):
                    raise ConfigError(
                        "plan", type(self.plan).__name__, f"must be an hb.power() result (no {f})"
                    )

    def resolve_pairs(self, arms: Sequence[str]) -> tuple[tuple[str, str], ...]:
        """The pairs of interest among ``arms``: ``pairs``, or every pair in the arms' order."""
        if self.pairs is None:
            return tuple(itertools.combinations(arms, 2))
        return self.pairs

    def check(self, arms: Sequence[str], n_clusters: int) -> None:
        """Check the rule against a benchmark's arms and its reference's clusters.

        Raises:
            ConfigError: fewer than two arms, a pair naming an arm not in ``arms`` (or an arm
                twice, or the same pair twice), or a reference of fewer than ``min_clusters``
                clusters.
        """
        self._validate()
        arms = list(arms)
        if len(arms) < 2:
            raise ConfigError("arms", arms, "stopping when sure compares arms: give at least two")
        if len(set(arms)) != len(arms):
            raise ConfigError("arms", arms, "an arm is named twice")
        pairs = self.resolve_pairs(arms)
        if not pairs:
            raise ConfigError("pairs", list(pairs), "give at least one pair of arms")
        seen: set[frozenset[str]] = set()
        for a, b in pairs:
            for x in (a, b):
                if x not in arms:
                    raise ConfigError("pairs", (a, b), f"names an arm that is not in the benchmark ({x!r})")
            if a == b:
                raise ConfigError("pairs", (a, b), "compares an arm with itself")
            if frozenset((a, b)) in seen:
                raise ConfigError("pairs", (a, b), "is listed twice")
            seen.add(frozenset((a, b)))
        if not (_is_int(n_clusters) and n_clusters >= self.min_clusters):
            raise ConfigError(
                "min_clusters",
                self.min_clusters,
                f"the reference has {n_clusters} cluster(s); stopping early needs at least min_clusters",
            )

    def resolved_method(self, n_pairs: int, n_clusters: int, sizes: Sequence[float] | None = None) -> str:
        """The test ``method="auto"`` runs on a reference of ``n_clusters`` (of ``sizes`` items): fixed before the first cluster.

        ``"auto"`` picks only a test valid on the design it meets. ``"asymptotic"`` when the
        plan is small, fewer than 2.5 times the clusters the symmetric test needs to decide at
        all (:meth:`fewest_to_decide`: 5 for one pair at alpha 0.05, so under 13 planned; without
        a plan, half the clusters the rule may run), and the clusters are of similar size (Kish's
        effective number of them at least 0.8 of their number, :func:`_similar`): there its
        sequence, which leans on the clusters' spread as a fixed design's t test does, ran
        0.94-1.25 times a fixed design's clusters with false stops at most 0.007 in
        ``bench/sequential.py``, where the symmetric test cannot stop before 5 clusters and ran
        1.8 times. Else ``"symmetric"``: exact whenever equally good arms give cluster
        differences centred symmetrically on 0, however few or unequal the clusters (the
        asymptotic sequence on lognormal cluster sizes stopped 0.07 of equal arms), and always
        with ``order="informative"`` and a history (its weights vary from cluster to cluster,
        which the asymptotic sequence's spread does not allow for). Any other method is itself,
        and :meth:`validity_warning` says when it is outside its validity.

        Example:
            >>> rule = StopWhenSure()
            >>> rule.resolved_method(1, 60), rule.resolved_method(1, 20), rule.resolved_method(1, 20, [1] * 10 + [30] * 10)
            ('symmetric', 'asymptotic', 'symmetric')
        """
        if self.method != "auto":
            return self.method
        if self.order == "informative" and self.history:  # weights that vary step by step: exact tests only
            return "symmetric"
        small = self.planned_clusters(n_clusters) < _AUTO_MARGIN * self._symmetric_need(n_pairs)
        return "asymptotic" if small and _similar(sizes) else "symmetric"

    def planned_clusters(self, n_clusters: int) -> float:
        """The clusters the test is tuned for: the plan's, or (without a plan) half of those it may run."""
        return float(self.plan.n_clusters) if self.plan is not None else self.limit(n_clusters) / 2

    def validity_warning(
        self, n_pairs: int, n_clusters: int, sizes: Sequence[float] | None = None
    ) -> str | None:
        """Why the test asked for may not hold its ``alpha`` on clusters of ``sizes`` items, or ``None``.

        ``method="asymptotic"`` on clusters of unequal size (Kish's effective number of them
        under 0.8 of their number): its sequence leans on the spread of the clusters' weighted
        differences, which a few large clusters make erratic (on 20 clusters of 1-60 items it
        stopped 0.07-0.08 of equal arms in ``bench/sequential.py``); and with
        ``order="informative"`` and a history, whose weights do the same. ``"auto"`` never picks
        it there.

        Example:
            >>> print(StopWhenSure(method="asymptotic").validity_warning(1, 20, [1] * 10 + [30] * 10))
            method="asymptotic" leans on clusters of similar size and these count as 10.7 of 20 (Kish's effective number): its false stops may exceed alpha 0.05; leave method="auto" (the symmetric test here, exact whatever the sizes)
        """
        method = self.resolved_method(n_pairs, n_clusters, sizes)
        if method != "asymptotic" or self.goal == "full_run":
            return None
        if self.order == "informative" and self.history:
            return (
                'method="asymptotic" with order="informative": its sequence takes the clusters as alike, and the '
                f"inverse-probability weights make them unlike: its false stops may exceed alpha {self.alpha:g}; "
                'leave method="auto" (the symmetric test, exact under any weights)'
            )
        if _similar(sizes):
            return None
        assert sizes is not None
        arr = np.asarray(sizes, dtype=float)
        eff = float(arr.sum() ** 2 / np.sum(arr**2))
        return (
            f'method="asymptotic" leans on clusters of similar size and these count as {eff:.1f} of {arr.size} '
            f"(Kish's effective number): its false stops may exceed alpha {self.alpha:g}; leave "
            'method="auto" (the symmetric test here, exact whatever the sizes)'
        )

    def few_clusters_warning(
        self, n_pairs: int, n_clusters: int, sizes: Sequence[float] | None = None
    ) -> str | None:
        """Why a fixed design is better than this rule on a reference of ``n_clusters``, or ``None``.

        The rule: :func:`~hrbench.stats._sequential_fit.few_clusters_warning`.

        Example:
            >>> print(StopWhenSure().few_clusters_warning(1, 5))
            the reference has 5 cluster(s) and a stop rule needs about 13 to stop early reliably (its asymptotic test can decide a pair after 2 at the earliest): on so few it decides less often than a fixed design run on every cluster; run without a stop rule and read the report's interval and p-value
        """
        from hrbench.stats._sequential_fit import few_clusters_warning

        return few_clusters_warning(self, n_pairs, n_clusters, sizes)

    def fewest_to_decide(
        self, n_pairs: int, n_clusters: int | None = None, sizes: Sequence[float] | None = None
    ) -> int | None:
        """The fewest clusters after which the test that will run can decide a pair at all (at least ``min_clusters``).

        A lower bound however large the difference (:func:`~hrbench.stats._sequential_math.fewest_to_decide`):
        10 for the exact test at alpha 0.05, 5 for the symmetric one, whatever the pairs; the
        asymptotic test's depends on its tuning to the ``n_clusters`` (of ``sizes`` items), often
        ``min_clusters``. ``None`` where none is known: the strict method, the asymptotic one
        without ``n_clusters`` or with an informative order's weights, the goals that do not rank.
        ``"auto"`` is the test it chooses on ``n_clusters`` (:meth:`resolved_method`; none: symmetric).

        Example:
            >>> StopWhenSure(method="exact").fewest_to_decide(1), StopWhenSure().fewest_to_decide(1)
            (10, 5)
            >>> StopWhenSure().resolved_method(1, 7), StopWhenSure().fewest_to_decide(1, 7)
            ('asymptotic', 2)
        """
        method = "symmetric" if self.method == "auto" and n_clusters is None else self.method
        if method == "auto":
            method = self.resolved_method(n_pairs, int(n_clusters or 0), sizes)
        if self.goal not in ("rank", "rank_or_tolerance") or method == "strict":
            return None
        if method == "asymptotic" and (n_clusters is None or (self.order == "informative" and self.history)):
            return None
        w = np.asarray(sizes if sizes else [1.0] * int(n_clusters or 1), dtype=float)
        p = self.params(n_pairs, w) if method == "asymptotic" else sm.Params(method, 0.0, rho=1.0)
        return max(self.min_clusters, sm.fewest_to_decide(p, w / w.mean(), self.alpha))

    def _symmetric_need(self, n_pairs: int) -> int:
        """The fewest clusters after which the symmetric test can reach ``n_pairs / alpha`` (each adds below ``log 2``)."""
        return max(1, math.ceil(math.log(max(n_pairs, 1) / self.alpha) / math.log(2)))

    def limit(self, n_clusters: int) -> int:
        """The most clusters this rule runs on a reference of ``n_clusters``."""
        if self.max_clusters is not None:
            return min(self.max_clusters, n_clusters)
        if self.plan is not None and self.goal != "full_run":
            return max(min(2 * int(self.plan.n_clusters), n_clusters), min(self.min_clusters, n_clusters))
        return n_clusters

    def cluster_order(self, clusters: Sequence[str], sizes: Mapping[str, int] | None = None) -> list[str]:
        """The seeded random order to run the clusters in: the same for the same seed and clusters.

        The clusters are sorted first, so the order does not depend on how they were listed.
        With ``order="informative"`` and a history, they are drawn one by one with the
        probabilities of :meth:`draw_probabilities` (``sizes``: each cluster's items; 1 each
        by default); else every order is as likely.
        """
        ids = sorted(str(c) for c in clusters)
        p = self.draw_probabilities(ids, sizes)
        if len(set(p.values())) > 1:
            return weighted_order(ids, p, int(self.seed))
        perm = np.random.default_rng(int(self.seed)).permutation(len(ids))
        return [ids[i] for i in perm]

    def draw_probabilities(
        self, clusters: Sequence[str], sizes: Mapping[str, int] | None = None
    ) -> dict[str, float]:
        """Each cluster's drawing weight for ``order="informative"`` (all equal otherwise, or without history).

        Example:
            >>> rule = StopWhenSure(order="informative", history={"a": 0.3, "b": 0.0, "c": 0.1})
            >>> {c: round(p, 3) for c, p in rule.draw_probabilities(["a", "b", "c"]).items()}
            {'a': 0.667, 'b': 0.067, 'c': 0.267}
        """
        ids = [str(c) for c in clusters]
        if self.order != "informative" or not self.history or not ids:
            return dict.fromkeys(ids, 1.0 / max(len(ids), 1))
        got = {c: float((sizes or {}).get(c, 1)) for c in ids}
        return draw_probabilities(ids, got, self.history)

    def margin_for(self) -> float | None:
        """The margin within which a pair is settled as no different (``None``: never).

        ``margin`` when it is given (0: never); else, for the ranking goals with a plan, 1.75
        times the plan's difference. Measured in ``bench/sequential.py``: with equal arms the
        default then ran 0.6-0.8 of a fixed design's clusters (it ran to ``max_clusters``,
        twice them, without), at half the planned difference 0.8-1.2 times them (1.8 without),
        at the planned difference 0.9-1.2 times, deciding the better arm about as often as the
        fixed design's test.

        Example:
            >>> import types
            >>> plan = types.SimpleNamespace(diff=0.04, var_within=0.4, var_between=0.02, runs=5,
            ...                              items_per_cluster=10, n_clusters=20)
            >>> StopWhenSure(plan=plan).margin_for(), StopWhenSure(plan=plan, margin=0).margin_for()
            (0.07, None)
        """
        if self.margin is not None:
            return float(self.margin) or None
        if self.plan is None or self.goal not in ("rank", "rank_or_tolerance"):
            return None
        return _MARGIN * float(self.plan.diff)

    def near_for(self, n_pairs: int = 1) -> float | None:
        """The largest difference seen at which a pair within the margin is settled (``None``: never).

        One pair of interest (two arms), or a given ``margin``: ``margin / 3.5``. Several pairs
        (``n_pairs``) and the plan's margin: the plan's difference less 1.40 of its standard
        errors, ``diff * (1 - 1.40 / (z(1 - alpha / 2) + z(power)))``: half of it at alpha 0.05
        and power 0.8, 0.62 of it for 10 pairs at alpha 0.005 (Bonferroni).

        Example:
            >>> import types
            >>> plan = types.SimpleNamespace(diff=0.06, alpha=0.005, power=0.8, var_within=0.4, var_between=0.02,
            ...                              runs=5, items_per_cluster=10, n_clusters=20)
            >>> [round(StopWhenSure(plan=plan, margin=m).near_for(k), 4) for m, k in ((None, 1), (None, 10), (0.07, 10))]
            [0.03, 0.037, 0.02]
        """
        m = self.margin_for()
        if m is None:
            return None
        if n_pairs < 2 or self.margin is not None or self.plan is None:
            return m / _NEAR
        z = NormalDist().inv_cdf
        alpha = float(getattr(self.plan, "alpha", 0.05))
        pw = float(getattr(self.plan, "power", 0.8))
        se_units = z(1 - alpha / 2) + z(pw)  # the planned difference in its standard errors
        half = (z(0.975) + z(0.8)) / 2  # half the planned difference at alpha 0.05, power 0.8, in them
        if not (math.isfinite(se_units) and se_units > half):
            return m / _NEAR
        return float(self.plan.diff) * (1.0 - half / se_units)

    def params(self, n_pairs: int, cluster_sizes: Sequence[float] | np.ndarray) -> sm.Params:
        """The test's tuning, fixed before the first cluster (``rho``, thresholds, bet sizes)."""
        c = math.log(n_pairs / self.alpha)
        sizes = np.asarray(cluster_sizes, dtype=float)
        n_total = sizes.size
        # without a plan, tuned for the whole reference, not for max_clusters: a resume under a
        # larger max_clusters then continues the same e-process (rho is fixed before the first
        # cluster and never changes with the settings of a later resume)
        horizon = float(n_total)
        if self.plan is not None:
            plan = self.plan
            m = max(float(plan.items_per_cluster), 1.0)
            var_c = (
                float(getattr(plan, "var_cluster", 0.0))
                + (float(plan.var_between) + float(plan.var_within) / max(int(plan.runs), 1)) / m
            )
            d2 = float(plan.diff) ** 2
            horizon = max(float(plan.n_clusters) * _HORIZON, 1.0)
        else:
            var_c, d2 = _DEFAULT_SD**2, 0.0
        method = "wor" if self.goal == "full_run" else self.resolved_method(n_pairs, n_total, sizes.tolist())
        return sm.Params(
            method=method,
            log_threshold=c,
            rho=sm.rho_for(horizon * (var_c + d2), c),
            horizon=horizon,
            var0=var_c + d2,
            n_total=n_total,
            bound=float(sizes.max() / sizes.mean()) if n_total else 1.0,
        )

    def start(self, arms: Sequence[str], cluster_sizes: Mapping[str, int]) -> SequentialTest:
        """A fresh test for ``arms`` on a reference whose clusters have ``cluster_sizes`` items.

        Raises:
            ConfigError: as :meth:`check`, or a cluster of no items.
        """
        return SequentialTest(self, arms, cluster_sizes)
