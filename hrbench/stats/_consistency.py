"""Repeat consistency across runs: ``pass^k`` and the per-item flip rate, with clustered intervals.

Both are means over the labelled items of a per-item value estimated from the item's runs, so
they get the intervals an accuracy gets (:func:`~hrbench.stats.proportion_interval`:
the CR2 clustered variance over items nested in clusters, Wilson's interval on the effective
sample size, t on the design's degrees of freedom), and paired differences the accuracy's
(:func:`~hrbench.stats.difference_interval`).

* ``pass^k``: the chance that ``k`` runs of an item are all right (tau-bench's ``pass^k``, Yao
  et al. 2024, "tau-bench: a benchmark for tool-agent-user interaction", arXiv 2406.12045;
  asked of promptfoo as pass^N, https://github.com/promptfoo/promptfoo/issues/5847). An item
  with ``c`` of ``n`` runs right gives ``C(c, k) / C(n, k)``, the unbiased estimate of ``p**k``
  (``k`` of its runs drawn without replacement all right); ``k`` is the runs per item by
  default (then: every run right) and at most the fewest runs of any item.
* flip rate: the chance that two runs of an item disagree, ``c (n - c) / C(n, 2)`` per item
  (the unbiased estimate of ``2 p (1 - p)``): 0 for an arm that answers every item the same way
  every time, whether right or wrong. Needs 2 runs per item.

Example:
    >>> import numpy as np
    >>> y, k = np.array([1.0, 0.8, 0.0]), np.array([5.0, 5.0, 5.0])
    >>> item_values(y, k, "pass^k", 5).tolist(), item_values(y, k, "flip_rate", 5).tolist()
    ([1.0, 0.0, 0.0], [0.0, 0.4, 0.0])
    >>> [round(float(v), 3) for v in item_values(y, k, "pass^k", 2)]
    [1.0, 0.6, 0.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hrbench.errors import ConfigError

__all__ = ["METRICS", "arm_consistency", "item_values", "label", "pass_k_runs"]

METRICS = ("accuracy", "pass^k", "flip_rate")
"""What a paired comparison or a gate may compare: accuracy (the default), ``pass^k``, the flip rate."""


def label(metric: str, k: int | None) -> str:
    """How a metric is named in text: ``"pass^5"`` for ``pass^k`` at ``k = 5``, else its name."""
    return f"pass^{k}" if metric == "pass^k" and k is not None else metric.replace("_", " ")


def pass_k_runs(asked: int | None, runs: int) -> int | None:
    """The ``k`` of ``pass^k``: ``asked``, or the fewest runs per item; ``None`` with fewer than 1 run.

    Raises:
        ConfigError: ``asked`` is not a whole number from 1 up to the fewest runs of any item.
    """
    if asked is None:
        return runs if runs >= 1 else None
    if isinstance(asked, bool) or not isinstance(asked, int) or not 1 <= asked <= max(runs, 1):
        raise ConfigError("pass_k", asked, f"must be a whole number from 1 to the runs per item ({runs})")
    return asked


def item_values(y: np.ndarray, k: np.ndarray, metric: str, pass_k: int | None) -> np.ndarray:
    """Per item: its mean score (``"accuracy"``), its ``pass^k`` estimate or its flip rate.

    ``y`` are the items' mean scores over their ``k`` runs (so ``y * k`` runs were right).
    """
    if metric == "accuracy":
        return y
    from scipy.special import comb

    right = np.rint(y * k)
    if metric == "pass^k":
        assert pass_k is not None
        return np.asarray(comb(right, pass_k) / comb(k, pass_k), dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = right * (k - right) / np.maximum(k * (k - 1) / 2.0, 1.0)
    return np.where(k >= 2, out, np.nan)


def arm_consistency(
    y: np.ndarray, k: np.ndarray, g: np.ndarray, n_g: int, level: float, pass_k: int | None
) -> dict[str, Any]:
    """An arm's ``pass_k``/``flip_rate`` fields of :class:`~hrbench.stats.ArmReport` (intervals from 2 clusters)."""
    from hrbench.stats._intervals import proportion_interval

    out: dict[str, Any] = {}
    if pass_k is not None:
        v = item_values(y, k, "pass^k", pass_k)
        iv = proportion_interval(v, g, n_g, level) if n_g >= 2 else None
        out.update(
            pass_k=float(v.mean()),
            pass_k_low=None if iv is None else iv.low,
            pass_k_high=None if iv is None else iv.high,
            pass_k_runs=pass_k,
        )
    if k.size and float(k.min()) >= 2:
        v = item_values(y, k, "flip_rate", None)
        iv = proportion_interval(v, g, n_g, level) if n_g >= 2 else None
        out.update(
            flip_rate=float(v.mean()),
            flip_rate_low=None if iv is None else iv.low,
            flip_rate_high=None if iv is None else iv.high,
        )
    return out
