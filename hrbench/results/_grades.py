"""Human grades of a benchmark's rows: read from CSV or JSONL, checked, and kept with the benchmark.

A grade says whether a person judged one row's output right: ``item``, ``arm``, ``run`` and
``correct``, with the ``grader``'s id (``"human"`` when none is given) and, for a row drawn by
:func:`hrbench.next_grades`, the probability ``pi`` it had of being drawn (kept with the grade:
it marks the grade as drawn by stratum, which the estimate weights). The report and comparisons
of a benchmark with grades give each arm's accuracy and each paired difference as humans would
grade them (:mod:`hrbench.stats._ppi`; the guide: ``docs/guides/human-grades.md``).

A grades file is CSV with a header row, or JSON lines, with the columns above (others, such as
the ``cluster`` and ``judge`` that :func:`hrbench.next_grades` writes, are ignored). ``correct``
is ``true``/``false``, ``1``/``0``, ``yes``/``no`` or ``right``/``wrong`` (any case); an empty
one (a row of a ``next_grades`` file not graded yet) is skipped. Whatever a file holds, reading
it ends in the grades or in a :class:`~hrbench.errors.ConfigError` naming the file and its line.
"""

from __future__ import annotations

import copy
import csv
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec

from hrbench._util.files import open_input, text_lines
from hrbench.errors import ConfigError
from hrbench.records import Grade

__all__ = ["GRADE_COLUMNS", "MAX_GRADES", "Grade", "GradedRows", "human_grades", "read_grades"]

GRADE_COLUMNS = ("item", "arm", "run", "correct")
"""The columns every grade needs (``grader`` and ``pi`` are optional)."""

MAX_GRADES = 1_000_000
"""The most grades one file or call may hold (a larger one is refused, not read into memory)."""

_MAX_LINE = 1 << 20  # characters of one line of a grades file
_TRUE = frozenset({"true", "1", "yes", "right", "y", "t"})
_FALSE = frozenset({"false", "0", "no", "wrong", "n", "f"})


class GradedRows(msgspec.Struct, kw_only=True):
    """Rows with their human grades (what :func:`human_grades` returns for bare rows).

    Attributes:
        rows: the rows (:class:`~hrbench.records.Row`).
        grades: the grades (:class:`~hrbench.records.Grade`).
        scorer_name: the scorer's name (a judge's starts with ``judge``).
    """

    rows: list[Any]
    grades: list[Grade]
    scorer_name: str = "judge"


def _verdict(value: Any, where: str, field: str) -> bool | None:
    """A grade's ``correct`` as a bool; ``None`` when empty (not graded yet)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value in (0, 1):
        return bool(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(
        field, str(value)[:80], f"{where}: `correct` must be true or false (or 1/0, right/wrong)"
    )


def _grade(raw: Mapping[str, Any], where: str, field: str, grader: str | None) -> Grade | None:
    """One grade from a record of a file or a call; ``None`` when its ``correct`` is empty."""
    missing = [c for c in GRADE_COLUMNS if c not in raw]
    if missing:
        raise ConfigError(
            field, where, f"{where} has no {', '.join(missing)} (a grade needs {', '.join(GRADE_COLUMNS)})"
        )
    correct = _verdict(raw["correct"], where, field)
    if correct is None:
        return None
    run = raw["run"]
    try:
        if isinstance(run, bool) or (isinstance(run, float) and not run.is_integer()):
            raise ValueError
        run = int(run)
    except (TypeError, ValueError):
        raise ConfigError(field, str(raw["run"])[:80], f"{where}: `run` must be a whole number") from None
    pi = raw.get("pi")
    if pi in ("", None):
        pi = None
    else:
        try:
            pi = float(pi)
        except (TypeError, ValueError):
            pi = math.nan
        if not 0 < pi <= 1:
            raise ConfigError(
                field, str(raw.get("pi"))[:80], f"{where}: `pi` must be a probability in (0, 1]"
            )
    who = raw.get("grader") or grader or "human"
    for name in ("item", "arm"):
        if not isinstance(raw[name], (str, int)) or isinstance(raw[name], bool) or str(raw[name]) == "":
            raise ConfigError(field, str(raw[name])[:80], f"{where}: `{name}` must be a non-empty string")
    return Grade(
        item=str(raw["item"]), arm=str(raw["arm"]), run=run, correct=correct, grader=str(who)[:200], pi=pi
    )


def _records(path: Path, shown: str, field: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(where, record)`` of each line of a CSV or JSONL grades file.

    The file is opened as :mod:`hrbench._util.files` says (over TCP, only inside the exchange
    folders).
    """
    try:
        raw = open_input(path, field)
    except OSError as exc:
        raise ConfigError(field, shown, f"cannot be read: {exc.strerror or exc}") from None
    with raw:
        text = text_lines(raw, shown, field)  # Excel's byte-order mark is dropped
        try:
            if path.suffix.lower() == ".csv":
                csv.field_size_limit(_MAX_LINE)
                reader = csv.DictReader(text)
                for rec in reader:
                    yield f"line {reader.line_num}", rec
                return
            for n, line in enumerate(text, 1):
                if len(line) > _MAX_LINE:
                    raise ConfigError(field, shown, f"line {n} is longer than {_MAX_LINE} characters")
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except (json.JSONDecodeError, RecursionError):
                    raise ConfigError(field, shown, f"line {n} is not JSON") from None
                if not isinstance(rec, dict):
                    raise ConfigError(field, shown, f"line {n} is not a JSON object (a grade)")
                yield f"line {n}", rec
        except csv.Error as exc:
            raise ConfigError(field, shown, f"is not CSV the reader can read: {exc}") from None


