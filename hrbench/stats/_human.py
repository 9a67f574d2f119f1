"""The report's human-graded section: PPI++ estimates beside the judge-only and human-only ones, as text.

:func:`human_section` builds it (:func:`hrbench.stats.ppi_estimate` on the rows the report
read, its judge-only intervals taken from the report's own records); :func:`human_lines` and
:func:`human_text` show it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

import msgspec

from hrbench.stats._cells import interval, number
from hrbench.stats._ppi import HumanSection, ppi_estimate

__all__ = ["human_lines", "human_markdown", "human_section", "human_text"]


def human_section(bench: Any, grades: Any, level: float, rep: Any = None) -> dict[str, Any] | None:
    """The human-graded section of a report on ``bench`` (its grades, or ``grades``), or ``None`` without grades.

    Args:
        bench: the rows the report read.
        grades: the human grades; ``None``: ``bench.grades``.
        level: the intervals' level.
        rep: the report (its arms' and comparisons' intervals are the judge-only ones shown).
    """
    grades = getattr(bench, "grades", None) if grades is None else grades
    if not grades:
        return None
    judge = None if rep is None else {"arms": rep.arms, "comparisons": rep.comparisons}
    s = ppi_estimate(bench, grades, level, judge=judge)
    return None if s is None else msgspec.to_builtins(s)


def _table(s: HumanSection) -> list[list[str]]:
    out = []
    for e in [*s.arms, *s.pairs]:
        name = e.arm_a if e.arm_b is None else f"{e.arm_a} - {e.arm_b}"
        out.append(
            [
                name,
                number(e.estimate),
                interval(e.ci_low, e.ci_high),
                e.method,
                interval(e.judge_low, e.judge_high),
                interval(e.human_low, e.human_high),
                str(e.n_graded),
                "-" if e.worth is None else f"{e.worth:.0f}",
            ]
        )
    return out


_HEAD = ["arm / pair", "estimate", "CI", "method", "judge-only CI", "human-only CI", "grades", "worth"]


def human_lines(section: HumanSection | Mapping[str, Any]) -> list[str]:
    """The section as text lines.

    Example:
        >>> from hrbench.stats._ppi import GradedEstimate
        >>> s = HumanSection(level=0.95, n_grades=30, graders=["ann"], unmatched=0, kappa=0.8, agree=28,
        ...     fallback=False, arms=[GradedEstimate(arm_a="a", estimate=0.7, ci_low=0.6, ci_high=0.8,
        ...     n_graded=30, worth=61.2)], pairs=[], note="How to read it.")
        >>> print(human_lines(s)[0])
        Human-graded (PPI++, 95%): 30 grade(s) by ann; the judge agrees with them on 28 (kappa 0.800)
    """
    s = section if isinstance(section, HumanSection) else msgspec.convert(section, HumanSection)
    kappa = "undefined" if s.kappa is None else f"{s.kappa:.3f}"
    lines = [
        f"Human-graded (PPI++, {s.level:.0%}): {s.n_grades} grade(s) by {', '.join(s.graders) or '-'}; "
        f"the judge agrees with them on {s.agree} (kappa {kappa})"
    ]
    rows = _table(s)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_HEAD)]
    lines.append(
        "  "
        + "  ".join(
            h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(_HEAD, widths, strict=True))
        ).rstrip()
    )
    for r in rows:
        lines.append(
            "  "
            + "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
            ).rstrip()
        )
    for e in [*s.arms, *s.pairs]:
        if e.note and not s.fallback:  # on fallback the section's note says it once
            name = e.arm_a if e.arm_b is None else f"{e.arm_a} - {e.arm_b}"
            lines.append(f"  {name}: {e.note}.")
    if s.unmatched:
        lines.append(f"  {s.unmatched} grade(s) name a row this benchmark does not have: not used.")
    lines += textwrap.wrap(s.note, width=100, initial_indent="  ", subsequent_indent="  ")
    return lines


def human_markdown(section: HumanSection | Mapping[str, Any]) -> list[str]:
    """The section as Markdown lines."""
    s = section if isinstance(section, HumanSection) else msgspec.convert(section, HumanSection)
    lines = human_lines(s)
    out = ["", f"**{lines[0]}**", "", "| " + " | ".join(_HEAD) + " |", "|:---|" + "---:|" * (len(_HEAD) - 1)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in _table(s)]
    out += ["", *(f"- {ln.strip()}" for ln in lines[2 + len(_table(s)) :])]
    return out


def human_text(section: Mapping[str, Any] | None, markdown: bool = False) -> str:
    """What the report's text (or Markdown) ends with: its human-graded section, or nothing."""
    if section is None:
        return ""
    return "\n".join(human_markdown(section)) + "\n" if markdown else "\n" + "\n".join(human_lines(section))


def human_pair(bench: Any, grades: Any, level: float, comparison: Any) -> dict[str, Any] | None:
    """The PPI++ estimate of one comparison's difference (``arm_a - arm_b``), or ``None`` without grades."""
    grades = getattr(bench, "grades", None) if grades is None else grades
    if not grades:
        return None
    keep = _rows_of(bench, (comparison.arm_a, comparison.arm_b))
    s = ppi_estimate(keep, grades, level, judge={"arms": [], "comparisons": [comparison]})
    if s is None:
        return None
    return msgspec.to_builtins(s.pairs[0]) if s.pairs else None


def _rows_of(bench: Any, arms: tuple[str, str]) -> list[dict[str, Any]]:
    """The rows of two arms as dicts, ``arms[0]``'s first (so the pair is ``arms[0] - arms[1]``)."""
    from hrbench.stats._ppi_rows import column

    cols = ("cluster", "item", "arm", "run", "correct", "failure_kind", "usd", "reportable")
    values = {c: column(bench, c) for c in cols}
    out = [dict(zip(cols, v, strict=True)) for v in zip(*values.values(), strict=True) if v[2] in arms]
    return sorted(out, key=lambda r: r["arm"] != arms[0])
