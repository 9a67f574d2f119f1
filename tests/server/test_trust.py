"""The socket directory is ours, the import path is safe, code over TCP.

Real daemon subprocesses on real directories (the suite runs as root, so another owner is
made with ``chown``); no mock of our own code.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import hrbench_client as hc
from hrbench_client import _paths
from hrbench_client.client import Client, start_daemon, stop_daemon
from tests._slow import slow
from tests.server._daemon import Daemon, spec

OTHER_UID = 54321


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary directory for long-path sockets, used by this process and its daemons."""
    tmp = tmp_path / "t"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    yield tmp


def long_home(base: Path) -> Path:
    home = base / ("h" * 110)
    assert len(os.fsencode(home / "daemon.sock")) > 100  # the socket moves under the temp dir
    return home


def run_daemon(home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        Daemon(home).command(), capture_output=True, text=True, timeout=slow(60), env={**os.environ}
    )


def socket_dir(tmp: Path) -> Path:
    return tmp / f"hrbench-{os.geteuid()}"


# -- the socket directory --------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["other-owner", "loose-mode", "symlink", "a-file"])
def test_a_pre_made_socket_directory_is_refused(private_tmp: Path, tmp_path: Path, case: str) -> None:
    home = long_home(tmp_path)
    made = socket_dir(private_tmp)
    if case == "other-owner":
        made.mkdir(mode=0o700)
        os.chown(made, OTHER_UID, OTHER_UID)
        why = f"owned by uid {OTHER_UID}"
    elif case == "loose-mode":
        made.mkdir()
        os.chmod(made, 0o755)
        why = "mode is 0755, not 0700"
    elif case == "symlink":
        target = tmp_path / "elsewhere"
        target.mkdir(mode=0o700)
        made.symlink_to(target)
        why = "symbolic link"
    else:
        made.write_text("")
        why = "not a directory"
    out = run_daemon(home)
    assert out.returncode == 4, out.stderr
    assert f"refusing the socket directory {made}" in out.stderr and why in out.stderr
    assert "Traceback" not in out.stderr
    # the client refuses it too, before it sends anything or starts a daemon
    with pytest.raises(hc.DaemonError, match=why):
        hc.connect(home)


def test_a_foreign_listener_never_gets_a_request(private_tmp: Path, tmp_path: Path) -> None:
    home = long_home(tmp_path)
    made = socket_dir(private_tmp)
    made.mkdir(mode=0o700)
    trap = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    trap.bind(_paths.socket_path_str(home))
    trap.listen(4)
    trap.setblocking(False)
    os.chown(made, OTHER_UID, OTHER_UID)
    try:
        with pytest.raises(hc.DaemonError, match="owned by uid"):
            hc.connect(home, autostart=False)
        with pytest.raises(BlockingIOError):
            trap.accept()  # nobody connected
    finally:
        trap.close()


def test_a_socket_file_of_another_user_is_refused(home: Path) -> None:
    d = Daemon(home).start()
    try:
        os.chown(d.socket, OTHER_UID, OTHER_UID, follow_symlinks=False)
        with pytest.raises(hc.DaemonError, match="not a socket made by you"):
            hc.connect(home, autostart=False)
    finally:
        os.chown(d.socket, os.geteuid(), os.getegid(), follow_symlinks=False)
        d.stop()


def test_the_daemon_makes_and_rechecks_its_socket_directory(private_tmp: Path, tmp_path: Path) -> None:
    home = long_home(tmp_path)
    d = Daemon(home).start()
    try:
        made = socket_dir(private_tmp)
        st = os.lstat(made)
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
        with d.client() as c:
            assert c.status().pid == d.proc.pid  # type: ignore[union-attr]
    finally:
        d.stop()
    os.chmod(made, 0o750)  # loosened between two starts: refused on the next start
    out = run_daemon(home)
    assert out.returncode == 4 and "mode is 0750" in out.stderr


@pytest.mark.parametrize(
    ("mode", "owner", "started"),
    [
        (0o755, None, True),
        (0o750, None, True),
        (0o777, None, False),
        (0o770, None, False),
        (0o700, OTHER_UID, False),
    ],
)
def test_the_state_directory_rule(home: Path, mode: int, owner: int | None, started: bool) -> None:
    home.mkdir()
    os.chmod(home, mode)
    if owner is not None:
        os.chown(home, owner, owner)
    if started:  # ours and only readable by others: tightened to 0700
        d = Daemon(home).start()
        d.stop()
        assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
    else:
        out = run_daemon(home)
        assert out.returncode == 4, out.stderr
        assert f"refusing the socket directory {home}" in out.stderr


# -- the import path ----------------------------------------------------------------------------

FAKES = ("msgspec", "sqlite_utils", "platformdirs", "anyio", "_mocks")


def test_the_callers_directory_is_not_on_an_autostarted_daemons_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    caller = tmp_path / "project"
    caller.mkdir()
    marker = tmp_path / "imported.txt"
    for name in FAKES:  # named like dependencies the daemon imports at start or lazily
        (caller / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\nraise ImportError('planted')\n"
        )
    home = tmp_path / "home"
    monkeypatch.chdir(caller)
    monkeypatch.setenv("PYTHONPATH", "")  # an empty entry would mean the working directory
    pid = start_daemon(home)
    try:
        with hc.connect(home, autostart=False, timeout_s=slow(60)) as c:
            assert c.status().pid == pid
            rows = list(c.benchmark(spec(n=2, runs=1)))  # opens the store, imports _mocks from HERE
            assert len(rows) == 2 and all(r.correct for r in rows)
            assert c.score("a", label="a").correct
    finally:
        stop_daemon(home)
    assert not marker.exists(), marker.read_text()


