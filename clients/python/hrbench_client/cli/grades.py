"""``hrb grades``: human grades of a judged benchmark's rows (put, draw the next to grade, list).

``hrb grades next ID -k 20 -o todo.csv`` writes the rows to grade as CSV (``arm``, ``item``,
``run``, ``cluster``, ``judge``, ``pi``, the ``label`` and the arm's ``output``, and an empty
``correct`` column); fill ``correct`` in (``right``/``wrong``, ``1``/``0``, ``true``/``false``)
and ``hrb grades put ID todo.csv`` keeps them (rows left empty are skipped). The report of the
benchmark (``hrb report ID``) then has the human-graded PPI++ section.
"""

from __future__ import annotations

import csv
import json
import os
import sys

from hrbench_client.cli._common import _client, _out
from hrbench_client.cli.exit_codes import EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

COLUMNS = ("arm", "item", "run", "cluster", "judge", "pi", "label", "output", "correct")
"""The columns of ``hrb grades next``'s CSV (``correct`` left empty, to fill in)."""


def _text(v: Any) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _write_next(rows: list[Any], out: Any, fmt: str) -> None:
    if fmt == "jsonl":
        import msgspec

        for r in rows:
            out.write(msgspec.json.encode(r).decode() + "\n")
        return
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow(
            [r.arm, r.item, r.run, r.cluster, r.judge, repr(r.pi), _text(r.label), _text(r.output), ""]
        )


def cmd_grades(args: argparse.Namespace) -> int:
    with _client(args) as hb:
        if args.grades_cmd == "put":
            _out(hb.grades_put(args.id, path=os.path.abspath(args.file), grader=args.grader))
        elif args.grades_cmd == "next":
            got = hb.grades_next(args.id, args.k, args.seed)
            if args.output:
                with open(args.output, "w", encoding="utf-8", newline="") as f:
                    _write_next(got.rows, f, args.format)
                print(
                    f"{len(got.rows)} row(s) to grade written to {args.output} ({got.n_graded} graded so far); "
                    f"fill in `correct`, then: hrb grades put {args.id} {args.output}",
                    file=sys.stderr,
                )
            else:
                _write_next(got.rows, sys.stdout, args.format)
        else:
            for g in hb.grades_get(args.id).grades:
                _out(g)
    return EXIT_OK
