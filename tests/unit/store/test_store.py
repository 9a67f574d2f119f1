"""The SQLite store: rows are paged in SQL, in the order they were scored; reference names."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrbench.errors import ConfigError
from hrbench.records import Row, Step
from hrbench.reference import Reference
from hrbench.store import SCHEMA_VERSION, Store
from tests._examples import examples

N = 12


def row(i: int, arm: str = "a") -> Row:
    return Row(
        cluster="c",
        item=f"q{i:02d}",
        arm=arm,
        run=1,
        split="test",
        correct=True,
        outcome=None,
        failure_kind=None,
        ledger_id=f"{arm}-{i}",
    )


@pytest.fixture
def store() -> Store:
    s = Store(":memory:")
    # written out of order, in two batches, beside another benchmark's rows: the page must
    # still follow `seq`, and hold only this benchmark's rows
    order = [7, 2, 11, 0, 5, 9, 1, 10, 3, 8, 6, 4]
    s.rows_put("b", [(i, row(i)) for i in order[:6]])
    s.rows_put("other", [(i, row(i, arm="x")) for i in range(N)])
    s.rows_put(
        "b",
        [(i, row(i)) for i in order[6:]],
        traces={f"a-{i}": [Step(ledger_id=f"a-{i}", key=f"k{i}")] for i in range(N)},
    )
    return s


@pytest.mark.parametrize(
    ("offset", "limit"),
    [(0, None), (0, 5), (3, None), (3, 4), (10, 5), (11, 1), (12, None), (12, 3), (50, 2), (0, 0), (0, 100)],
)
def test_rows_get_pages_in_seq_order(store: Store, offset: int, limit: int | None) -> None:
    everything = [row(i) for i in range(N)]
    end = None if limit is None else offset + limit
    assert store.rows_get("b", offset, limit) == everything[offset:end]
    assert store.rows_get("b", offset=offset, limit=limit) == everything[offset:end]


def test_rows_get_default_is_every_row_and_count_agrees(store: Store) -> None:
    assert [r.item for r in store.rows_get("b")] == [f"q{i:02d}" for i in range(N)]
    assert store.rows_count("b") == N and store.rows_count("other") == N and store.rows_count("none") == 0
    assert store.rows_get("none") == []


@pytest.mark.parametrize(("offset", "limit", "field"), [(-1, None, "offset"), (0, -2, "limit")])
def test_rows_get_rejects_negative_bounds(store: Store, offset: int, limit: int | None, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        store.rows_get("b", offset, limit)
    assert info.value.field == field


def test_traces_get_only_for_the_ledger_ids_asked(store: Store) -> None:
    page = store.rows_get("b", 2, 3)
    traces = store.traces_get("b", [r.ledger_id for r in page])
    assert sorted(traces) == ["a-2", "a-3", "a-4"]
    assert traces["a-3"][0].key == "k3"
    assert store.traces_get("b", []) == {}
    assert len(store.traces_get("b")) == N
    many = [f"a-{i % N}" for i in range(1200)]  # more ids than one IN (...) chunk, repeated
    assert len(store.traces_get("b", many)) == N


@settings(max_examples=examples(25), deadline=None)
@given(
    st.lists(st.integers(0, 700), min_size=0, max_size=3),
    st.integers(0, 40),
    st.booleans(),
)
def test_rows_put_any_batch_size_keeps_every_row_and_trace_once(
    sizes: list[int], repeats: int, pre_encoded: bool
) -> None:
    """Batches of any size store every row and trace once; a row written again (a run re-run
    on resume, or twice in one batch) keeps its last version (a batch is one
    SQLite row, given as the wire's JSON chunks when ``pre_encoded``)."""
    s = Store(":memory:")
    expected: dict[int, Row] = {}
    start = 0
    for n in sizes:
        batch = [(i, msgspec.structs.replace(row(i), outcome=f"v{start}")) for i in range(start, start + n)]
        batch += [
            (i, msgspec.structs.replace(row(i), outcome="again"))
            for i in range(start, start + min(repeats, n))
        ]
        traces = {r.ledger_id: [Step(ledger_id=r.ledger_id, key=r.outcome or "")] for _, r in batch}
        half = len(batch) // 2  # two chunks, as the daemon cuts a batch at a progress notification
        chunks = [msgspec.json.encode([r for _, r in part]) for part in (batch[:half], batch[half:])]
        s.rows_put("b", batch, traces, chunks=chunks if pre_encoded else None)
        expected.update(dict(batch))
        start += n
    got = s.rows_get("b")
    assert got == [expected[i] for i in sorted(expected)]
    assert s.rows_count("b") == len(expected)
    for offset, limit in ((0, 1), (1, 3), (len(expected) // 2, None), (len(expected), 5)):  # pages
        assert s.rows_get("b", offset, limit) == got[offset : None if limit is None else offset + limit]
    traces = s.traces_get("b")
    assert len(traces) == len(expected)
    assert all(traces[r.ledger_id][0].key == r.outcome for r in got)


# -- reference names: a history of name -> content hash ----------------------------------------

REFS = [Reference({"q": "item"}, [label]) for label in ("A", "B", "C")]


def test_put_a_b_a_under_one_name_gets_a() -> None:
    s = Store(":memory:")
    for ref in (REFS[0], REFS[1], REFS[0]):
        s.reference_put(ref, "x")
    assert s.reference_get("x").hash == REFS[0].hash
    assert [h["hash"] for h in s.reference_history("x")] == [REFS[0].hash, REFS[1].hash, REFS[0].hash]


def test_one_content_keeps_every_name() -> None:
    s = Store(":memory:")
    s.reference_put(REFS[0], "first")
    s.reference_put(REFS[0], "second")
    s.reference_put(REFS[0])  # a put without a name leaves the names alone
    assert s.reference_get("first").hash == s.reference_get("second").hash == REFS[0].hash
    listed = {(r["name"], r["hash"]) for r in s.reference_list()}
    assert listed == {("first", REFS[0].hash), ("second", REFS[0].hash)}


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["x", "y", "z"]), st.sampled_from([0, 1, 2, None])), max_size=12))
def test_get_is_the_last_put_under_each_name(puts: list[tuple[str, int | None]]) -> None:
    s = Store(":memory:")
    last: dict[str, str] = {}
    history: dict[str, list[str]] = {}
    contents: set[str] = set()
    for name, i in puts:
        if i is None:  # a content kept without a name
            s.reference_put(REFS[2])
            contents.add(REFS[2].hash)
            continue
        s.reference_put(REFS[i], name)
        last[name] = REFS[i].hash
        history.setdefault(name, []).append(REFS[i].hash)
        contents.add(REFS[i].hash)
    for name in ("x", "y", "z"):
        got = s.reference_get(name)
        assert (got.hash if got is not None else None) == last.get(name)
        assert [h["hash"] for h in s.reference_history(name)] == history.get(name, [])
    listed = s.reference_list()
    assert {r["name"]: r["hash"] for r in listed if r["name"] is not None} == last
    unnamed = {r["hash"] for r in listed if r["name"] is None}
    assert unnamed == contents - set(last.values()) - {h for hs in history.values() for h in hs}


