"""Rows to files: JSON lines, CSV, Parquet and Inspect scores (``hrb rows ID --format ...``).

The standard library writes JSON lines and CSV; Parquet needs pyarrow, imported only when
asked for, so importing this module (and the client) never loads pyarrow or pandas.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from typing import IO, Any

import msgspec

__all__ = ["BINARY", "FORMATS", "PYARROW_MISSING", "check_format", "inspect_score", "write_rows"]

FORMATS = ("jsonl", "csv", "parquet", "inspect-scores")
"""The row formats, the first the default; ``inspect-scores``: JSON lines of Inspect's sample scores."""

BINARY = frozenset({"parquet"})
"""The formats that are not text: ``hrb rows`` refuses to write them to a terminal."""

PYARROW_MISSING = (
    "Parquet needs pyarrow, which is not installed: pip install 'hrbench[pandas]' "
    "(or the dev extra), or use --format jsonl or csv"
)
"""The message of the ``ImportError`` raised when Parquet is asked of an install without pyarrow."""

_ARROW = {msgspec.inspect.StrType: "string", msgspec.inspect.IntType: "int64",
          msgspec.inspect.FloatType: "float64", msgspec.inspect.BoolType: "bool_"}  # fmt: skip


class _Utf8:
    """A text ``write`` onto a binary file, for :mod:`csv` (which writes ``str``)."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out

    def write(self, text: str) -> int:
        return self.out.write(text.encode("utf-8"))


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, (list, dict)):
        return json.dumps(v, separators=(",", ":"))
    return v


def _arrow_type(pa: Any, t: msgspec.inspect.Type) -> Any:
    if isinstance(t, msgspec.inspect.UnionType):
        t = next(x for x in t.types if not isinstance(x, msgspec.inspect.NoneType))
    name = _ARROW.get(type(t))
    return getattr(pa, name)() if name else pa.string()


def inspect_score(row: Mapping[str, Any], scorer: str | None = None) -> dict[str, Any]:
    """A scored row as Inspect's ``EvalSampleScore`` (``sample_id``, ``value``, ...) plus its ``epoch``.

    ``scorer`` is the name of the scorer that scored the row: ``scorer``, else the row's
    ``scorer``. ``value`` is ``"C"`` (right) or ``"I"`` (wrong), ``answer`` what the scorer saw,
    ``explanation`` the failure kind, ``epoch`` the draw index; ``metadata`` holds the arm,
    cluster, split, run, draw index and USD (``hrb rows ID --format inspect-scores``).

    Raises:
        ValueError: no scorer is named, by ``scorer`` or by the row.

    Example:
        >>> r = inspect_score({"item": "q1", "arm": "a", "run": 1, "draw_index": 1, "correct": False,
        ...                    "outcome": "Lyon", "failure_kind": "wrong", "scorer": "answer_contains"})
        >>> r["sample_id"], r["epoch"], r["scorer"], r["value"], r["explanation"]
        ('q1', 1, 'answer_contains', 'I', 'wrong')
    """
    name = scorer or row.get("scorer")
    if not name:
        raise ValueError(f"row {row.get('ledger_id') or row.get('item')!r}: no scorer names what scored it")
    draw = row.get("draw_index") or 0
    return {
        "sample_id": row["item"],
        "epoch": draw if draw >= 1 else row.get("run", 1),
        "scorer": name,
        "value": "C" if row["correct"] else "I",
        "answer": row.get("outcome"),
        "explanation": row.get("failure_kind"),
        "metadata": {k: row.get(k) for k in ("arm", "cluster", "split", "run", "draw_index", "usd")},
    }


_EXTRA = ("scorer", "trace")
"""Keys of a row dict beyond its Struct's columns that :func:`write_rows` writes, last, in this order."""


def check_format(fmt: str) -> None:
    """Raise now what :func:`write_rows` would raise for ``fmt``, before a file is opened.

    Raises:
        ValueError: ``fmt`` is not one of :data:`FORMATS`.
        ImportError: ``"parquet"`` without pyarrow installed (:data:`PYARROW_MISSING`).
    """
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "parquet":
        _pyarrow()


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:
        raise ImportError(PYARROW_MISSING) from e
    return pa, pq


def write_rows(
    rows: Iterable[Mapping[str, Any]],
    columns: Iterable[str] | type[msgspec.Struct],
    out: IO[bytes],
    fmt: str = "jsonl",
) -> int:
    """Write rows (dicts) to a binary file in one of :data:`FORMATS`; returns how many.

    Args:
        rows: the rows as dicts, e.g. ``msgspec.structs.asdict(row)`` with an optional
            ``"scorer"`` (the name of the scorer that scored it) and ``"trace"`` (a list of
            steps as builtins).
        columns: the column names in order, or the row Struct whose fields name and type them
            (Parquet then gets a typed schema: strings, int64, float64, bool, all nullable).
            A ``scorer`` and a ``trace`` key beyond the columns become the last columns, in
            that order (strings).
        out: a binary file (a file opened ``"wb"``, ``sys.stdout.buffer``).
        fmt: ``"jsonl"`` (one JSON object a line), ``"csv"`` (a header line; ``None`` is an
            empty cell, ``True``/``False`` as Python writes them, a trace as compact JSON) or
            ``"parquet"`` (a trace is a JSON string column), or
            ``"inspect-scores"`` (JSON lines of :func:`inspect_score`, unlabelled rows left out).

    Returns:
        The number of rows (records) written.

    Raises:
        ValueError: ``fmt`` is not one of :data:`FORMATS`.
        ImportError: Parquet without pyarrow installed (:data:`PYARROW_MISSING`).

    Example:
        >>> import io
        >>> buf = io.BytesIO()
        >>> write_rows([{"item": "q1", "correct": True, "usd": None}], ["item", "correct", "usd"], buf, "csv")
        1
        >>> buf.getvalue().decode().splitlines()
        ['item,correct,usd', 'q1,True,']
    """
    check_format(fmt)
    if fmt == "inspect-scores":  # Inspect's EvalSampleScore records, one per scored row
        rows, columns, fmt = (inspect_score(r) for r in rows if r.get("correct") is not None), [], "jsonl"
    types: dict[str, msgspec.inspect.Type] = {}
    if isinstance(columns, type):
        info = msgspec.inspect.type_info(columns)
        assert isinstance(info, msgspec.inspect.StructType)
        types = {f.name: f.type for f in info.fields}
        names = list(types)
    else:
        names = list(columns)
    data = list(rows)
    for extra in _EXTRA:
        if extra not in names and any(extra in r for r in data):
            names.append(extra)
    if fmt == "jsonl":
        enc = msgspec.json.Encoder()
        for r in data:
            out.write(enc.encode(r) + b"\n")
    elif fmt == "csv":
        # not a TextIOWrapper: one that fails (a closed pipe) would close `out` when collected
        w = csv.writer(_Utf8(out), lineterminator="\n")
        w.writerow(names)
        w.writerows([_cell(r.get(c)) for c in names] for r in data)
    else:
        pa, pq = _pyarrow()
        fields = [
            pa.field(c, _arrow_type(pa, types[c]) if c in types else pa.string(), nullable=True)
            for c in names
        ]
        cols = {c: [(_cell(r.get(c)) or None) if c == "trace" else r.get(c) for r in data] for c in names}
        pq.write_table(pa.table(cols, schema=pa.schema(fields)), out)
    return len(data)
