from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server._daemon import Daemon


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def calls_file(tmp_path: Path) -> Path:
    return tmp_path / "calls.jsonl"


@pytest.fixture
def daemon(home: Path, calls_file: Path) -> Iterator[Daemon]:
    """A fresh daemon for this test (for tests that stop, kill or count calls)."""
    with Daemon(home, env={"HRB_CALLS_FILE": str(calls_file)}) as d:
        yield d


@pytest.fixture(scope="module")
def shared_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon for a module's read-only tests (starting one takes about a second)."""
    base = tmp_path_factory.mktemp("shared")
    with Daemon(base / "home", env={"HRB_CALLS_FILE": str(base / "calls.jsonl")}) as d:
        yield d
