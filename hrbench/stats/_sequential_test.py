"""The running state of a stop-when-sure rule on one benchmark (:class:`SequentialTest`).

Private to :mod:`hrbench.stats._sequential`, which offers it (``hrbench.stats.SequentialTest``)
and documents the tests it runs; the array arithmetic is :mod:`hrbench.stats._sequential_math`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from hrbench.errors import ConfigError
from hrbench.stats import _sequential_math as sm
from hrbench.stats._sequential_order import scale as _scale

REASONS = ("decided", "equivalent", "tolerance", "max_clusters")
_STATE_VERSION = 1


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


class SequentialTest:
    """The running state of a :class:`StopWhenSure` rule on one benchmark.

    Made by :meth:`StopWhenSure.start`; fed one cluster at a time with :meth:`commit`, in the
    rule's order. ``stopped`` says when to stop; ``summary()`` is the report; ``state()`` and
    :meth:`from_state` resume it.
    """

    def __init__(self, rule: Any, arms: Sequence[str], cluster_sizes: Mapping[str, int]) -> None:
        sizes = {str(k): v for k, v in cluster_sizes.items()}
        rule.check(arms, len(sizes))
        for k, v in sizes.items():
            if not (_is_int(v) and v >= 1):
                raise ConfigError("cluster_sizes", {k: v}, "every cluster must hold at least one item")
        self.rule = rule
        self.arms = tuple(str(a) for a in arms)
        self.pairs = rule.resolve_pairs(self.arms)
        self.sizes = sizes
        mean_size = sum(sizes.values()) / len(sizes)
        self._w = {k: v / mean_size for k, v in sizes.items()}
        # order="informative": each cluster's drawing weight; it enters with the inverse of its chance
        self.p_draw = rule.draw_probabilities(list(sizes), sizes)
        self._uniform = len(set(self.p_draw.values())) <= 1
        self.kappa = 1.0 if self._uniform else _scale(self.p_draw, sizes, rule.history)
        self.margin = rule.margin_for()
        self.near = rule.near_for(len(self.pairs))
        self.p = rule.params(len(self.pairs), list(sizes.values()))
        self.max_clusters = rule.limit(len(sizes))
        self.acc = sm.new_acc(self.p, (len(self.pairs),))
        self.committed: list[str] = []
        self.decided: list[str | None] = [None] * len(self.pairs)
        self.precise = [False] * len(self.pairs)
        self.within = [False] * len(self.pairs)  # settled: no difference larger than the margin
        self.frozen_cs: list[tuple[float, float] | None] = [None] * len(self.pairs)
        self._stopped: str | None = None
        self._cs: dict[int, tuple[float, float]] = {}  # pair -> its confidence sequence now (reset by commit)

    def commit(self, cluster: str, item_means: Mapping[str, Mapping[str, float]]) -> None:
        """Add one finished cluster to the test (clusters in the rule's order, each once).

        Args:
            cluster: the cluster's id (a key of the reference's cluster sizes).
            item_means: arm -> item id -> mean of ``correct`` over the item's runs, in [0, 1],
                for this cluster; arms no longer active may be left out. A pair is compared on
                the items both its arms scored; a pair with none adds no evidence.

        Raises:
            ConfigError: an unknown or repeated cluster, a mean outside [0, 1], or a commit
                after the test stopped.
        """
        cluster = str(cluster)
        if self._stopped is not None:
            raise ConfigError("cluster", cluster, f"the test has already stopped ({self._stopped})")
        if cluster not in self.sizes:
            raise ConfigError("cluster", cluster, "is not one of the reference's clusters")
        if cluster in self.committed:
            raise ConfigError("cluster", cluster, "was already committed")
        d, w = np.zeros(len(self.pairs)), np.zeros(len(self.pairs))
        weight = self._w[cluster] * (1.0 if self._uniform else self.kappa * self._ipw(cluster))
        for j, (a, b) in enumerate(self.pairs):
            if self._settled(j):
                continue
            got = _pair_difference(item_means, a, b, cluster)
            if got is not None:
                d[j], w[j] = got, weight
        sm.update(self.acc, self.p, d, w)
        self._cs.clear()
        self.committed.append(cluster)
        self._settle()

    def _ipw(self, cluster: str) -> float:
        """The inverse-probability weight of ``cluster`` drawn from the clusters not yet committed."""
        from hrbench.stats._sequential_order import ipw

        done = set(self.committed)
        return ipw(cluster, self.p_draw, [c for c in self.sizes if c not in done])

    def _settle(self) -> None:
        """Decide the pairs that reached the threshold and see whether to stop.

        A pair's confidence sequence is computed only when a rule reads it (:meth:`_bounds`):
        as a pair is decided, for a tolerance, or for the margin once the difference seen is
        within it; the symmetric sequence costs time in proportion to the clusters committed.
        """
        n = len(self.committed)
        mu = sm.mean(self.acc)
        whole = self.p.method == "wor" and n >= len(self.sizes)
        tol = self.rule.tolerance
        sure_now = sm.sure_closed(self.acc, self.p, n, self.rule.min_clusters)
        sided = self._sided(n)
        for j in range(len(self.pairs)):
            if self._settled(j):
                continue
            sure = bool(sure_now[j])
            if whole:  # every cluster seen: the reference's difference is known exactly
                self._cs[j] = (float(mu[j]), float(mu[j]))
                sure = mu[j] != 0
            if sure and mu[j] != 0 and self.decided[j] is None:
                self.decided[j] = self.pairs[j][0] if mu[j] > 0 else self.pairs[j][1]
                if self.rule.goal != "tolerance":  # the pair runs no more: its sequence as it stood
                    self.frozen_cs[j] = self._bounds(j)
            if tol is not None and n >= self.rule.min_clusters:
                lo, hi = self._bounds(j)
                if hi - lo <= 2 * tol + 1e-12:
                    self.precise[j] = True
                    self.frozen_cs[j] = (lo, hi)
            if self._inside(j, n, float(mu[j]), functools.partial(self._bounds, j), sided):
                self.within[j] = True
                if sided is None:  # else the one-sided bounds it was settled on, below
                    self.frozen_cs[j] = self._bounds(j)
        if sided is not None and sided.any():  # the two one-sided bounds they were settled on
            low, high = sm.equivalence_bounds(self.acc, self.p)
            for j in np.flatnonzero(sided).tolist():
                if self.within[j] and self.decided[j] is None:
                    self.frozen_cs[j] = (float(low[j]), float(high[j]))
        self._stopped = self._reason(n)

    def _bounds(self, j: int) -> tuple[float, float]:
        """Pair ``j``'s confidence sequence ``(low, high)`` now, computed once per commit.

        :func:`~hrbench.stats._sequential_math.cs` on pair ``j``'s accumulator alone: every
        method works pair by pair, so it gives the numbers a call on all pairs gives.
        """
        got = self._cs.get(j)
        if got is None:
            lo, hi = sm.cs({k: v[j : j + 1] for k, v in self.acc.items()}, self.p)
            got = self._cs[j] = (float(lo[0]), float(hi[0]))
        return got

    def _inside(
        self, j: int, n: int, mu: float, bounds: Callable[[], tuple[float, float]], sided: np.ndarray | None
    ) -> bool:
        """Whether pair ``j`` is now settled as no different: within the margin, the difference seen near 0.

        One pair of interest (two arms): its two-sided confidence sequence (``bounds()``, read
        last: the other conditions are cheap) lies within ``+-margin`` and ``|mu|`` is within
        ``margin / 3.5``; wrong only when the sequence missed the truth, within ``alpha`` with
        every other decision. Settling the one pair ends the benchmark, so it takes this
        stricter rule. Several pairs: ``sided`` (from :meth:`_sided`), where a settled pair only
        stops waiting on that pair while the others run on.
        """
        m, near = self.margin, self.near
        if m is None or near is None or self.decided[j] is not None or self.within[j]:
            return False
        if n < self.rule.min_clusters:
            return False
        if sided is not None:
            return bool(sided[j])
        if abs(mu) > near:
            return False
        lo, hi = bounds()
        return -m < lo and hi < m

    def _sided(self, n: int) -> np.ndarray | None:
        """With several pairs of interest, which are settled by two one-sided tests (``None`` with one pair).

        Each side at ``pairs / alpha`` (:func:`~hrbench.stats._sequential_math.within_margin`),
        the difference seen within :meth:`StopWhenSure.near_for`: a pair is settled wrongly at
        most ``alpha / pairs`` of the time.
        """
        m, near = self.margin, self.near
        if len(self.pairs) < 2 or m is None or near is None:
            return None
        open_ = np.array([self.decided[j] is None and not self.within[j] for j in range(len(self.pairs))])
        if n < self.rule.min_clusters or not open_.any():
            return np.zeros(len(self.pairs), dtype=bool)
        return sm.within_margin(self.acc, self.p, m, near, open_)

    def _settled(self, j: int) -> bool:
        """Whether pair ``j`` needs no more clusters: decided (rank goals) or precise (tolerance goals)."""
        goal = self.rule.goal
        if goal == "tolerance":
            return self.precise[j]
        if goal == "rank_or_tolerance":
            return self.decided[j] is not None or self.precise[j] or self.within[j]
        full_tol = goal == "full_run" and self.rule.tolerance is not None
        return self.decided[j] is not None or (full_tol and self.precise[j]) or self.within[j]

    def _reason(self, n: int) -> str | None:
        goal = self.rule.goal
        ranked = [x is not None for x in self.decided]
        if self.rule.best_arm and goal != "tolerance" and self.winner is not None:
            return "decided"
        if goal in ("rank", "full_run") and all(ranked):
            return "decided"
        if goal == "rank" and all(r or w for r, w in zip(ranked, self.within, strict=True)):
            return "equivalent"
        if goal == "tolerance" and all(self.precise):
            return "tolerance"
        if goal == "rank_or_tolerance" and all(
            r or t or w for r, t, w in zip(ranked, self.precise, self.within, strict=True)
        ):
            if all(ranked):
                return "decided"
            return "tolerance" if any(self.precise) else "equivalent"
        if (
            goal == "full_run"
            and self.rule.tolerance is not None
            and all(r or t for r, t in zip(ranked, self.precise, strict=True))
        ):
            return "tolerance"
        if n >= self.max_clusters:
            return "max_clusters"
        return None

    @property
    def stopped(self) -> str | None:
        """``None`` while running; else why it stopped.

        ``"decided"``, ``"equivalent"`` (every pair decided or within the margin, some within),
        ``"tolerance"`` or ``"max_clusters"``.
        """
        return self._stopped

    def _losses(self) -> dict[str, tuple[int, int]]:
        """Per arm: (pairs of interest it lost, pairs of interest it is in)."""
        out = {a: [0, 0] for a in self.arms}
        for (a, b), dec in zip(self.pairs, self.decided, strict=True):
            out[a][1] += 1
            out[b][1] += 1
            if dec is not None:
                out[b if dec == a else a][0] += 1
        return {k: (v[0], v[1]) for k, v in out.items()}

    @property
    def active_arms(self) -> tuple[str, ...]:
        """The arms still to run: not decided worse on every pair of interest they are in.

        With ``best_arm``, an arm decided worse than any other is dropped; arms in no pair of
        interest are dropped; once the test has stopped, none is active.
        """
        if self._stopped is not None:
            return ()
        losses = self._losses()
        keep = []
        for a in self.arms:
            lost, of = losses[a]
            ranking = self.rule.goal != "tolerance"
            if of == 0 or (ranking and (lost == of or (self.rule.best_arm and lost > 0))):
                continue
            if all(self._settled(j) for j, pr in enumerate(self.pairs) if a in pr):
                continue  # every pair it is in is settled: nothing left to learn from it
            keep.append(a)
        return tuple(keep)

    @property
    def winner(self) -> str | None:
        """The arm decided better than every other arm it is compared with, if exactly one is.

        With ``best_arm``: the one arm that lost no pair when every other arm has lost one (to
        any arm: decisions chain, so the unbeaten arm is the best).
        """
        if self.rule.best_arm:
            losses = self._losses()
            unbeaten = [a for a in self.arms if losses[a][0] == 0]
            return unbeaten[0] if len(unbeaten) == 1 and any(d is not None for d in self.decided) else None
        wins = []
        for a in self.arms:
            mine = [d for pr, d in zip(self.pairs, self.decided, strict=True) if a in pr]
            if mine and all(d == a for d in mine):
                wins.append(a)
        return wins[0] if len(wins) == 1 else None

    def summary(self) -> dict[str, Any]:
        """The test's result, JSON-able.

        Returns:
            ``clusters`` committed, ``of`` (the most it would run), ``reason`` (``stopped``),
            ``winner``, ``method``, ``goal``, ``alpha``, ``seed``, ``margin`` (within which a
            pair is settled as no different, or ``None``), ``order`` (``"uniform"`` or
            ``"informative"``), ``estimand`` ("clusters like these", or "about this reference
            only" for ``"full_run"``) and per pair ``a``, ``b``, ``e_value`` (now),
            ``p_anytime`` (``min(1, 1 / max e_value so far)``), ``diff`` (the weighted mean of
            ``a - b``, proportion units), ``cs_low``/``cs_high`` (its time-uniform confidence
            sequence, at the decision for a decided or settled pair; with several pairs of
            interest, for one settled within the margin, the two one-sided bounds it was
            settled on), ``decided`` (the better
            arm, or ``None``) and ``within_margin`` (settled: no difference larger than the
            margin).
        """
        log_e = sm.log_e(self.acc, self.p)
        mu = sm.mean(self.acc)
        whole = self.p.method == "wor" and len(self.committed) >= len(self.sizes)
        pairs = []
        for j, (a, b) in enumerate(self.pairs):
            low, high = self.frozen_cs[j] or ((float(mu[j]),) * 2 if whole else self._bounds(j))
            pairs.append(
                {
                    "a": a,
                    "b": b,
                    "e_value": float(math.exp(min(float(log_e[j]), 700.0))),
                    "p_anytime": float(min(1.0, math.exp(-float(self.acc["max_log_e"][j])))),
                    "diff": float(mu[j]),
                    "cs_low": low,
                    "cs_high": high,
                    "decided": self.decided[j],
                    "within_margin": self.within[j],
                }
            )
        return {
            "clusters": len(self.committed),
            "of": self.max_clusters,
            "total_clusters": len(self.sizes),
            "pairs": pairs,
            "winner": self.winner,
            "reason": self._stopped,
            "method": "betting without replacement" if self.p.method == "wor" else self.p.method,
            "method_asked": self.rule.method,
            "goal": self.rule.goal,
            "alpha": self.rule.alpha,
            "seed": int(self.rule.seed),
            "margin": self.margin,
            "order": "informative" if not self._uniform else "uniform",
            "estimand": "about this reference only" if self.p.method == "wor" else "clusters like these",
        }

    def state(self) -> dict[str, Any]:
        """Everything :meth:`from_state` needs to continue the same e-processes, JSON-able."""
        return {
            "version": _STATE_VERSION,
            "arms": list(self.arms),
            "cluster_sizes": dict(self.sizes),
            "committed": list(self.committed),
            "decided": list(self.decided),
            "precise": list(self.precise),
            "within": list(self.within),
            "frozen_cs": [list(x) if x else None for x in self.frozen_cs],
            "stopped": self._stopped,
            "method": self.p.method,
            "acc": sm.to_lists(self.acc),
            "draw": None if self._uniform else dict(self.p_draw),
            "kappa": self.kappa,
        }

    @classmethod
    def from_state(cls, rule: Any, state: Mapping[str, Any]) -> SequentialTest:
        """Resume a test from :meth:`state`: the same order and e-processes continue.

        Raises:
            ConfigError: the state is malformed, or was made with other arms or clusters.
        """
        try:
            if state["version"] != _STATE_VERSION:
                raise ConfigError("state.version", state["version"], f"must be {_STATE_VERSION}")
            test = cls(rule, state["arms"], state["cluster_sizes"])
            n = len(test.pairs)
            method = state.get("method", test.p.method)  # "auto" chose before the first cluster
            if method != test.p.method:
                if method not in sm.RESOLVED:
                    raise ValueError(f"unknown method {method!r}")
                test.p = replace(test.p, method=method)
            test.acc = sm.from_lists(state["acc"], test.p, (n,))
            draw = state.get("draw")  # the drawing weights the order was made with: the same weights go on
            if draw is not None:
                if sorted(draw) != sorted(test.sizes) or not all(float(v) > 0 for v in draw.values()):
                    raise ValueError("draw: one positive weight per cluster expected")
                test.p_draw = {str(k): float(v) for k, v in draw.items()}
                test._uniform = False
                test.kappa = float(state.get("kappa", 1.0))
            elif state.get("version") == _STATE_VERSION and "draw" in state:
                test.p_draw, test._uniform = dict.fromkeys(test.sizes, 1.0 / len(test.sizes)), True
            test.committed = [str(c) for c in state["committed"]]
            test.decided = [None if d is None else str(d) for d in state["decided"]]
            test.precise = [bool(x) for x in state["precise"]]
            test.within = [bool(x) for x in state.get("within") or [False] * n]
            test.frozen_cs = [None if x is None else (float(x[0]), float(x[1])) for x in state["frozen_cs"]]
            if (
                len(test.decided) != n
                or len(test.precise) != n
                or len(test.frozen_cs) != n
                or len(test.within) != n
            ):
                raise ValueError("one entry per pair expected")
            if any(c not in test.sizes for c in test.committed):
                raise ValueError("a committed cluster is not in the reference")
            stopped = state["stopped"]
            if stopped is not None and stopped not in REASONS:
                raise ValueError(f"unknown stop reason {stopped!r}")
            test._stopped = stopped
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
            if isinstance(e, ConfigError):
                raise
            raise ConfigError("state", type(e).__name__, f"is not a saved sequential test ({e})") from None
        return test


def _pair_difference(
    item_means: Mapping[str, Mapping[str, float]], a: str, b: str, cluster: str
) -> float | None:
    """The cluster's mean over shared items of ``y_a - y_b``; ``None`` when no item has both."""
    ya, yb = item_means.get(a), item_means.get(b)
    if not ya or not yb:
        return None
    diffs = []
    for item in ya.keys() & yb.keys():
        for arm, y in ((a, ya[item]), (b, yb[item])):
            if not (isinstance(y, (int, float, np.floating)) and 0.0 <= float(y) <= 1.0):
                raise ConfigError(
                    f"item_means[{arm!r}][{item!r}]",
                    y,
                    f"must be a mean score in [0, 1] (cluster {cluster!r})",
                )
        diffs.append(float(ya[item]) - float(yb[item]))
    return float(np.mean(diffs)) if diffs else None
