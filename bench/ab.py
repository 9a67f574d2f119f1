"""This tree against an earlier commit: the runner's and the daemon's CPU and rows/s, the two trees interleaved.

On a shared 2-core machine the same code's rows/s moves by 10-30% from one minute to the next, more
than the difference a change makes, so comparing a figure with one printed an hour earlier says
little. Here both trees run in the same minutes: each round streams a benchmark through a daemon
of each tree (its CPU read from ``/proc``, every thread) and runs, in a fresh process of each tree
(with that tree's own ``bench/daemon.py``), the in-process runner, the floor (``_common.FLOOR``) and
the in-process run with the daemon's per-row duties. The order of the trees alternates from round
to round. Prints, for each tree, the medians over the rounds of the target ratios (the runner's CPU
per row against the floor's, target <= 3x; the daemon's CPU per row against the in-process
runner's, target <= 1.5x; streamed rows against the in-process run with the same duties, target
>= 0.9x), and this tree's CPU per row and rows/s against the other's, round by round.

The other commit is checked out in a temporary git worktree, removed at the end; its daemon runs
from that worktree with this tree's installed dependencies (the ``pyproject.toml`` of the two
should agree), and this tree's client streams from it (the wire must be the same).

With ``--http`` it compares the HTTP path instead: in each round, for a loopback server in the
measuring process and in another, a fresh process of each tree times its ``bench/concurrency.py``'s
sharded bare client and benchmark (``--n`` calls at 50 ms, concurrency ``--c``), and it prints each
tree's benchmark / bare ratios (target <= 1.15x by wall time) and this tree's times against the other's.

Usage: ``python bench/ab.py [REF] [--rounds N] [--items N] [--http [--n N] [--c C]]`` (``REF``: a
commit, default ``HEAD~1``; ``--items``: items of each benchmark, 5 runs each, default 4,000; about
10 s a round).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import _common
import daemon as d

RUNS = 5
DEFAULT_REF = "HEAD~1"

_MEASURE = """
import sys, time
sys.path.insert(0, "bench")
import daemon as d
items = int(sys.argv[1])
d.in_process_rows_per_s(1000, 5)
d.in_process_rows_per_s(1000, 5, duties=True)
d.bare_rows_per_s(1000, 5)
def cpu(fn, *args, **kw):
    c = time.process_time()
    got = fn(*args, **kw)
    return got, time.process_time() - c
runner, runner_cpu = cpu(d.in_process_rows_per_s, items, 5)
bare, bare_cpu = cpu(d.bare_rows_per_s, items, 5)
duties = d.in_process_rows_per_s(items, 5, duties=True)
print(runner, bare, duties, runner_cpu, bare_cpu)
"""
"""What a fresh process of a tree prints: its runner's, floor's and duties run's rows/s, then the
runner's and the floor's CPU seconds (this process, every thread)."""

_HTTP_MEASURE = """
import sys
sys.path.insert(0, "bench")
import concurrency as cc
from hrbench.testing import LoopbackServer
n, c, separate = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
with LoopbackServer(0.05, separate_process=separate, record=False) as srv:
    best = cc.measure({"bare": cc.bare_sharded, "benchmark": cc.bench_loop}, srv.base_url, n, c, 1)
print(*best["bare"], *best["benchmark"])
"""
"""What a fresh process of a tree prints with ``--http``: its ``bench/concurrency.py``'s sharded
bare client's and benchmark's least wall and CPU seconds (one warm-up each, then one timed run
each), against a loopback server answering after 50 ms, in that process or in another."""


@contextlib.contextmanager
def worktree(ref: str, folder: Path) -> Iterator[Path]:
    """``ref`` checked out in a git worktree under ``folder``; removed on every path.

    Raises:
        SystemExit: ``ref`` is not a commit of this repository (status 0, with a note, for the
            default ``HEAD~1``: ``make bench`` in a shallow clone goes on).
    """
    path = folder / "ref"
    made = subprocess.run(
        ["git", "-C", str(_common.REPO), "worktree", "add", "--detach", "--quiet", str(path), ref],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        if ref == DEFAULT_REF:  # a shallow clone, or the first commit: nothing to compare with
            print(f"ab                 skipped: {ref} cannot be checked out here ({made.stderr.strip()})")
            raise SystemExit(0)
        raise SystemExit(f"bench/ab.py: cannot check out {ref!r}: {made.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(
            ["git", "-C", str(_common.REPO), "worktree", "remove", "--force", str(path)],
            capture_output=True,
            check=False,
        )


def tree_env(tree: Path) -> dict[str, str]:
    """The environment that imports hrbench, its server and its client from ``tree``."""
    paths = [tree, tree / "clients" / "python", tree / "server"]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, paths)), "PYTHONWARNINGS": "ignore"}


class Round(NamedTuple):
    """One tree's figures in one round."""

    streamed: float
    """Rows/s streamed through the tree's daemon."""
    daemon_cpu: float
    """The daemon's CPU seconds (every thread) for them."""
    runner: float
    """Rows/s of the in-process runner (no duties), in a fresh process of the tree."""
    bare: float
    """Rows/s of the floor (``_common.FLOOR``) over the same rows."""
    duties: float
    """Rows/s of the in-process runner with the daemon's per-row duties."""
    runner_cpu: float
    """The in-process runner's CPU seconds."""
    bare_cpu: float
    """The floor's CPU seconds."""


