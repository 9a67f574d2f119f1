"""While rows stream, the daemon copies SQLite's write-ahead log into the database file in a thread
of its own, every ~4,000 rows: a benchmark's rows reach the file without waiting for SQLite's
own checkpoint at 10,000 pages of log (~40 MB), which ran inside one of the row writer's commits
and held the streamed rows back for 150-330 ms each time. And the daemon's process lets its
writer threads have the interpreter back within 1 ms (a batch of rows took 12-23 ms to write,
in steps of Python's default 5 ms). Real daemon subprocesses.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from hrbench.errors import StoreGone
from hrbench.store import Store
from tests._slow import slow
from tests.server._daemon import Daemon, spec


def test_streamed_rows_reach_the_database_file_without_waiting_for_sqlites_checkpoint(daemon: Daemon) -> None:
    db = daemon.home / "hrbench.sqlite3"
    with daemon.client() as c:
        assert len(list(c.benchmark(spec(n=4, runs=1)))) == 4  # the store made
        before = db.stat().st_size
        items = {f"q{i}": f"item{i}" for i in range(1500)}
        stream = c.benchmark(
            {
                "arms": [{"kind": "prompt", "name": "ask", "template": "{item}"}],
                "reference": {"items": items, "labels": ["x"] * len(items)},
                "client": {"kind": "mock", "reply": "x"},
                "runs": 3,
                "cache": False,
                "governor": {},
                "concurrency": 16,
            }
        )
        assert len(list(stream)) == 4500  # ~5 MB of log: SQLite's own checkpoint comes at ~40 MB
        deadline = time.monotonic() + slow(20)
        while db.stat().st_size - before < 1_000_000 and time.monotonic() < deadline:
            time.sleep(0.05)  # the last checkpoint may still be copying
        grown = db.stat().st_size - before
        assert grown >= 1_000_000, f"the database file grew {grown} bytes: the log was not copied"
    store = Store(db)  # what was copied reads back whole
    try:
        assert store.rows_count(stream.id or "") == 4500
    finally:
        store.close()
    assert "write-ahead log not copied" not in daemon.read_log()


def test_wal_checkpoint_copies_the_log_while_the_store_goes_on_writing(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    try:
        store.rows_put("b", [])
        frames, copied = store.wal_checkpoint()
        assert frames > 0 and copied == frames
        store.rows_put("b2", [])  # the store's own connection writes while the checkpointer's is open
        frames, copied = store.wal_checkpoint()
        assert 0 < copied == frames
    finally:
        store.close()
    assert store._checkpointer is None  # closed with the store


def test_wal_checkpoint_of_a_deleted_database_says_so(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    store = Store(path)
    try:
        store.wal_checkpoint()  # its connection open: the file is checked at every call all the same
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        with pytest.raises(StoreGone, match="was deleted"):
            store.wal_checkpoint()
    finally:
        store.close()
    assert Store(":memory:").wal_checkpoint() == (0, 0)


def test_the_daemons_process_lets_its_writer_threads_have_the_interpreter_back_within_1_ms() -> None:
    code = (
        "import sys, os; from hrbench_server.daemon import _setup_process, SWITCH_INTERVAL_S; "
        "before = sys.getswitchinterval(); _setup_process(); "
        "print(before, sys.getswitchinterval(), SWITCH_INTERVAL_S)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after, constant = (float(x) for x in out.stdout.split())
    assert before == 0.005 and after == constant == 0.001
