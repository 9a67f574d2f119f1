"""A benchmark id runs at most once at a time (a lease in SQLite).

Real daemon subprocesses, killed with SIGKILL; the mock logs every call it answers.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from pathlib import Path

import pytest

import hrbench_client as hc
from hrbench.store import Store
from tests._slow import slow
from tests.server._daemon import Daemon, spec, zombie
from tests.server.test_benchmark import calls

# a fault simulation (real daemons killed, cancelled or left idle): `make test-slow`, run by .ci/run
pytestmark = pytest.mark.slow


def test_a_second_run_of_a_running_benchmark_is_refused_naming_it(home: Path, calls_file: Path) -> None:
    d = Daemon(home, env={"HRB_CALLS_FILE": str(calls_file), "HRB_MOCK_DELAY_S": "0.01"}).start()
    try:
        with d.client() as c, d.client() as other:
            stream = c.benchmark(spec(n=100, runs=5, concurrency=2))
            next(iter(stream))
            assert stream.id is not None
            with pytest.raises(hc.BenchmarkRunning, match=f"benchmark {stream.id} is running now") as err:
                list(other.resume(stream.id))
            assert err.value.code == -32026 and f"process {d.proc.pid}" in str(err.value)  # type: ignore[union-attr]
            stream.close()  # cancels; the lease goes with it
            rest = other.resume(stream.id)
            assert len(list(rest)) > 0 and rest.result is not None and rest.result.status == "done"
    finally:
        d.stop()


def test_two_simultaneous_resumes_after_sigkill_pay_each_call_once(home: Path, calls_file: Path) -> None:
    env = {"HRB_CALLS_FILE": str(calls_file), "HRB_MOCK_DELAY_S": "0.004"}
    d = Daemon(home, env=env).start()
    try:
        with d.client() as c:
            stream = c.benchmark(spec(n=120, runs=5, concurrency=8))
            for i, _ in enumerate(stream):
                if i == 100:
                    d.kill()
                    break
            bench_id = stream.id
    finally:
        d.kill()
    assert bench_id is not None
    paid_before = len(calls(calls_file))
    d2 = Daemon(home, env=env).start()
    outcomes: list[object] = []
    barrier = threading.Barrier(2)

    def resume() -> None:
        with d2.client() as c:
            barrier.wait()
            try:
                s = c.resume(bench_id)
                list(s)
                outcomes.append(s.result)
            except hc.BenchmarkRunning as exc:
                outcomes.append(exc)

    try:
        threads = [threading.Thread(target=resume) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=slow(300))
        with d2.client() as c:
            stored = c.rows(bench_id).rows
    finally:
        d2.stop()
    refused = [o for o in outcomes if isinstance(o, hc.BenchmarkRunning)]
    done = [o for o in outcomes if not isinstance(o, hc.BenchmarkRunning)]
    assert len(refused) == 1 and len(done) == 1, outcomes
    assert done[0].status == "done" and len(stored) == 600  # type: ignore[attr-defined]
    after = calls(calls_file)[paid_before:]
    assert len(after) == len(set(after))  # no call paid twice by two runs


def _ledger_calls(home: Path) -> int:
    """The calls a daemon's ledger holds now (0 before its first write)."""
    con = sqlite3.connect(home / "hrbench.sqlite3", timeout=slow(30))
    try:
        row = con.execute("SELECT max(calls) FROM ledger").fetchone()
    finally:
        con.close()
    return int(row[0] or 0)


def test_calls_in_flight_at_a_sigkill_count_against_the_cap_on_resume(home: Path, tmp_path: Path) -> None:
    # Slow replies: when the daemon is killed no row has finished, yet calls were sent. Each
    # call's reservation is in the ledger before it is sent, and counted as spent
    # on resume, so the resumed run stays under the cap (before: no ledger row without a
    # flushed row, so the governor restarted at 0 and the cap was passed).
    started = tmp_path / "started.jsonl"
    env = {"HRB_STARTED_FILE": str(started), "HRB_MOCK_DELAY_S": "1.5"}
    cap = 12
    d = Daemon(home, env=env).start()
    try:
        with d.client() as c:
            stream = c.benchmark(spec(n=40, runs=1, concurrency=8, governor={"max_calls": cap}))
            deadline = time.monotonic() + slow(60)
            while len(calls(started)) < 8 and time.monotonic() < deadline:
                time.sleep(0.05)
            # a flush tick wrote the ledger (waited for, not slept for: a loaded machine may
            # run no tick in 0.5 s), still before the first reply
            while _ledger_calls(home) < 8 and time.monotonic() < deadline:
                time.sleep(0.02)
            d.kill()
            del stream
    finally:
        d.kill()
    con = sqlite3.connect(home / "hrbench.sqlite3")
    (bench_id,) = con.execute("SELECT id FROM benchmarks").fetchone()
    con.close()
    ledger = Store(home / "hrbench.sqlite3").ledger_get(bench_id)
    assert ledger is not None
    kept = ledger["calls"]
    sent_before = len(calls(started))
    assert sent_before >= 8 and kept >= 8  # in flight, no row finished: in the ledger all the same
    d2 = Daemon(home, env={**env, "HRB_MOCK_DELAY_S": "0"}).start()
    try:
        with d2.client() as c:
            s = c.resume(bench_id)
            list(s)
            assert s.result is not None
    finally:
        d2.stop()
    assert len(calls(started)) <= cap  # every call sent, before and after the crash


def test_a_resume_right_after_a_sigkill_is_accepted_the_first_time(home: Path, calls_file: Path) -> None:
    # not refused for about a second ("is running now (process <the dead one>)") while the
    # killed daemon is not yet reaped: the lease is a lock that dies with its holder
    env = {"HRB_CALLS_FILE": str(calls_file), "HRB_MOCK_DELAY_S": "0.01"}
    d = Daemon(home, env=env).start()
    assert d.proc is not None
    try:
        with d.client() as c:
            stream = c.benchmark(spec(n=60, runs=5, concurrency=4))
            for i, _ in enumerate(stream):
                if i == 20:
                    break
            bench_id = stream.id
            os.kill(d.proc.pid, signal.SIGKILL)  # and not reaped: its pid still answers kill(pid, 0)
            while not zombie(d.proc.pid):
                time.sleep(0.005)
        assert bench_id is not None
        d2 = Daemon(home, env=env).start()
        try:
            os.kill(d.proc.pid, 0)  # the dead holder is still a process, as far as a pid check can tell
            with d2.client() as c:
                resumed = c.resume(bench_id)  # the first try
                rows = list(resumed)
                stored = c.rows(bench_id).rows
        finally:
            d2.stop()
    finally:
        d.kill()
    assert resumed.result is not None and resumed.result.status == "done"
    assert (
        len(stored) == 300
        and 0 < resumed.result.n_resumed < 300
        and len(rows) == 300 - resumed.result.n_resumed
    )