def _measured(tree: Path, script: str, args: list[str], bench: str, count: int) -> tuple[float, ...]:
    """The last ``count`` numbers ``script`` prints, run with ``args`` in a fresh process of ``tree``.

    Raises:
        RuntimeError: it failed (that tree's ``bench``, e.g. ``bench/daemon.py``, cannot measure them).
    """
    out = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=tree,
        env=tree_env(tree),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{tree}: {bench} could not measure: {out.stderr.strip()[-1500:]}")
    return tuple(map(float, out.stdout.split()[-count:]))


def in_process(tree: Path, items: int) -> tuple[float, ...]:
    """(runner, floor, in-process with duties) rows/s, then the runner's and the floor's CPU seconds,
    in a fresh process of ``tree``.

    Raises:
        RuntimeError: that tree's ``bench/daemon.py`` cannot measure them (a commit too old).
    """
    return _measured(tree, _MEASURE, [str(items)], "bench/daemon.py", 5)


def http_path(tree: Path, n: int, c: int, separate: bool) -> tuple[float, ...]:
    """(bare wall, bare CPU, benchmark wall, benchmark CPU) seconds of ``tree``'s HTTP path, in a fresh process.

    Raises:
        RuntimeError: that tree's ``bench/concurrency.py`` cannot measure them.
    """
    args = [str(n), str(c), "1" if separate else "0"]
    return _measured(tree, _HTTP_MEASURE, args, "bench/concurrency.py", 4)


def http_main(ref: str, rounds: int, n: int, c: int) -> None:
    """``--http``: each tree's HTTP path against its sharded bare client, the server here and in another process.

    Each round runs, for each placement of the server, a fresh process of each tree (the trees'
    order alternating); prints each tree's medians of benchmark / bare by wall and by CPU time, and
    this tree's benchmark wall and CPU time against the other's, round by round.
    """
    _common.header(
        f"ab --http: this tree against {ref}, {rounds} rounds, N = {n} calls at 50 ms, C = {c}",
        {
            "bare": "each tree's bench/concurrency.py bare-shards (ceil(C / 16) httpx2 clients, least busy)",
            "benchmark": "each tree's bench/concurrency.py benchmark way (benchmark_async, OpenAIClient arm)",
        },
        "each side: one untimed warm-up, then one timed run a round in a fresh process; medians of the rounds",
    )
    with tempfile.TemporaryDirectory(prefix="hrb-ab-") as tmp, worktree(ref, Path(tmp)) as ref_tree:
        trees = {"this tree": _common.REPO, ref: ref_tree}
        got: dict[tuple[str, bool], list[tuple[float, ...]]] = {}
        for r in range(rounds):
            for separate in (False, True):
                for name in list(trees) if r % 2 == 0 else list(trees)[::-1]:
                    got.setdefault((name, separate), []).append(http_path(trees[name], n, c, separate))
    med = statistics.median
    for separate in (False, True):
        where = "another process" if separate else "this process"
        for name in trees:
            xs = got[(name, separate)]
            print(
                f"{name:<18} server in {where}: benchmark / bare {med(x[2] / x[0] for x in xs):.2f}x by wall "
                f"(target <= 1.15x), {med(x[3] / x[1] for x in xs):.2f}x by CPU; benchmark "
                f"{med(x[2] for x in xs):.2f} s wall, {med(x[3] for x in xs):.2f} s CPU; bare "
                f"{med(x[0] for x in xs):.2f} s wall, {med(x[1] for x in xs):.2f} s CPU"
            )
        this, other = got[("this tree", separate)], got[(ref, separate)]
        for what, i in (("benchmark wall", 2), ("benchmark CPU", 3), ("ratio by wall", -1)):

            def of(x: tuple[float, ...], i: int = i) -> float:
                return x[2] / x[0] if i < 0 else x[i]

            ratios = [of(a) / of(b) for a, b in zip(this, other, strict=True)]
            print(
                f"this tree / {ref}  {where}: {what} median {med(ratios):.3f}x (by round: "
                f"{' '.join(f'{x:.2f}' for x in ratios)}; below 1: this tree is faster)"
            )


