"""Standard errors and intervals: clustered, t, cluster bootstrap; variance components."""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np

from hrbench.stats.table import _Items

FEW_CLUSTERS = 10
"""Clusters below which an arm is flagged ``few_clusters``: its t interval is wide and approximate."""

FEW_CLUSTERS_NOTE = (
    f"few clusters (fewer than {FEW_CLUSTERS}): the t interval with clusters-1 df is wide and approximate."
)

_BOOT_CELLS = 2_000_000  # resample-by-cluster cells held in memory at once (16 MB of float64)


def _sps() -> Any:
    """``scipy.stats``, imported on first use: ``import hrbench`` must not pay ~0.4 s for scipy."""
    from scipy import stats

    return stats


def _compact(cluster: np.ndarray) -> tuple[np.ndarray, int]:
    uniq, inv = np.unique(cluster, return_inverse=True)
    return inv, int(uniq.size)


def _cluster_se(v: np.ndarray, g: np.ndarray, n_g: int) -> float | None:
    """CR1 clustered standard error of ``mean(v)``; ``None`` with fewer than 2 clusters."""
    if n_g < 2:
        return None
    n = v.size
    totals = np.bincount(g, weights=v - v.mean(), minlength=n_g)
    var = n_g / (n_g - 1) * float(totals @ totals) / (n * n)
    return math.sqrt(max(var, 0.0))


def _t_interval(
    est: float, se: float | None, df: int, level: float, bounds: tuple[float, float] = (-math.inf, math.inf)
) -> tuple[float | None, float | None]:
    """``est ± t(level, df) * se``, clipped to ``bounds`` (the parameter space)."""
    if se is None or df < 1:
        return None, None
    half = float(_sps().t.ppf(0.5 + level / 2, df)) * se
    return _clip(est - half, bounds), _clip(est + half, bounds)


def _clip(v: float, bounds: tuple[float, float]) -> float:
    return min(max(v, bounds[0]), bounds[1])


_UNIT = (0.0, 1.0)  # an accuracy
_DIFF = (-1.0, 1.0)  # a difference of accuracies
_POSITIVE = (0.0, math.inf)  # a cost, or accuracy per USD


def _p_value(est: float, se: float | None, df: int) -> float | None:
    if se is None or df < 1:
        return None
    if se == 0.0:
        return 1.0 if est == 0.0 else 0.0
    return float(2 * _sps().t.sf(abs(est / se), df))


def _boot_totals(
    parts: np.ndarray, g: np.ndarray, n_g: int, rng: np.random.Generator, n_boot: int
) -> np.ndarray:
    """Resampled column totals: clusters drawn with replacement ``n_boot`` times.

    ``parts`` is (items, m); returns (n_boot, m) sums over the items of the drawn clusters.
    """
    cluster_totals = np.stack([np.bincount(g, weights=p, minlength=n_g) for p in parts.T], axis=1)
    out = np.empty((n_boot, parts.shape[1]))
    chunk = max(1, _BOOT_CELLS // n_g)
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        draws = rng.integers(0, n_g, size=(b, n_g))
        draws += (np.arange(b) * n_g)[:, None]
        counts = np.bincount(draws.ravel(), minlength=b * n_g).reshape(b, n_g).astype(float)
        out[start : start + b] = counts @ cluster_totals
    return out


def _rng(seed: int, *names: str) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(n.encode()) for n in names)])


def _boot_summary(
    boot: np.ndarray, level: float, bounds: tuple[float, float] = (-math.inf, math.inf)
) -> tuple[float, float, float]:
    ok = boot[np.isfinite(boot)]
    lo, hi = np.quantile(ok, [0.5 - level / 2, 0.5 + level / 2])
    return float(ok.std(ddof=1)), _clip(float(lo), bounds), _clip(float(hi), bounds)


def _components(items: _Items) -> tuple[float | None, float | None]:
    """Within-item (run-to-run) and between-item variance components (Miller §4)."""
    has = items.k > 1
    if not has.any() or items.y.size < 2:
        return None, None
    within = float(np.mean(items.s2[has]))
    noise = float(np.mean(items.s2[has] / items.k[has]))
    between = max(float(np.var(items.y, ddof=1)) - noise, 0.0)
    return within, between
