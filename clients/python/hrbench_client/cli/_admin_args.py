"""The arguments of ``hrb``'s keeping commands: housekeeping and ``hrb cache``.

Built with every command's by :mod:`hrbench_client.cli.parser`.
"""

from __future__ import annotations

from typing import Any

from hrbench_client.cli.batch_flags import add_batches_command

__all__ = ["CACHE_STATS", "ID_HELP", "add_cache", "add_housekeeping"]

CACHE_STATS = "entries, requests (distinct), usd_nominal, bytes and recordings"
"""What ``hrb cache stats`` prints (its help says it; a test holds them equal)."""

ID_HELP = "a benchmark's id, a unique prefix of it (4+ characters) or its name (the newest of that name); see `hrb ls`"
"""How every command that takes a benchmark names it."""


def add_housekeeping(sub: Any) -> None:
    """``hrb ls``, ``hrb cancel``, ``hrb rm`` and ``hrb gc``."""
    ls = sub.add_parser(
        "ls", help="stored benchmarks, newest first (id, name, created, status, arms, rows, accuracy)"
    )
    ls.add_argument("--limit", type=int, help="show at most this many (default: all)")
    ls.add_argument("--text", action="store_true", help="print a table instead of JSON lines")

    cancel = sub.add_parser(
        "cancel",
        help="cancel running benchmarks (their rows are kept; `hrb bench --resume ID` finishes them)",
    )
    add_batches_command(sub, ID_HELP, cancel)  # cancel's ids (a benchmark or a batch), and `hrb batches`
    cancel.add_argument(
        "--grace",
        type=float,
        metavar="SECONDS",
        help="how long the requests already sent may take to finish (their replies are kept and "
        "paid once; default: the daemon's HRBENCH_CANCEL_GRACE_S, else 10)",
    )

    rm = sub.add_parser("rm", help="delete stored benchmarks with their rows, traces and lock files")
    rm.add_argument("ids", nargs="+", metavar="ID", help=ID_HELP)

    gc = sub.add_parser(
        "gc",
        help="delete old benchmarks and cache entries, then shrink the database",
        description="Delete benchmarks (rows, traces, ledgers, lock files) and response-cache entries "
        "created before the given age, then VACUUM the database. Running benchmarks are kept, and so is "
        "a lock file a live process holds; the lock files of benchmarks no longer stored go too; "
        "recordings are kept unless --recordings.",
    )
    gc.add_argument(
        "--older-than",
        required=True,
        metavar="AGE",
        help="an age: 30d, 12h, 90m, 45s, 2w (a bare number is days)",
    )
    gc.add_argument("--keep-cache", action="store_true", help="keep response-cache entries")
    gc.add_argument("--recordings", action="store_true", help="delete recorded replies older than AGE too")
    gc.add_argument("--no-vacuum", action="store_true", help="skip VACUUM (the file keeps its size)")


def add_cache(sub: Any) -> None:
    """``hrb cache stats|clear`` and ``hrb recording import|export``."""
    c = sub.add_parser(
        "cache",
        help="response cache: stats, or clear it for fresh draws",
        description="stats prints the response cache's statistics; clear deletes its entries (all, or "
        "those matching every filter given), so the next benchmark sends fresh requests for them. "
        "Recordings and benchmarks are kept (hrb gc deletes old benchmarks).",
    )
    c.add_argument(
        "cache_cmd",
        choices=["stats", "clear"],
        help=f"stats: {CACHE_STATS} of the response cache; clear: delete entries, printing how many",
    )
    c.add_argument("--model", help="clear: only the entries of this model (as asked for)")
    c.add_argument("--arm", help="clear: only the entries of this arm")
    c.add_argument(
        "--older-than", metavar="AGE", help="clear: only entries older than AGE (30d, 12h, 90m, 45s, 2w)"
    )

    rec = sub.add_parser("recording", help="import or export recordings")
    recs = rec.add_subparsers(dest="rec_cmd", required=True)
    ri = recs.add_parser("import", help="load a recording exported as JSON lines")
    ri.add_argument("file", help="the JSON lines file (an absolute path is sent to the daemon)")
    ri.add_argument("--name", help="the recording's name (default: the file name without extension)")
    rx = recs.add_parser("export", help="write a recording as JSON lines")
    rx.add_argument("name", help="the recording's name")
    rx.add_argument("file", help="the file to write (the daemon writes it)")
