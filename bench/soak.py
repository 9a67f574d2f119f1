"""The daemon's resident memory under a long mixed load: its slope after warm-up, against a baseline.

Eight clients (threads of this process, each connecting anew every round, as ``hrb`` does) work
against one daemon for ``--minutes`` (30 by default). A round: a small benchmark streamed (20
items, 2 arms, 5 runs: 200 rows), a few ``score`` calls, its report, its rows, ``hrb ls``
(``benchmark/list``), the view's data (``benchmark/view``, ``matrix``, ``cell`` and a
comparison with the previous round's benchmark) and the deletion of the benchmark of 4 rounds
before (so the store keeps a steady size and what grows is the daemon, not the data). A second
daemon, the baseline, serves the same number of clients for the same time, each round only
``status`` on a fresh connection: what any daemon process drifts by.

Every ``--sample-s`` seconds the script reads both daemons' ``VmRSS``; after the warm-up (the
first sixth of the run, at least 1 minute) it fits a least-squares line to each and prints
the slopes in MB/min, the difference (load minus baseline) against the goal (< 0.2 MB/min),
and the RSS at the end of the warm-up and at the end.

``--trace`` runs the loaded daemon with ``HRBENCH_TRACEMALLOC`` (:mod:`hrbench_server.memtrace`):
tracing starts after the warm-up and the source lines whose Python allocations grew most
between the middle and the end are printed (what to look at when it grows).

Usage: ``python bench/soak.py [--minutes 30] [--clients 8] [--trace]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import start_daemon

from hrbench_client import _paths
from hrbench_client.client import Client

PY = sys.executable
GOAL_MB_PER_MIN = 0.2
KEEP_ROUNDS = 4  # a worker's benchmarks older than this many rounds are deleted


def rss_mb(pid: int) -> float:
    """The process's resident set (``VmRSS``) in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def slope_per_min(samples: list[tuple[float, float]]) -> float:
    """The least-squares slope of ``(seconds, MB)`` samples, in MB per minute.

    Example:
        >>> round(slope_per_min([(0, 100.0), (60, 101.0), (120, 102.0)]), 6)
        1.0
    """
    n = len(samples)
    if n < 2:
        return float("nan")
    mt = sum(t for t, _ in samples) / n
    mm = sum(m for _, m in samples) / n
    var = sum((t - mt) ** 2 for t, _ in samples)
    cov = sum((t - mt) * (m - mm) for t, m in samples)
    return cov / var * 60 if var else float("nan")


def spec(worker: int, round_: int) -> dict[str, Any]:
    """A small benchmark: 20 items, 2 arms, 5 runs, a mock whose replies change by round."""
    n = 20
    return {
        "name": f"soak-w{worker}-r{round_}",
        "arms": [
            {"kind": "prompt", "name": "ask", "template": "Q: {item}"},
            {"kind": "prompt", "name": "terse", "template": "{item}?"},
        ],
        "reference": {
            "items": {f"q{i}": f"item {i} of {worker}" for i in range(n)},
            "labels": ["x"] * n,
            "cluster": [f"c{i % 4}" for i in range(n)],
        },
        "client": {"kind": "mock", "replies": {f"Q: item {round_ % n} of {worker}": "y"}, "default": "x"},
        "runs": 5,
        "governor": {},
        "concurrency": 8,
    }


def loaded_round(c: Client, worker: int, r: int, mine: list[str]) -> int:
    """One round of mixed operations; returns how many calls it made."""
    stream = c.benchmark(spec(worker, r))
    n = sum(1 for _ in stream)
    assert n == 200, n
    bid = stream.id or ""
    for k in range(5):
        c.score(f" answer {k} ", label=f"answer {k}", scorer="answer_contains")
    c.report(bid)
    c.rows(bid, limit=100)
    c.benchmarks(limit=20)
    c.view(bid)
    c.matrix(bid)
    c.cell(bid, "q1", "ask")
    if mine:
        c.compare_benchmarks(mine[-1], bid)
    mine.append(bid)
    calls = 13
    while len(mine) > KEEP_ROUNDS:
        c.delete(mine.pop(0))
        calls += 1
    return calls


def baseline_round(c: Client, worker: int, r: int, mine: list[str]) -> int:
    c.status()
    return 1


def client_loop(
    home: Path,
    worker: int,
    stop: threading.Event,
    work: Callable[[Client, int, int, list[str]], int],
    counts: list[int],
    errors: list[str],
    pause_s: float,
) -> None:
    sock = _paths.socket_path(home)
    r = 0
    mine: list[str] = []
    while not stop.is_set():
        try:
            with Client.connect_unix(sock, 120) as c:
                counts[worker] += work(c, worker, r, mine)
        except Exception as exc:  # counted and printed: a failing client is a result too
            errors.append(f"{type(exc).__name__}: {exc}")
            time.sleep(0.5)
        r += 1
        if pause_s:
            stop.wait(pause_s)


def start(home: Path, trace: Path | None) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    if trace is not None:
        env["HRBENCH_TRACEMALLOC"] = str(trace)
    cmd = [PY, "-P", "-m", "hrbench_server", "--home", str(home), "daemon"]
    return start_daemon(cmd, home, home.parent / f"{home.name}.log", env)


