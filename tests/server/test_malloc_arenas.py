"""The daemon's threads share at most ``MALLOC_ARENAS`` C heaps (glibc's malloc arenas).

glibc gives threads up to 8 heaps per core, each keeping its free holes: under 8 clients the
daemon's resident memory grew by 1.8 MB a minute after warm-up while what Python held stayed
flat (``bench/soak.py``). A subprocess runs the daemon's own process set-up, then 16 threads
that allocate at once (blocks over 512 bytes go to malloc), and counts the heaps glibc's
``malloc_info`` lists; the same threads without the set-up show that they would spread.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest

from tests._slow import slow

COUNT = r"""
import ctypes, os, sys, tempfile, threading
if sys.argv[1] == "daemon":
    from hrbench_server import daemon
    daemon._setup_process()
barrier = threading.Barrier(16)
def work():
    barrier.wait()
    kept = [bytearray(4096 + i) for i in range(2000)]
    barrier.wait()  # every thread holds its blocks at once
    del kept
threads = [threading.Thread(target=work) for _ in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join()
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
path = tempfile.mktemp()
f = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, ctypes.c_void_p(f))
libc.fclose(ctypes.c_void_p(f))
print(open(path).read().count("<heap nr="))
os.unlink(path)
"""


def _heaps(how: str) -> int:
    env = {k: v for k, v in os.environ.items() if k not in ("MALLOC_ARENA_MAX", "PYTHONMALLOC")}
    proc = subprocess.run(
        [sys.executable, "-c", COUNT, how], capture_output=True, text=True, env=env, timeout=slow(60)
    )
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout)


def test_the_daemons_threads_share_at_most_two_c_heaps() -> None:
    if not hasattr(ctypes.CDLL(None), "malloc_info"):
        pytest.skip("not glibc: its allocator has no arenas to cap")
    from hrbench_server.daemon import MALLOC_ARENAS

    assert _heaps("plain") > MALLOC_ARENAS  # without the cap, the threads spread over more
    assert _heaps("daemon") <= MALLOC_ARENAS
