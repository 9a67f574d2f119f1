"""Zip bombs given to a daemon: how fast each is refused, and the daemon's memory (target: < 2 s, < 300 MB).

One daemon on a fresh state folder; each bomb of ``hrbench.testing._bombs`` (``.eval`` logs of
32-56 KB that inflate to 1 GiB) is put as a reference (``reference/put``, as ``hrb ref put``
does) ``--rounds`` times. The baseline, measured in the same run, is putting the real Inspect
log the tests keep (``tests/unit/interop/data/inspect_capitals.eval``, 15 KB, 12 members). For
each bomb it prints the median seconds to the refusal, its ratio to the baseline, what refused
it, and the daemon's ``VmRSS`` and ``VmHWM`` (peak) after it, in MB.

``--raised`` starts the daemon with the ratio and one member's size raised
(``HRBENCH_IMPORT_MAX_RATIO=1000000``, ``HRBENCH_IMPORT_MAX_MEMBER_BYTES=2GiB``), so that the
total read (``HRBENCH_IMPORT_MAX_BYTES``, 256 MiB) stops the 1 GiB members: the daemon's memory
then stays within idle + that limit.

Usage: ``python bench/import_bombs.py [--rounds 5] [--raised]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, start_daemon, stop_daemon

from hrbench.testing import write_bombs
from hrbench_client import _paths
from hrbench_client.client import Client
from hrbench_client.errors import ConfigError

REAL = REPO / "tests" / "unit" / "interop" / "data" / "inspect_capitals.eval"


def memory_mb(pid: int) -> tuple[float, float]:
    got = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        got[key] = value
    return int(got["VmRSS"].split()[0]) / 1024, int(got["VmHWM"].split()[0]) / 1024


def put(client: Client, path: Path) -> tuple[float, str]:
    """Seconds to put ``path`` as a reference, and the refusal's limit (``""``: read)."""
    start = time.perf_counter()
    try:
        client.references.put({"path": str(path), "format": "inspect"})
        said = ""
    except ConfigError as exc:
        text = str(exc)
        said = next((w for w in text.split() if w.startswith("HRBENCH_IMPORT_")), text[:60]).split("=")[0]
    return time.perf_counter() - start, said


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--raised", action="store_true", help="raise the ratio and member limits")
    args = ap.parse_args()
    print("import_bombs: zip bombs put as references (reference/put, format inspect) on one daemon")
    print(
        f"  bombs:    hrbench.testing._bombs, .eval logs of 32-56 KB inflating to 1 GiB, each put {args.rounds} times"
    )
    print(
        f"  baseline: the real Inspect log tests/unit/interop/data/inspect_capitals.eval put {args.rounds} times"
    )
    print(
        "  (one untimed put of the real log first; then the medians of the rounds on the same daemon; memory"
    )
    print("  from /proc after each bomb)")
    env = dict(os.environ)
    if args.raised:
        env |= {"HRBENCH_IMPORT_MAX_RATIO": "1000000", "HRBENCH_IMPORT_MAX_MEMBER_BYTES": "2GiB"}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        bombs = write_bombs(Path(tmp))
        proc = start_daemon(
            [sys.executable, "-P", "-m", "hrbench_server", "--home", str(home), "daemon"],
            home,
            Path(tmp) / "daemon.log",
            env,
        )
        try:
            with Client.connect_unix(_paths.socket_path(home), 120) as client:
                idle = memory_mb(proc.pid)
                put(client, REAL)  # warm-up, untimed: the readers are imported on first use
                base = statistics.median(put(client, REAL)[0] for _ in range(args.rounds))
                print(f"daemon idle: VmRSS {idle[0]:.0f} MB, VmHWM {idle[1]:.0f} MB")
                print(f"baseline: the real 15 KB .eval read in {base:.3f} s")
                print(
                    f"{'bomb':<20} {'KB':>5} {'s':>7} {'x base':>7}  {'refused by':<34} {'RSS':>5} {'HWM':>5}"
                )
                worst = 0.0
                for name, path in bombs.items():
                    runs = [put(client, path) for _ in range(args.rounds)]
                    secs = statistics.median(s for s, _ in runs)
                    worst = max(worst, secs)
                    rss, hwm = memory_mb(proc.pid)
                    size = path.stat().st_size / 1024
                    print(
                        f"{name:<20} {size:>5.0f} {secs:>7.3f} {secs / base:>7.1f}  {runs[0][1][:34]:<34} {rss:>5.0f} {hwm:>5.0f}"
                    )
                rss, hwm = memory_mb(proc.pid)
                target = f"idle + 256 MiB = {idle[0] + 256:.0f} MB" if args.raised else "300 MB"
                print(
                    f"slowest refusal {worst:.3f} s (target < 2 s); peak VmHWM {hwm:.0f} MB (target < {target})"
                )
        finally:
            stop_daemon(proc, home)


if __name__ == "__main__":
    main()
