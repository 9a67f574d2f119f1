"""Intervals, paired comparisons, variance components and power for a benchmark.

The method is Miller (2024), "Adding Error Bars to Evals: A Statistical Approach to Language
Model Evaluations" (arXiv 2411.00640):

* An arm's **accuracy** is the mean over runs within each item, then over the labelled items
  (the seed-002 summary), on the reportable rows (``reportable`` true, ``correct`` not ``None``).
* Its **standard error** is clustered: items are nested in the reference's clusters and runs in
  items. With ``y_i`` the item means, ``n`` items, ``G`` clusters of ``n_c`` items and ``e_c``
  the sum of a cluster's residuals ``y_i - mean(y)``, ``se**2 = sum_c e_c**2 / (1 - n_c / n) /
  n**2``: the CR2 (Bell-McCaffrey) sandwich of an intercept-only regression on the item means,
  which is CR1's ``G / (G - 1)`` correction when clusters are equal and inflates large clusters
  when they are not; with one item per cluster it is the ordinary ``sd(y) / sqrt(n)``. The
  run-to-run noise is inside each item mean, so it is counted once.
* Its **interval** is Wilson's score interval on the effective sample size ``n_eff = p (1 - p)
  / se**2`` with the ``t`` quantile on the design's degrees of freedom: ``G - 1`` with clusters
  of equal size, Bell-McCaffrey's (fewer) with unequal ones (Korn & Graubard 1998; Dean &
  Pagano 2015; Bell & McCaffrey 2002; :func:`~hrbench.stats.proportion_interval`,
  :func:`~hrbench.stats.design_df`): always within [0, 1], asymmetric near 0 and 1,
  and of positive width whenever anything was sampled (an arm right on every run gets
  ``n_eff`` = its items, not the point [1, 1]; so does a clustered variance of 0 up to
  rounding, as when two clusters' means agree by chance). Above the highest lower limit any
  data of its runs could give (and mirrored near 0), the upper limit is the one-sided one: the
  truth can only be missed from below there (Neyman's construction). Simulated by
  ``bench/coverage.py`` (2 to 60 clusters, with and without an arm x cluster effect) it covers
  94-96% (the naive iid interval 34-92%). An arm with fewer than 10 clusters is flagged
  (``few_clusters``, and a note in the text): its interval is wide. One cluster, one item, or
  no scored run (every run ended in an error or a budget stop) gives no interval: ``note``
  says why and :class:`NoIntervalWarning` warns; no labelled run warns
  :class:`~hrbench.errors.NoLabelsWarning`.
* ``method="bootstrap"`` resamples whole clusters with replacement (``n_boot`` times, seeded);
  the standard error is the bootstrap standard deviation and the interval the percentile one
  (Wilson's where every resample agrees, so it never collapses to a point). With few clusters
  it under-covers; prefer ``"cluster"``.
* **Variance components** (Miller §4): ``var_within`` is the mean over items of the run-to-run
  sample variance (``ddof=1``) and ``var_between`` the variance of the items' true scores,
  estimated by moments as ``var(y_i) - mean(s_i**2 / K_i)``, floored at 0.
* **Paired comparisons** (Miller §4.2) take the per-item differences of the mean scores on the
  items both arms ran. The interval is MOVER over the two directions of disagreement, each a
  Wilson interval on its effective sample size (Zou & Donner 2008; Newcombe 1998;
  :func:`~hrbench.stats.difference_interval`): the clustered t interval away from the
  boundary, asymmetric when the arms rarely disagree, never a point; when no item scored
  differently, never wider than the exact bound for no disagreement in its clusters. The
  p-value inverts it on t with the design's df (the t test away from the boundary; never 0
  from finite data, 1 when the arms agree on average). The test is model-based (it leans on
  the t reference distribution of the clusters' spread), not a randomisation test, and is
  held to a false-positive rate of at most 0.065 under two nulls: equal arms, and arms that
  differ cluster by cluster with no average difference (an arm x cluster effect). Under a
  skewed difference (one arm a little better on most clusters, much worse on a few) it holds
  0.065 only with enough clusters (``bench/skew.py --clusters``, at two seeds: 0.055-0.073
  from 40 to 60 clusters of 40 items, 0.043-0.067 from 30 clusters of 20, 0.046-0.070 at any
  count of clusters of 10);
  the skewness corrections of a t test (Johnson 1978, Hall 1992, the cluster bootstrap-t)
  did not restore it on few clusters and broke other designs there, so none is applied
  (docs/guides/statistics.md, "The guarantee, and where it ends"). Where it
  cannot reach 0.035 (near the ceiling with few clusters: at accuracy 0.97 on 10 clusters of
  3 items it rejects equal arms about 2% of the time, most such benchmarks holding
  disagreement in 5 or fewer clusters), its power is at least the clustered t test's and the
  exact cluster sign-flip test's on the same benchmarks. When 5 or fewer clusters hold any
  disagreement, ``note`` says the p-value rests on the t model more than on the data alone:
  the exact cluster sign-flip test, which assumes nothing about how clusters vary, cannot
  reject at 0.05 there (its two-sided p is at least ``2 / 2**k`` with ``k`` such clusters). :func:`compare_all` adds Holm-adjusted
  p-values over all pairs.
* **Power** (Miller §5): the power of that t test at ``n`` items in ``G`` clusters is the
  noncentral t's with ``G - 1`` df and noncentrality ``diff / sqrt((var_between + var_within
  / runs) / n + var_cluster / G)``, ``var_cluster`` the variance between clusters of the arms'
  mean difference (an arm x cluster effect); :func:`power` solves for ``n``, from components
  stated or estimated from a pilot (a one-cluster pilot warns :class:`PilotClustersWarning`
  and plans as if a cluster counted as one item); from a pilot of two arms with nothing
  stated, a plan of up to 100 clusters is :func:`compare`'s test on benchmarks resampled from
  the pilot's own clusters, so a skewed cluster-by-cluster difference is planned for as it is.
  ``bench/coverage.py`` checks its promise against simulated :func:`compare` on every design
  it lists, both ways.
* **Cost**: ``usd`` is what the arm's reportable rows cost; ``usd_per_run`` is the mean over
  labelled items of the USD per run (the same averaging as accuracy), with a clustered interval;
  ``accuracy_per_usd = accuracy / usd_per_run`` (correct answers per USD spent per run), with a
  delta-method interval (``z_i = (y_i - R c_i) / mean(c)`` given the clustered standard error
  of their mean) or, under ``method="bootstrap"``, the percentile interval of the resampled
  ratio. Never a point (SPEC section 6): when every item's accuracy is the same multiple of
  its cost (each right run costs the same, a budget-stopped run costs 0 and is wrong), both
  give zero width, and the interval shown is the accuracy's over the ``usd_per_run``'s, each
  at ``1 - (1 - level) / 2`` (Bonferroni), or none, with the reason in
  ``accuracy_per_usd_note``, when that cost interval reaches 0 (no upper bound).

Fewer than 5 runs in any arm x item cell, or unequal runs across cells, raises
:class:`~hrbench.errors.TooFewRunsError` unless ``descriptive=True`` (seed 002; the cells are
counted, not the run numbers). ``correct`` must be a boolean, 0 or 1, or ``None`` (no label):
anything else is a :class:`~hrbench.errors.ConfigError` naming the row. A descriptive report still gives the clustered standard error,
the intervals, the paired comparisons and their p-values over items: one greedy prediction per
item (``runs=1``, e.g. scoring a file of existing predictions) says nothing about run-to-run
spread, but its intervals still tell how much the accuracy depends on which items (and
clusters) were sampled. ``var_within`` and ``var_between`` are ``None`` with a single run per
item (the run-to-run spread cannot be told from the spread between items). Each item's score
then holds whatever run noise there was, unseparated; the intervals are read as covering the
sampling of items only. Every output says the report is descriptive: its text (header and
note), its JSON and ``to_dict`` (``descriptive`` and ``note``) and its pandas frames (a
``descriptive`` column and ``attrs``). With 5 or more runs ``descriptive=True`` changes nothing:
the report is an ordinary interval report and is not labelled descriptive.

Example:
    >>> from hrbench.records import Row
    >>> rows = [Row(cluster=c, item=i, arm="ask", run=r, split="test",
    ...             correct=(i != "q3"), outcome=None, failure_kind=None if i != "q3" else "wrong")
    ...         for c, i in [("a", "q1"), ("a", "q2"), ("b", "q3"), ("b", "q4")] for r in range(1, 6)]
    >>> rep = report(rows)
    >>> rep.arms[0].accuracy, rep.arms[0].n_clusters, rep.arms[0].wrong
    (0.75, 2, 5)
"""

