"""``hrb view`` on a 100,000-row benchmark: one cell's page, and a cheap page beside slow ones.

Builds a benchmark of 10,000 items x 2 arms x 5 runs (100,000 rows, each with a one-request
trace, written in batches of 2,000 as the daemon writes them) in a fresh store, starts a daemon
and a real ``hrb view`` on it, and prints, each against a baseline measured in the same run:

1. rendering one cell over HTTP (the page and the ``/api/.../cell`` JSON it loads): the first
   cell of the benchmark (which indexes its batches) and a later one, against the full read a
   cell used to make (every row, every trace and the whole reference, decoded in this process;
   the reference is now built in linear time, where a 10,000-item labelled one took ~13 s);
   target: under 0.5 s;
2. the list page (``/api/benchmarks``) while 6 slow pages (the benchmark's statistics) are
   pending, against the same page alone: the view answers requests in parallel, so it should
   not wait for them (before, it waited for all of them: one connection to the daemon).

Usage: ``python bench/view.py``.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import _common

import hrbench as hb
from hrbench.records import Row, Step, Usage

PY = sys.executable
ITEMS, ARMS, RUNS, BATCH = 10_000, ("short", "long"), 5, 2000
BENCH = "view-bench-100k"
TARGET_S = 0.5


def build(path: Path) -> None:
    """The 100,000-row benchmark ``BENCH``, written straight to the store at ``path``."""
    store = hb.Store(path)
    ref = hb.Reference(
        {f"q{i}": f"question {i}: " + "words " * 30 for i in range(ITEMS)},
        labels={f"q{i}": f"answer {i}" for i in range(ITEMS)},
        cluster={f"q{i}": f"doc{i // 10}" for i in range(ITEMS)},
    )
    spec = {"arms": [{"name": a} for a in ARMS], "params": {"runs": RUNS, "name": BENCH}, "total": 100_000}
    store.benchmark_put(BENCH, spec, store.reference_put(ref))
    rows: list[tuple[int, Row]] = []
    traces: dict[str, list[Step]] = {}
    seq = 0
    for i in range(ITEMS):
        for arm in ARMS:
            for run in range(1, RUNS + 1):
                lid = f"{BENCH}/{arm}/q{i}/{run}"
                right = (i + run) % 3 != 0
                rows.append(
                    (
                        seq,
                        Row(
                            cluster=f"doc{i // 10}",
                            item=f"q{i}",
                            arm=arm,
                            run=run,
                            split="test",
                            correct=right,
                            outcome=f"answer {i}" if right else "no",
                            failure_kind=None if right else "wrong",
                            ledger_id=lid,
                            draw_index=run,
                        ),
                    )
                )
                traces[lid] = [
                    Step(
                        ledger_id=lid,
                        key=f"{seq:064x}",
                        model="mock",
                        draw_index=run,
                        messages=[{"role": "user", "content": f"question {i}: " + "words " * 30}],
                        text=rows[-1][1].outcome,
                        finish_reason="stop",
                        usage=Usage(tokens_in=40, tokens_out=3),
                        usd=0.0,
                        seconds=0.01,
                    )
                ]
                seq += 1
                if len(rows) == BATCH:
                    store.rows_put(BENCH, rows, traces, fresh=len(rows))
                    rows, traces = [], {}
    store.benchmark_finish(BENCH, "done", None)
    store.close()


def full_read(path: Path, item: str, arm: str) -> float:
    """Seconds to read one cell the way it was read before: everything decoded."""
    store = hb.Store(path)
    t = time.perf_counter()
    rows = [r for r in store.rows_get(BENCH) if r.item == item and r.arm == arm]
    store.traces_get(BENCH, [r.ledger_id for r in rows])
    rec = store.benchmark_get(BENCH)
    assert rec is not None
    store.reference_get(rec["reference_hash"]).payload(item)
    dt = time.perf_counter() - t
    store.close()
    return dt


class View:
    """A real ``hrb view --no-browser`` and an opener that sends the session key its link gives."""

    def __init__(self, home: Path) -> None:
        cmd = [PY, "-m", "hrbench_client.cli", "--home", str(home), "--no-autostart", "view", "--no-browser"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        self.base = self.url.split("/?")[0]
        self.opener = urllib.request.build_opener()
        deadline = time.monotonic() + 60
        while True:  # the URL is printed just before the server listens
            try:
                page = self.get(self.url).decode()
                key = re.search(r'sessionStorage\.setItem\("hrb-view-session", "([\w-]+)"\)', page)
                assert key is not None, page
                self.opener.addheaders.append(("x-hrb-view-session", key.group(1)))
                return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise
                time.sleep(0.05)

    def get(self, url: str) -> bytes:
        with self.opener.open(url, timeout=600) as r:
            return r.read()

    def timed(self, path: str) -> float:
        t = time.perf_counter()
        self.get(self.base + path)
        return time.perf_counter() - t

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def cell_seconds(view: View, item: str, arm: str) -> float:
    """The cell's page and the JSON its script loads, one after the other (what a click costs)."""
    return view.timed(f"/b/{BENCH}/cell?item={item}&arm={arm}") + view.timed(
        f"/api/benchmark/{BENCH}/cell?item={item}&arm={arm}"
    )


