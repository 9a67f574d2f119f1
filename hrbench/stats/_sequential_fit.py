"""Whether a stop rule fits its reference: when a fixed design run on every cluster would do better.

Private to :mod:`hrbench.stats._sequential`, whose :meth:`~hrbench.stats.StopWhenSure.few_clusters_warning`
calls :func:`few_clusters_warning`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["few_clusters_warning"]

_FEW_MARGIN = (
    2.5  # without a plan: a reference of fewer than this many times the clusters the test needs warns
)


def few_clusters_warning(
    rule: Any, n_pairs: int, n_clusters: int, sizes: Sequence[float] | None = None
) -> str | None:
    """Why a fixed design is better than this rule on a reference of ``n_clusters``, or ``None``.

    With a plan: the reference has fewer clusters than the plan's fixed design needs, so no
    stop rule can save clusters, and it decides less often than the fixed design's test on
    every cluster (on a 5-cluster reference a stop decided 0.19 of the time where compare()
    rejected 0.61). Without a plan: fewer than 2.5 times the clusters its test needs to
    decide at all (13 for one pair at alpha 0.05); it names the test that will run and, where
    a bound is known, the fewest clusters after which that test can decide a pair
    (:meth:`~hrbench.stats.StopWhenSure.fewest_to_decide`: 2, ``min_clusters``, for the
    asymptotic test ``"auto"`` runs on a small reference; 5 for the symmetric one). And a small plan whose test is exact
    under symmetry alone (clusters of unequal size, or the method asked): it cannot stop
    before that many clusters, where the fixed design has already ended (it ran 1.8 times a
    plan of 4 clusters). Ranking goals only (``"full_run"`` is about this reference and runs
    it through).

    Example:
        >>> from hrbench.stats import StopWhenSure
        >>> print(few_clusters_warning(StopWhenSure(), 1, 5))
        the reference has 5 cluster(s) and a stop rule needs about 13 to stop early reliably (its asymptotic test can decide a pair after 2 at the earliest): on so few it decides less often than a fixed design run on every cluster; run without a stop rule and read the report's interval and p-value
    """
    if rule.goal == "full_run":
        return None
    enough = math.ceil(_FEW_MARGIN * rule._symmetric_need(n_pairs))
    method, earliest = (
        rule.resolved_method(n_pairs, n_clusters, sizes),
        rule.fewest_to_decide(n_pairs, n_clusters, sizes),
    )
    if rule.plan is not None:
        planned = int(rule.plan.n_clusters)
        if n_clusters < planned:
            why = f"fewer than the {planned} its plan needs for power {getattr(rule.plan, 'power', 0.8):g}"
            return (
                f"the reference has {n_clusters} cluster(s) and {why}: on so few it decides less often than "
                "a fixed design run on every cluster; run without a stop rule and read the report's "
                "interval and p-value"
            )
        if (
            planned < enough
            and method in ("exact", "symmetric")
            and rule.goal in ("rank", "rank_or_tolerance")
        ):
            return (
                f"its plan needs {planned} cluster(s) and its {method} test cannot decide a pair before "
                f"{earliest}: a fixed design of {planned} clusters ends sooner; run it without a stop rule"
            )
        return None
    if n_clusters >= enough:
        return None
    test = f"its {method} test can decide a pair after {earliest}"
    why = f"a stop rule needs about {enough} to stop early reliably" + (
        "" if earliest is None else f" ({test} at the earliest)"
    )
    return (
        f"the reference has {n_clusters} cluster(s) and {why}: on so few it decides less often than a fixed "
        "design run on every cluster; run without a stop rule and read the report's interval and p-value"
    )