def stop_daemon(proc: subprocess.Popen[bytes], home: Path) -> None:
    with contextlib.suppress(Exception):
        with Client.connect_unix(_paths.socket_path(home), 5) as c:
            c.shutdown()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def top_growth(trace: Path, first: int, last: int, n: int = 15) -> list[str]:
    """The source lines whose traced allocations grew most between two snapshots."""
    import tracemalloc

    a = tracemalloc.Snapshot.load(str(trace / f"snapshot-{first}.tracemalloc"))
    b = tracemalloc.Snapshot.load(str(trace / f"snapshot-{last}.tracemalloc"))
    stats = sorted(b.compare_to(a, "traceback"), key=lambda s: s.size_diff, reverse=True)
    out = [f"  traced Python memory: {sum(s.size_diff for s in stats) / 1024:+.1f} KiB in all"]
    for s in stats[:n]:
        frames = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in list(s.traceback)[::-1][:5])
        out.append(f"  {s.size_diff / 1024:+9.1f} KiB {s.count_diff:+7d} blocks  {frames}")
    return out


def heap_line(xml: Path) -> str:
    """The C heap in a ``malloc_info`` dump: held by the system, free in it, in use (MB)."""
    import re

    text = xml.read_text()
    tail = text[text.rfind("</heap>") :]
    num = {k: int(v) for k, v in re.findall(r'<(?:total|system) type="(\w+)"[^>]*size="(\d+)"', tail)}
    free = num.get("fast", 0) + num.get("rest", 0)
    held = num.get("current", 0) + num.get("mmap", 0)
    heaps = text.count("<heap nr=")
    return f"{held / 2**20:.1f} MB held in {heaps} arenas + mmap, {free / 2**20:.1f} MB of it free, {(held - free) / 2**20:.1f} MB in use"


def signal_dump(proc: subprocess.Popen[bytes], trace: Path, n: int) -> bool:
    """Ask the daemon for snapshot ``n`` and wait until it is written."""
    os.kill(proc.pid, signal.SIGUSR2)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (trace / f"top-{n}.txt").exists():
            return True
        time.sleep(0.2)
    return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=30.0, help="minutes of load (default 30)")
    ap.add_argument("--clients", type=int, default=8, help="concurrent clients per daemon (default 8)")
    ap.add_argument("--sample-s", type=float, default=5.0, help="seconds between RSS samples (default 5)")
    ap.add_argument(
        "--trace", action="store_true", help="tracemalloc in the loaded daemon; print the top growth"
    )
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="hrb-soak-"))
    trace = tmp / "trace" if args.trace else None
    loaded_home, base_home = tmp / "loaded", tmp / "baseline"
    loaded, base = start(loaded_home, trace), start(base_home, None)
    stop = threading.Event()
    runs: list[tuple[Path, Callable[..., int], list[int], list[str], float]] = [
        (loaded_home, loaded_round, [0] * args.clients, [], 0.0),
        (base_home, baseline_round, [0] * args.clients, [], 0.05),
    ]
    threads = [
        threading.Thread(target=client_loop, args=(home, w, stop, work, counts, errs, pause), daemon=True)
        for home, work, counts, errs, pause in runs
        for w in range(args.clients)
    ]
    duration = args.minutes * 60
    warm = max(60.0, duration / 6)
    t0 = time.monotonic()
    for t in threads:
        t.start()
    samples: list[tuple[float, float, float]] = []
    traced = dumped = 0
    try:
        while (now := time.monotonic() - t0) < duration:
            stop.wait(min(args.sample_s, max(0.0, duration - now)))
            now = time.monotonic() - t0
            samples.append((now, rss_mb(loaded.pid), rss_mb(base.pid)))
            if trace is not None:
                if not traced and now >= warm:
                    os.kill(loaded.pid, signal.SIGUSR2)  # tracing starts
                    traced = 1
                elif traced == 1 and now >= warm + (duration - warm) / 2:
                    dumped += signal_dump(loaded, trace, dumped + 1)
                    traced = 2
        if trace is not None and traced:
            dumped += signal_dump(loaded, trace, dumped + 1)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=120)
        stop_daemon(loaded, loaded_home)
        stop_daemon(base, base_home)
    after = [s for s in samples if s[0] >= warm] or samples
    load_slope = slope_per_min([(t, m) for t, m, _ in after])
    base_slope = slope_per_min([(t, b) for t, _, b in after])
    first, last = after[0], samples[-1]
    print(f"soak: {args.minutes:g} min, {args.clients} clients per daemon, warm-up {warm / 60:.1f} min")
    for (_, _, counts, errs, _), label in zip(runs, ("loaded", "baseline"), strict=True):
        print(f"  {label}: {sum(counts)} calls, {len(errs)} errors")
        for e in sorted(set(errs))[:5]:
            print(f"    error: {e}")
    print(f"loaded daemon RSS:   {first[1]:6.1f} MB after warm-up -> {last[1]:6.1f} MB at the end")
    print(f"baseline daemon RSS: {first[2]:6.1f} MB after warm-up -> {last[2]:6.1f} MB at the end")
    print(
        f"RSS slope after warm-up (least squares): loaded {load_slope:+.3f} MB/min, baseline {base_slope:+.3f} MB/min"
    )
    diff = load_slope - base_slope
    verdict = "met" if diff < GOAL_MB_PER_MIN else "NOT met"
    print(f"loaded - baseline: {diff:+.3f} MB/min (goal < {GOAL_MB_PER_MIN} MB/min: {verdict})")
    print(
        "samples (s, loaded MB, baseline MB): "
        + " ".join(f"{t:.0f}:{m:.1f}/{b:.1f}" for t, m, b in samples[:: max(1, len(samples) // 40)])
    )
    if trace is not None and dumped >= 2:
        print("tracemalloc, top growth middle -> end (innermost frame last):")
        print("\n".join(top_growth(trace, 1, dumped)))
        for n, when in ((1, "middle"), (dumped, "end")):
            if (trace / f"malloc-{n}.xml").exists():
                print(f"C heap at the {when}: {heap_line(trace / f'malloc-{n}.xml')}")


if __name__ == "__main__":
    main()
