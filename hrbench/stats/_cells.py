"""How a report's numbers read as table cells, and the aligned text grid and Markdown table they fill.

One rule for every section of a report (the arms, cost, consistency, paired differences, the
frontier, the human-graded estimates): a number has 3 decimals, an interval is ``[lo, hi]``, a
missing value is ``-``, a p-value under 0.001 is ``<0.001``; text columns are left-aligned and
number columns right-aligned.

Example:
    >>> number(0.5), interval(0.25, None), p_text(0.0004)
    ('0.500', '-', '<0.001')
    >>> text_grid(["arm", "accuracy"], [["a", "0.500"], ["long", "1.000"]])
    [' arm   accuracy', ' a        0.500', ' long     1.000']
"""

from __future__ import annotations

from hrbench.records import usd_text
from hrbench.stats._records import ArmReport, Comparison
from hrbench.stats._unscored import UNSCORED_MARK

__all__ = [
    "interval",
    "md_cell",
    "md_table",
    "number",
    "p_text",
    "text_grid",
    "unscored_mark",
    "usd_interval",
]


def number(v: float | None, digits: int = 3) -> str:
    """``v`` with ``digits`` decimals, ``-`` for ``None``."""
    return "-" if v is None else f"{v:.{digits}f}"


def interval(lo: float | None, hi: float | None, digits: int = 3) -> str:
    """``[lo, hi]`` with ``digits`` decimals, ``-`` when either end is ``None``."""
    return "-" if lo is None or hi is None else f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def usd_interval(lo: float | None, hi: float | None) -> str:
    """A USD interval, each end as :func:`~hrbench.records.usd_text` prints it."""
    return "-" if lo is None or hi is None else f"[{usd_text(lo)}, {usd_text(hi)}]"


def p_text(v: float | None) -> str:
    """A p-value: 3 decimals, ``<0.001`` below that, ``-`` for ``None``."""
    if v is None:
        return "-"
    return "<0.001" if v < 0.001 else f"{v:.3f}"


def unscored_mark(rec: ArmReport | Comparison, escape: str = "") -> str:
    """The ``*`` beside a number that rests on runs never scored, or that left them out (:mod:`._unscored`)."""
    return escape + UNSCORED_MARK if rec.unscored_note else ""


def text_grid(header: list[str], rows: list[list[str]]) -> list[str]:
    """The header and rows as aligned lines: the first column left-aligned, the others right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    fmt = [
        f"{h:<{w}}" if i == 0 else f"{h:>{w}}" for i, (h, w) in enumerate(zip(header, widths, strict=True))
    ]
    out = [" " + "  ".join(fmt).rstrip()]
    for r in rows:
        cells = [
            f"{c:<{w}}" if i == 0 else f"{c:>{w}}" for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ]
        out.append(" " + "  ".join(cells).rstrip())
    return out


def md_cell(text: str) -> str:
    """``text`` fit for a Markdown table cell: pipes escaped, newlines made spaces."""
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A GitHub-flavoured Markdown table: the first column left-aligned, the others right-aligned."""
    out = ["| " + " | ".join(md_cell(h) for h in header) + " |"]
    out.append("|" + "|".join([":---", *("---:" for _ in header[1:])]) + "|")
    out += ["| " + " | ".join(md_cell(c) for c in r) + " |" for r in rows]
    return out
