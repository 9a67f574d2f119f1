"""``HRBENCH_TRACEMALLOC=DIR``: a real daemon dumps what its Python allocations grew by on ``SIGUSR2``.

The first signal starts :mod:`tracemalloc`; each later one writes a snapshot and the top lines
(``top-N.txt``), the second and later against the one before, and glibc's ``malloc_info`` (what
``bench/soak.py --trace`` reads to find what grows). The daemon goes on answering throughout.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
import tracemalloc
from pathlib import Path

import pytest

from tests._slow import slow
from tests.server._daemon import Daemon

pytestmark = pytest.mark.timeout(120)


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + slow(30)
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert path.exists(), path


def test_sigusr2_dumps_the_daemons_allocations(home: Path, tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    with Daemon(home, env={"HRBENCH_TRACEMALLOC": str(trace)}) as d:
        assert d.proc is not None
        with d.client() as c:
            os.kill(d.proc.pid, signal.SIGUSR2)  # tracing starts
            c.status()
            c.score("Paris", label="paris")
            os.kill(d.proc.pid, signal.SIGUSR2)
            _wait_for(trace / "top-1.txt")
            for k in range(50):
                c.score(f"answer {k}", label=f"answer {k}")
            os.kill(d.proc.pid, signal.SIGUSR2)
            _wait_for(trace / "top-2.txt")
            assert c.status().pid == d.proc.pid  # still serving
        first = (trace / "top-1.txt").read_text()
        second = (trace / "top-2.txt").read_text()
        assert first.startswith("traced: ") and "KiB" in first
        assert "grown since snapshot 1:" in second and len(second.splitlines()) > 2
        snap = tracemalloc.Snapshot.load(str(trace / "snapshot-2.tracemalloc"))
        assert snap.statistics("filename")
        if hasattr(ctypes.CDLL(None), "malloc_info"):  # glibc: the C heap's arenas too
            heap = (trace / "malloc-2.xml").read_text()
            assert heap.startswith('<malloc version="1">') and '<system type="current"' in heap
