"""The item x arm matrix of one benchmark: mean correctness over runs, filtered and paged.

A benchmark a stop rule ran shows the rows its report counts
(:func:`~hrbench.stats.reported_rows`): the items of clusters cancelled at the stop are
left out, and counted, so the matrix, the arm table and the paired differences agree.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hrbench.errors import ConfigError
from hrbench.records import Row
from hrbench.results.browse._listing import _record
from hrbench.stats import reported_rows
from hrbench.store import Store

__all__ = ["benchmark_matrix"]


def _cells(
    rows: list[Row],
) -> tuple[list[str], dict[str, dict[str, Any]], dict[tuple[str, str], dict[str, Any]]]:
    arms: dict[str, None] = {}
    items: dict[str, dict[str, Any]] = {}
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        arms.setdefault(r.arm)
        items.setdefault(r.item, {"item": r.item, "cluster": r.cluster, "split": r.split})
        c = cells.get((r.item, r.arm))
        if c is None:
            c = cells[(r.item, r.arm)] = {"n": 0, "right": 0, "labelled": 0, "kinds": Counter()}
        c["n"] += 1
        if r.correct is not None:
            c["labelled"] += 1
            c["right"] += bool(r.correct)
        if r.failure_kind is not None:
            c["kinds"][r.failure_kind] += 1
    return list(arms), items, cells


def benchmark_matrix(
    store: Store,
    benchmark_id: str,
    *,
    cluster: str | None = None,
    failure_kind: str | None = None,
    split: str | None = None,
    disagree: bool = False,
    offset: int = 0,
    limit: int | None = None,
    cancelled: bool = False,
) -> dict[str, Any]:
    """The item x arm matrix of mean correctness over runs, filtered.

    Args:
        store: the store to read.
        benchmark_id: the benchmark.
        cluster: keep only the items of this cluster.
        failure_kind: keep only the items where some run of some arm failed with this kind.
        split: keep only the items of this split.
        disagree: keep only the items on which the arms disagree (their mean correctness over
            runs is not the same for every arm that ran the item; unlabelled items never count).
        offset: matching items to skip (paging).
        limit: the most items to return; ``None`` for all.
        cancelled: of a benchmark a stop rule ran, keep the items of the clusters cancelled
            at the stop too (their finished runs are kept and paid, but not reported). By
            default they are left out, as the report leaves them out.

    Returns:
        A ``BenchmarkMatrixResult`` dict: ``arms``; ``items`` (item, cluster, split, disagree,
        ``reported`` (``False`` only for an item of a cancelled cluster, kept by
        ``cancelled``), and ``cells`` aligned with ``arms``: ``{"mean", "n", "failure_kinds"}``
        or ``None`` when the arm did not run the item; ``mean`` is ``None`` for an unlabelled
        item); ``n_items`` matching the filters, ``n_items_total`` (the items shown unfiltered),
        ``n_items_cancelled`` (the items of clusters cancelled at a stop: left out unless
        ``cancelled``; 0 without a stop rule), and the ``clusters``, ``splits`` and
        ``failure_kinds`` present (for the filter menus).

    Raises:
        NotFound: no benchmark has that id.
        ConfigError: a negative ``offset`` or ``limit``.

    Example:
        >>> s = Store(":memory:")
        >>> rows = [Row(cluster="c", item=f"q{i}", arm=a, run=r, split="test", correct=(i < 2 or a == "b"),
        ...             outcome=None, failure_kind=None if (i < 2 or a == "b") else "wrong")
        ...         for i in range(4) for a in ("a", "b") for r in (1, 2)]
        >>> s.benchmark_put("b1", {}, "h")
        >>> s.rows_put("b1", list(enumerate(rows)))
        >>> m = benchmark_matrix(s, "b1", disagree=True)
        >>> [i["item"] for i in m["items"]], m["n_items_total"], m["items"][0]["cells"][0]
        (['q2', 'q3'], 4, {'mean': 0.0, 'n': 2, 'failure_kinds': {'wrong': 2}})

        A stop rule's record, and the last two items' rows not reportable (a cluster cancelled
        at the stop): they are left out, and counted.

        >>> import msgspec
        >>> s.benchmark_put("b2", {}, "h")
        >>> s.rows_put("b2", [(k, msgspec.structs.replace(r, reportable=r.item < "q2"))
        ...                   for k, r in enumerate(rows)])
        >>> s.benchmark_stop_put("b2", {"reason": "decided", "clusters": 1, "of": 2})
        >>> m = benchmark_matrix(s, "b2")
        >>> [i["item"] for i in m["items"]], m["n_items_total"], m["n_items_cancelled"]
        (['q0', 'q1'], 2, 2)
        >>> len(benchmark_matrix(s, "b2", cancelled=True)["items"])
        4
    """
    if offset < 0:
        raise ConfigError("offset", offset, "must be 0 or more")
    if limit is not None and limit < 0:
        raise ConfigError("limit", limit, "must be 0 or more (or None for all)")
    rec = _record(store, benchmark_id)
    every = store.rows_get(benchmark_id)
    shown = every if (rec.get("spec") or {}).get("stop") is None else reported_rows(every)
    left_out = {r.item for r in every} - {r.item for r in shown}  # items of cancelled clusters
    arms, items, cells = _cells(every if cancelled else shown)
    kinds: set[str] = set()
    matched = []
    for info in items.values():
        row_cells: list[dict[str, Any] | None] = []
        means = set()
        item_kinds: set[str] = set()
        for arm in arms:
            c = cells.get((info["item"], arm))
            if c is None:
                row_cells.append(None)
                continue
            mean = c["right"] / c["labelled"] if c["labelled"] else None
            if mean is not None:
                means.add(mean)
            item_kinds.update(c["kinds"])
            row_cells.append({"mean": mean, "n": c["n"], "failure_kinds": dict(sorted(c["kinds"].items()))})
        kinds |= item_kinds
        reported = info["item"] not in left_out
        entry = {**info, "reported": reported, "disagree": len(means) > 1, "cells": row_cells}
        if cluster is not None and info["cluster"] != cluster:
            continue
        if split is not None and info["split"] != split:
            continue
        if failure_kind is not None and failure_kind not in item_kinds:
            continue
        if disagree and not entry["disagree"]:
            continue
        matched.append(entry)
    page = matched[offset : None if limit is None else offset + limit]
    return {
        "arms": arms,
        "items": page,
        "n_items": len(matched),
        "n_items_total": len(items),
        "n_items_cancelled": len(left_out),
        "clusters": sorted({i["cluster"] for i in items.values()}),
        "splits": sorted({i["split"] for i in items.values()}),
        "failure_kinds": sorted(kinds),
    }
