"""Python values printed as R prints them, so a test compares a seed's printed example verbatim.

The seeds document an R original; their examples print R values (``[1] TRUE``, a named list, a
data frame). These functions print the Python value the mapped call returns in R's notation,
following R's ``print.default`` and ``print.data.frame`` for the shapes the seeds print: atomic
vectors (logical, character, numeric, with ``NA``), named lists of them, and data frames. A
printout hrbench owns (``print(bench)``, an evaluation's summary) is compared as it is, without
these.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

_WIDTH = 80
"""R's default ``options(width)``; the seeds' vectors fit on one line of it."""


def _kind(values: Sequence[Any]) -> str:
    kinds = {
        "logical" if isinstance(v, bool) else "numeric" if isinstance(v, int | float) else "character"
        for v in values
        if v is not None
    }
    if len(kinds) > 1:
        raise TypeError(f"an R vector holds one type; got {sorted(kinds)} in {values!r}")
    return kinds.pop() if kinds else "logical"  # an all-NA vector is logical in R


def _numbers(values: Sequence[float | int | None], digits: int = 7) -> list[str]:
    """R's common format of a numeric vector: the fewest decimals that show every element to ``digits`` significant digits."""
    decimals = 0
    for v in values:
        if v is not None and math.isfinite(float(v)):
            target = float(f"{float(v):.{digits}g}")
            decimals = max(decimals, next(d for d in range(16) if round(target, d) == target))
    return ["NA" if v is None else f"{float(v):.{decimals}f}" for v in values]


def atoms(values: Sequence[Any], *, quote: bool = True, na_string: str = "NA") -> list[str]:
    """Each element as R shows it in a vector: ``TRUE``, ``"paris"``, ``1``, ``0.75``, ``NA``."""
    kind = _kind(values)
    if kind == "logical":
        return [na_string if v is None else ("TRUE" if v else "FALSE") for v in values]
    if kind == "numeric":
        return _numbers(values)
    return [na_string if v is None else (f'"{v}"' if quote else str(v)) for v in values]


def vector(values: Sequence[Any]) -> str:
    """An atomic vector as ``print()`` shows it: ``[1] 1 1 1 0`` (one line; longer is not needed here)."""
    shown = atoms(values)
    width = max((len(s) for s in shown), default=0)
    line = "[1] " + " ".join(s.rjust(width) for s in shown) if shown else "logical(0)"
    if len(line) > _WIDTH:
        raise ValueError("a vector wider than one R line: not a shape the seeds print")
    return line


def named_list(items: Mapping[str, Any]) -> str:
    """A named list as ``print()`` shows it: ``$name``, the element, a blank line, for each."""
    lines: list[str] = []
    for name, value in items.items():
        lines += [f"${name}", *show(value).splitlines(), ""]
    return "\n".join(lines)  # ends in the last element's blank line


def data_frame(columns: Mapping[str, Sequence[Any]], n: int | None = None) -> str:
    """A data frame as ``print()`` (or ``head(df, n)``) shows it: row names 1..n left-aligned, cells right-aligned."""
    names = list(columns)
    rows = len(next(iter(columns.values()))) if names else 0
    shown = rows if n is None else min(n, rows)
    cells = {}
    for name in names:
        values = list(columns[name])
        kind = _kind(values)  # the whole column's type, as the frame holds it
        cells[name] = atoms(values, quote=False, na_string="<NA>" if kind == "character" else "NA")[:shown]
    row_names = [str(i + 1) for i in range(shown)]
    rn_width = max((len(r) for r in row_names), default=0)
    widths = {name: max(len(name), *(len(c) for c in cells[name])) for name in names}
    lines = [" " * rn_width + "".join(" " + name.rjust(widths[name]) for name in names)]
    for i, rn in enumerate(row_names):
        lines.append(rn.ljust(rn_width) + "".join(" " + cells[name][i].rjust(widths[name]) for name in names))
    return "\n".join(lines)


def show(value: Any) -> str:
    """``value`` as R's ``print()`` shows it: a Struct or mapping as a named list, a scalar or list as a vector."""
    if isinstance(value, msgspec.Struct):
        value = msgspec.structs.asdict(value)
    if isinstance(value, Mapping):
        return named_list(value)
    if isinstance(value, list | tuple):
        return vector(value)
    return vector([value])
