"""Fixtures for the `hrb` tests: one daemon, and one benchmark, that a module's tests share.

Most `hrb` tests autostart a daemon on their private HRBENCH_HOME, as a user's first command
does, and stop it when they end. A test that needs no daemon of its own (it does not start,
stop or kill one, count the calls made, or read the whole store: `hrb ls`, `hrb ref list`,
whether a reference is new) asks for ``shared_home``, whose daemon (started as `hrb daemon
start` does, once per module and xdist worker) answers it; a test that only reads a benchmark
asks for ``shared_bench_id``, run once on that daemon. Benchmarks run there share its store and
response cache: a test whose replies could come from that cache keeps its own daemon unless
the cached reply (a mock's, the same every time) changes nothing it checks.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrbench_client.client.daemon import start_daemon
from tests._procs import stop_daemon
from tests._slow import slow


@pytest.fixture(scope="module")
def _module_daemon_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("shared-hrb") / "home"
    start_daemon(home)  # detached, in its state folder, never idle-stopped; waits however busy the machine
    try:
        yield home
    finally:
        stop_daemon(home)


@pytest.fixture
def shared_home(_module_daemon_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """HRBENCH_HOME is the module's shared daemon's state folder for this test.

    The test's own HRBENCH_HOME comes back before the modules' ``_stop_daemon`` teardown runs
    (it stops the daemon of whatever HRBENCH_HOME then names), so the shared daemon runs on.
    """
    own = os.environ["HRBENCH_HOME"]
    monkeypatch.setenv("HRBENCH_HOME", str(_module_daemon_home))
    yield _module_daemon_home
    monkeypatch.setenv("HRBENCH_HOME", own)


@pytest.fixture(scope="module")
def _shared_bench(_module_daemon_home: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """``tests.clients.test_cli._bench_file``'s benchmark, run once on the module's shared daemon."""
    from tests.clients.test_cli import HRB, _bench_file

    spec = _bench_file(tmp_path_factory.mktemp("shared-bench"))
    proc = subprocess.run(
        [*HRB, "bench", str(spec), "--no-rows"],
        env={**os.environ, "HRBENCH_HOME": str(_module_daemon_home)},
        capture_output=True,
        text=True,
        timeout=slow(120),
    )
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout.splitlines()[-1])["id"])


@pytest.fixture
def shared_bench_id(_shared_bench: str, shared_home: Path) -> str:
    """The id of that benchmark, `hrb` on its daemon: for a test that only reads it."""
    return _shared_bench
