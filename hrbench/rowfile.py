"""Rows read back from a file ``hrb rows ID --format jsonl|csv|parquet`` wrote.

A benchmark exported this way can stand in for a stored one wherever rows are enough: the
baseline of :func:`hrbench.gate` kept as a file in a repository, say. The columns are those of
:class:`~hrbench.records.Row`; ``trace`` and unknown columns are ignored, a column that
is missing takes the field's default (``cluster`` defaults to the item). ``item``, ``arm``,
``run`` and ``correct`` have no default: a file without one of them is refused by name.

Whatever a file holds, reading it ends in the rows or in a :class:`~hrbench.errors.ConfigError`
naming the file and the place in it (``line 3``, ``record 7``): bytes that are not UTF-8, a
line that is not JSON (or nested too deeply), CSV the ``csv`` module refuses, a file that is not
Parquet, an empty file, a record that is not an object or not a row. No other error escapes
(one boundary maps them), so a bad CI baseline is bad input (``hrb gate`` exit 2), never an internal
error (shared case H4-10; random bytes and a text file named ``.parquet`` included).
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from hrbench._util.files import open_input, text_lines
from hrbench.errors import ConfigError
from hrbench.records import ROW_COLUMNS, Row

__all__ = ["ROW_FILE_SUFFIXES", "ROW_REQUIRED", "read_rows"]

ROW_FILE_SUFFIXES = (".jsonl", ".csv", ".parquet")
"""The file endings :func:`read_rows` reads (what ``hrb rows --format`` writes)."""

ROW_REQUIRED = ("item", "arm", "run", "correct")
"""The columns a rows file must have (every other column has a default)."""

_NULLABLE = frozenset({"correct", "outcome", "failure_kind", "usd", "usd_provenance"})
_HINT = "a rows file is what `hrb rows ID -o FILE` writes"
_NEEDED = f"a row needs {', '.join(ROW_REQUIRED)}"


def _missing(names: Any) -> list[str]:
    return [c for c in ROW_REQUIRED if c not in names]


def _names(columns: Any) -> str:
    """A file's column names as an error shows them (each quoted; cut after 200 characters)."""
    text = ", ".join(repr(str(c)) for c in columns)
    return text if len(text) <= 200 else text[:197] + "..."


def _row(raw: dict[str, Any], where: str, field: str, path: str) -> Row:
    if missing := _missing(raw):
        raise ConfigError(
            field, path, f"{where} is not a row of `hrb rows`: it has no {', '.join(missing)} ({_NEEDED})"
        )
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
        raise ConfigError(field, path, f"{where} is not a row of `hrb rows`: {exc}") from None


def _json_lines(f: BinaryIO, field: str, path: str) -> list[tuple[str, Any]]:
    records = []
    for n, line in enumerate(text_lines(f, path, field), 1):
        if not line.strip():
            continue
        try:
            records.append((f"line {n}", json.loads(line)))
        except RecursionError:
            raise ConfigError(field, path, f"line {n} is JSON nested too deeply to be a row") from None
        except ValueError as exc:
            raise ConfigError(field, path, f"line {n} is not JSON: {exc}; {_HINT}") from None
    return records


def _csv(f: BinaryIO, field: str, path: str) -> list[tuple[str, Any]]:
    reader = csv.DictReader(text_lines(f, path, field))
    try:
        if reader.fieldnames is not None and (missing := _missing(reader.fieldnames)):
            raise ConfigError(
                field,
                path,
                f"line 1 (the header) has no column {', '.join(missing)} ({_NEEDED}; its columns: "
                f"{_names(reader.fieldnames)}); {_HINT}",
            )
        return [(f"line {reader.line_num}", dict(r)) for r in reader]
    except csv.Error as exc:
        raise ConfigError(field, path, f"line {reader.line_num} is not CSV: {exc}") from None


def _parquet(p: BinaryIO, field: str, path: str) -> list[tuple[str, Any]]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(
            field, path, "is Parquet, which needs pyarrow: pip install 'hrbench[pandas]'"
        ) from None
    try:
        table = pq.read_table(p)
        names, records = table.column_names, table.to_pylist()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise ConfigError(field, path, f"is not a Parquet file pyarrow can read ({exc}); {_HINT}") from None
    if missing := _missing(names):
        raise ConfigError(
            field, path, f"has no column {', '.join(missing)} ({_NEEDED}; its columns: {_names(names)})"
        )
    return [(f"record {i + 1}", r) for i, r in enumerate(records)]


@contextlib.contextmanager
def _foreign(field: str, path: str) -> Iterator[None]:
    """The one boundary where reading a file's errors become a :class:`ConfigError` naming it."""
    try:
        yield
    except ConfigError:
        raise
    except OSError as exc:
        raise ConfigError(field, path, f"cannot be read: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:  # a reader's own refusal of the bytes
        raise ConfigError(field, path, f"cannot be read as rows: {type(exc).__name__}: {exc}") from None


def read_rows(path: str | os.PathLike[str], field: str = "path") -> list[Row]:
    r"""The rows of a file ``hrb rows ID --format jsonl|csv|parquet -o FILE`` wrote.

    The format is told by the file's ending (:data:`ROW_FILE_SUFFIXES`); Parquet needs pyarrow
    (the ``pandas`` extra).

    Args:
        path: the file.
        field: the name errors give the file (``"baseline"`` for a gate's baseline).

    Returns:
        The rows, in the file's order.

    Raises:
        ConfigError: the file cannot be read, has another ending, is empty, holds no rows, lacks
            one of :data:`ROW_REQUIRED`, holds bytes that are not UTF-8, or a line or record that
            is not a row (naming the line); a ``.parquet`` file that is not Parquet.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     p = Path(d, "rows.csv")
        ...     _ = p.write_text("item,arm,run,correct,failure_kind\nq1,ask,1,True,\nq2,ask,1,False,wrong\n")
        ...     [(r.item, r.correct, r.failure_kind) for r in read_rows(p)]
        [('q1', True, None), ('q2', False, 'wrong')]
        >>> with tempfile.TemporaryDirectory() as d:
        ...     p = Path(d, "rows.parquet")
        ...     _ = p.write_text("not Parquet")
        ...     try:
        ...         read_rows(p, "baseline")
        ...     except ConfigError as exc:
        ...         print(str(exc)[:48])
        baseline: is not a Parquet file pyarrow can read
    """
    p, shown = Path(path), str(path)
    suffix = p.suffix.lower()
    if suffix not in ROW_FILE_SUFFIXES:
        raise ConfigError(
            field, shown, f"is not a rows file: its name must end in {', '.join(ROW_FILE_SUFFIXES)}"
        )
    with _foreign(field, shown), open_input(p, field) as f:
        if os.fstat(f.fileno()).st_size == 0:
            raise ConfigError(field, shown, f"is empty (0 bytes); {_HINT}")
        if suffix == ".parquet":
            records = _parquet(f, field, shown)
        else:
            records = (_csv if suffix == ".csv" else _json_lines)(f, field, shown)
    rows = []
    for where, rec in records:
        if not isinstance(rec, dict):
            what = type(rec).__name__.replace("dict", "object").replace("list", "array")
            raise ConfigError(
                field, shown, f"{where} is not a row of `hrb rows` (a JSON {what}, not an object); {_HINT}"
            )
        rows.append(_row(rec, where, field, shown))
    if not rows:
        raise ConfigError(field, shown, f"holds no rows; {_HINT}")
    return rows
