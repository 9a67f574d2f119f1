"""The daemon's resident memory under many clients: flat after warm-up.

Eight clients (threads of this process, each its own connection) work against one daemon for
``--duration`` seconds: each round connects, runs a small benchmark (streamed rows), scores a
few outputs, puts and gets a reference, reads the benchmark's rows back, asks for cache stats,
and disconnects. The daemon's RSS (``VmRSS``) is printed at the start (after a warm-up round
per client), the middle and the end, with the end/middle ratio: the target is a ratio near 1
(flat after warm-up) and an end under 200 MB.

``--trace`` runs the daemon with :mod:`tracemalloc` and prints, at the end, the source lines
whose allocations grew most between the middle and the end (what to look at when it grows).

Usage: ``python bench/clients_rss.py [--duration 300] [--clients 8] [--trace]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import start_daemon

from hrbench_client import _paths
from hrbench_client.client import Client

PY = sys.executable

# The daemon with a tracemalloc switch: the first SIGUSR1 starts tracing (after warm-up, so the
# imports are not traced), each later one dumps a snapshot next to HRB_TRACE_OUT, so this
# script can diff the middle and the end.
_TRACED = """
import os, signal, sys, tracemalloc, runpy
def on_usr1(signum, frame):
    if not tracemalloc.is_tracing():
        tracemalloc.start(8)
        return
    snap = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen *>")])
    out = os.environ["HRB_TRACE_OUT"]
    snap.dump(out + "." + str(len(os.listdir(os.path.dirname(out)))))
