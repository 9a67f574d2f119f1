"""Many processes opening one fresh store at once (cases R06a, R06b)."""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from tests._slow import slow
from tests.conftest import case


def _opener(folder: str, rounds: int, barrier: Any, failures: Any) -> None:
    from hrbench.store import Store

    for r in range(rounds):
        barrier.wait(timeout=slow(60))  # every process opens round r's fresh file at the same moment
        try:
            s = Store(Path(folder) / f"round{r}.db")
            s.cache_stats()
            s.close()
        except Exception as exc:
            failures.put(f"round {r}: {type(exc).__name__}: {exc}")


@pytest.mark.slow  # multi-process stress (spawned processes opening one store at once): make test-slow
def test_case_R06a_processes_opening_a_fresh_store_at_once_never_fail(tmp_path: Path) -> None:
    c = case("R06a")
    n, rounds = c["output"]["processes"], c["output"]["rounds"]
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(n)
    failures = ctx.Queue()
    procs = [ctx.Process(target=_opener, args=(str(tmp_path), rounds, barrier, failures)) for _ in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=slow(300))
    got = []
    while not failures.empty():
        got.append(failures.get())
    assert [p.exitcode for p in procs] == [0] * n
    assert len(got) == c["label"]["failures"], got[:5]
    for r in range(rounds):  # one schema row each, never a duplicate
        conn = sqlite3.connect(tmp_path / f"round{r}.db")
        assert conn.execute("SELECT count(*) FROM meta WHERE key='schema_version'").fetchone() == (1,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        conn.close()


def _writer(path: str, n: int, tag: int, barrier: Any, failures: Any) -> None:
    from hrbench.records import Request, Result
    from hrbench.store import Store

    s = Store(path)
    barrier.wait(timeout=slow(60))
    for i in range(n):
        req = Request(messages=[{"role": "user", "content": f"{tag}-{i}"}], draw_index=1)
        try:
            s.cache_put(f"{tag}-{i}", "A", f"h{tag}-{i}", req, Result(text="x"))
        except Exception as exc:
            failures.put(f"{type(exc).__name__}: {exc}")
    s.close()


@pytest.mark.slow  # multi-process stress (spawned writers against a held write lock): make test-slow
def test_case_R06b_writers_and_a_long_transaction(tmp_path: Path) -> None:
    c = case("R06b")
    writers, puts = c["output"]["writers"], c["output"]["puts_each"]
    path = str(tmp_path / "s.db")
    hb.Store(path).close()
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(writers + 1)
    failures = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(path, puts, k, barrier, failures)) for k in range(writers)]
    for p in procs:
        p.start()
    holder = sqlite3.connect(path, isolation_level=None)
    barrier.wait(timeout=slow(60))
    holder.execute("BEGIN IMMEDIATE")  # another connection holds the write lock for 2 s
    time.sleep(2.0)
    holder.execute("COMMIT")
    holder.close()
    for p in procs:
        p.join(timeout=slow(300))
    got = []
    while not failures.empty():
        got.append(failures.get())
    assert len(got) == c["label"]["errors"], got[:5]
    assert hb.Store(path).cache_stats()["entries"] == writers * puts
