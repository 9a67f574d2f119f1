"""One cell of a benchmark (every run of an arm on an item, with its traces), read through indexes.

Also the list-price read of a benchmark's traces (:func:`_price_traces`): both read the stored
row batches and traces a few at a time, decoding only what they need.
"""

from __future__ import annotations

import shlex
import threading
import weakref
from collections import OrderedDict
from typing import Any

import msgspec

from hrbench.errors import NotFound
from hrbench.records import Row, Step
from hrbench.results.browse._listing import _head, _record, _summary
from hrbench.store import Store, store_error

__all__ = ["benchmark_cell", "reproduce_command"]


def reproduce_command(benchmark_id: str, item: str, arm: str) -> str:
    """The shell command that prints one cell's rows with their traces.

    Example:
        >>> reproduce_command("0123abcd", "q 1", "ask")
        "hrb rows 0123abcd --traces --item 'q 1' --arm ask"
    """
    return shlex.join(["hrb", "rows", benchmark_id, "--traces", "--item", item, "--arm", arm])


class _CellKey(msgspec.Struct):
    """What the cell index reads of a stored row (its other fields are skipped when decoding)."""

    arm: str
    item: str


class _RefParts(msgspec.Struct):
    """What a cell reads of a stored reference: payloads and labels, each left undecoded."""

    items: dict[str, msgspec.Raw]
    labels: dict[str, msgspec.Raw] | None = None


class _PriceStep(msgspec.Struct):
    """What a run's list price reads of a trace step (:func:`hrbench.records.list_usd`), as in ``Step``."""

    kind: str = "request"
    source: str = "live"
    usd_nominal: float | None = None


_dec_cell_keys = msgspec.json.Decoder(list[_CellKey])
_dec_price_steps = msgspec.json.Decoder(list[_PriceStep])
_dec_rows = msgspec.json.Decoder(list[Row])
_dec_row = msgspec.json.Decoder(Row)
_dec_steps = msgspec.json.Decoder(list[Step])
_dec_trace_map = msgspec.json.Decoder(dict[str, msgspec.Raw])
_dec_ref_parts = msgspec.json.Decoder(_RefParts)


class _CellIndex:
    """Which row batches of one benchmark hold the rows of each ``(arm, item)``.

    The rows are stored a batch per SQLite row (:meth:`Store.row_batch_put`), so no SQL index
    reaches one cell's rows; reading a cell would decode every row and every trace (11-18 s for
    a cell of a 100,000-row benchmark in ``hrb view``). The index is built from the
    batches' keys the first time a benchmark's cell is read, extended with the batches written
    since at every read (their ids only grow), and rebuilt when a batch it knew is gone; a
    cell then reads and decodes only its own batches (a few milliseconds).
    """

    __slots__ = ("bare", "cells", "ids")

    def __init__(self) -> None:
        self.ids: list[int] = []
        """The batch ids indexed, ascending."""
        self.cells: dict[tuple[str, str], list[int]] = {}
        """``(arm, item) -> ids`` of the batches holding its rows, ascending."""
        self.bare: list[int] = []
        """Ids of batches with traces and no rows (read for every cell)."""


_CELL_INDEXES: weakref.WeakKeyDictionary[Store, OrderedDict[str, _CellIndex]] = weakref.WeakKeyDictionary()
_REF_PARTS: weakref.WeakKeyDictionary[Store, OrderedDict[str, _RefParts]] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()
_KEEP = 4
"""Benchmarks (and references) whose cell index a store keeps, the least recently read dropped."""


def _cached(table: weakref.WeakKeyDictionary[Store, OrderedDict[str, Any]], store: Store, key: str) -> Any:
    with _CACHE_LOCK:
        entries = table.get(store)
        if entries is None or key not in entries:
            return None
        entries.move_to_end(key)
        return entries[key]


def _keep(
    table: weakref.WeakKeyDictionary[Store, OrderedDict[str, Any]], store: Store, key: str, value: Any
) -> None:
    with _CACHE_LOCK:
        entries = table.setdefault(store, OrderedDict())
        entries[key] = value
        entries.move_to_end(key)
        while len(entries) > _KEEP:
            entries.popitem(last=False)