def test_lookup_order_full_hash_then_name_then_prefix() -> None:
    s = Store(":memory:")
    a, b = REFS[0], REFS[1]
    s.reference_put(a, b.hash[:12])  # a name that is a prefix of b's hash: the name wins
    s.reference_put(b)
    assert s.reference_get(b.hash[:12]).hash == a.hash
    assert s.reference_get(b.hash).hash == b.hash
    assert s.reference_get(b.hash[:10]).hash == b.hash
    assert s.reference_get(a.hash[:7]) is None  # a prefix needs 8 characters
    assert s.reference_get("nobody") is None
    with pytest.raises(ConfigError, match="name"):
        s.reference_put(a, " ")


def test_schema_1_file_migrates_its_names(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
        "INSERT INTO meta VALUES ('schema_version', '1');"
        "CREATE TABLE reference_sets (hash TEXT PRIMARY KEY, name TEXT, created REAL, n_items INTEGER, body TEXT);"
    )
    for t, (ref, name) in enumerate([(REFS[0], "x"), (REFS[1], None)]):
        conn.execute(
            "INSERT INTO reference_sets VALUES (?,?,?,?,?)",
            [ref.hash, name, 1000.0 + t, len(ref), msgspec.json.encode(ref.to_dict()).decode()],
        )
    conn.commit()
    conn.close()
    s = Store(path)
    assert s.reference_get("x").hash == REFS[0].hash
    assert s.reference_history("x") == [{"hash": REFS[0].hash, "created": 1000.0}]
    assert {(r["name"], r["hash"]) for r in s.reference_list()} == {("x", REFS[0].hash), (None, REFS[1].hash)}
    assert s._one("SELECT value FROM meta WHERE key='schema_version'")[0] == str(SCHEMA_VERSION) == "7"
    s.reference_put(REFS[1], "x")
    s.close()
    assert Store(path).reference_get("x").hash == REFS[1].hash  # reopening does not migrate again


