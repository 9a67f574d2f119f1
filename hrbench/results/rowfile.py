"""Rows read back from a file ``hrb rows ID --format jsonl|csv|parquet`` wrote.

A benchmark exported this way can stand in for a stored one wherever rows are enough: the
baseline of :func:`hrbench.gate` kept as a file in a repository, say. The columns are those of
:class:`~hrbench.records.Row`; ``trace`` and unknown columns are ignored, a column that
is missing takes the field's default (``cluster`` defaults to the item).
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

import msgspec

from hrbench._util.files import open_input
from hrbench.errors import ConfigError
from hrbench.records import ROW_COLUMNS, Row

__all__ = ["ROW_FILE_SUFFIXES", "read_rows"]

ROW_FILE_SUFFIXES = (".jsonl", ".csv", ".parquet")
"""The file endings :func:`read_rows` reads (what ``hrb rows --format`` writes)."""

_NULLABLE = frozenset({"correct", "outcome", "failure_kind", "usd", "usd_provenance"})


def _row(raw: dict[str, Any], where: str, path: str) -> Row:
    rec = {k: v for k, v in raw.items() if k in ROW_COLUMNS}
    for k in _NULLABLE & rec.keys():
        if rec[k] == "":  # CSV writes None as an empty cell
            rec[k] = None
    rec.setdefault("cluster", rec.get("item"))
    rec.setdefault("split", "test")
    for k in ("outcome", "failure_kind"):
        rec.setdefault(k, None)
    try:
        return msgspec.convert(rec, Row, strict=False)
    except msgspec.ValidationError as exc:
        raise ConfigError("path", path, f"{where} is not a row of `hrb rows`: {exc}") from None


def read_rows(path: str | os.PathLike[str]) -> list[Row]:
    r"""The rows of a file ``hrb rows ID --format jsonl|csv|parquet -o FILE`` wrote.

    The format is told by the file's ending (:data:`ROW_FILE_SUFFIXES`); Parquet needs pyarrow
    (the ``pandas`` extra).

    Args:
        path: the file.

    Returns:
        The rows, in the file's order.

    Raises:
        ConfigError: the file cannot be read, has another ending, holds no rows, or a line or
            record that is not a row (naming the line); for a caller confined to the daemon's
            exchange folders (:mod:`hrbench._util.files`), a file outside them.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     p = Path(d, "rows.csv")
        ...     _ = p.write_text("item,arm,run,correct,failure_kind\nq1,ask,1,True,\nq2,ask,1,False,wrong\n")
        ...     [(r.item, r.correct, r.failure_kind) for r in read_rows(p)]
        [('q1', True, None), ('q2', False, 'wrong')]
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in ROW_FILE_SUFFIXES:
        raise ConfigError(
            "path", str(path), f"is not a rows file: its name must end in {', '.join(ROW_FILE_SUFFIXES)}"
        )
    try:
        if suffix == ".parquet":
            try:
                import pyarrow.parquet as pq
            except ImportError:
                raise ConfigError(
                    "path", str(path), "is Parquet, which needs pyarrow: pip install 'hrbench[pandas]'"
                ) from None
            with open_input(p) as raw:
                records = [(f"record {i + 1}", r) for i, r in enumerate(pq.read_table(raw).to_pylist())]
        elif suffix == ".csv":
            with io.TextIOWrapper(open_input(p), newline="", encoding="utf-8") as f:
                records = [(f"line {i + 2}", dict(r)) for i, r in enumerate(csv.DictReader(f))]
        else:
            with io.TextIOWrapper(open_input(p), encoding="utf-8") as f:
                lines = [(i + 1, line) for i, line in enumerate(f) if line.strip()]
            records = []
            for n, line in lines:
                try:
                    records.append((f"line {n}", json.loads(line)))
                except ValueError as exc:
                    raise ConfigError("path", str(path), f"line {n} is not JSON: {exc}") from None
    except OSError as exc:
        raise ConfigError("path", str(path), f"cannot be read: {exc.strerror or exc}") from None
    rows = []
    for where, rec in records:
        if not isinstance(rec, dict):
            raise ConfigError("path", str(path), f"{where} is not a row of `hrb rows` (not an object)")
        rows.append(_row(rec, where, str(path)))
    if not rows:
        raise ConfigError("path", str(path), "holds no rows")
    return rows
