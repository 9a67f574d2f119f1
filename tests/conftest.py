"""Shared test fixtures: the data folder, the shared cases, a private state directory.

Also the suite's process hygiene and time limits: :class:`tests._procs.ProcessGuard` stops every
process a test started when the test ends and fails the run if one is left when the session
ends (:class:`tests._sockets.SocketGuard` does the same for a TCP socket left open); the machine's load scales the time limits (:mod:`tests._slow`), and
``HRBENCH_TEST_EXAMPLES`` the property tests' examples (:mod:`tests._examples`).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests import _examples, _procs, _slow, _sockets

REPO = Path(__file__).resolve().parent.parent

# A quarter of the examples in make test, every one in make test-slow (tests/_examples.py); the
# tests that write their own max_examples scale it with _examples.examples(). No deadline: an
# example's wall-clock time is no property of the code (hypothesis's 200 ms failed on a loaded
# machine), nor is the time its data takes to draw (the too_slow health check).
_UNTIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("quick", max_examples=_examples.quick(_examples.FULL_DEFAULT), **_UNTIMED)
settings.register_profile("full", max_examples=_examples.FULL_DEFAULT, **_UNTIMED)
settings.load_profile("full" if _examples.FULL else "quick")


@pytest.hookimpl(trylast=True)  # after xdist's: whether this process is a controller that runs no test
def pytest_configure(config: pytest.Config) -> None:
    try:
        _slow.factor()
        _examples.full()
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.pluginmanager.register(_procs.ProcessGuard(config), "hrbench-process-guard")
    config.pluginmanager.register(_sockets.SocketGuard(config), "hrbench-socket-guard")


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """No cyclic collection while the modules are collected: what they make lives on.

    Each xdist worker imports every test module, hrbench's modules (their doctests) and their
    libraries: ~330k objects, all kept. Collections set off meanwhile scanned them again and
    again (0.7 s of a worker's 5 s collection).
    """
    gc.disable()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Collect the collection's garbage, then freeze what lives (:func:`gc.freeze`), as the daemon does.

    The tests' full collections then scan what the tests make, not the ~330k objects every
    module holds. ``tests._sockets.open_tcp_sockets`` unfreezes them before it looks.
    """
    gc.enable()
    gc.collect()
    gc.freeze()


def data_dir() -> Path:
    """The real-data folder: ``$HRBENCH_DATA``, else ``<repo>/../shared/data``."""
    return Path(os.environ.get("HRBENCH_DATA") or REPO.parent / "shared" / "data")


def cases_dir() -> Path:
    """The shared cases folder: ``$HRBENCH_CASES``, else ``<repo>/../shared/cases``."""
    return Path(os.environ.get("HRBENCH_CASES") or REPO.parent / "shared" / "cases")


def seeds_dir() -> Path:
    """The seeds folder (the behavioural contract): ``$HRBENCH_SEEDS``, else ``<repo>/../shared/seeds``."""
    return Path(os.environ.get("HRBENCH_SEEDS") or REPO.parent / "shared" / "seeds")


def load_cases(scorer: str | None = None) -> list[dict[str, Any]]:
    """Every shared case (optionally of one scorer kind), in file order.

    Raises:
        FileNotFoundError: when the cases folder is missing: the cases are the contract, so a
            run without them must fail, not skip.
    """
    files = sorted(cases_dir().glob("*.jsonl"))
    if not files:
        raise FileNotFoundError(f"no shared cases in {cases_dir()} (set HRBENCH_CASES to the cases folder)")
    out = []
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if scorer is None or case["scorer"] == scorer:
                    out.append(case)
    return out


def case(case_id: str) -> dict[str, Any]:
    """One shared case by id."""
    for c in load_cases():
        if c["id"] == case_id:
            return c
    raise KeyError(case_id)


@pytest.fixture(autouse=True)
def _private_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Every test gets its own HRBENCH_HOME, so no test touches the user's state.

    A daemon a test auto-started there (a client's ``connect()``, an ``hrb`` command) is killed
    when the test ends, so the suite leaves no process behind (any other process the test
    started and left is killed by :class:`tests._procs.ProcessGuard`).
    """
    home = tmp_path_factory.mktemp("hrbench-home")
    monkeypatch.setenv("HRBENCH_HOME", str(home))
    try:
        yield
    finally:
        pid = _procs.daemon_of(home)
        if pid is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture(autouse=True)
def _fresh_paces() -> Iterator[None]:
    """Every test starts with no pace remembered: what a provider said (its limits, its 429s)
    is kept per process for the key and model, and loopback servers reuse ports and models."""
    from hrbench.models import _pace

    _pace.forget()
    yield
    _pace.forget()


@pytest.fixture
def data() -> Path:
    d = data_dir()
    if not d.is_dir():  # the shared data is part of the contract: never skipped
        pytest.fail(
            f"real data folder {d} not found (set HRBENCH_DATA to the shared data folder)", pytrace=False
        )
    return d
