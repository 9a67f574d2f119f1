"""What a stop rule warns of before its first cluster: a fixed design would do better, or it cannot decide.

Private to :mod:`hrbench.runner._stopping`, whose :class:`~hrbench.runner._stopping.Gate` calls
:func:`warn_undecidable` and :func:`warn_fit` as it is made.
"""

from __future__ import annotations

from typing import Any

__all__ = ["warn_fit", "warn_undecidable"]


def warn_fit(rule: Any, arms: list[str], sizes: list[int]) -> None:
    """Warn before the first cluster when a fixed design would do better, or the test asked for may not hold."""
    import warnings

    from hrbench.errors import StopFewClustersWarning, StopMethodWarning

    n_pairs = len(rule.resolve_pairs(arms))
    few = rule.few_clusters_warning(n_pairs, len(sizes), sizes)
    if few is not None:
        warnings.warn(f"stop when sure: {few}", StopFewClustersWarning, stacklevel=3)
    invalid = rule.validity_warning(n_pairs, len(sizes), sizes)
    if invalid is not None:
        warnings.warn(f"stop when sure: {invalid}", StopMethodWarning, stacklevel=3)


def warn_undecidable(rule: Any, arms: list[str], sizes: list[int]) -> None:
    """Warn before the first cluster when the rule can never decide (too few clusters for its test)."""
    import warnings

    from hrbench.errors import StopUndecidableWarning

    n_pairs = len(rule.resolve_pairs(arms))
    n_clusters = len(sizes)
    need = rule.fewest_to_decide(n_pairs, n_clusters, sizes)
    most = rule.limit(n_clusters)
    if need is None or most >= need:
        return
    method = rule.resolved_method(n_pairs, n_clusters, sizes)
    other = ' or method="symmetric" (it can decide after 5)' if method == "exact" and most >= 5 else ""
    warnings.warn(
        f"stop when sure cannot decide here: it runs at most {most} cluster(s) and its {method} "
        f"test needs at least {need} to decide a pair at alpha {rule.alpha:g}; every cluster will "
        "run (the report then shows the fixed-sample interval and p, labelled): run without a stop rule"
        f"{other}",
        StopUndecidableWarning,
        stacklevel=3,
    )
