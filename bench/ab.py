"""This tree against an earlier commit: ``bench/daemon.py``'s rows/s ratios, the two trees interleaved.

On a shared 2-core machine the same code's rows/s moves by 10-30% from one minute to the next, more
than the difference a change makes, so comparing a figure with one printed an hour earlier says
little. Here both trees run in the same minutes: each round streams a benchmark through a daemon
of each tree and runs, in a fresh process of each tree (with that tree's own ``bench/daemon.py``),
the in-process runner, the bare loop and the in-process run with the daemon's per-row duties. The
order of the trees alternates from round to round. Prints, for each tree, the medians over the
rounds of the two target ratios (streamed rows against the in-process run with the same duties,
target >= 0.9x; the bare loop against the runner, target within 5x), and this tree's rows/s against
the other's, round by round (a ratio above 1: this tree is faster).

The other commit is checked out in a temporary git worktree, removed at the end; its daemon runs
from that worktree with this tree's installed dependencies (the ``pyproject.toml`` of the two
should agree), and this tree's client streams from it (the wire must be the same).

Usage: ``python bench/ab.py [REF] [--rounds N] [--items N]`` (``REF``: a commit, default ``HEAD~1``;
``--items``: items of each benchmark, 5 runs each, default 4,000; about 10 s a round).
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

import _common
import daemon as d

RUNS = 5
DEFAULT_REF = "HEAD~1"

_MEASURE = """
import sys
sys.path.insert(0, "bench")
import daemon as d
items = int(sys.argv[1])
d.in_process_rows_per_s(1000, 5)
d.in_process_rows_per_s(1000, 5, duties=True)
d.bare_rows_per_s(1000, 5)
print(d.in_process_rows_per_s(items, 5), d.bare_rows_per_s(items, 5), d.in_process_rows_per_s(items, 5, duties=True))
"""
"""What a fresh process of a tree prints: its runner's, bare loop's and duties run's rows/s."""


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


def in_process(tree: Path, items: int) -> tuple[float, float, float]:
    """(runner, bare loop, in-process with duties) rows/s, in a fresh process of ``tree``.

    Raises:
        RuntimeError: that tree's ``bench/daemon.py`` cannot measure them (a commit too old).
    """
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(items)],
        cwd=tree,
        env=tree_env(tree),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{tree}: bench/daemon.py could not measure: {out.stderr.strip()[-1500:]}")
    runner, bare, duties = map(float, out.stdout.split()[-3:])
    return runner, bare, duties


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "ref", nargs="?", default=DEFAULT_REF, help=f"the commit to compare with (default {DEFAULT_REF})"
    )
    parser.add_argument("--rounds", type=int, default=6, help="rounds, each tree once a round (default 6)")
    parser.add_argument("--items", type=int, default=4000, help="items of each benchmark, 5 runs each")
    args = parser.parse_args()
    if args.rounds < 1 or args.items < 1:
        raise SystemExit("bench/ab.py: --rounds and --items must be at least 1")
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
        rows: dict[str, list[tuple[float, float, float, float]]] = {name: [] for name in trees}
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
                    home = daemons[name][1]
                    got, wall, _ = d.stream_rows(home, args.items, RUNS)
                    assert got == args.items * RUNS, (got, args.items)
                    rows[name].append((got / wall, *in_process(trees[name], args.items)))
        finally:
            for proc, home in daemons.values():
                _common.stop_daemon(proc, home)
    med = statistics.median
    for name, got in rows.items():
        streamed = med(s / duties for s, _, _, duties in got)
        runner = med(bare / runner for _, runner, bare, _ in got)
        print(
            f"{name:<18} streamed / in-process with the same duties {streamed:.2f}x (target >= 0.9x); "
            f"runner {runner:.2f}x slower than the floor, the bare loop (target <= 5x); runner "
            f"{med(x[1] for x in got):,.0f} rows/s, streamed {med(x[0] for x in got):,.0f} rows/s "
            f"(medians of {args.rounds} rounds)"
        )
    this, other = rows["this tree"], rows[args.ref]
    for what, k in (("runner", 1), ("streamed", 0)):
        ratios = [a[k] / b[k] for a, b in zip(this, other, strict=True)]
        print(
            f"this tree / {args.ref}  {what} rows/s median {med(ratios):.3f}x (by round: "
            f"{' '.join(f'{x:.2f}' for x in ratios)}; above 1: this tree is faster)"
        )


if __name__ == "__main__":
    main()
