"""Crash and cancel, with real daemon and ``hrb`` subprocesses.

- SIGKILL of the daemon mid-benchmark: ``hrb bench`` names the benchmark and the resume command.
- SIGKILL of ``hrb bench``: the daemon cancels the benchmark (resumable), unless it was
  submitted with ``--detach``: ``hrb bench --detach`` exits at once, naming the benchmark, which
  the daemon runs to its end; it shows ``running`` in ``hrb ls`` and the report, and
  ``hrb cancel ID`` stops it from another shell.
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

from tests._slow import slow
from tests.server._daemon import Daemon

# a fault simulation (real daemons killed, cancelled or left idle): `make test-slow`, run by .ci/run
pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

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
    proc = subprocess.run([*HRB, *args], capture_output=True, text=True, timeout=slow(60), env=_env(home))
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


def _rows(home: Path, bench_id: str) -> int:
    listed = [json.loads(line) for line in _hrb(home, "ls").stdout.splitlines() if line.strip()]
    return int(next(b for b in listed if b["id"] == bench_id)["rows"])


def _wait_status(home: Path, bench_id: str, want: str, timeout_s: float = 30.0) -> str:
    deadline = time.monotonic() + slow(timeout_s)
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
        _, err = proc.communicate(timeout=slow(60))
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
        proc.communicate(timeout=slow(30))
        assert _wait_status(home, bench_id, "cancelled") == "cancelled"
        done = json.loads(_hrb(home, "bench", "--resume", bench_id, "--no-rows").stdout.splitlines()[-1])
    finally:
        d.stop()
    assert done["status"] == "done" and done["n_rows"] == 200 and 0 < done["n_resumed"] < 200


def _detach(home: Path, *args: str) -> tuple[str, subprocess.CompletedProcess[str]]:
    """``hrb bench ... --detach``: it exits at once; its JSON line names the benchmark."""
    proc = _hrb(home, "bench", *args, "--detach")
    (said,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert said["status"] == "running" and said["detached"] is True, said
    return str(said["id"]), proc


def _gated_spec(tmp_path: Path) -> Path:
    """40 items x 5 runs whose mock answers only once the daemon's HRB_GATE_FILE exists."""
    path = _spec(tmp_path)
    text = path.read_text().replace('reply = "x"\ndelay_s = 0.1', 'function = "_mocks:gated"')
    path.write_text(f"python_path = [{json.dumps(str(Path(__file__).parent))}]\n" + text)
    return path


