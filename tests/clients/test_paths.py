"""The client and the daemon agree on the state directory and socket path."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
import pytest

from hrbench.store import default_home
from hrbench_client import _paths
from tests._slow import slow


def test_default_home_matches_platformdirs_and_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HRBENCH_HOME", raising=False)
    assert _paths.home() == Path(platformdirs.user_state_dir("hrbench")) == default_home()
    monkeypatch.setenv("XDG_STATE_HOME", "/tmp/xdg-state-test")
    assert _paths.home() == Path(platformdirs.user_state_dir("hrbench")) == default_home()


def test_env_and_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HRBENCH_HOME", str(tmp_path / "a"))
    assert _paths.home() == tmp_path / "a" == default_home()
    assert _paths.home(tmp_path / "b") == tmp_path / "b"


def test_long_state_dirs_get_a_short_socket(tmp_path: Path) -> None:
    deep = tmp_path / ("x" * 120)
    sock = _paths.socket_path(deep)
    assert len(os.fsencode(sock)) <= 100
    assert sock == _paths.socket_path(deep)  # stable
    assert _paths.socket_path(tmp_path) == tmp_path / "daemon.sock"


@pytest.mark.parametrize("rel", ["relhome", "./st", "a/b", "a/../c", "~/../" + "d"])
def test_a_relative_home_is_made_absolute_against_the_current_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rel: str
) -> None:
    monkeypatch.chdir(tmp_path)
    want = Path(os.path.abspath(os.path.expanduser(rel)))
    assert want.is_absolute()
    assert _paths.home(rel) == want
    monkeypatch.setenv("HRBENCH_HOME", rel)
    assert _paths.home() == want == default_home()
    assert _paths.home_str() == str(want)


@pytest.mark.parametrize("how", ["flag", "env"])
@pytest.mark.parametrize("rel", ["relhome", "x/y"])
def test_a_relative_home_starts_one_daemon_where_the_caller_is(tmp_path: Path, how: str, rel: str) -> None:
    import json
    import signal
    import subprocess
    import sys

    env = dict(os.environ)
    pre: list[str] = []
    if how == "flag":
        pre = ["--home", rel]
    else:
        env["HRBENCH_HOME"] = rel
    hrb = [sys.executable, "-m", "hrbench_client.cli", *pre]
    state = tmp_path / rel
    try:
        proc = subprocess.run(
            [*hrb, "score", "--label", "a", "a"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=slow(60),
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["correct"] is True
        listed = subprocess.run(
            [*hrb, "ref", "list"], cwd=tmp_path, env=env, capture_output=True, timeout=slow(60)
        )
        assert listed.returncode == 0, listed.stderr
        assert (state / "daemon.pid").is_file() and (state / "hrbench.sqlite3").is_file()
        assert not (state / rel).exists()  # not nested in the daemon's own directory
        assert sorted(p.name for p in tmp_path.iterdir()) == [rel.split("/")[0]]  # nothing else left here
    finally:
        subprocess.run([*hrb, "daemon", "stop"], cwd=tmp_path, env=env, capture_output=True, timeout=slow(60))
        for pid_file in tmp_path.rglob("daemon.pid"):
            try:
                os.kill(json.loads(pid_file.read_text())["pid"], signal.SIGKILL)
            except (OSError, ValueError, KeyError):
                pass


def test_the_daemon_resolves_a_relative_home_against_its_own_directory(tmp_path: Path) -> None:
    import json
    import signal
    import subprocess
    import sys
    import time

    from hrbench_client.client import Client

    cmd = [sys.executable, "-P", "-m", "hrbench_server", "--home", "rel/state", "daemon", "--idle-exit", "60"]
    env = {k: v for k, v in os.environ.items() if k != "HRBENCH_HOME"}
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = tmp_path / "rel" / "state"
    try:
        deadline = time.monotonic() + slow(30)
        while not (state / "daemon.pid").is_file() and time.monotonic() < deadline:
            assert proc.poll() is None
            time.sleep(0.02)
        info = json.loads((state / "daemon.pid").read_text())
        assert info["socket"] == str(_paths.socket_path(state)) and info["pid"] == proc.pid
        with Client.connect_unix(_paths.socket_path(state), slow(10.0)) as c:
            assert c.status().pid == proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=slow(30))