import typing

from hrbench.stats._comparisons import compare, compare_all
from hrbench.stats._frontier import FrontierStep, frontier
from hrbench.stats._intervals import FEW_CLUSTERS
from hrbench.stats._power import power
from hrbench.stats._records import (
    ArmReport,
    Comparison,
    NoIntervalWarning,
    PilotClustersWarning,
    PowerPlan,
    PowerPoint,
)
from hrbench.stats._rendering import Report
from hrbench.stats._report import report, report_payload
from hrbench.stats._table import MIN_RUNS

__all__ = [
    "ArmReport",
    "Comparison",
    "FEW_CLUSTERS",
    "FrontierStep",
    "JudgedRows",
    "MIN_RUNS",
    "NoIntervalWarning",
    "PilotClustersWarning",
    "PowerPlan",
    "PowerPoint",
    "Report",
    "SequentialTest",
    "StopWhenSure",
    "cluster_se",
    "cluster_spread",
    "compare",
    "compare_all",
    "design_df",
    "difference_interval",
    "draw_probabilities",
    "estimable",
    "frontier",
    "gate",
    "next_grades",
    "power",
    "ppi_estimate",
    "proportion_interval",
    "report",
    "report_payload",
    "reported_rows",
    "scale",
    "stop_lines",
    "stop_section",
    "t_interval",
    "weighted_order",
]


