"""What a report says of runs that were never scored: runs the budget stopped or that ended in an error.

Rule (seed 002, ``budget_stop``: a run the governor stopped counts wrong; the same for a run
that ended in an error): an arm's accuracy and its interval keep counting such runs wrong, and
the report flags them wherever they are printed (``ArmReport.unscored_note``; a ``*`` beside
the interval in the text and Markdown tables). They measure the budget, not the arm: an arm
the budget stopped after 13 calls has accuracy near 0 whatever its answers.

A paired difference never rests on them: when either arm has an unscored run on an item both
ran, the difference is computed only over the items on which both arms have every run scored,
and says so (``Comparison.unscored_note``; ``n_items`` counts those items). With fewer than 2
such items, or all of them in one cluster, it has no interval and no p-value, and the note says
why. See docs/guides/budgets.md ("What a report says of a stopped benchmark").

Example:
    >>> arm_note(87, 0, 100)
    'rests on 87 of 100 run(s) never scored (87 stopped by the budget), counted wrong'
    >>> pair_note(3, 20, 170)
    'on the 3 of 20 items where both arms have every run scored (170 run(s) stopped by the budget or ended in an error are left out)'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hrbench.records import FAILURE_KINDS

__all__ = ["UNSCORED_MARK", "arm_note", "complete_items", "pair_note", "unscored_lines"]

UNSCORED_MARK = "*"
"""The mark beside an interval (or a pair's items) that the unscored-run rule flags."""

_KINDS = np.array([FAILURE_KINDS.index("budget_stop"), FAILURE_KINDS.index("error")])


def arm_note(budget_stop: int, error: int, n_runs: int) -> str | None:
    """The flag on an arm's accuracy and interval when some of its labelled runs were never scored.

    Args:
        budget_stop: labelled reportable runs the budget stopped.
        error: labelled reportable runs that ended in an error.
        n_runs: labelled reportable runs counted.

    Returns:
        The note, or ``None`` when every run was scored.
    """
    n = budget_stop + error
    if not n:
        return None
    kinds = [f"{budget_stop} stopped by the budget"] if budget_stop else []
    kinds += [f"{error} ended in an error"] if error else []
    return f"rests on {n} of {n_runs} run(s) never scored ({', '.join(kinds)}), counted wrong"


def pair_note(kept: int, common: int, left_runs: int) -> str:
    """What a paired difference computed over complete items only says (see the module's rule)."""
    return (
        f"on the {kept} of {common} items where both arms have every run scored ({left_runs} run(s) stopped "
        "by the budget or ended in an error are left out)"
    )


def complete_items(t: Any, a: int, b: int, common: np.ndarray) -> tuple[np.ndarray, int]:
    """Which of the ``common`` item codes have every labelled run of arms ``a`` and ``b`` scored.

    Args:
        t: the report's table (:class:`~hrbench.stats.table._Table`).
        a: one arm's code.
        b: the other's.
        common: the item codes both arms ran (sorted).

    Returns:
        ``(keep, left_runs)``: a boolean mask over ``common``, and how many unscored runs of the
        two arms fall on the items left out (0 when every run was scored: keep everything).
    """
    m = ((t.arm == a) | (t.arm == b)) & t.reportable & ~np.isnan(t.correct) & np.isin(t.failure, _KINDS)
    if not m.any():
        return np.ones(common.size, dtype=bool), 0
    per_item = np.bincount(t.item[m], minlength=t.n_items)
    bad = per_item[common]
    return bad == 0, int(bad.sum())


def unscored_lines(rep: Any, markdown: bool = False) -> list[str]:
    """The footnotes that explain the ``*`` marks in the arm and pair tables (none when nothing is marked)."""
    arms = [a for a in rep.arms if getattr(a, "unscored_note", None)]
    pairs = [c for c in rep.comparisons if getattr(c, "unscored_note", None)]
    out = []
    if arms:
        out.append(
            f"{UNSCORED_MARK} accuracy and interval count runs never scored as wrong (seed rule): "
            + "; ".join(f"{a.arm} {a.unscored_note}" for a in arms)
            + ". They measure the budget, not the arm: resume the benchmark with a larger budget to score them."
        )
    if pairs:
        out.append(
            f"{UNSCORED_MARK} paired differences are not computed over runs never scored: "
            + "; ".join(f"{c.arm_a} - {c.arm_b} {c.unscored_note}" for c in pairs)
            + "."
        )
    if markdown:
        return [line for s in out for line in ("", f"_{s.replace('*', chr(92) + '*', 1)}_")]
    return [f"  {s}" for s in out]