def test_every_store_file_is_private_under_a_loose_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        s = Store(tmp_path / "s.sqlite3")
        s.reference_put(REFS[0], "x")  # a write: the WAL and shared-memory files exist now
        files = sorted(tmp_path.iterdir())
        assert {f.name for f in files} >= {"s.sqlite3", "s.sqlite3-wal", "s.sqlite3-shm"}
        assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in files} == dict.fromkeys(
            (f.name for f in files), 0o600
        )
        s.close()
        loose = tmp_path / "old.sqlite3"  # left 0644 by an older version: tightened on open
        Store(loose).close()
        os.chmod(loose, 0o644)
        Store(loose).close()
        assert stat.S_IMODE(loose.stat().st_mode) == 0o600
    finally:
        os.umask(old)


# -- the one-at-a-time lease of a benchmark id ---------------------------------------------------


def test_a_lease_is_held_across_connections_and_released(tmp_path: Path) -> None:
    a, b = Store(tmp_path / "s.sqlite3"), Store(tmp_path / "s.sqlite3")  # two connections, one file
    assert a.lease_acquire("bench", "run-a") is None
    held = b.lease_acquire("bench", "run-b")
    assert held is not None and held["owner"] == "run-a" and held["pid"] == os.getpid()
    assert b.lease_acquire("other", "run-b") is None  # leases are per benchmark id
    b.lease_release("bench", "run-b")  # not b's: left alone
    assert b.lease_acquire("bench", "run-b") is not None
    a.lease_release("bench", "run-a")
    assert b.lease_acquire("bench", "run-b") is None


@pytest.mark.slow  # a fault simulation (the lease holder SIGKILLed): make test-slow
def test_a_lease_of_a_killed_process_is_taken_over_at_once_before_it_is_reaped(tmp_path: Path) -> None:
    # a resume right after a SIGKILL is not refused until the dead holder is reaped (its pid
    # still "alive" to kill(pid, 0)): the lock dies with the process
    import signal
    import subprocess
    import sys

    from tests.server._daemon import zombie

    db = tmp_path / "s.sqlite3"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from hrbench.store import Store; "
            f"assert Store({str(db)!r}).lease_acquire('bench', 'killed-daemon') is None; "
            "print('held', flush=True); time.sleep(600)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        s = Store(db)
        assert s.lease_acquire("bench", "new-run") == {
            "owner": "killed-daemon",
            "pid": holder.pid,
            "acquired": pytest.approx(time.time(), abs=60),
        }
        holder.send_signal(signal.SIGKILL)
        while not zombie(holder.pid):  # dead, not reaped: its pid answers kill(pid, 0)
            time.sleep(0.005)
        os.kill(holder.pid, 0)
        assert s.lease_acquire("bench", "new-run") is None  # the first try, at once
        assert s.lease_acquire("bench", "third")["owner"] == "new-run"
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()


