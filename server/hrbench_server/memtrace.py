"""``HRBENCH_TRACEMALLOC=DIR``: what the daemon's Python allocations grow by, on request.

With the variable set to a folder, the daemon answers ``SIGUSR2``: the first signal starts
:mod:`tracemalloc` (10 frames; after a warm-up, so the imports are not traced), each later one
writes, in a worker thread, ``DIR/snapshot-N.tracemalloc`` (:meth:`tracemalloc.Snapshot.dump`,
to diff with :meth:`tracemalloc.Snapshot.compare_to`) and ``DIR/top-N.txt``: the traced total
and the 25 source lines that grew most since the previous snapshot (since tracing began for the
first), and, under glibc, ``DIR/malloc-N.xml``: ``malloc_info(3)``, the C heap's arenas with
what they hold and what is free in them (to tell a leak from a heap that keeps its holes);
``top-N.txt`` is written last, so once it is there the rest of dump N is too.
``bench/soak.py --trace`` uses it. Without the variable nothing is installed.

Example:
    ``HRBENCH_TRACEMALLOC=/tmp/trace hrb daemon start``, load it, then ``kill -USR2 PID`` twice.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import tracemalloc
from pathlib import Path
from typing import Any

__all__ = ["ENV", "install"]

ENV = "HRBENCH_TRACEMALLOC"
"""The environment variable naming the folder the snapshots go to."""

TOP = 25
"""Source lines listed in each ``top-N.txt``."""


class _Tracer:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.lock = threading.Lock()
        self.previous: tracemalloc.Snapshot | None = None
        self.n = 0

    def on_signal(self, loop: asyncio.AbstractEventLoop) -> None:
        if not tracemalloc.is_tracing():
            tracemalloc.start(10)
            self.previous = None
            return
        loop.run_in_executor(None, self.dump)

    def dump(self) -> None:
        with self.lock:
            snap = tracemalloc.take_snapshot().filter_traces(
                [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen *>")]
            )
            self.n += 1
            self.folder.mkdir(parents=True, exist_ok=True)
            snap.dump(str(self.folder / f"snapshot-{self.n}.tracemalloc"))
            total = sum(s.size for s in snap.statistics("filename"))
            lines = [f"traced: {total / 1024:.1f} KiB"]
            if self.previous is not None:
                diff = snap.compare_to(self.previous, "lineno")
                lines.append(f"grown since snapshot {self.n - 1}:")
                lines += [str(s) for s in diff[:TOP]]
            else:
                lines += [str(s) for s in snap.statistics("lineno")[:TOP]]
            _malloc_info(self.folder / f"malloc-{self.n}.xml")
            # written last: once top-N.txt is there, the snapshot and the heap's arenas are too
            (self.folder / f"top-{self.n}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
            self.previous = snap


def _malloc_info(path: Path) -> None:
    """Glibc's ``malloc_info(0, file)`` into ``path``; nothing where the C library has none."""
    import ctypes

    libc = ctypes.CDLL(None)
    if not hasattr(libc, "malloc_info"):
        return
    libc.fopen.restype = ctypes.c_void_p
    f = libc.fopen(os.fsencode(path), b"w")
    if f:
        libc.malloc_info(0, ctypes.c_void_p(f))
        libc.fclose(ctypes.c_void_p(f))


def install(loop: Any) -> bool:
    """Answer ``SIGUSR2`` as the module says when :data:`ENV` is set; whether it was installed."""
    folder = os.environ.get(ENV)
    if not folder:
        return False
    tracer = _Tracer(Path(folder))
    loop.add_signal_handler(signal.SIGUSR2, tracer.on_signal, loop)
    return True
