"""Intervals, paired comparisons, variance components and power for a benchmark (issue 8).

The method is Miller (2024), "Adding Error Bars to Evals: A Statistical Approach to Language
Model Evaluations" (arXiv 2411.00640):

* An arm's **accuracy** is the mean over runs within each item, then over the labelled items
  (the seed-002 summary), on the reportable rows (``reportable`` true, ``correct`` not ``None``).
* Its **standard error** is clustered: items are nested in the reference's clusters and runs in
  items. With ``y_i`` the item means, ``n`` items and ``G`` clusters,
  ``se**2 = G / (G - 1) * sum_c (sum_{i in c} (y_i - mean(y)))**2 / n**2`` (the CR1 sandwich of
  an intercept-only regression on the item means; with one item per cluster it is the ordinary
  ``sd(y) / sqrt(n)``). The run-to-run noise is inside each item mean, so it is counted once.
  The interval is ``accuracy ± t(level, G - 1) * se``, clipped to the parameter space
  ([0, 1] for an accuracy, [-1, 1] for a paired difference): with few clusters the unclipped
  t interval can leave it. An arm with fewer than 10 clusters is flagged (``few_clusters``,
  and a note in the text): its interval is wide and only approximate.
* ``method="bootstrap"`` resamples whole clusters with replacement (``n_boot`` times, seeded);
  the standard error is the bootstrap standard deviation and the interval the percentile one.
  With few clusters it under-covers a little (93.7% for a nominal 95% at 60 clusters in a
  simulation where the clustered t interval covered 94.4%); prefer ``"cluster"``.
* **Variance components** (Miller §4): ``var_within`` is the mean over items of the run-to-run
  sample variance (``ddof=1``) and ``var_between`` the variance of the items' true scores,
  estimated by moments as ``var(y_i) - mean(s_i**2 / K_i)``, floored at 0.
* **Paired comparisons** (Miller §4.2) take the per-item differences of the mean scores on the
  items both arms ran and give them the same clustered standard error, interval and a two-sided
  t test; :func:`compare_all` adds Holm-adjusted p-values over all pairs.
* **Power** (Miller §5): items needed ``n = (z_{1-alpha/2} + z_{power})**2 * deff *
  (var_between + var_within / runs) / diff**2``.
* **Cost**: ``usd`` is what the arm's reportable rows cost; ``usd_per_run`` is the mean over
  labelled items of the USD per run (the same averaging as accuracy), with a clustered interval;
  ``accuracy_per_usd = accuracy / usd_per_run`` (correct answers per USD spent per run), with a
  delta-method interval (``z_i = (y_i - R c_i) / mean(c)`` given the clustered standard error
  of their mean) or, under ``method="bootstrap"``, the percentile interval of the resampled
  ratio.

Fewer than 5 runs per item raises :class:`~hrbench.errors.TooFewRunsError` unless
``descriptive=True`` (seed 002). A descriptive report still gives the clustered standard error,
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

from hrbench.stats.comparisons import compare, compare_all
from hrbench.stats.intervals import FEW_CLUSTERS
from hrbench.stats.power import power
from hrbench.stats.records import ArmReport, Comparison, PowerPlan, PowerPoint, Report
from hrbench.stats.report import report, report_payload
from hrbench.stats.table import MIN_RUNS

__all__ = [
    "FEW_CLUSTERS",
    "MIN_RUNS",
    "ArmReport",
    "Comparison",
    "PowerPlan",
    "PowerPoint",
    "Report",
    "compare",
    "compare_all",
    "power",
    "report",
    "report_payload",
]
