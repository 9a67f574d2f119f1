"""The arguments of ``hrb grades put|next|list`` (built with every command's; run by :mod:`hrbench_client.cli.grades`)."""

from __future__ import annotations

from typing import Any

__all__ = ["add_grades"]


def add_grades(sub: Any) -> None:
    """Add ``hrb grades`` and its subcommands to ``sub``."""
    g = sub.add_parser(
        "grades",
        help="human grades of a judged benchmark's rows: put them, draw the rows to grade next, list them",
    )
    gs = g.add_subparsers(dest="grades_cmd", required=True)
    put = gs.add_parser(
        "put",
        help="keep human grades from a CSV or JSON-lines file (item, arm, run, correct; grader, pi optional)",
    )
    put.add_argument("id", help="the benchmark's id, id prefix or name")
    put.add_argument(
        "file", help="the grades file (.csv, or JSON lines); rows with an empty correct are skipped"
    )
    put.add_argument("--grader", help="the grader of the grades that name none (default: human)")
    nx = gs.add_parser(
        "next",
        help="the rows whose grades would narrow the intervals most, as a CSV to fill in (correct column empty)",
    )
    nx.add_argument("id", help="the benchmark's id, id prefix or name")
    nx.add_argument("-k", type=int, default=20, help="rows to draw (default 20)")
    nx.add_argument("--seed", type=int, default=0, help="the draw's seed (default 0)")
    nx.add_argument("-o", "--output", metavar="FILE", help="write the CSV here (default: stdout)")
    nx.add_argument(
        "--format", choices=["csv", "jsonl"], default="csv", help="csv (to fill in; default) or jsonl"
    )
    ls = gs.add_parser("list", help="the human grades kept for a benchmark's rows, as JSON lines")
    ls.add_argument("id", help="the benchmark's id, id prefix or name")
