"""Daemons started with an idle timeout exit once no client and no benchmark keeps them busy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hrbench.store import Store
from hrbench_client import _paths
from hrbench_client.client import _pid_alive, connect, daemon_status
from tests._slow import slow
from tests.server._daemon import Daemon, spec

# a fault simulation (real daemons killed, cancelled or left idle): `make test-slow`, run by .ci/run
pytestmark = pytest.mark.slow


def _wait_exit(d: Daemon, timeout_s: float = 30.0) -> int:
    assert d.proc is not None
    return d.proc.wait(timeout=slow(timeout_s))


def test_idle_daemon_exits_only_after_its_last_client_left(home: Path) -> None:
    d = Daemon(home, idle_exit_s=0.5).start()
    try:
        with d.client() as c:
            assert c.status().idle_exit_s == 0.5
            time.sleep(2.0)  # four idle timeouts with a client connected: still up
            assert d.proc is not None and d.proc.poll() is None
            assert c.score("a", label="a").correct is True
        assert _wait_exit(d) == 0
        assert not d.socket.exists() and not _paths.pid_path(home).exists()
    finally:
        d.kill()


def test_a_running_benchmark_keeps_an_idle_daemon_up(home: Path) -> None:
    d = Daemon(home, idle_exit_s=0.3, env={"HRB_MOCK_DELAY_S": "0.05"}).start()
    try:
        with d.client() as c:
            # detached: it outlives its connection (else the daemon cancels it)
            stream = c.benchmark(spec(n=8, runs=5, concurrency=2, detach=True))  # ~1 s of calls
            next(iter(stream))
            bench_id = stream.id
        # the client left mid-benchmark: the daemon finishes it, then stops
        assert _wait_exit(d) == 0
    finally:
        d.kill()
    store = Store(home / "hrbench.sqlite3")
    try:
        assert bench_id is not None and store.rows_count(bench_id) == 40
        assert store.benchmark_get(bench_id)["status"] == "done"
    finally:
        store.close()


def test_on_demand_daemons_get_the_idle_timeout_and_daemon_start_does_not(
    tmp_path: Path, monkeypatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HRBENCH_IDLE_EXIT", "0.5")
    with connect(home) as c:  # starts one on demand
        assert c.status().idle_exit_s == 0.5
    pid = json.loads(_paths.pid_path(home).read_text())["pid"]
    deadline = time.monotonic() + slow(30)
    while _pid_alive(pid) and time.monotonic() < deadline:  # (reaps the child it started)
        time.sleep(0.1)
    assert not _pid_alive(pid) and daemon_status(home) is None
    assert not _paths.pid_path(home).exists()
    hrb = [sys.executable, "-m", "hrbench_client.cli", "--home", str(home)]
    env = {**os.environ, "HRBENCH_IDLE_EXIT": "0.5"}
    try:
        started = json.loads(
            subprocess.run([*hrb, "daemon", "start"], capture_output=True, env=env, check=True).stdout
        )
        assert started["pid"] != pid and started["idle_exit_s"] is None
        time.sleep(1.5)
        assert daemon_status(home) is not None  # `hrb daemon start` stays up
        subprocess.run([*hrb, "daemon", "stop"], capture_output=True, env=env, check=True)
        opted = subprocess.run(
            [*hrb, "daemon", "start", "--idle-exit", "1s"], capture_output=True, env=env, check=True
        )
        assert json.loads(opted.stdout)["idle_exit_s"] == 1.0
    finally:
        subprocess.run([*hrb, "daemon", "stop"], capture_output=True, env=env)
