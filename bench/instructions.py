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

Usage: ``python bench/instructions.py`` (about two minutes; prints a note and exits 0 when
valgrind is not installed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

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


def _counted(pid: int, name: str, run: Callable[[int, int], object]) -> None:
    """Run ``run(items, runs)`` at both sizes with process ``pid``'s counting on, a dump after each.

    Two small runs first, uncounted: imports and first-use costs stay out of the counts.
    """
    run(*SMALL)
    run(*SMALL)
    for size, (items, runs) in (("small", SMALL), ("large", LARGE)):
        _control(pid, "-z")
        _control(pid, "-i", "on")
        run(items, runs)
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


def _measured(totals: dict[str, dict[int, int]], name: str) -> tuple[float, float]:
    """(every thread, the main thread) instructions a row between the small and the large run."""
    small, large = totals[f"{name}-small"], totals[f"{name}-large"]
    every = (sum(large.values()) - sum(small.values())) / ROWS
    main = (large.get(1, 0) - small.get(1, 0)) / ROWS
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


def main() -> None:
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
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("instructions       skipped: valgrind is not installed (Debian's valgrind package)")
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
