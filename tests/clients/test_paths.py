"""The client and the daemon agree on the state directory and socket path."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
import pytest

from hrbench.store import default_home
from hrbench_client import _paths


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