# -- tools/privatize.py: names other packages use, imported on first use (PEP 562)
if typing.TYPE_CHECKING:
    from hrbench.stats._agreement import JudgedRows
    from hrbench.stats._gate import gate
    from hrbench.stats._grading import next_grades
    from hrbench.stats._intervals import (
        cluster_se,
        design_df,
        difference_interval,
        estimable,
        proportion_interval,
        t_interval,
    )
    from hrbench.stats._ppi import ppi_estimate
    from hrbench.stats._sequential import StopWhenSure
    from hrbench.stats._sequential_order import (
        cluster_spread,
        draw_probabilities,
        scale,
        weighted_order,
    )
    from hrbench.stats._sequential_test import SequentialTest
    from hrbench.stats._stopped import reported_rows, stop_lines, stop_section

_LAZY = {
    "JudgedRows": "hrbench.stats._agreement",
    "SequentialTest": "hrbench.stats._sequential_test",
    "StopWhenSure": "hrbench.stats._sequential",
    "cluster_se": "hrbench.stats._intervals",
    "cluster_spread": "hrbench.stats._sequential_order",
    "design_df": "hrbench.stats._intervals",
    "difference_interval": "hrbench.stats._intervals",
    "draw_probabilities": "hrbench.stats._sequential_order",
    "estimable": "hrbench.stats._intervals",
    "gate": "hrbench.stats._gate",
    "next_grades": "hrbench.stats._grading",
    "ppi_estimate": "hrbench.stats._ppi",
    "proportion_interval": "hrbench.stats._intervals",
    "reported_rows": "hrbench.stats._stopped",
    "scale": "hrbench.stats._sequential_order",
    "stop_lines": "hrbench.stats._stopped",
    "stop_section": "hrbench.stats._stopped",
    "t_interval": "hrbench.stats._intervals",
    "weighted_order": "hrbench.stats._sequential_order",
}

if not typing.TYPE_CHECKING:  # type checkers read the imports above; a typo stays an error
    from hrbench._util.lazy import lazy_names

    __getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)

# -- end of tools/privatize.py's block
