"""Crash and cancel, with real daemon and ``hrb`` subprocesses (newcomer finding, item 6).

- SIGKILL of the daemon mid-benchmark: ``hrb bench`` names the benchmark and the resume command.
- SIGKILL of ``hrb bench``: the daemon cancels the benchmark (resumable), unless it was
  submitted with ``--detach``; a detached one shows ``running`` in ``hrb ls`` and the report,
  and ``hrb cancel ID`` stops it from another shell.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.server._daemon import Daemon

pytestmark = pytest.mark.timeout(120)

HRB = [sys.executable, "-m", "hrbench_client.cli", "--no-autostart"]


def _spec(tmp_path: Path, delay_s: float = 0.1) -> Path:
    path = tmp_path / "slow.toml"
    path.write_text(
        textwrap.dedent(f"""
        name = "slow"
        runs = 5
        concurrency = 2
        [reference]
        items = {json.dumps([f"q{i}" for i in range(40)])}
        labels = {json.dumps(["x"] * 40)}
        [client]
        kind = "mock"
        reply = "x"
        delay_s = {delay_s}
        [[arms]]
        kind = "prompt"
        name = "ask"
        template = "{{item}}"
        [governor]
        max_calls = 1000
    """)
    )
    return path


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "HRBENCH_HOME": str(home)}


def _hrb(home: Path, *args: str, rc: int = 0) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*HRB, *args], capture_output=True, text=True, timeout=60, env=_env(home))
    assert proc.returncode == rc, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def _start_bench(home: Path, spec: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [*HRB, "bench", str(spec), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(home),
    )
    assert proc.stdout is not None
    first = json.loads(proc.stdout.readline())  # a row: the benchmark runs
    return proc, first["ledger_id"].split("/", 1)[0]


def _status(home: Path, bench_id: str) -> str:
    listed = [json.loads(line) for line in _hrb(home, "ls").stdout.splitlines() if line.strip()]
    return str(next(b for b in listed if b["id"] == bench_id)["status"])


def _wait_status(home: Path, bench_id: str, want: str, timeout_s: float = 30.0) -> str:
    deadline = time.monotonic() + timeout_s
    got = _status(home, bench_id)
    while got != want and time.monotonic() < deadline:
        time.sleep(0.1)
        got = _status(home, bench_id)
    return got


def test_a_killed_daemon_names_the_benchmark_and_how_to_resume(home: Path, tmp_path: Path) -> None:
    d = Daemon(home).start()
    try:
        proc, bench_id = _start_bench(home, _spec(tmp_path))
        d.kill()
        _, err = proc.communicate(timeout=60)
    finally:
        d.kill()
    assert proc.returncode == 3, err
    assert f"the daemon stopped while benchmark {bench_id} ran" in err
    assert f"Resume it with: hrb bench --resume {bench_id}" in err
    assert "DaemonError: the connection to the daemon broke" not in err


def test_a_killed_client_cancels_its_benchmark_which_resumes(home: Path, tmp_path: Path) -> None:
    d = Daemon(home).start()
    try:
        spec = _spec(tmp_path, delay_s=0.02)
        proc, bench_id = _start_bench(home, spec)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        assert _wait_status(home, bench_id, "cancelled") == "cancelled"
        done = json.loads(_hrb(home, "bench", "--resume", bench_id, "--no-rows").stdout.splitlines()[-1])
    finally:
        d.stop()
    assert done["status"] == "done" and done["n_rows"] == 200 and 0 < done["n_resumed"] < 200


def test_a_detached_benchmark_runs_on_shows_running_and_hrb_cancel_stops_it(
    home: Path, tmp_path: Path
) -> None:
    d = Daemon(home).start()
    try:
        proc, bench_id = _start_bench(home, _spec(tmp_path), "--detach")
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        time.sleep(0.5)  # a cancel on the closed connection would have landed by now
        assert _status(home, bench_id) == "running"
        report = json.loads(_hrb(home, "report", bench_id, "--descriptive").stdout)
        assert report["status"] == "running"
        assert _hrb(home, "report", bench_id, "--descriptive", "--text").stdout.startswith("Status: running")
        refused = _hrb(home, "rm", bench_id, rc=2)
        assert f"hrb cancel {bench_id}" in refused.stderr
        # `rm finished running` deleted the finished one, then failed (newcomer): now nothing goes
        (tmp_path / "quick").mkdir()
        quick = json.loads(
            _hrb(home, "bench", str(_spec(tmp_path / "quick", 0.0)), "--no-rows").stdout.splitlines()[-1]
        )
        both = _hrb(home, "rm", quick["id"], bench_id, rc=2)
        assert f"running now: {bench_id}" in both.stderr and "nothing was deleted" in both.stderr
        assert _status(home, quick["id"]) == "done"
        cancelled = _hrb(home, "cancel", bench_id[:6])
        said = json.loads(cancelled.stdout)
        assert said["id"] == bench_id and said["status"] == "cancelled" and 0 < said["rows"] < 200
        assert f"resume with: hrb bench --resume {bench_id}" in cancelled.stderr
        assert _status(home, bench_id) == "cancelled"
        again = _hrb(home, "cancel", bench_id, rc=2)
        assert "is not running" in again.stderr
        done = json.loads(_hrb(home, "bench", "--resume", bench_id, "--no-rows").stdout.splitlines()[-1])
    finally:
        d.stop()
    assert done["status"] == "done" and done["n_rows"] == 200


@pytest.mark.parametrize("grace", [None, "0"])
def test_hrb_cancel_from_another_shell_ends_the_streaming_hrb_bench_with_exit_3_and_says_so(
    home: Path, tmp_path: Path, grace: str | None
) -> None:
    """Newcomer finding: it exited 130, the Ctrl-C code, saying only "cancelled"."""
    d = Daemon(home).start()
    try:
        proc, bench_id = _start_bench(home, _spec(tmp_path, delay_s=0.05))
        cancelled = _hrb(home, "cancel", bench_id, *(["--grace", grace] if grace else []))
        out, err = proc.communicate(timeout=60)
        said = json.loads(cancelled.stdout)
    finally:
        d.stop()
    assert proc.returncode == 3, err
    assert f"benchmark {bench_id} was cancelled by `hrb cancel`; {said['rows']} of 200 runs" in err
    assert f"Resume it with: hrb bench --resume {bench_id}" in err
    assert "Traceback" not in err
    assert said["status"] == "cancelled" and 0 < said["rows"] < 200