def test_a_daemon_started_without_dash_p_still_drops_the_working_directory(tmp_path: Path) -> None:
    # by hand (`python -m hrbench_server ...` from a project folder): sys.path[0] is the cwd
    caller = tmp_path / "project"
    caller.mkdir()
    marker = tmp_path / "imported.txt"
    (caller / "sqlite_utils.py").write_text(f"open({str(marker)!r}, 'a').write('ran')\n")  # imported lazily
    home = tmp_path / "home"
    cmd = [sys.executable, "-m", "hrbench_server", "--home", str(home), "daemon"]
    proc = subprocess.Popen(cmd, cwd=caller, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + slow(60)
        while not _paths.socket_path(home).exists() and time.monotonic() < deadline:
            assert proc.poll() is None
            time.sleep(0.05)
        with hc.connect(home, autostart=False, timeout_s=slow(60)) as c:
            assert c.cache_stats()["entries"] == 0  # the store (sqlite_utils) is in use
            c.shutdown()
        proc.wait(timeout=slow(30))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not marker.exists()


def test_a_daemon_started_with_pythonpath_dot_ignores_the_working_directorys_modules(tmp_path: Path) -> None:
    # `PYTHONPATH=. python -m hrbench_server ...`: the cwd comes back as an absolute entry
    # ahead of the standard library, where a json.py or hrbench.py would shadow ours
    caller = tmp_path / "project"
    caller.mkdir()
    marker = tmp_path / "imported.txt"
    for name in ("json", "hrbench", "sqlite_utils"):
        (caller / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\nraise ImportError('planted')\n"
        )
    home = tmp_path / "home"
    env = {**os.environ, "PYTHONPATH": "."}
    cmd = [sys.executable, "-m", "hrbench_server", "--home", str(home), "daemon"]
    proc = subprocess.Popen(cmd, cwd=caller, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + slow(60)
        while not _paths.socket_path(home).exists() and time.monotonic() < deadline:
            assert proc.poll() is None, marker.read_text() if marker.exists() else proc.returncode
            time.sleep(0.05)
        with hc.connect(home, autostart=False, timeout_s=slow(60)) as c:
            rows = list(c.benchmark(spec(n=2, runs=1)))  # the store, the runner: hrbench itself
            assert len(rows) == 2 and all(r.correct for r in rows)
            c.shutdown()
        assert proc.wait(timeout=slow(30)) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not marker.exists(), marker.read_text()


PROBE = """
import os, sys, msgspec
HERE = os.path.dirname(os.path.abspath(__file__))
def after_site_packages(text):
    site = os.path.dirname(os.path.dirname(msgspec.__file__))
    return str(sys.path.index(HERE) > sys.path.index(site))
"""


def test_python_path_goes_after_the_installed_packages(shared_daemon: Daemon, tmp_path: Path) -> None:
    (tmp_path / "probe_path_order.py").write_text(PROBE)
    with shared_daemon.client() as c:
        out = c.evaluate(
            {
                "module": {"signature": "text -> answer", "fn": "probe_path_order:after_site_packages"},
                "data": [{"text": "x", "answer": "True"}],
                "metric": {"name": "exact_match", "field": "answer"},
                "python_path": [str(tmp_path)],
            }
        )
    assert out["n_evaluated"] == 1 and out["mean_score"] == 1.0


# -- code over TCP ------------------------------------------------------------------------------


def tcp_client(home: Path) -> Client:
    info = json.loads(_paths.pid_path(home).read_text())
    host, port = info["tcp"].rsplit(":", 1)
    return Client.connect_tcp(
        host, int(port), _paths.token_path(home).read_text().strip(), timeout_s=slow(60)
    )


CODE_SPECS = {
    "import-arm": dict(arms=[{"kind": "import", "path": "_mocks:noisy_arm", "name": "imp"}], python_path=[]),
    "mock-function": dict(python_path=[]),
    "scorer": dict(client={"kind": "mock", "reply": "x"}, scorer="_mocks:same", python_path=[]),
    "python_path": dict(client={"kind": "mock", "reply": "x"}),
}


FIELDS = {
    "import-arm": "arms[0].path",
    "mock-function": "client.function",
    "scorer": "scorer",
    "python_path": "python_path",
}


def test_code_is_refused_over_tcp_and_served_over_the_socket(home: Path) -> None:
    d = Daemon(home, tcp="127.0.0.1:0").start()
    try:
        with d.client() as c:  # the Unix socket first: loads the code, fills the caches
            list(c.benchmark(spec(n=1, runs=1)))
            assert c.score("a", label="a", scorer="_mocks:same").correct is not None
        with tcp_client(home) as c:
            for case, extra in sorted(CODE_SPECS.items()):
                with pytest.raises(hc.CodeRefused, match="refused over TCP") as err:
                    list(c.benchmark(spec(n=1, runs=1, **extra)))
                assert err.value.code == -32020 and err.value.field == FIELDS[case], case
            with pytest.raises(hc.CodeRefused):
                c.score("a", label="a", scorer="_mocks:same")
            rows = list(c.benchmark(spec(n=1, runs=1, client={"kind": "mock", "reply": "x"}, python_path=[])))
            assert len(rows) == 1  # specs without code are served
            assert c.status().pid == d.proc.pid  # type: ignore[union-attr]
    finally:
        d.stop()


def test_code_over_tcp_with_the_explicit_flag(home: Path) -> None:
    d = Daemon(home, tcp="127.0.0.1:0", allow_code_over_tcp=True).start()
    try:
        with tcp_client(home) as c:
            assert len(list(c.benchmark(spec(n=2, runs=1)))) == 2
    finally:
        d.stop()