def test_a_lease_row_left_behind_with_a_live_pid_does_not_hold_the_lease(tmp_path: Path) -> None:
    # a crashed holder's row names a pid a live process has now (pid reuse): only the lock counts
    s = Store(tmp_path / "s.sqlite3")
    s.db.conn.execute("INSERT INTO leases VALUES ('bench', 'crashed-run', ?, 0)", [os.getpid()])
    assert s.lease_acquire("bench", "new-run") is None
    assert s.lease_acquire("bench", "other")["owner"] == "new-run"


def test_of_many_concurrent_takers_exactly_one_wins(tmp_path: Path) -> None:
    import threading

    Store(tmp_path / "s.sqlite3").close()
    stores = [Store(tmp_path / "s.sqlite3") for _ in range(8)]
    won: list[int] = []
    barrier = threading.Barrier(len(stores))

    def take(i: int) -> None:
        barrier.wait()
        if stores[i].lease_acquire("bench", f"run-{i}") is None:
            won.append(i)

    threads = [threading.Thread(target=take, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1


def test_a_schema_4_file_keeps_its_rows_and_traces_readable_and_resumable(tmp_path: Path) -> None:
    """Store schema 5 keeps rows a batch per SQLite row; rows a schema-4 file
    holds one per row stay where they are and are read with the batches: pages, counts, traces,
    listings, a re-run (a budget stop run again on resume) replacing its old row, and deletion."""
    path = tmp_path / "old.sqlite3"
    Store(path).close()
    con = sqlite3.connect(path)  # make it a schema-4 file holding rows, as hrbench 4 left it
    con.executescript(
        "DROP TABLE row_batches; UPDATE meta SET value='4' WHERE key='schema_version';"
        "INSERT INTO benchmarks VALUES ('b', 1.0, 'budget_stopped', 'h', '{}', NULL);"
    )
    old = [msgspec.structs.replace(row(i), failure_kind="budget_stop" if i == 2 else None) for i in range(4)]
    for i, r in enumerate(old):
        con.execute(
            "INSERT INTO rows VALUES (?,?,?,?,?,?)",
            ["b", i, r.arm, r.item, r.run, msgspec.json.encode(r).decode()],
        )
        con.execute(
            "INSERT INTO traces VALUES (?,?,?)",
            ["b", r.ledger_id, msgspec.json.encode([Step(ledger_id=r.ledger_id, key=f"old{i}")]).decode()],
        )
    con.commit()
    con.close()
    s = Store(path)
    assert s._one("SELECT value FROM meta WHERE key='schema_version'")[0] == "7"
    assert s.rows_get("b") == old and s.rows_count("b") == 4
    assert s.rows_get("b", 1, 2) == old[1:3]
    assert s.traces_get("b", [old[1].ledger_id])[old[1].ledger_id][0].key == "old1"
    again = msgspec.structs.replace(old[2], failure_kind=None, outcome="rerun")
    new = msgspec.structs.replace(row(4), outcome="new")
    s.rows_put(
        "b",
        [(2, again), (4, new)],
        {r.ledger_id: [Step(ledger_id=r.ledger_id, key="new")] for r in (again, new)},
        fresh=1,  # as the daemon says: one of the two keys is new
    )
    assert s.rows_get("b") == [*old[:2], again, old[3], new]
    assert s.rows_count("b") == 5 and s.benchmark_list()[0]["rows"] == 5
    traces = s.traces_get("b")
    assert (
        len(traces) == 5
        and traces[again.ledger_id][0].key == "new"
        and traces[old[0].ledger_id][0].key == "old0"
    )
    assert s.benchmark_delete(["b"]) == {"benchmarks": 1, "rows": 5, "traces": 5, "locks": 0}
    assert s.rows_get("b") == [] and s.rows_count("b") == 0 and s.traces_get("b") == {}