def read_grades(
    path: str | os.PathLike[str], *, grader: str | None = None, field: str = "grades"
) -> list[Grade]:
    r"""The grades of a CSV or JSON-lines file (by its ending: ``.csv``, else JSON lines).

    Args:
        path: the file.
        grader: the grader of the rows that name none (``"human"`` when ``None``).
        field: the name errors give the file.

    Returns:
        The grades, in the file's order (rows whose ``correct`` is empty are skipped).

    Raises:
        ConfigError: the file cannot be read, is not UTF-8, a line is not a grade (naming it),
            or it holds more than :data:`MAX_GRADES` grades.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     p = Path(d, "grades.csv")
        ...     _ = p.write_text("item,arm,run,correct\nq1,ask,1,right\nq2,ask,1,\nq3,ask,1,0\n")
        ...     [(g.item, g.correct) for g in read_grades(p)]
        [('q1', True), ('q3', False)]
    """
    p, shown = Path(path), str(path)
    out = []
    for where, rec in _records(p, shown, field):
        g = _grade(rec, f"{shown} {where}", field, grader)
        if g is not None:
            out.append(g)
            if len(out) > MAX_GRADES:
                raise ConfigError(field, shown, f"holds more than {MAX_GRADES} grades")
    return out


def as_grades(grades: Any, *, grader: str | None = None, field: str = "grades") -> list[Grade]:
    """Grades from a file path, a frame, or rows of ``item``/``arm``/``run``/``correct`` (dicts or objects).

    Raises:
        ConfigError: a grade that is not one (naming it), more than :data:`MAX_GRADES`.
    """
    if isinstance(grades, (str, os.PathLike)):
        return read_grades(grades, grader=grader, field=field)
    if hasattr(grades, "to_dict") and hasattr(grades, "columns"):  # a pandas frame
        grades = grades.to_dict("records")
    elif hasattr(grades, "to_dicts"):  # a polars frame
        grades = grades.to_dicts()
    out = []
    for i, g in enumerate(grades):
        rec = (
            g
            if isinstance(g, Mapping)
            else {c: getattr(g, c) for c in (*GRADE_COLUMNS, "grader", "pi") if hasattr(g, c)}
        )
        got = _grade(rec, f"grade {i}", field, grader)
        if got is not None:
            out.append(got)
        if len(out) > MAX_GRADES:
            raise ConfigError(field, "grades", f"holds more than {MAX_GRADES} grades")
    return out


def merge(old: Iterable[Grade], new: Iterable[Grade]) -> list[Grade]:
    """``old`` with ``new`` laid over it: a row graded again by the same grader keeps the newer grade."""
    kept = {(g.arm, g.item, g.run, g.grader): g for g in old}
    kept.update({(g.arm, g.item, g.run, g.grader): g for g in new})
    return list(kept.values())


def human_grades(bench: Any, grades: Any, *, grader: str | None = None) -> Any:
    """The benchmark with human grades for some of its rows (they add to any it has).

    Args:
        bench: a :class:`~hrbench.Bench` (or its rows) whose rows a judge scored.
        grades: a CSV or JSON-lines file, a frame, or rows of ``item``, ``arm``, ``run`` and
            ``correct`` (dicts or objects), with ``grader`` and ``pi`` optional.
        grader: the grader of the grades that name none.

    Returns:
        A copy of ``bench`` with ``grades`` (a list of :class:`~hrbench.records.Grade`); for bare rows a
        :class:`GradedRows`. Its :func:`hrbench.report` and :func:`hrbench.compare` then give
        PPI++ estimates beside the judge-only and human-only ones.

    Raises:
        ConfigError: a grade that is not one, or one for a row the benchmark does not have
            (naming its arm, item and run).

    Example:
        >>> from hrbench.records import Row
        >>> rows = [Row(cluster="c", item="q1", arm="a", run=1, split="test", correct=True,
        ...             outcome="correct", failure_kind=None)]
        >>> g = human_grades(rows, [{"item": "q1", "arm": "a", "run": 1, "correct": False}])
        >>> [(x.item, x.correct, x.grader) for x in g.grades]
        [('q1', False, 'human')]
    """
    new = as_grades(grades, grader=grader)
    rows = getattr(bench, "rows", bench)
    if hasattr(rows, "columns"):
        raise ConfigError("bench", type(bench).__name__, "give the benchmark or its rows, not a frame")
    rows = list(rows)
    have = {(_get(r, "arm"), _get(r, "item"), int(_get(r, "run"))) for r in rows}
    for g in new:
        if (g.arm, g.item, g.run) not in have:
            raise ConfigError(
                "grades",
                f"{g.arm}/{g.item}/{g.run}",
                "grades a row the benchmark does not have (arm, item, run)",
            )
    kept = merge(getattr(bench, "grades", None) or [], new)
    if isinstance(bench, GradedRows) or not hasattr(bench, "rows"):
        return GradedRows(rows=rows, grades=kept, scorer_name=getattr(bench, "scorer_name", "judge"))
    out = copy.copy(bench)
    out.grades = kept
    return out


def _get(r: Any, name: str) -> Any:
    return r[name] if isinstance(r, Mapping) else getattr(r, name)
