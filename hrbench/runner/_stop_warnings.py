"""What a stop rule warns of before its first cluster: a fixed design would do better, or it cannot decide.

Each warning points at the user's line that started the benchmark (:func:`~hrbench._util.warn.warn_at_caller`).

Private to :mod:`hrbench.runner._stopping`, whose :class:`~hrbench.runner._stopping.Gate` calls
:func:`warn_undecidable` and :func:`warn_fit` as it is made.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["warn_fit", "warn_undecidable"]


def warn_fit(rule: Any, arms: list[str], sizes: list[int]) -> None:
    """Warn before the first cluster when a fixed design would do better, or the test asked for may not hold."""
    from hrbench._util.warn import warn_at_caller
    from hrbench.errors import StopFewClustersWarning, StopMethodWarning

    n_pairs = len(rule.resolve_pairs(arms))
    few = rule.few_clusters_warning(n_pairs, len(sizes), sizes)
    if few is not None:
        warn_at_caller(f"stop when sure: {few}", StopFewClustersWarning)
    invalid = rule.validity_warning(n_pairs, len(sizes), sizes)
    if invalid is not None:
        warn_at_caller(f"stop when sure: {invalid}", StopMethodWarning)


def warn_undecidable(rule: Any, arms: list[str], sizes: list[int]) -> None:
    """Warn before the first cluster when the rule can never decide (too few clusters for its test)."""
    from hrbench._util.warn import warn_at_caller
    from hrbench.errors import StopUndecidableWarning

    n_pairs = len(rule.resolve_pairs(arms))
    n_clusters = len(sizes)
    need = rule.fewest_to_decide(n_pairs, n_clusters, sizes)
    most = rule.limit(n_clusters)
    if need is None or most >= need:
        return
    method = rule.resolved_method(n_pairs, n_clusters, sizes)
    other = ""
    if method == "exact":  # the symmetric test can decide sooner: after how many, at this alpha
        sym = dataclasses.replace(rule, method="symmetric").fewest_to_decide(n_pairs, n_clusters, sizes)
        other = (
            f' or method="symmetric" (it can decide after {sym})' if sym is not None and most >= sym else ""
        )
    warn_at_caller(
        f"stop when sure cannot decide here: it runs at most {most} cluster(s) and its {method} "
        f"test needs at least {need} to decide a pair at alpha {rule.alpha:g}; every cluster will "
        "run (the report then shows the fixed-sample interval and p, labelled): run without a stop rule"
        f"{other}",
        StopUndecidableWarning,
    )
