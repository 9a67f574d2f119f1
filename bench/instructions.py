"""Instructions per row, counted by valgrind's callgrind: the two runner ratios without the machine's noise.

``bench/daemon.py`` measures rows/s, and on a shared 2-core machine the same code's wall time moves
by 30% and more from one run to the next. Instruction counts do not move: the same code, inputs and
environment give the same count whatever else the machine does. They leave out what wall time
includes (cache misses and memory stalls, the kernel's work for syscalls, two threads running at
once), so they complement the rows/s ratios and do not replace them. Prints, each for the rows
between a 1,000x1 and a 1,000x5 benchmark (a benchmark's fixed costs cancel out):

1. the in-process runner (``benchmark_async``, a prompt arm, an instant mock, the exact scorer) vs
   the bare loop over the same rows (the mock's reply and the scorer, nothing else); the
   rows/s target is within 5x;
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
from pathlib import Path

import _common

from hrbench_client import _paths
from hrbench_client.client import Client

HERE = Path(__file__).resolve().parent
SMALL, LARGE = (1000, 1), (1000, 5)
ROWS = LARGE[0] * LARGE[1] - SMALL[0] * SMALL[1]


def _callgrind(out: str) -> list[str]:
    return [
        "valgrind",
        "--tool=callgrind",
        "--separate-threads=yes",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}.%p",
    ]


def _control(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True)


def _totals(folder: Path, pid: int) -> dict[str, dict[int, int]]:
    """Each dump's instructions by thread number (1: the main thread), by the dump's name."""
    out: dict[str, dict[int, int]] = {}
    for f in folder.glob(f"cg.{pid}.*-*"):
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


_IN_PROCESS = """
import os, subprocess, sys
sys.path.insert(0, {here!r})
import daemon as d
def measured(name, fn):
    fn(*{small!r}); fn(*{small!r})  # imports and first-use costs out of the count
    for size, (items, runs) in (("small", {small!r}), ("large", {large!r})):
        subprocess.run(["callgrind_control", "-z", str(os.getpid())], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, stdout=subprocess.DEVNULL)
        fn(items, runs)
        subprocess.run(["callgrind_control", "-d", f"{{name}}-{{size}}", str(os.getpid())], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, stdout=subprocess.DEVNULL)
measured("runner", d.in_process_rows_per_s)
measured("bare", d.bare_rows_per_s)
measured("duties", lambda items, runs: d.in_process_rows_per_s(items, runs, duties=True))
"""


def in_process(folder: Path) -> dict[str, dict[int, int]]:
    """The runner, the bare loop and the run with the daemon's duties, in one process under callgrind."""
    code = _IN_PROCESS.format(here=str(HERE), small=SMALL, large=LARGE)
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        [*_callgrind(str(folder / "cg")), sys.executable, "-c", code],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the in-process run under callgrind failed: {proc.stderr.decode()[-2000:]}")
    return _totals(folder, _pid_of(folder, exclude=set()))


def _pid_of(folder: Path, exclude: set[int]) -> int:
    pids = {int(f.name.split(".")[1]) for f in folder.glob("cg.*.*-*")} - exclude
    assert len(pids) == 1, pids
    return pids.pop()


def streamed(folder: Path) -> dict[str, dict[int, int]]:
    """The same benchmark streamed from a daemon running under callgrind (this process is its client)."""
    sys.path.insert(0, str(HERE))
    import daemon as d  # type: ignore[import-not-found]

    before = {int(f.name.split(".")[1]) for f in folder.glob("cg.*.*-*")}
    home = folder / "home"
    cmd = [
        *_callgrind(str(folder / "cg")),
        sys.executable,
        "-m",
        "hrbench_server",
        "--home",
        str(home),
        "daemon",
    ]
    proc = _common.start_daemon(cmd, home, folder / "daemon.log", timeout_s=300)
    try:
        for _ in range(2):
            d.stream_rows(home, *SMALL)
        for size, (items, runs) in (("small", SMALL), ("large", LARGE)):
            _control(proc.pid, "-z")
            _control(proc.pid, "-i", "on")
            with Client.connect_unix(_paths.socket_path(home)) as c:
                got = sum(1 for _ in c.benchmark(d.bench_spec(items, runs)))
            assert got == items * runs, (got, items, runs)
            _control(proc.pid, "-d", f"daemon-{size}")
            _control(proc.pid, "-i", "off")
    finally:
        _common.stop_daemon(proc, home, timeout_s=120)
    return _totals(folder, _pid_of(folder, exclude=before))


def main() -> None:
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
        f"instructions/row   runner {runner / 1e3:,.1f}k, bare loop {bare / 1e3:,.1f}k: the runner "
        f"{runner / bare:.2f}x the bare loop (the rows/s target: within 5x)"
    )
    print(
        f"instructions/row   streamed through the daemon {every / 1e3:,.1f}k (its event loop "
        f"{loop / 1e3:,.1f}k), in-process with the same per-row duties {duties / 1e3:,.1f}k "
        f"(main thread {duties_main / 1e3:,.1f}k): ratio in-process/daemon {duties / every:.3f}x, "
        f"event loops {duties_main / loop:.3f}x (the rows/s target: >= 0.9x)"
    )
    print(
        f"  counted by callgrind over {ROWS:,} rows ({secs:.0f} s): user-space instructions only; "
        "cache misses, the kernel's work and threads running at once are in the rows/s figures"
    )


if __name__ == "__main__":
    main()