def _in_chunks(ids: list[int]) -> list[list[int]]:
    return [ids[i : i + 500] for i in range(0, len(ids), 500)]  # well under SQLite's bound-parameter limit


def _cell_index(store: Store, benchmark_id: str, ids: list[int]) -> _CellIndex:
    """The cell index of a benchmark whose batches are ``ids`` (ascending), brought up to date."""
    index = _cached(_CELL_INDEXES, store, benchmark_id)
    if index is None or index.ids != ids[: len(index.ids)]:
        index = _CellIndex()  # new, or a batch it knew is gone (deleted, collected): rebuilt
    new = ids[len(index.ids) :]
    if new:
        grown = _CellIndex()
        grown.ids, grown.bare = [*index.ids, *new], list(index.bare)
        grown.cells = {k: list(v) for k, v in index.cells.items()}
        for chunk in _in_chunks(new):
            marks = ",".join("?" * len(chunk))
            got = store._all(f"SELECT id, n, rows FROM row_batches WHERE id IN ({marks}) ORDER BY id", chunk)
            for batch_id, n, body in got:
                if not n:
                    grown.bare.append(batch_id)
                    continue
                try:
                    keys = _dec_cell_keys.decode(body)
                except msgspec.DecodeError as exc:
                    raise store_error(exc, store.path) from None
                for k in keys:
                    held = grown.cells.setdefault((k.arm, k.item), [])
                    if not held or held[-1] != batch_id:
                        held.append(batch_id)
        index = grown
        _keep(_CELL_INDEXES, store, benchmark_id, index)
    return index


def _price_traces(store: Store, benchmark_id: str) -> dict[str, list[_PriceStep]]:
    """Every trace of a benchmark as its list price reads it: kind, source and nominal USD of each step.

    Rule (a benchmark's page of 100,000 rows must not hold the store for seconds, so that
    other pages do not wait): the messages and replies are skipped, and the batches are
    read a few at a time, each read its own short hold of the store, decoded outside it. The
    last written trace of each run counts, as in :meth:`Store.traces_get`.
    """
    try:
        raws: dict[str, Any] = dict(
            store._all("SELECT ledger_id, steps FROM traces WHERE benchmark_id=?", [benchmark_id])
        )
        ids = [
            i
            for (i,) in store._all(
                "SELECT id FROM row_batches WHERE benchmark_id=? ORDER BY id", [benchmark_id]
            )
        ]
        for k in range(0, len(ids), 8):
            some = ids[k : k + 8]
            marks = ",".join("?" * len(some))
            for (blob,) in store._all(
                f"SELECT traces FROM row_batches WHERE id IN ({marks}) ORDER BY id", some
            ):
                raws.update(_dec_trace_map.decode(blob))
        return {lid: _dec_price_steps.decode(raw) for lid, raw in raws.items()}
    except msgspec.DecodeError as exc:
        raise store_error(exc, store.path) from None


def _cell_runs(
    store: Store, benchmark_id: str, item: str, arm: str
) -> tuple[list[Row], dict[str, list[Step]]]:
    """One cell's rows (by run; the last written of each run) and their traces, read through indexes.

    The same rows and traces as :meth:`Store.rows_get` and :meth:`Store.traces_get` give for
    the cell, from the rows and traces of schema 4 (by primary key) and the cell's batches.
    """
    try:
        old = store._all(
            "SELECT seq, row FROM rows WHERE benchmark_id=? AND arm=? AND item=?", [benchmark_id, arm, item]
        )
        ids = [
            i
            for (i,) in store._all(
                "SELECT id FROM row_batches WHERE benchmark_id=? ORDER BY id", [benchmark_id]
            )
        ]
        index = _cell_index(store, benchmark_id, ids)
        wanted = sorted({*index.cells.get((arm, item), ()), *index.bare})
        batches = []
        for chunk in _in_chunks(wanted):
            marks = ",".join("?" * len(chunk))
            batches += store._all(
                f"SELECT id, rows, traces FROM row_batches WHERE id IN ({marks}) ORDER BY id", chunk
            )
        latest: dict[int, Row] = {}
        for _, text in sorted(old):
            r = _dec_row.decode(text)
            latest[r.run] = r
        raw_traces: dict[str, Any] = {}
        for _, body, _ in batches:  # ascending ids: the last written of each run wins
            for r in _dec_rows.decode(body):
                if r.arm == arm and r.item == item:
                    latest[r.run] = r
        mine = [latest[run] for run in sorted(latest)]
        lids = {r.ledger_id for r in mine}
        if lids:
            listed = sorted(lids)
            for i in range(0, len(listed), 500):
                named = listed[i : i + 500]
                marks = ",".join("?" * len(named))
                raw_traces.update(
                    store._all(
                        f"SELECT ledger_id, steps FROM traces WHERE benchmark_id=? AND ledger_id IN ({marks})",
                        [benchmark_id, *named],
                    )
                )
            for _, _, traces in batches:
                raw_traces.update((k, v) for k, v in _dec_trace_map.decode(traces).items() if k in lids)
        return mine, {k: _dec_steps.decode(v) for k, v in raw_traces.items()}
    except msgspec.DecodeError as exc:
        raise store_error(exc, store.path) from None