signal.signal(signal.SIGUSR1, on_usr1)
sys.argv = ["hrbench_server", *sys.argv[1:]]
runpy.run_module("hrbench_server", run_name="__main__")
"""


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start(home: Path, trace_out: Path | None) -> subprocess.Popen[bytes]:
    args = ["--home", str(home), "daemon"]
    env = dict(os.environ)
    if trace_out is not None:
        env["HRB_TRACE_OUT"] = str(trace_out)
        cmd = [PY, "-P", "-c", _TRACED, *args]
    else:
        cmd = [PY, "-P", "-m", "hrbench_server", *args]
    return start_daemon(cmd, home, home.parent / "daemon.log", env)


def spec(worker: int, round_: int) -> dict[str, Any]:
    n = 20
    return {
        "name": f"w{worker}",
        "arms": [{"kind": "prompt", "name": "ask", "template": "Q: {item}"}],
        "reference": {"items": {f"q{i}": f"item {i} of {worker}" for i in range(n)}, "labels": ["x"] * n},
        "client": {"kind": "mock", "reply": f"x{round_ % 7}"},
        "runs": 5,
        "governor": {},
        "concurrency": 8,
    }


def client_loop(home: Path, worker: int, stop: threading.Event, rounds: list[int], errors: list[str]) -> None:
    sock = _paths.socket_path(home)
    r = 0
    while not stop.is_set():
        try:
            with Client.connect_unix(sock, 60) as c:
                stream = c.benchmark(spec(worker, r))
                n = sum(1 for _ in stream)
                assert n == 100, n
                for k in range(10):
                    c.score(f" answer {k} ", label=f"answer {k}", scorer="answer_contains")
                info = c.references.put(
                    {"items": {"a": f"item-{worker}-{r % 50}"}, "labels": ["x"]}, name=f"ref-{worker}"
                )
                c.references.get(info.hash)
                c.rows(stream.id or "", limit=50)
                c.cache_stats()
        except Exception as exc:  # counted and printed: a failing client is a result too
            errors.append(f"{type(exc).__name__}: {exc}")
            time.sleep(0.5)
        r += 1
        rounds[worker] = r


def top_growth(first: Path, last: Path, n: int = 15) -> list[str]:
    import tracemalloc

    a, b = tracemalloc.Snapshot.load(str(first)), tracemalloc.Snapshot.load(str(last))
    stats = sorted(b.compare_to(a, "traceback"), key=lambda s: s.size_diff, reverse=True)
    total = sum(s.size_diff for s in stats)
    out = [f"  traced Python memory: {total / 1024:+.1f} KiB in all"]
    for s in stats[:n]:
        frames = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in list(s.traceback)[::-1][:4])
        out.append(f"  {s.size_diff / 1024:+9.1f} KiB {s.count_diff:+7d} blocks  {frames}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=300.0, help="seconds of load (default 300)")
    ap.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    ap.add_argument("--trace", action="store_true", help="tracemalloc in the daemon; print the top growth")
    args = ap.parse_args()
    print(f"clients_rss: one daemon's VmRSS under {args.clients} clients for {args.duration:.0f} s")
    print(
        "  clients:  threads of this process, each its own connection: per round a small streamed benchmark, "
        "scores, a reference put and got, rows read back, cache stats"
    )
    print("  baseline: the same daemon's RSS after one warm-up round per client (end/middle: flat = 1.00)")

    tmp = Path(tempfile.mkdtemp(prefix="hrb-rss-"))
    home = tmp / "home"
    trace_out = tmp / "traces" / "snap" if args.trace else None
    if trace_out is not None:
        trace_out.parent.mkdir()
    proc = start(home, trace_out)
    stop = threading.Event()
    rounds = [0] * args.clients
    errors: list[str] = []
    threads = [
        threading.Thread(target=client_loop, args=(home, w, stop, rounds, errors), daemon=True)
        for w in range(args.clients)
    ]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    while min(rounds) < 1 and time.monotonic() - t0 < 60:  # warm-up: one round per client
        time.sleep(0.1)
    if trace_out is not None:
        os.kill(proc.pid, signal.SIGUSR1)  # start tracing now that the imports are done
    samples = [(time.monotonic() - t0, rss_mb(proc.pid))]
    start_s = samples[0][0]
    half = start_s + args.duration / 2
    end = start_s + args.duration
    snaps: list[Path] = []

    def snapshot() -> None:
        if trace_out is not None:
            before = set(trace_out.parent.iterdir())
            os.kill(proc.pid, signal.SIGUSR1)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                new = set(trace_out.parent.iterdir()) - before
                if new:
                    time.sleep(1.0)  # the dump finishes writing
                    snaps.append(new.pop())
                    return
                time.sleep(0.1)

    middle = None
    while (now := time.monotonic() - t0) < end:
        time.sleep(min(5.0, max(0.0, end - now)))
        samples.append((time.monotonic() - t0, rss_mb(proc.pid)))
        if middle is None and samples[-1][0] >= half:
            middle = samples[-1]
            snapshot()
    stop.set()
    for t in threads:
        t.join(timeout=120)
    final = (time.monotonic() - t0, rss_mb(proc.pid))
    snapshot()
    with contextlib.suppress(Exception):
        with Client.connect_unix(_paths.socket_path(home), 5) as c:
            c.shutdown()
    proc.wait(timeout=30)
    middle = middle or final
    first = samples[0]
    print(
        f"clients: {args.clients}, duration: {args.duration:.0f} s, rounds: {sum(rounds)}, errors: {len(errors)}"
    )
    for e in sorted(set(errors))[:5]:
        print(f"  error: {e}")
    print(f"RSS start  (t={first[0]:6.1f} s): {first[1]:7.1f} MB")
    print(f"RSS middle (t={middle[0]:6.1f} s): {middle[1]:7.1f} MB")
    print(f"RSS end    (t={final[0]:6.1f} s): {final[1]:7.1f} MB (target < 200 MB)")
    print(
        f"growth after warm-up: end/middle = {final[1] / middle[1]:.3f} (target ~1.00), end/start = {final[1] / first[1]:.3f}"
    )
    print("samples (s, MB): " + json.dumps([(round(t), round(m, 1)) for t, m in samples]))
    if len(snaps) >= 2:
        print("tracemalloc, top growth middle -> end (traceback: innermost first):")
        print("\n".join(top_growth(snaps[0], snaps[-1])))


if __name__ == "__main__":
    main()
