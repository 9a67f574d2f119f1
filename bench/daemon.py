"""The daemon's overhead, measured in one run against baselines measured in the same run.

Prints, each with its baseline and ratio (the header it prints says what each side does):

1. ``score`` round trip p50/p99 on a warm daemon vs a raw JSON-RPC echo server on a Unix socket
   (same framing, same client), target <= 2x;
1b. a plain ``score``'s round trip on one connection while another connection's pattern
   backtracks (``(a|a)+$`` on 40 a's and a b, to its 1 s time limit) vs the same score on the idle
   daemon (shared case S12a: within 50 ms; inline on the event loop it would wait for the
   match, ~1 s);
2. rows/s of a 100,000-row benchmark (a prompt arm answered by an instant mock) streamed to a
   Python client through the daemon vs the same benchmark in-process with the daemon's per-row
   duties (a ledger per call, the cancel drain, each row and trace encoded), target >= 0.9x; the
   daemon's CPU per row (every thread) vs the in-process runner's, target <= 1.5x; and the
   in-process runner vs the floor (``_common.FLOOR``: per row the Request, the mock's send, the
   exact scorer), target <= 3x in CPU per row. Every side has one untimed warm-up run, then 3
   timed runs interleaved round by round; the best of each is kept;
2b. the HTTP path: 2,000 calls at 50 ms and concurrency 100 through ``hrbench.runner._benchmark`` vs
   the best bare httpx2 client (``bench/concurrency.py``'s: one pool, or pools of 16), against a
   loopback server in this process and in another process, target <= 1.15x;
3. ``hrb score`` one-liner wall time vs ``python -c pass``, target <= 4x;
4. the daemon's peak RSS after a 100,000-row and a 1,000,000-row benchmark (fresh daemon
   each), target <= 300 MB and < 10% growth;
5. a fresh idle daemon's RSS (target <= 80 MB) and after a benchmark and a report (<= 150 MB),
   against a bare interpreter importing only asyncio, msgspec and pygls.

Usage: ``python bench/daemon.py [--quick]`` (``--quick``: 20,000 rows, no 1M-row run).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import _common
import msgspec

from hrbench_client import _paths
from hrbench_client.client import Client

PY = sys.executable
HRB = str(Path(PY).with_name("hrb")) if Path(PY).with_name("hrb").exists() else None


# -- a raw JSON-RPC echo server: the floor any JSON-RPC daemon on this socket pays ---------------


async def _echo_server(path: str) -> None:
    enc = msgspec.json.Encoder()
    dec = msgspec.json.decode

    async def conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                length = None
                while True:
                    line = await reader.readline()
                    if not line:
                        return
                    if line == b"\r\n" and length is not None:
                        break
                    if line.lower().startswith(b"content-length"):
                        length = int(line.split(b":")[1])
                msg = dec(await reader.readexactly(length))
                body = enc.encode({"jsonrpc": "2.0", "id": msg["id"], "result": msg.get("params")})
                writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        except (ConnectionError, asyncio.IncompleteReadError):
            return

    server = await asyncio.start_unix_server(conn, path=path)
    print("READY", flush=True)
    async with server:
        await server.serve_forever()


# -- helpers ---------------------------------------------------------------------------------------


def start_daemon(home: Path) -> subprocess.Popen[bytes]:
    cmd = [PY, "-m", "hrbench_server", "--home", str(home), "daemon"]
    return _common.start_daemon(cmd, home, home.parent / f"{home.name}.log")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def idle_rss(tmp: Path) -> None:
    """5. A fresh daemon's RSS after one `status`, then after a benchmark and its report.

    Baseline (same run): a bare interpreter that imports only the transport (asyncio, msgspec,
    pygls's server), the floor any pygls daemon pays.
    """
    base = subprocess.run(
        [PY, "-c", "import asyncio, msgspec, pygls.server; print(open('/proc/self/status').read())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    base_mb = int(base.split("VmRSS:")[1].split()[0]) / 1024
    home = tmp / "idle"
    proc = start_daemon(home)
    try:
        fresh = rss_mb(proc.pid)
        with Client.connect_unix(_paths.socket_path(home)) as c:
            res = c.benchmark(bench_spec(500, 5)).rows()
            assert len(res) == 2500
            bench_id = c.call("benchmark/list", {})["benchmarks"][0]["id"]
            c.call("report", {"id": bench_id, "settings": {}})
        time.sleep(0.5)
        after = rss_mb(proc.pid)
    finally:
        _common.stop_daemon(proc, home)
    print(
        f"idle daemon RSS    fresh {fresh:6.1f} MB (target <= 80), after a benchmark and a report "
        f"{after:6.1f} MB (target <= 150); bare pygls interpreter {base_mb:.1f} MB; ratio fresh/bare "
        f"{fresh / base_mb:.2f}x"
    )


def score_beside_backtracking(home: Path) -> None:
    """1b. A plain score on connection B while connection A's pattern backtracks, vs B idle."""
    plain = {"output": "Paris", "label": "Paris", "scorer": "exact"}
    limit_s = 1.0
    heavy = {
        "output": "a" * 40 + "b",
        "label": "a",
        "scorer": "pattern",
        "settings": {"pattern": "(a|a)+$", "timeout": limit_s},
    }

    def timed(c: Client) -> float:
        t0 = time.perf_counter()
        c.call("score", plain)
        return time.perf_counter() - t0

    sock = _paths.socket_path(home)
    with Client.connect_unix(sock) as a, Client.connect_unix(sock) as b:
        for _ in range(300):
            timed(b)
        idle = [timed(b) for _ in range(2000)]
        rid = a.send_request("score", heavy)
        t0 = time.perf_counter()
        time.sleep(0.05)  # A's match has begun
        during = []
        while time.perf_counter() - t0 < 0.8 * limit_s:  # B's scores, all inside A's time limit
            during.append(timed(b))
        try:
            a.wait(rid)
            ended = "answered"
        except Exception as exc:  # the time limit: a ScorerError naming the pattern and the limit
            ended = f"{type(exc).__name__}"
        a_s = time.perf_counter() - t0
    i50, i99, d50, d99 = pct(idle, 0.5), pct(idle, 0.99), pct(during, 0.5), pct(during, 0.99)
    print(
        f"score beside ReDoS other connection p50 {d50 * 1e6:7.0f} us p99 {d99 * 1e6:7.0f} us "
        f"(max {max(during) * 1e3:.1f} ms, {len(during)} scores) while A's pattern backtracked "
        f"{a_s:.2f} s ({ended}); idle p50 {i50 * 1e6:5.0f} us p99 {i99 * 1e6:5.0f} us; ratio p50 "
        f"{d50 / i50:.2f}x p99 {d99 / i99:.2f}x (target: within 50 ms; inline it would wait ~{limit_s:g} s)"
    )


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def bench_spec(items: int, runs: int, stream: bool = True) -> dict[str, Any]:
    return {
        "arms": [{"kind": "prompt", "name": "ask", "template": "{item}"}],
        "reference": {"items": {f"q{i}": f"item{i}" for i in range(items)}, "labels": ["x"] * items},
        "client": {"kind": "mock", "reply": "x"},
        "runs": runs,
        "cache": False,
        "governor": {},
        "concurrency": 16,
        "stream": stream,
    }


def in_process_rows_per_s(items: int, runs: int, duties: bool = False) -> float:
    """Rows/s of the benchmark run by ``benchmark_async`` in this process, rows dropped as they come.

    ``duties``: with the per-row work the daemon must do besides running (its rules, not
    transport): each call's reservation kept in a ledger (:func:`hrbench.runner.kept_ledger`
    on a store in a temporary folder), the cancel grace's drain (:class:`hrbench.runner.runtime.Drain`),
    and each row and its trace encoded as JSON. What is left between this and the daemon is
    the daemon's own cost: threads, SQLite, the socket.
    """
    import anyio

    from hrbench.runner import Governor, benchmark_async, kept_ledger
    from hrbench.runner.runtime import Drain
    from hrbench.specs import build_arm, build_client, build_reference
    from hrbench.store import Store

    spec = bench_spec(items, runs)
    arm, ref = build_arm(spec["arms"][0]), build_reference(spec["reference"])
    client = build_client(spec["client"])
    governor = Governor()
    n = 0
    encode = msgspec.json.Encoder().encode

    def on_row(seq: int, row: Any, trace: Any) -> None:
        nonlocal n
        n += 1

    def on_row_encoded(seq: int, row: Any, trace: Any) -> None:
        nonlocal n
        n += 1
        encode(row)
        encode(trace)

    with tempfile.TemporaryDirectory(prefix="hrb-duties-") as folder, contextlib.ExitStack() as stack:
        if duties:
            store = Store(Path(folder) / "duties.sqlite3")
            stack.callback(store.close)
            stack.enter_context(kept_ledger(governor, store, "duties"))
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            anyio.run(
                lambda: benchmark_async(
                    arm,
                    ref,
                    runs,
                    client,
                    None,
                    "test",
                    governor,
                    1,
                    on_row=on_row_encoded if duties else on_row,
                    keep_rows=False,
                    concurrency=16,
                    drain=Drain() if duties else None,
                )
            )
        wall = time.perf_counter() - start
    return n / wall


def bare_rows_per_s(items: int, runs: int) -> float:
    """The floor (``_common.FLOOR``) over the same rows as :func:`in_process_rows_per_s`: rows/s of one pass."""
    from hrbench.specs import build_client, build_reference

    spec = bench_spec(items, runs)
    ref = build_reference(spec["reference"])
    client = build_client(spec["client"])
    pairs = [(item, ref.labels.get(i)) for i, item in ref.items.items()]
    start = time.perf_counter()
    n = _common.floor_pass(client, pairs, runs)
    return n / (time.perf_counter() - start)


def http_ratios() -> None:
    """2b. The HTTP path vs the best bare httpx2 client, the loopback server in this process and in another.

    ``bench/concurrency.py``'s ways: its bare clients (one pool; pools of 16, the least busy) and
    its ``benchmark`` way, each warmed up and timed as there; the baseline is the faster bare client.
    """
    sys.path.insert(0, str(Path(__file__).parent))
    import concurrency  # type: ignore[import-not-found]

    from hrbench.testing import LoopbackServer

    n, c, latency_s = 2000, 100, 0.05
    for separate in (False, True):
        with LoopbackServer(latency_s, separate_process=separate, record=False) as srv:
            ways = {**concurrency.BARE, "benchmark": concurrency.bench_loop}
            best = concurrency.measure(ways, srv.base_url, n, c, 2)
        base = concurrency.baseline(best)
        (w, u), (bw, bu) = best["benchmark"], best[base]
        where = "another process" if separate else "this process   "
        print(
            f"HTTP path          server in {where}: benchmark {w:.2f} s, best bare client ({base}) "
            f"{bw:.2f} s, ideal {n * latency_s / c:.2f} s; ratio {w / bw:.2f}x by wall time (target <= 1.15x), "
            f"{u / bu:.2f}x by CPU"
        )


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system, every thread) a process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_s(pid: int) -> dict[str, float]:
    """CPU seconds per thread of a process, by thread id."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
            out[tid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


LAST_SPLIT: dict[str, float] = {}
"""The last streamed run's daemon CPU seconds: the event loop's thread and every other thread."""


def stream_rows(home: Path, items: int, runs: int, pid: int | None = None) -> tuple[int, float, float]:
    """Rows streamed, wall seconds, and the daemon's CPU seconds (``pid``; else NaN)."""
    with Client.connect_unix(_paths.socket_path(home)) as c:
        cpu0 = cpu_s(pid) if pid else 0.0
        threads0 = thread_cpu_s(pid) if pid else {}
        start = time.perf_counter()
        stream = c.benchmark(bench_spec(items, runs))
        n = sum(1 for _ in stream)
        wall = time.perf_counter() - start
        if pid:
            used = {t: v - threads0.get(t, 0.0) for t, v in thread_cpu_s(pid).items()}
            LAST_SPLIT.update(
                loop=used.get(str(pid), 0.0), others=sum(used.values()) - used.get(str(pid), 0.0)
            )
        return n, wall, (cpu_s(pid) - cpu0) if pid else float("nan")


