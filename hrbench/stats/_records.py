"""The records statistics calls return (msgspec Structs: JSON, dicts and frames at the edges)."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "ArmReport",
    "Comparison",
    "NoIntervalWarning",
    "PilotClustersWarning",
    "PowerPlan",
    "PowerPoint",
]


class NoIntervalWarning(UserWarning):
    """Warned when an arm or a paired comparison gets no interval, and why.

    Rule (never silent): an interval needs at
    least 2 clusters and 2 items (one cluster holds no spread between clusters to estimate),
    and a scored run (an arm whose every run ended in an error or a budget stop was never
    scored: its accuracy of 0 says nothing about its answers). The record's ``note`` says the
    same.
    """


class PilotClustersWarning(UserWarning):
    """Warned when :func:`~hrbench.stats.power` plans from a pilot of fewer than 10 clusters.

    How clusters differ cannot be estimated from one cluster; the plan is then conservative
    (a cluster counted as one item) unless ``var_cluster`` or ``design_effect`` is stated.
    From 2 to 9 clusters it is estimated roughly, and the plan says so.
    """


class ArmReport(msgspec.Struct, kw_only=True):
    """One arm's line of a :class:`Report`.

    Attributes:
        arm: the arm's name.
        accuracy: mean over runs within each labelled item, then over items (a proportion in
            [0, 1]); ``None`` when the arm has no labelled reportable run.
        se: its standard error (clustered, or bootstrap) over items; ``None`` with a single
            cluster.
        ci_low, ci_high: the ``level`` interval (Wilson on the effective sample size), within
            [0, 1], of positive width; ``None`` when ``se`` is.
        df: degrees of freedom of its t quantile: ``n_clusters - 1`` with clusters of equal
            size, fewer with unequal ones (Bell-McCaffrey, rounded down).
        n_items: labelled reportable items the arm ran.
        n_clusters: clusters those items fall in.
        few_clusters: fewer than 10 clusters (:data:`FEW_CLUSTERS`): the t interval with
            ``n_clusters - 1`` degrees of freedom is wide and approximate.
        runs: runs per item (the most any item had).
        n_runs: labelled reportable runs counted (the seed summary's ``runs`` column).
        var_within: mean run-to-run variance within an item (score units squared); ``None``
            with fewer than 2 runs per item.
        var_between: variance of the items' true scores across items (method of moments,
            floored at 0); ``None`` with fewer than 2 runs per item.
        usd: total USD of the arm's reportable rows; ``None`` (NA) when a run's model has no price
            (seed 002: usd is NA when a model has no price).
        usd_unpriced: reportable runs whose cost is unknown (``usd`` is ``None`` on the row).
        usd_list: the same rows at list price, each reply at what it cost when first paid
            (:func:`~hrbench.records.list_usd`): ``usd`` counts 0 for cache and
            recording hits, this does not. ``None`` when a reply has no price, or when the
            report was given no traces (a frame of rows).
        usd_per_run: mean USD per run over the labelled items (as accuracy averages), at list
            price when the report has the traces (``usd_list``'s prices: a run a cache served
            costs what it cost when first paid), else at what was paid.
        usd_per_run_low, usd_per_run_high: its interval (the low end clipped at 0).
        accuracy_per_usd: ``accuracy / usd_per_run`` (correct answers per USD); ``None`` when
            a run has no price or the arm cost nothing (at the price ``usd_per_run`` uses).
        accuracy_per_usd_low, accuracy_per_usd_high: its interval (delta method or bootstrap;
            the low end clipped at 0). Never a point: where that interval has zero width (every
            item's accuracy the same multiple of its cost), the accuracy interval over the
            ``usd_per_run`` interval instead, or ``None`` with the reason in
            ``accuracy_per_usd_note`` (:func:`hrbench.stats.report`).
        accuracy_per_usd_note: why the ``accuracy_per_usd`` interval is not the delta-method
            (or bootstrap) one, or is absent; ``None`` when it is.
        failures: labelled reportable runs that were wrong, whatever the kind.
        parse_failure, refusal, not_in_document, wrong, budget_stop, error, reasoning_exhausted:
            those runs by ``failure_kind`` (``reasoning_exhausted``: the model spent its whole
            output limit reasoning and gave no answer; costed, never scored).
        unlabelled_runs: reportable runs on items with no label (not counted anywhere above).
        dev_accuracy: accuracy on the non-reportable (dev) rows, descriptive; ``None`` if none.
        pass_k: ``pass^k``, the chance that ``pass_k_runs`` runs of an item are all right, the
            mean over labelled items of ``C(c, k) / C(n, k)`` for an item with ``c`` of ``n``
            runs right (:mod:`hrbench.stats._consistency`); ``None`` with no labelled run.
        pass_k_low, pass_k_high: its clustered interval (as the accuracy's); ``None`` with one
            cluster.
        pass_k_runs: the ``k`` of ``pass_k``: the runs per item unless asked (``pass_k=``).
        flip_rate: the chance that two runs of an item disagree, the mean over labelled items of
            ``c (n - c) / C(n, 2)``; ``None`` with fewer than 2 runs per item.
        flip_rate_low, flip_rate_high: its clustered interval; ``None`` with one cluster.
        note: why the arm has no interval (one cluster, one item, no scored run; warned as
            :class:`NoIntervalWarning` too); ``None`` when it has one.
        unscored_note: set when some of the arm's labelled runs were never scored (stopped by
            the budget or ended in an error): they count wrong (seed 002), so the accuracy and
            its interval rest on them (:mod:`hrbench.stats._unscored`); ``None`` otherwise.
        usd_from_log: reportable runs whose tokens and list price come from another tool's log
            (an imported arm's rows, ``usd_provenance`` ``"log"``): not paid here, so ``usd``
            counts them 0 and ``usd_list`` counts what the log records.
    """

    arm: str
    accuracy: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    df: int | None
    n_items: int
    n_clusters: int
    few_clusters: bool = False
    runs: int
    n_runs: int
    var_within: float | None
    var_between: float | None
    usd: float | None
    usd_unpriced: int
    usd_per_run: float | None
    usd_per_run_low: float | None
    usd_per_run_high: float | None
    accuracy_per_usd: float | None
    accuracy_per_usd_low: float | None
    accuracy_per_usd_high: float | None
    failures: int
    parse_failure: int
    refusal: int
    not_in_document: int
    wrong: int
    budget_stop: int
    error: int
    unlabelled_runs: int
    dev_accuracy: float | None
    usd_list: float | None = None
    accuracy_per_usd_note: str | None = None
    pass_k: float | None = None
    pass_k_low: float | None = None
    pass_k_high: float | None = None
    pass_k_runs: int | None = None
    flip_rate: float | None = None
    flip_rate_low: float | None = None
    flip_rate_high: float | None = None
    note: str | None = None
    usd_from_log: int = 0
    reasoning_exhausted: int = 0
    unscored_note: str | None = None


class Comparison(msgspec.Struct, kw_only=True):
    """A paired difference ``arm_a - arm_b`` on the items both arms ran.

    Attributes:
        arm_a, arm_b: the arms compared; ``diff > 0`` means ``arm_a`` scored higher.
        diff: mean over common items of the per-item difference of mean scores.
        se: its standard error (clustered or bootstrap) over items; ``None`` with a single
            cluster.
        ci_low, ci_high: the ``level`` interval of ``diff`` (MOVER over the two directions of
            disagreement), within [-1, 1], of positive width.
        p_value: two-sided p-value of ``diff = 0``: the interval inverted on t with ``df``
            degrees of freedom; 1 when ``diff`` is 0, never 0.
        p_holm: Holm-adjusted p-value over every pair of the benchmark's arms (the p-value
            itself with two arms), from :func:`report`, :func:`compare_all` and
            :func:`compare` alike; ``None`` with no p-value, and for a comparison of another
            metric than accuracy.
        df: ``n_clusters - 1`` with clusters of equal size, fewer with unequal ones
            (Bell-McCaffrey, rounded down).
        n_items: items both arms ran (labelled, reportable).
        n_clusters: clusters of those items.
        accuracy_a, accuracy_b: each arm's accuracy on those common items.
        se_unpaired: the standard error of the difference if the two arms' clustered errors
            were combined as independent (``sqrt(se_a**2 + se_b**2)``): what comparing two
            separate intervals implies; larger than ``se`` when the arms are correlated.
        level: the interval's level.
        method: ``"cluster"`` or ``"bootstrap"``.
        descriptive: ``True`` when the benchmark has fewer than 5 runs per item (allowed by
            ``descriptive=True``): the interval covers the sampling of items only.
        n_clusters_disagree: clusters holding an item on which the two arms' scores differ.
        metric: what is compared: ``"accuracy"`` (the default), ``"pass^k"`` (``diff`` is then
            the difference of ``pass^k`` at ``k = pass_k_runs``) or ``"flip_rate"``
            (:mod:`hrbench.stats._consistency`); each item's value, then the same paired
            interval and p-value.
        pass_k_runs: the ``k`` of ``pass^k`` when ``metric`` is ``"pass^k"``.
        note: how to read this comparison, or why it has no interval: no item scored
            differently (the interval is then how large a difference the items leave
            possible), or 5 or fewer clusters disagree (the p-value then rests on the t
            model more than on the data), or one cluster, or an arm with no scored run;
            ``None`` otherwise.
        unscored_note: set when an arm had runs never scored (stopped by the budget or ended
            in an error) on the items both ran: the difference is then over the items on which
            both arms have every run scored only, and this says how many
            (:mod:`hrbench.stats._unscored`); ``None`` otherwise.
        human: for a benchmark with human grades, the difference as humans would grade it, by
            PPI++ beside the judge-only and human-only intervals (a
            :class:`~hrbench.stats._ppi.GradedEstimate` as builtins); ``None`` otherwise.
    """

    arm_a: str
    arm_b: str
    diff: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_holm: float | None
    df: int | None
    n_items: int
    n_clusters: int
    accuracy_a: float | None
    accuracy_b: float | None
    se_unpaired: float | None
    level: float
    method: str
    descriptive: bool
    n_clusters_disagree: int = 0
    metric: str = "accuracy"
    pass_k_runs: int | None = None
    note: str | None = None
    human: dict[str, Any] | None = None
    unscored_note: str | None = None


class PowerPoint(msgspec.Struct, kw_only=True, frozen=True):
    """Items needed at one number of runs per item (a point of :attr:`PowerPlan.tradeoff`)."""

    runs: int
    n_items: int
    total_runs: int


class PowerPlan(msgspec.Struct, kw_only=True):
    """What :func:`power` returns: items needed to detect ``diff`` in a paired comparison.

    Attributes:
        diff: the difference in accuracy to detect (absolute, in proportion units).
        alpha: two-sided significance level.
        power: the probability of detecting ``diff`` when it is real.
        runs: runs per item assumed.
        n_items: items needed at ``runs`` runs per item.
        var_within: run-to-run variance of a per-run score difference (``sigma_a**2 +
            sigma_b**2``).
        var_between: variance across the items of a cluster of the true per-item difference
            (``omega**2``).
        var_cluster: variance across clusters of their mean true difference (0 when the arms
            differ by the same amount in every cluster, up to item noise).
        design_effect: variance inflation from clustering at ``runs`` runs per item (1 when
            items are independent).
        min_items: the floor as runs grow without bound: more runs cannot go below it.
        tradeoff: items (and total runs per arm) needed at other numbers of runs per item. The
            row at ``runs`` is ``n_items`` when solved for; when that power is simulated, the
            other rows and ``min_items`` are the noncentral t's, scaled by the same ratio.
        source: ``"assumed"`` or ``"bench: A vs B"`` (where the variance components came from).
        items_per_cluster: items per cluster assumed (sets the degrees of freedom).
        n_clusters: clusters of ``n_items`` items.
        achieved: the power ``n_items`` items give (at least ``power`` when solved for).
        solved: True when ``n_items`` is the fewest items reaching ``power``; False when the
            plan was asked at given items (``n_items=``), whose power may fall short of it.
        cluster_sizes: the smallest and largest cluster of the plan's ``n_items`` items (the
            items need not split evenly: 25 items in 7 clusters are clusters of 3-4).
        df: the degrees of freedom of compare()'s t test on those clusters (``n_clusters - 1``
            for clusters of even size, Bell-McCaffrey's with uneven ones).
        simulated: True when ``achieved`` is simulated (compare()'s own test on a resampled
            pilot, or few clusters at a stated accuracy) rather than the noncentral t's.
    """

    diff: float
    alpha: float
    power: float
    runs: int
    n_items: int
    var_within: float
    var_between: float
    design_effect: float
    min_items: int
    tradeoff: list[PowerPoint]
    source: str
    items_per_cluster: float = 1.0
    n_clusters: int = 2
    achieved: float = 0.0
    var_cluster: float = 0.0
    solved: bool = True
    cluster_sizes: tuple[int, int] | None = None
    df: float | None = None
    simulated: bool = False

    def __str__(self) -> str:
        lo, hi = self.cluster_sizes or (round(self.items_per_cluster),) * 2
        sizes = f"{lo}" if lo == hi else f"{lo}-{hi}"
        per = round(self.items_per_cluster)
        if self.n_clusters == 2 and hi < per:  # fewer items than 2 whole clusters: compare() needs 2
            sizes += f", taken from 2 of your clusters of {per}: compare() tests no fewer clusters"
        df = self.n_clusters - 1 if self.df is None else self.df
        how = f"{'simulated' if self.simulated else f't on {df:g} df'}: power {self.achieved:.3f}"
        if not self.simulated and self.var_within == self.var_between == self.var_cluster == 0:
            how = (
                "every variance is 0, so power 1 by assumption; compare()'s own test is never that "
                "sure from sampled runs: state accuracy= to simulate it"
            )
        design = f"{self.n_items} items ({self.n_clusters} clusters of {sizes}; {how})"
        if self.solved:
            plan = f"  needs {design} at {self.runs} run(s) per item"
        else:
            short = f", below the {self.power:g} asked" if self.achieved < self.power else ""
            plan = f"  at {design}{short}, with {self.runs} run(s) per item"
        lines = [
            f"Power plan: detect a difference of {self.diff:.3f} at alpha {self.alpha:g} "
            f"(two-sided) with power {self.power:g}",
            f"  var_between {self.var_between:.4f}, var_within {self.var_within:.4f}, "
            f"var_cluster {self.var_cluster:.4f}, design effect {self.design_effect:.2f} ({self.source})",
            f"{plan}; never fewer than {self.min_items} items however many runs",
            "  runs  items  total runs per arm",
        ]
        lines += [f"  {p.runs:>4}  {p.n_items:>5}  {p.total_runs:>18}" for p in self.tradeoff]
        return "\n".join(lines)
