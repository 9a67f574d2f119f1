"""The suite's own process guard (``tests/_procs.py``), run on a small pytest session of its own.

A session whose tests leave processes behind (a module fixture's server never stopped, a
detached grandchild as ``hrb daemon start`` leaves) must kill every one of them and fail; a
process a test left is killed when that test ends. ``HRBENCH_TEST_SLOW`` scales pytest-timeout's
per-test limit. The inner session uses the real ``tests/conftest.py`` hook, with and without
xdist workers.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._procs import _running
from tests._slow import slow

REPO = Path(__file__).resolve().parent.parent

LEAKY = """
import subprocess, sys
import pytest

SLEEP = [sys.executable, "-c", "import time; time.sleep(300)"]


def _note(pid):
    with open({pids!r}, "a") as f:
        f.write(f"{{pid}}\\n")


@pytest.fixture(scope="module")
def server():
    proc = subprocess.Popen(SLEEP, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _note(proc.pid)
    yield proc  # never stopped: the session's sweep finds it


def test_uses_the_module_server(server):
    assert server.poll() is None


def test_leaves_a_detached_grandchild():
    # the child starts a grandchild in its own session and exits, as `hrb daemon start` does
    code = (
        "import subprocess, sys; print(subprocess.Popen(sys.argv[1:], start_new_session=True, "
        "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)"
    )
    out = subprocess.run([sys.executable, "-c", code, *SLEEP], capture_output=True, text=True, check=True)
    _note(int(out.stdout))
"""

SLOW_TEST = """
import time
import pytest


@pytest.mark.timeout(1)
def test_takes_longer_than_its_unscaled_limit():
    time.sleep(1.5)
"""


def _session(tmp_path: Path, test_code: str, *args: str, env: dict[str, str] | None = None) -> str:
    """Run ``test_code`` in a pytest session of its own (the guard of ``tests/conftest.py``)."""
    (tmp_path / "pytest.ini").write_text("[pytest]\ntimeout = 120\n")
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_configure  # noqa: F401\n")
    (tmp_path / "test_inner.py").write_text(test_code)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "test_inner.py"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        capture_output=True,
        text=True,
        timeout=slow(120),
    )
    return f"rc={proc.returncode}\n{proc.stdout}{proc.stderr}"


@pytest.mark.slow  # runs pytest sessions of its own (10-20 s each); make test-slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_session_that_leaves_processes_kills_them_and_fails(tmp_path: Path, workers: list[str]) -> None:
    pids_file = tmp_path / "pids.txt"
    out = _session(tmp_path, LEAKY.format(pids=str(pids_file)), *workers)
    pids = [int(line) for line in pids_file.read_text().split()]
    assert len(pids) == 2, out
    deadline = time.monotonic() + slow(10)
    while any(_running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_running(p) for p in pids), out
    assert out.startswith("rc=1\n") and "2 passed" in out, out
    assert "processes left running at the end of the session" in out, out
    assert "module-server-" in out and "1 process(es) the tests started still ran" in out, out
    # the grandchild was the test's: killed when it ended, listed, and no failure of its own
    assert "outlived their test" in out and "test_leaves_a_detached_grandchild: pid" in out, out


@pytest.mark.slow  # runs a pytest session of its own; make test-slow
def test_the_time_limit_factor_scales_pytest_timeouts(tmp_path: Path) -> None:
    assert _session(tmp_path, SLOW_TEST, env={"HRBENCH_TEST_SLOW": "1"}).startswith("rc=1\n")
    out = _session(tmp_path, SLOW_TEST, env={"HRBENCH_TEST_SLOW": "3"})
    assert out.startswith("rc=0\n") and "1 passed" in out, out
    refused = _session(tmp_path, SLOW_TEST, env={"HRBENCH_TEST_SLOW": "fast"})
    assert refused.startswith("rc=4\n") and "HRBENCH_TEST_SLOW='fast'" in refused, refused
