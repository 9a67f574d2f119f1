"""What several bench scripts share: the real data folder, a daemon, the runner's floor, the header.

Not a bench script itself (``make bench`` runs ``bench/[!_]*.py``); the scripts import it as
``_common`` (their own folder is first on ``sys.path`` when run as ``python bench/NAME.py``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hrbench_client import _paths
from hrbench_client.client import Client

REPO = Path(__file__).resolve().parents[1]

FLOOR = (
    "the bare loop: for each row, the Request built, the same mock client's send() driven to its "
    "Result without an event loop, the exact scorer on it; nothing else (no runner, governor, trace or row)"
)
"""The one floor every runner figure is measured against (``bench/overhead.py``, ``bench/daemon.py``,
``bench/ab.py``, ``bench/instructions.py``): what any harness must do for a row of an instant mock."""


def header(title: str, sides: dict[str, str], how: str = "") -> None:
    """Print a script's header: what it measures, what each side of its figures does, how it is timed."""
    print(f"{title}")
    width = max(map(len, sides)) + 1
    for name, does in sides.items():
        print(f"  {name + ':':<{width}} {does}")
    if how:
        print(f"  ({how})")


def floor_pass(client: Any, pairs: Iterable[tuple[Any, Any]], runs: int) -> int:
    """One pass of :data:`FLOOR` over ``pairs`` (item, label) x ``runs``; returns the rows.

    Raises:
        AssertionError: a row is not scored correct (the mock must answer every label).
    """
    from hrbench.arm import drive
    from hrbench.records import Request
    from hrbench.scoring import exact_scorer

    scorer = exact_scorer()
    pairs = list(pairs)
    n = 0
    for run in range(1, runs + 1):
        for item, label in pairs:
            req = Request(messages=[{"role": "user", "content": str(item)}], draw_index=run)
            score = scorer(item, drive(client.send(req)), label)
            assert score.correct, (item, label, score)
            n += 1
    return n


def data_dir() -> Path:
    """The real data folder: ``$HRBENCH_DATA``, else ``<repo>/../shared/data``."""
    return Path(os.environ.get("HRBENCH_DATA") or REPO.parent / "shared" / "data")


def start_daemon(
    cmd: list[str], home: Path, log: Path, env: dict[str, str] | None = None, timeout_s: float = 60.0
) -> subprocess.Popen[bytes]:
    """Run ``cmd`` (a daemon on ``home``) with output to ``log``; return once it answers ``status``.

    Raises:
        RuntimeError: the daemon exited, or did not answer within ``timeout_s`` seconds.
    """
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=out, env=env)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the daemon exited with {proc.returncode}; see {log}")
        with contextlib.suppress(OSError):
            with Client.connect_unix(_paths.socket_path(home), 5) as c:
                c.status()
                return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"the daemon did not start within {timeout_s:g} s; see {log}")


def stop_daemon(proc: subprocess.Popen[bytes], home: Path, timeout_s: float = 15.0) -> None:
    """Ask the daemon on ``home`` to shut down; kill ``proc`` if it has not exited within ``timeout_s`` seconds."""
    with contextlib.suppress(Exception):
        with Client.connect_unix(_paths.socket_path(home), 5) as c:
            c.shutdown()
    try:
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()


def verdict(failures: list[str], argv: list[str]) -> int:
    """Print a simulation bench's failed targets, or that every target is met; its exit code.

    Returns:
        1 when a target failed and ``--strict`` is in ``argv``, else 0.
    """
    if failures:
        print(f"\n{len(failures)} FAIL(s):")
        for f in failures:
            print(f"  FAIL {f}")
        return 1 if "--strict" in argv else 0
    print("\nPASS: every target is met.")
    return 0