def print_header(items: int, runs: int) -> None:
    """What each side of each figure does."""
    rows = f"{items:,} items x {runs} runs"
    _common.header(
        "daemon: each figure against a baseline measured in this run",
        {
            "score": "`score` (exact) round trips on one Unix-socket connection to a warm daemon; "
            "baseline: a raw JSON-RPC echo server, same framing and client, interleaved, 300 warm-up calls",
            "streamed": f"a daemon's benchmark of {rows} (prompt arm, instant mock, exact scorer, no cache) "
            "streamed to this process's client (the daemon's threads, SQLite and socket included)",
            "in-process": "benchmark_async() of the same spec in this process, rows dropped as they come; "
            "'with duties': plus a ledger per call, the cancel drain, each row and trace encoded",
            "floor": _common.FLOOR + ", over the same rows",
            "HTTP": "benchmark_async() with an OpenAIClient arm, 2,000 calls at 50 ms, C = 100; baseline: "
            "the best bare httpx2 client (bench/concurrency.py)",
            "hrb score": "the `hrb score` command against a warm daemon; baseline: `python -c pass`",
        },
        "rows/s: each side 1 untimed warm-up run, then 3 timed runs interleaved, the best kept; "
        "latencies: medians and 99th percentiles",
    )


# -- main -------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--echo-server", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        asyncio.run(_echo_server(args.echo_server))
        return
    rows_items, rows_runs = (4000, 5) if args.quick else (20000, 5)
    print_header(rows_items, rows_runs)
    tmp = Path(tempfile.mkdtemp(prefix="hrb-bench-"))
    home = tmp / "home"
    daemon = start_daemon(home)
    echo_sock = str(tmp / "echo.sock")
    echo = subprocess.Popen([PY, __file__, "--echo-server", echo_sock], stdout=subprocess.PIPE)
    assert echo.stdout is not None and echo.stdout.readline().strip() == b"READY"
    try:
        # 1. score round trip
        params = {"output": "  paris ", "label": "Paris", "scorer": "exact"}
        n = 3000
        with Client.connect_unix(_paths.socket_path(home)) as c, Client.connect_unix(echo_sock) as e:
            for _ in range(300):  # warm both
                c.call("score", params)
                e.call("echo", params)
            t_score, t_echo, t_noop = [], [], []
            for _ in range(n):
                t0 = time.perf_counter()
                e.call("echo", params)
                t1 = time.perf_counter()
                c.call("score", params)
                t2 = time.perf_counter()
                c.call("status", {})
                t3 = time.perf_counter()
                t_echo.append(t1 - t0)
                t_score.append(t2 - t1)
                t_noop.append(t3 - t2)
        s50, s99, e50, e99 = (pct(t_score, 0.5), pct(t_score, 0.99), pct(t_echo, 0.5), pct(t_echo, 0.99))
        print(
            f"score round trip   p50 {s50 * 1e6:7.0f} us  p99 {s99 * 1e6:7.0f} us   "
            f"raw echo p50 {e50 * 1e6:5.0f} us p99 {e99 * 1e6:5.0f} us   "
            f"ratio p50 {s50 / e50:.2f}x p99 {s99 / e99:.2f}x (target <= 2x)"
        )
        print(f"  daemon `status` (a no-op through the same dispatch): p50 {pct(t_noop, 0.5) * 1e6:.0f} us")

        # 1b. a plain score beside a backtracking pattern on another connection
        score_beside_backtracking(home)

        # 2. rows/s streamed vs in-process
        total = rows_items * rows_runs
        daemon_rps = inproc_rps = bare_rps = duties_rps = 0.0
        daemon_cpu = inproc_cpu = duties_cpu = bare_cpu = float("inf")
        split: dict[str, float] = {}
        # one untimed warm-up of every side (the daemon's runner and store imported on first use,
        # as this process's), then 3 timed rounds interleaved, the best of each side kept
        stream_rows(home, 1000, rows_runs)
        in_process_rows_per_s(1000, rows_runs)
        in_process_rows_per_s(1000, rows_runs, duties=True)
        bare_rows_per_s(1000, rows_runs)
        for _ in range(3):  # interleaved, best kept: load from elsewhere hits every variant
            got, secs, cpu = stream_rows(home, rows_items, rows_runs, daemon.pid)
            assert got == total, (got, total)
            daemon_rps = max(daemon_rps, got / secs)
            if cpu < daemon_cpu:
                daemon_cpu, split = cpu, dict(LAST_SPLIT)
            cpu0 = time.process_time()
            inproc_rps = max(inproc_rps, in_process_rows_per_s(rows_items, rows_runs))
            inproc_cpu = min(inproc_cpu, time.process_time() - cpu0)
            cpu0 = time.process_time()
            duties_rps = max(duties_rps, in_process_rows_per_s(rows_items, rows_runs, duties=True))
            duties_cpu = min(duties_cpu, time.process_time() - cpu0)
            cpu0 = time.process_time()
            bare_rps = max(bare_rps, bare_rows_per_s(rows_items, rows_runs))
            bare_cpu = min(bare_cpu, time.process_time() - cpu0)
        print(
            f"rows streamed      {total} rows: {daemon_rps:,.0f} rows/s through the daemon; in-process "
            f"with the same per-row duties {duties_rps:,.0f} rows/s; ratio {daemon_rps / duties_rps:.2f}x "
            f"(target >= 0.9x); against in-process without them ({inproc_rps:,.0f} rows/s) "
            f"{daemon_rps / inproc_rps:.2f}x"
        )
        print(
            f"  CPU per row      daemon {daemon_cpu / total * 1e6:.1f} us (every thread); in-process "
            f"{inproc_cpu / total * 1e6:.1f} us; daemon / in-process {daemon_cpu / inproc_cpu:.2f}x "
            "(target <= 1.5x; CPU is steadier than wall time on a loaded machine)"
        )
        print(
            f"  daemon CPU split event loop (runner, queueing) {split['loop'] / total * 1e6:.1f} us/row; "
            f"writer and other threads (SQLite, encoding) {split['others'] / total * 1e6:.1f} us/row "
            "(these overlap only when a core is free)"
        )
        print(
            f"  where it goes    in-process with the daemon's per-row duties (a ledger per call, the "
            f"cancel drain, rows and traces encoded) {duties_cpu / total * 1e6:.1f} us CPU/row, "
            f"{duties_cpu / inproc_cpu:.2f}x in-process: the duties cost "
            f"{(duties_cpu - inproc_cpu) / total * 1e6:.1f} us CPU/row, the daemon's threads, SQLite and "
            f"socket {(daemon_cpu - duties_cpu) / total * 1e6:.1f} us CPU/row (CPU on both sides, as the line above)"
        )
        print(
            f"runner overhead    in-process {inproc_rps:,.0f} rows/s, {inproc_cpu / total * 1e6:.1f} us CPU/row; "
            f"the floor (bare loop: Request + the mock's send + exact scorer) {bare_rps:,.0f} rows/s, "
            f"{bare_cpu / total * 1e6:.1f} us CPU/row; the runner / the floor {inproc_cpu / bare_cpu:.2f}x by "
            f"CPU (target <= 3x), {bare_rps / inproc_rps:.2f}x by wall time"
        )

        # 3. hrb score one-liner
        env = {**os.environ, "HRBENCH_HOME": str(home)}
        cmd = [HRB] if HRB else [PY, "-m", "hrbench_client.cli"]
        walls, bases = [], []
        for _ in range(15):
            t0 = time.perf_counter()
            subprocess.run([PY, "-c", "pass"], check=True)
            t1 = time.perf_counter()
            out = subprocess.run(
                [*cmd, "score", "--label", "Paris", "  paris "], env=env, capture_output=True, check=True
            )
            t2 = time.perf_counter()
            assert b'"correct":true' in out.stdout
            bases.append(t1 - t0)
            walls.append(t2 - t1)
        w, b = statistics.median(walls), statistics.median(bases)
        print(
            f"hrb score          {w * 1e3:6.1f} ms median; python -c pass {b * 1e3:5.1f} ms; ratio {w / b:.2f}x (target <= 4x)"
        )
    finally:
        echo.kill()
        _common.stop_daemon(daemon, home)

    # 2b. the HTTP path, both ways
    http_ratios()

    # 5. idle RSS (before the big runs below, on a fresh daemon)
    idle_rss(tmp)

    # 4. peak RSS, a fresh daemon per size
    sizes = [(2000, 10)] if args.quick else [(2000, 50), (2000, 500)]
    peaks = []
    for items, runs in sizes:
        h = tmp / f"rss-{items * runs}"
        proc = start_daemon(h)
        try:
            got, secs, _ = stream_rows(h, items, runs)
            peaks.append((got, peak_rss_mb(proc.pid), got / secs))
        finally:
            _common.stop_daemon(proc, h)
    for got, mb, rps in peaks:
        print(
            f"peak RSS           {got:>9,} rows: {mb:6.1f} MB (streamed at {rps:,.0f} rows/s) (target <= 300 MB)"
        )
    if len(peaks) == 2:
        print(
            f"RSS growth         {peaks[0][0]:,} -> {peaks[1][0]:,} rows: {100 * (peaks[1][1] / peaks[0][1] - 1):+.1f}% "
            "(target < 10%)"
        )


if __name__ == "__main__":
    main()