def _item_parts(store: Store, reference_hash: str, item: str) -> tuple[Any, Any] | None:
    """An item's ``(payload, label)`` in a stored reference; ``None`` when either is not stored.

    Only the item's own values are decoded (the reference is kept undecoded, by hash: stored
    references never change), not the whole :class:`~hrbench.reference.Reference`.
    """
    parts = _cached(_REF_PARTS, store, reference_hash)
    if parts is None:
        row = store._one("SELECT body FROM reference_sets WHERE hash=?", [reference_hash])
        if row is None:
            return None
        try:
            parts = _dec_ref_parts.decode(row[0])
        except msgspec.DecodeError as exc:
            raise store_error(exc, store.path) from None
        _keep(_REF_PARTS, store, reference_hash, parts)
    if item not in parts.items:
        return None
    label = (parts.labels or {}).get(item)
    return msgspec.json.decode(parts.items[item]), None if label is None else msgspec.json.decode(label)


def benchmark_cell(store: Store, benchmark_id: str, item: str, arm: str) -> dict[str, Any]:
    """One cell: every run of ``arm`` on ``item`` with its trace, the item's payload and label.

    Args:
        store: the store to read.
        benchmark_id: the benchmark.
        item: the item id.
        arm: the arm's name.

    Returns:
        A ``BenchmarkCellResult`` dict: ``benchmark`` (its summary), item, arm, cluster, split,
        ``payload`` and ``label`` (from the stored reference; ``None`` when it is not stored),
        ``runs`` (``{"row": Row, "trace": [Step, ...]}`` by run; the trace holds each request
        and reply, finish reason, usage, USD and source: live, cache or recording) and
        ``command``, the ``hrb rows`` line that prints the same rows.

    Raises:
        NotFound: no benchmark has that id, or the arm never ran the item.

    Example:
        >>> s = Store(":memory:")
        >>> s.benchmark_put("b1", {}, "h")
        >>> s.rows_put("b1", [(0, Row(cluster="c", item="q1", arm="a", run=1, split="test",
        ...                           correct=False, outcome="x", failure_kind="wrong"))])
        >>> c = benchmark_cell(s, "b1", "q1", "a")
        >>> [r["row"].outcome for r in c["runs"]], c["command"]
        (['x'], 'hrb rows b1 --traces --item q1 --arm a')
    """
    rec = _record(store, benchmark_id)
    mine, traces = _cell_runs(store, benchmark_id, item, arm)
    if not mine:
        raise NotFound(
            f"arm {arm!r} has no run on item {item!r} in benchmark {benchmark_id}",
            benchmark=benchmark_id,
            item=item,
            arm=arm,
        )
    parts = _item_parts(store, rec["reference_hash"], item) if rec.get("reference_hash") else None
    payload, label = parts if parts is not None else (None, None)
    return {
        "benchmark": _summary(_head(store, rec, store.rows_count(benchmark_id)), (), store),
        "item": item,
        "arm": arm,
        "cluster": mine[0].cluster,
        "split": mine[0].split,
        "payload": payload,
        "label": label,
        "runs": [{"row": r, "trace": traces.get(r.ledger_id, [])} for r in mine],
        "command": reproduce_command(benchmark_id, item, arm),
    }
