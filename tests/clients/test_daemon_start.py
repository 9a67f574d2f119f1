"""A daemon start that times out stops the daemon it started (a busy machine's runs left 65)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from hrbench_client.client import daemon_status, start_daemon
from hrbench_client.errors import DaemonError
from tests._slow import slow


def test_a_start_that_times_out_stops_its_daemon(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with pytest.raises(
        DaemonError,
        match=r"no daemon answered within 0\.01 s; the daemon it started \(pid (\d+)\) was stopped",
    ) as err:
        start_daemon(home, timeout_s=0.01)  # no daemon answers within 10 ms of its start
    pid = int(str(err.value).split("(pid ")[1].split(")")[0])
    deadline = time.monotonic() + slow(10)
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)
    assert daemon_status(home) is None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
