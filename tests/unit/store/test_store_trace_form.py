"""A trace is stored without its steps' default fields, and one stored with every field reads the same.

The readers decode each step as ``Step`` (or a few of its fields), which fills a missing field with
its default: every reader of the store is checked on both forms, in ``row_batches`` and in the
``traces`` table of schema 4.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import msgspec
import pytest

from hrbench.records import Row, Step
from hrbench.store import Store
from tests._traces import full_json, rich_trace

LIDS = ["b/a/q1/1", "b/a/q2/1"]


def _row(lid: str, seq: int) -> Row:
    return Row(cluster="c", item=f"q{seq + 1}", arm="a", run=1, split="test", correct=True, outcome="Paris",
               failure_kind=None, ledger_id=lid)  # fmt: skip


def _traces() -> dict[str, list[Step]]:
    return {lid: rich_trace(lid) for lid in LIDS}


def _stored_blob(path: Path) -> bytes:
    with sqlite3.connect(path) as conn:
        (blob,) = conn.execute("SELECT traces FROM row_batches").fetchone()
    return bytes(blob)


def test_a_trace_is_stored_without_the_fields_at_their_defaults(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    store.rows_put("b", [(i, _row(lid, i)) for i, lid in enumerate(LIDS)], _traces())
    store.close()
    blob = _stored_blob(tmp_path / "s.sqlite3")
    stored = json.loads(blob)
    note = stored[LIDS[0]][-1]
    assert note == {"ledger_id": LIDS[0], "kind": "note", "source": "output", "text": "Paris"}
    refused = stored[LIDS[0]][-2]
    assert set(refused) == {"ledger_id", "key", "source", "error"}
    cached = stored[LIDS[0]][3]  # a usd of None is kept: its default is 0.0
    assert (
        set(cached) == {"ledger_id", "key", "source", "usd", "usd_nominal", "usage"} and cached["usd"] is None
    )
    assert len(blob) < 0.75 * len(full_json(_traces()))
    assert Store(tmp_path / "s.sqlite3").traces_get("b") == _traces()


def _full_in_batches(store: Store) -> None:
    rows = msgspec.json.encode([_row(lid, i) for i, lid in enumerate(LIDS)])
    store.row_batch_put("b", [0, 1], rows, full_json(_traces()), fresh=2)


def _full_in_schema_4(store: Store) -> None:
    with store._guard() as conn:
        for i, lid in enumerate(LIDS):
            row = _row(lid, i)
            conn.execute(
                "INSERT INTO rows VALUES (?,?,?,?,?,?)",
                ["b", i, row.arm, row.item, row.run, msgspec.json.encode(row).decode()],
            )
            steps = json.dumps(json.loads(full_json({lid: rich_trace(lid)}))[lid])
            conn.execute("INSERT INTO traces VALUES (?,?,?)", ["b", lid, steps])


def _reads(store: Store) -> dict[str, object]:
    return {
        "traces": store.traces_get("b"),
        "some": store.traces_get("b", [LIDS[1]]),
        "outputs": store.outputs_get("b", [*LIDS, "b/a/q9/1"]),
        "draws": store.trace_draws("b", LIDS),
        "stops": store.stop_limits("b"),
        "rows": store.rows_get("b"),
    }


@pytest.mark.parametrize("write_full", [_full_in_batches, _full_in_schema_4], ids=["row_batches", "schema 4"])
def test_a_trace_stored_with_every_field_reads_the_same(tmp_path: Path, write_full) -> None:
    compact, full = Store(tmp_path / "compact.sqlite3"), Store(tmp_path / "full.sqlite3")
    compact.rows_put("b", [(i, _row(lid, i)) for i, lid in enumerate(LIDS)], _traces())
    write_full(full)
    got = _reads(full)
    assert got == _reads(compact)
    assert got["traces"] == _traces()
    assert got["outputs"] == {LIDS[0]: "Paris", LIDS[1]: "Paris", "b/a/q9/1": None}
    assert got["stops"] == ["token_cap_reached"]
    assert [s.key for s in got["draws"][LIDS[0]]] == ["k1", "k2", "k3"]