def cheap_beside_slow(view: View, n_slow: int = 6) -> tuple[float, float]:
    """The list page's seconds alone (median of 5), and while ``n_slow`` statistics pages are pending."""
    alone = statistics.median(view.timed("/api/benchmarks") for _ in range(5))
    done: list[float] = []
    threads = [
        threading.Thread(target=lambda: done.append(view.timed(f"/api/benchmark/{BENCH}")))
        for _ in range(n_slow)
    ]
    for th in threads:
        th.start()
    time.sleep(0.3)  # let them reach the daemon
    beside = view.timed("/api/benchmarks")
    pending = n_slow - len(done)
    for th in threads:
        th.join()
    print(f"  ({pending} of {n_slow} slow pages still pending when the list page came back)")
    return alone, beside


def main() -> None:
    _common.header(
        f"view: `hrb view` on a {ITEMS * len(ARMS) * RUNS:,}-row benchmark in a fresh store, through a daemon",
        {
            "cell": "one cell's page and its /api/.../cell JSON over HTTP (the first cell, then a later one)",
            "full read": "the baseline of a cell: every row, every trace and the reference read and decoded "
            "in this process",
            "list page": "/api/benchmarks while 6 statistics pages are pending; baseline: the same page alone "
            "(median of 5)",
        },
        "each side: one untimed warm-up request or read first (the first cell's page indexes the "
        "benchmark's batches: that is its figure); each timed once unless a median is named",
    )
    with tempfile.TemporaryDirectory(prefix="hrb-bench-view-") as d:
        home = Path(d) / "home"
        home.mkdir(mode=0o700)
        db = home / "hrbench.sqlite3"
        t = time.perf_counter()
        build(db)
        print(f"built {ITEMS * len(ARMS) * RUNS:,} rows in {time.perf_counter() - t:.1f} s")
        full_read(db, "q17", "short")  # warm-up, untimed: the store's modules and decoders
        base_s = full_read(db, "q5000", "long")
        proc = _common.start_daemon(
            [PY, "-m", "hrbench_server", "--home", str(home), "daemon"], home, Path(d) / "daemon.log"
        )
        view = None
        try:
            view = View(home)
            view.timed("/api/benchmarks")  # warm-up, untimed: the view's and the daemon's first request
            first = cell_seconds(view, "q5000", "long")
            later = statistics.median(cell_seconds(view, f"q{i}", "short") for i in (17, 4242, 9999))
            print(f"full read of one cell (every row, trace and the reference), in process: {base_s:.3f} s")
            for label, s in (
                ("first cell (indexes the batches)", first),
                ("a later cell (median of 3)", later),
            ):
                verdict = "under" if s < TARGET_S else "NOT under"
                print(
                    f"hrb view, {label}: {s:.3f} s, {s / base_s:.2f}x the full read; {verdict} {TARGET_S} s"
                )
            alone, beside = cheap_beside_slow(view)
            print(
                f"list page alone: {alone:.3f} s; beside 6 pending statistics pages: {beside:.3f} s ({beside / alone:.1f}x)"
            )
        finally:
            if view is not None:
                view.stop()
            _common.stop_daemon(proc, home)


if __name__ == "__main__":
    main()