def summary(name: str, got: list[Round], rows: int) -> str:
    """One tree's medians over the rounds, with the targets they are held to."""
    med = statistics.median
    return (
        f"{name:<18} runner CPU {med(r.runner_cpu for r in got) / rows * 1e6:.1f} us/row, "
        f"{med(r.runner_cpu / r.bare_cpu for r in got):.2f}x the floor's "
        f"{med(r.bare_cpu for r in got) / rows * 1e6:.1f} (target <= 3x); daemon CPU "
        f"{med(r.daemon_cpu for r in got) / rows * 1e6:.1f} us/row, "
        f"{med(r.daemon_cpu / r.runner_cpu for r in got):.2f}x in-process (target <= 1.5x); streamed / "
        f"in-process with the same duties {med(r.streamed / r.duties for r in got):.2f}x (target >= 0.9x); "
        f"runner {med(r.runner for r in got):,.0f} rows/s, streamed {med(r.streamed for r in got):,.0f} "
        f"rows/s (medians of {len(got)} rounds)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "ref", nargs="?", default=DEFAULT_REF, help=f"the commit to compare with (default {DEFAULT_REF})"
    )
    parser.add_argument("--rounds", type=int, default=6, help="rounds, each tree once a round (default 6)")
    parser.add_argument("--items", type=int, default=4000, help="items of each benchmark, 5 runs each")
    parser.add_argument(
        "--http",
        action="store_true",
        help="the HTTP path instead: bench/concurrency.py's benchmark against its sharded bare client",
    )
    parser.add_argument("--n", type=int, default=2000, help="--http: calls per run (default 2000)")
    parser.add_argument("--c", type=int, default=100, help="--http: concurrency (default 100)")
    args = parser.parse_args()
    if args.rounds < 1 or args.items < 1:
        raise SystemExit("bench/ab.py: --rounds and --items must be at least 1")
    if args.http:
        http_main(args.ref, args.rounds, args.n, args.c)
        return
    _common.header(
        f"ab: this tree against {args.ref}, {args.rounds} rounds, {args.items:,} items x {RUNS} runs, trees alternating",
        {
            "streamed": "each tree's daemon (a warm one per tree) streaming bench/daemon.py's benchmark",
            "in-process": "a fresh process of each tree: its bench/daemon.py's runner, floor and duties run",
            "floor": "each tree's own bench/daemon.py bare_rows_per_s (this tree: " + _common.FLOOR + ")",
        },
        "each side: a warm-up run untimed in its process or daemon, then one run a round; medians of the rounds",
    )
    with tempfile.TemporaryDirectory(prefix="hrb-ab-") as tmp, worktree(args.ref, Path(tmp)) as ref_tree:
        folder = Path(tmp)
        os.chdir(folder)  # the daemon drops its working directory from the import path
        trees = {"this tree": _common.REPO, args.ref: ref_tree}
        rows: dict[str, list[Round]] = {name: [] for name in trees}
        daemons: dict[str, tuple[subprocess.Popen[bytes], Path]] = {}
        try:
            for i, (name, tree) in enumerate(trees.items()):
                home = folder / f"home{i}"
                cmd = [d.PY, "-m", "hrbench_server", "--home", str(home), "daemon"]
                daemons[name] = (
                    _common.start_daemon(cmd, home, folder / f"daemon{i}.log", tree_env(tree)),
                    home,
                )
                d.stream_rows(home, 1000, RUNS)  # warm: its runner imported, its store opened
            for r in range(args.rounds):
                for name in list(trees) if r % 2 == 0 else list(trees)[::-1]:
                    proc, home = daemons[name]
                    got, wall, cpu = d.stream_rows(home, args.items, RUNS, proc.pid)
                    assert got == args.items * RUNS, (got, args.items)
                    rows[name].append(Round(got / wall, cpu, *in_process(trees[name], args.items)))
        finally:
            for proc, home in daemons.values():
                _common.stop_daemon(proc, home)
    for name, got in rows.items():
        print(summary(name, got, args.items * RUNS))
    this, other = rows["this tree"], rows[args.ref]
    for what, of, faster in (
        ("runner CPU/row", lambda r: r.runner_cpu, False),
        ("daemon CPU/row", lambda r: r.daemon_cpu, False),
        ("runner rows/s", lambda r: r.runner, True),
        ("streamed rows/s", lambda r: r.streamed, True),
    ):
        ratios = [of(a) / of(b) for a, b in zip(this, other, strict=True)]
        print(
            f"this tree / {args.ref}  {what} median {statistics.median(ratios):.3f}x (by round: "
            f"{' '.join(f'{x:.2f}' for x in ratios)}; {'above' if faster else 'below'} 1: this tree is faster)"
        )


if __name__ == "__main__":
    main()
