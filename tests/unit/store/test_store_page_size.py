"""A new store has 16 KiB pages, a store made with 4 KiB pages keeps them, and the log stays ~40 MB at most.

The log's bound is set in bytes and given to SQLite in pages of the store's own size
(``wal_autocheckpoint``): 2,500 pages of 16 KiB, 10,000 of 4 KiB. A stream of row batches larger
than the bound leaves the write-ahead log under it (plus one batch) for either page size.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import msgspec
import pytest

from hrbench.records import Row, Step
from hrbench.store import Store

MB = 1_000_000
BOUND = 10_000 * 4096  # the log's bound, bytes


def _old_file(path: Path) -> None:
    """A store file created with SQLite's default page size, as every store was before."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA page_size=4096")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.close()


def _pragma(store: Store, name: str) -> int:
    with store._guard() as conn:
        return int(conn.execute(f"PRAGMA {name}").fetchone()[0])


def test_a_new_store_has_16k_pages_and_a_40_mb_log_bound(tmp_path: Path) -> None:
    store = Store(tmp_path / "new.sqlite3")
    assert (_pragma(store, "page_size"), _pragma(store, "wal_autocheckpoint")) == (16_384, 2_500)
    store.close()
    with sqlite3.connect(tmp_path / "new.sqlite3") as conn:  # kept in the file
        assert conn.execute("PRAGMA page_size").fetchone()[0] == 16_384


def test_a_store_made_with_4k_pages_keeps_them_and_reads_the_same(tmp_path: Path) -> None:
    row = Row(cluster="c", item="q1", arm="a", run=1, split="test", correct=True, outcome="Paris",
              failure_kind=None, ledger_id="b/a/q1/1")  # fmt: skip
    trace = {"b/a/q1/1": [Step(ledger_id="b/a/q1/1", kind="note", source="output", text="Paris")]}
    got = {}
    for name, made in (("old", _old_file), ("new", None)):
        path = tmp_path / f"{name}.sqlite3"
        if made is not None:
            made(path)
        store = Store(path)
        store.rows_put("b", [(0, row)], trace)
        got[name] = (store.rows_get("b"), store.traces_get("b"), store.outputs_get("b", ["b/a/q1/1"]))
        if name == "old":
            assert (_pragma(store, "page_size"), _pragma(store, "wal_autocheckpoint")) == (4096, 10_000)
        store.close()
    assert got["old"] == got["new"] and got["new"][0] == [row]


@pytest.mark.parametrize("old", [False, True], ids=["16k pages", "4k pages"])
def test_the_log_stays_under_its_bound_while_batches_stream(tmp_path: Path, old: bool) -> None:
    path = tmp_path / "s.sqlite3"
    if old:
        _old_file(path)
    store = Store(path)
    batch = MB  # bytes of rows and traces a batch, about a daemon's 1,024 mock rows
    rows = (
        b"[" + b",".join(msgspec.json.encode({"n": i, "pad": "x" * 900}) for i in range(batch // 920)) + b"]"
    )
    high = 0
    for i in range(2 * BOUND // batch):  # twice the bound
        store.row_batch_put("b", [i], rows, fresh=1)
        high = max(high, os.path.getsize(f"{path}-wal"))
    store.close()
    assert BOUND * 0.9 < high < BOUND + 2 * batch  # it grew to the bound (not checkpointed early), never past