def test_hrb_bench_detach_exits_at_once_and_the_daemon_runs_the_benchmark_to_its_end(
    home: Path, tmp_path: Path
) -> None:
    # `hrb bench FILE --detach` neither streams every row nor waits for the end
    gate = tmp_path / "gate"
    d = Daemon(home, env={"HRB_GATE_FILE": str(gate)}).start()
    try:
        bench_id, proc = _detach(home, str(_gated_spec(tmp_path)))
        said = json.loads(proc.stdout)
        assert (said["done"], said["total"]) == (0, 200)
        assert said["follow"] == {
            "status": "hrb ls",
            "rows": f"hrb rows {bench_id}",
            "report": f"hrb report {bench_id}",
            "cancel": f"hrb cancel {bench_id}",
        }
        for command in (f"hrb rows {bench_id}", "hrb ls", f"hrb report {bench_id}", f"hrb cancel {bench_id}"):
            assert command in proc.stderr
        # the submitter has exited: no call could answer yet, so the benchmark is still running
        listed = [json.loads(line) for line in _hrb(home, "ls").stdout.splitlines()]
        assert [(b["id"], b["status"], b["rows"]) for b in listed] == [(bench_id, "running", 0)]
        gate.touch()  # now the calls answer; nobody listens to this benchmark any more
        assert _wait_status(home, bench_id, "done", timeout_s=90) == "done"
        rows = _hrb(home, "rows", bench_id).stdout.splitlines()
        report = json.loads(_hrb(home, "report", bench_id).stdout)
    finally:
        d.stop()
    assert len(rows) == 200 and len({json.loads(r)["ledger_id"] for r in rows}) == 200
    assert report["status"] == "done" and report["arms"][0]["n_runs"] == 200


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--fail-under", "0.5"), "--fail-under needs the benchmark's result: not with --detach"),
        # a limit refused (by hrb itself): exit 2, as without --detach
        (("--max-calls", "-1"), "argument --max-calls: expected a whole number >= 0"),
    ],
)
def test_hrb_bench_detach_refuses_what_it_cannot_honour_with_exit_2(
    home: Path, tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    d = Daemon(home).start()
    try:
        proc = _hrb(home, "bench", str(_spec(tmp_path)), "--detach", *args, rc=2)
        listed = _hrb(home, "ls").stdout
    finally:
        d.stop()
    assert said in proc.stderr and proc.stdout == "" and listed == ""


def test_a_detached_benchmark_runs_on_shows_running_and_hrb_cancel_stops_it(
    home: Path, tmp_path: Path
) -> None:
    # 10 calls answer, the others wait for the gate: it runs until cancelled, however slow the machine
    gate = tmp_path / "gate"
    d = Daemon(home, env={"HRB_GATE_FILE": str(gate), "HRB_GATE_FREE_CALLS": "10"}).start()
    try:
        bench_id, _ = _detach(home, str(_gated_spec(tmp_path)))
        assert _status(home, bench_id) == "running"
        report = json.loads(_hrb(home, "report", bench_id, "--descriptive").stdout)
        assert report["status"] == "running"
        assert _hrb(home, "report", bench_id, "--descriptive", "--text").stdout.startswith("Status: running")
        refused = _hrb(home, "rm", bench_id, rc=2)
        assert f"hrb cancel {bench_id}" in refused.stderr
        # `rm finished running` must not delete the finished one and then fail: nothing goes
        (tmp_path / "quick").mkdir()
        quick = json.loads(
            _hrb(home, "bench", str(_spec(tmp_path / "quick", 0.0)), "--no-rows").stdout.splitlines()[-1]
        )
        both = _hrb(home, "rm", quick["id"], bench_id, rc=2)
        assert f"running now: {bench_id}" in both.stderr and "nothing was deleted" in both.stderr
        assert _status(home, quick["id"]) == "done"
        deadline = time.monotonic() + slow(60)
        while _rows(home, bench_id) < 10 and time.monotonic() < deadline:  # the 10 answered are saved
            time.sleep(0.05)
        cancelled = _hrb(home, "cancel", bench_id[:6])
        said = json.loads(cancelled.stdout)
        assert said["id"] == bench_id and said["status"] == "cancelled" and said["rows"] == 10
        assert f"resume with: hrb bench --resume {bench_id}" in cancelled.stderr
        assert _status(home, bench_id) == "cancelled"
        again = _hrb(home, "cancel", bench_id, rc=2)
        assert "is not running" in again.stderr
        gate.touch()
        done = json.loads(_hrb(home, "bench", "--resume", bench_id, "--no-rows").stdout.splitlines()[-1])
    finally:
        d.stop()
    assert done["status"] == "done" and done["n_rows"] == 200


@pytest.mark.parametrize("grace", [None, "0"])
def test_hrb_cancel_from_another_shell_ends_the_streaming_hrb_bench_with_exit_3_and_says_so(
    home: Path, tmp_path: Path, grace: str | None
) -> None:
    """It must not exit 130, the Ctrl-C code, saying only "cancelled"."""
    d = Daemon(home).start()
    try:
        proc, bench_id = _start_bench(home, _spec(tmp_path, delay_s=0.05))
        cancelled = _hrb(home, "cancel", bench_id, *(["--grace", grace] if grace else []))
        out, err = proc.communicate(timeout=slow(60))
        said = json.loads(cancelled.stdout)
    finally:
        d.stop()
    assert proc.returncode == 3, err
    assert f"benchmark {bench_id} was cancelled by `hrb cancel`; {said['rows']} of 200 runs" in err
    assert f"Resume it with: hrb bench --resume {bench_id}" in err
    assert "Traceback" not in err
    assert said["status"] == "cancelled" and 0 < said["rows"] < 200


def test_rm_and_gc_remove_the_lock_files_a_killed_daemon_left(home: Path, tmp_path: Path) -> None:
    """Each benchmark a killed daemon ran left its lease's lock file; `hrb rm` and `hrb gc` prune them."""
    locks = Path(f"{home / 'hrbench.sqlite3'}.locks")
    ids = []
    for _ in range(2):
        d = Daemon(home).start()
        try:
            proc, bench_id = _start_bench(home, _spec(tmp_path))
            d.kill()  # mid-run: nothing released the lease
            proc.communicate(timeout=slow(60))
        finally:
            d.kill()
        ids.append(bench_id)
    assert sorted(os.listdir(locks)) == sorted(ids)
    d = Daemon(home).start()
    try:
        removed = json.loads(_hrb(home, "rm", ids[0]).stdout.splitlines()[0])
        assert removed["locks"] == 1 and os.listdir(locks) == [ids[1]]
        held, _ = _start_bench(home, _spec(tmp_path, delay_s=1.0))  # runs: its lock file is held
        (running,) = [b for b in os.listdir(locks) if b != ids[1]]
        gc = json.loads(_hrb(home, "gc", "--older-than", "0").stdout)
        assert (gc["benchmarks"], gc["locks"]) == (1, 1) and os.listdir(locks) == [running]
        held.kill()
        held.communicate(timeout=slow(60))
    finally:
        d.stop()
