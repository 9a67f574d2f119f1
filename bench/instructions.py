"""Instructions per row, counted by valgrind's callgrind: the two runner ratios without the machine's noise.

``bench/daemon.py`` measures rows/s, and on a shared 2-core machine the same code's wall time moves
by 30% and more from one run to the next. Instruction counts do not move: the same code, inputs and
environment give the same count whatever else the machine does. They leave out what wall time
includes (cache misses and memory stalls, the kernel's work for syscalls, two threads running at
once), so they complement the rows/s ratios and do not replace them. Prints, each for the rows
between a 1,000x1 and a 1,000x5 benchmark (a benchmark's fixed costs cancel out):

1. the in-process runner (``benchmark_async``, a prompt arm, an instant mock, the exact scorer) vs
   the floor over the same rows (``_common.FLOOR``: per row the Request, the mock's send, the
   exact scorer); the rows/s target is within 5x;
2. the rows streamed through the daemon (every thread of the daemon's process, and its event
   loop's thread alone) vs the in-process run with the daemon's per-row duties (a ledger per
   call, the cancel drain, each row and trace encoded; every thread of that process); the
   rows/s target is >= 0.9x.

With ``--http``, instructions a request of ``bench/concurrency.py``'s ways at C = 100 instead: the
sharded bare client, ``OpenAIClient.send`` in the same loop and ``benchmark_async`` with that client,
each against the bare client (the wall-time target: the benchmark <= 1.15x).

Usage: ``python bench/instructions.py [--http]`` (about two minutes; prints a note and exits 0 when
valgrind is not installed).
"""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common
import daemon as d

from hrbench_client import _paths
from hrbench_client.client import Client

SMALL, LARGE = (1000, 1), (1000, 5)
ROWS = LARGE[0] * LARGE[1] - SMALL[0] * SMALL[1]


def _callgrind(prefix: Path) -> list[str]:
    """valgrind's command line: count nothing until told, one file per dump and thread."""
    return [
        "valgrind",
        "--tool=callgrind",
        "--separate-threads=yes",
        "--instr-atstart=no",
        f"--callgrind-out-file={prefix}.%p",
    ]


def _control(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True)


def _counted(
    pid: int, name: str, run: Callable[..., object], sizes: tuple[tuple[int, ...], ...] = (SMALL, LARGE)
) -> None:
    """Run ``run(*size)`` at both ``sizes`` with process ``pid``'s counting on, a dump after each.

    Two small runs first, uncounted: imports and first-use costs stay out of the counts; a full
    garbage collection before each counted run, uncounted (``bench/_timing.py``'s rule).
    """
    run(*sizes[0])
    run(*sizes[0])
    for size, args in zip(("small", "large"), sizes, strict=True):
        gc.collect()
        _control(pid, "-z")
        _control(pid, "-i", "on")
        run(*args)
        _control(pid, "-d", f"{name}-{size}")
        _control(pid, "-i", "off")


def _totals(prefix: Path) -> dict[str, dict[int, int]]:
    """Each dump's instructions by thread number (1: the main thread), by the dump's name."""
    out: dict[str, dict[int, int]] = {}
    for f in prefix.parent.glob(f"{prefix.name}.*.*-*"):  # <prefix>.<pid>.<dump>-<thread>
        name, total, thread = "", 0, int(f.name.rsplit("-", 1)[1])
        for line in f.read_text(errors="replace").splitlines():
            if line.startswith("desc: Trigger: "):
                name = line.split(": ")[-1].removeprefix("dump ")
            elif line.startswith("totals: "):
                total = int(line.split()[1])
        out.setdefault(name, {})[thread] = total
    return out


def _measured(totals: dict[str, dict[int, int]], name: str, rows: int = ROWS) -> tuple[float, float]:
    """(every thread, the main thread) instructions a row between the small and the large run."""
    small, large = totals[f"{name}-small"], totals[f"{name}-large"]
    every = (sum(large.values()) - sum(small.values())) / rows
    main = (large.get(1, 0) - small.get(1, 0)) / rows
    return every, main


