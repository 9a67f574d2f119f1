"""What several bench scripts share: the real data folder, and a daemon started, waited for and stopped.

Not a bench script itself (``make bench`` runs ``bench/[!_]*.py``); the scripts import it as
``_common`` (their own folder is first on ``sys.path`` when run as ``python bench/NAME.py``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path

from hrbench_client import _paths
from hrbench_client.client import Client

REPO = Path(__file__).resolve().parents[1]


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