def in_process(folder: Path) -> dict[str, dict[int, int]]:
    """The runner, the bare loop and the run with the daemon's duties, in one process under callgrind.

    That process is this script again, with ``--in-process`` (see :func:`main`).
    """
    prefix = folder / "in-process"
    proc = subprocess.run(
        [*_callgrind(prefix), sys.executable, __file__, "--in-process"],
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the in-process run under callgrind failed: {proc.stderr.decode()[-2000:]}")
    return _totals(prefix)


def streamed(folder: Path) -> dict[str, dict[int, int]]:
    """The same benchmark streamed from a daemon running under callgrind (this process is its client)."""
    prefix, home = folder / "daemon", folder / "home"
    cmd = [*_callgrind(prefix), sys.executable, "-m", "hrbench_server", "--home", str(home), "daemon"]
    proc = _common.start_daemon(cmd, home, folder / "daemon.log", timeout_s=300)

    def stream(items: int, runs: int) -> None:
        with Client.connect_unix(_paths.socket_path(home)) as c:
            got = sum(1 for _ in c.benchmark(d.bench_spec(items, runs)))
        assert got == items * runs, (got, items, runs)

    try:
        _counted(proc.pid, "daemon", stream)
    finally:
        _common.stop_daemon(proc, home, timeout_s=120)
    return _totals(prefix)


HTTP_C = 100
HTTP_SIZES = ((300,), (1300,))
HTTP_REQUESTS = HTTP_SIZES[1][0] - HTTP_SIZES[0][0]
HTTP_WAYS = ("bare-shards", "client", "benchmark")


def http_counted(base_url: str) -> None:
    """The process :func:`http` runs under callgrind: each of ``bench/concurrency.py``'s ways, counted."""
    import anyio
    import concurrency

    from hrbench.models import _http

    made = _http.make_async_client

    def patient(max_connections: int, timeout_s: float, **kwargs: Any) -> Any:
        # under callgrind on a loaded machine 100 connects take tens of seconds
        return made(max_connections, max(timeout_s, 600.0), **{**kwargs, "connect_timeout_s": 600.0})

    _http.make_async_client = patient  # every way's pools: the bare loops' and the client's shards
    ways = {"bare-shards": concurrency.bare_sharded, "client": concurrency.client_loop}
    ways["benchmark"] = concurrency.bench_loop
    pid = os.getpid()
    for name in HTTP_WAYS:
        fn = ways[name]
        _counted(pid, name, lambda n, fn=fn: anyio.run(fn, base_url, n, HTTP_C), HTTP_SIZES)


def http(folder: Path) -> dict[str, dict[int, int]]:
    """``bench/concurrency.py``'s ways at C = 100 under callgrind, the loopback server in its own process."""
    from hrbench.testing import LoopbackServer

    prefix = folder / "http"
    with LoopbackServer(0.02, separate_process=True) as srv:
        proc = subprocess.run(
            [*_callgrind(prefix), sys.executable, __file__, "--http-counted", srv.base_url],
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"the HTTP run under callgrind failed: {proc.stderr.decode()[-2000:]}")
    return _totals(prefix)


def _valgrind() -> bool:
    """Whether callgrind can run here; says it is skipped when it cannot."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("instructions       skipped: valgrind is not installed (Debian's valgrind package)")
        return False
    return True


def main_http() -> None:
    """``--http``: instructions a request of the client and the benchmark against the sharded bare client."""
    _common.header(
        f"instructions: user-space instructions a request at C = {HTTP_C}, counted by callgrind between "
        f"{HTTP_SIZES[0][0]:,} and {HTTP_SIZES[1][0]:,} requests to a loopback server (its own process, not counted)",
        {
            "bare-shards": "bench/concurrency.py's sharded bare client (post, the reply's text checked)",
            "client": "OpenAIClient.send() in the same loop",
            "benchmark": "benchmark_async() with an OpenAIClient arm, capped Governor, exact scorer",
        },
        "every way: two uncounted small runs first; instruction counts do not move with load",
    )
    if not _valgrind():
        return
    with tempfile.TemporaryDirectory(prefix="hrb-cg-") as tmp:
        start = time.perf_counter()
        totals = http(Path(tmp))
        secs = time.perf_counter() - start
    every = {name: _measured(totals, name, HTTP_REQUESTS)[0] for name in HTTP_WAYS}
    bare = every["bare-shards"]
    for name in HTTP_WAYS:
        print(
            f"instructions/request {name:>12} {every[name] / 1e3:,.1f}k  {every[name] / bare:.3f}x the bare client"
        )
    print(
        f"  counted by callgrind over {HTTP_REQUESTS:,} requests ({secs:.0f} s), every thread of the client's process"
    )


def main() -> None:
    if sys.argv[1:2] == ["--http-counted"]:  # the process http() runs under callgrind
        http_counted(sys.argv[2])
        return
    if sys.argv[1:] == ["--http"]:
        main_http()
        return
    if sys.argv[1:] == ["--in-process"]:  # the process in_process() runs under callgrind
        pid = os.getpid()
        _counted(pid, "runner", d.in_process_rows_per_s)
        _counted(pid, "bare", d.bare_rows_per_s)
        _counted(pid, "duties", lambda items, runs: d.in_process_rows_per_s(items, runs, duties=True))
        return
    _common.header(
        "instructions: user-space instructions a row, counted by callgrind between a 1,000x1 and a 1,000x5 benchmark",
        {
            "runner": "bench/daemon.py's in-process benchmark_async() (prompt arm, instant mock, exact scorer)",
            "floor": _common.FLOOR + ", over the same rows",
            "streamed": "the same benchmark streamed through a daemon under callgrind (every thread; its event loop)",
            "duties": "in-process with the daemon's per-row duties (a ledger per call, the cancel drain, encoding)",
        },
        "every side: two untimed small runs first, then counted runs; instruction counts do not move with load",
    )
    if not _valgrind():
        return
    with tempfile.TemporaryDirectory(prefix="hrb-cg-") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        inproc = in_process(folder)
        daemon = streamed(folder)
        secs = time.perf_counter() - start
    runner, _ = _measured(inproc, "runner")
    bare, _ = _measured(inproc, "bare")
    duties, duties_main = _measured(inproc, "duties")
    every, loop = _measured(daemon, "daemon")
    print(
        f"instructions/row   runner {runner / 1e3:,.1f}k, floor (bare loop) {bare / 1e3:,.1f}k: the runner "
        f"{runner / bare:.2f}x the floor (the rows/s target: within 5x)"
    )
    print(
        f"instructions/row   streamed through the daemon {every / 1e3:,.1f}k (its event loop "
        f"{loop / 1e3:,.1f}k), in-process with the same per-row duties {duties / 1e3:,.1f}k "
        f"(main thread {duties_main / 1e3:,.1f}k): ratio in-process/daemon {duties / every:.3f}x, "
        f"event loops {duties_main / loop:.3f}x (the rows/s target: >= 0.9x)"
    )
    print(
        f"  counted by callgrind over {ROWS:,} rows ({secs:.0f} s): user-space instructions only; "
        "cache misses, the kernel's work and threads running at once are in the rows/s figures; "
        "a thread that ends before its run's dump (a run's ledger writer) may be missing from "
        "'every thread', so the event loops' ratio is the steadier one"
    )


if __name__ == "__main__":
    main()
