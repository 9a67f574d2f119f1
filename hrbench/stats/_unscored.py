"""What a report says of runs that were never scored: runs the budget stopped or that ended in an error.

Rule (seed 002, ``budget_stop``: a run the governor stopped counts wrong; the same for a run
that ended in an error): an arm's accuracy and its interval keep counting such runs wrong, and
the report flags them wherever they are printed (``ArmReport.unscored_note``; a ``*`` beside
the interval in the text and Markdown tables). They measure the budget, or the errors, not the
arm: an arm the budget stopped after 13 calls has accuracy near 0 whatever its answers. The
footnote says what scores them by what kept them from their scorer: a larger budget for runs
the budget stopped; for runs that ended in an error, removing the error's cause (a resume
with a larger budget fails them the same way).

A paired difference never rests on them one-sidedly: an item on which one arm has more
unscored runs than the other is left out, so the difference is computed over the items on
which both arms have as many runs scored, and says so (``Comparison.unscored_note``;
``n_items`` counts those items). An item both arms failed alike (the same unscored runs, as an
item every arm's outputs leave out) stays: it counts wrong in both and cancels. With fewer
than 2 items kept, or all in one cluster, the pair has no interval and no p-value, and the note
says why. See docs/guides/budgets.md ("What a report says of a stopped benchmark").

Example:
    >>> arm_note(87, 0, 100)
    'rests on 87 of 100 run(s) never scored (87 stopped by the budget), counted wrong'
    >>> pair_note(3, 20, 170)
    'on the 3 of 20 items where both arms have as many runs scored (170 run(s) stopped by the budget or ended in an error, on items where the other arm has fewer, are left out)'
    >>> pair_note(20, 20, 0, 1)
    '1 item on which both arms have as many runs never scored counts them wrong in both, so they cancel'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hrbench.records import FAILURE_KINDS

__all__ = ["UNSCORED_MARK", "arm_note", "complete_items", "pair_note", "unscored_lines", "unscored_reason"]

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


def pair_note(kept: int, common: int, left_runs: int, shared_items: int = 0) -> str | None:
    """What a paired difference says of the runs never scored on its items (see the module's rule).

    Args:
        kept: the items compared.
        common: the items both arms ran.
        left_runs: unscored runs on the items left out (one arm has more than the other there).
        shared_items: items kept on which both arms have the same number of unscored runs.

    Returns:
        The note, or ``None`` when no run of either arm on those items went unscored.
    """
    said = []
    if left_runs:
        said.append(
            f"on the {kept} of {common} items where both arms have as many runs scored ({left_runs} run(s) "
            "stopped by the budget or ended in an error, on items where the other arm has fewer, are left out)"
        )
    if shared_items:
        counts = "counts" if shared_items == 1 else "count"
        said.append(
            f"{shared_items} item{'' if shared_items == 1 else 's'} on which both arms have as many runs never "
            f"scored {counts} them wrong in both, so they cancel"
        )
    return "; ".join(said) or None


def complete_items(t: Any, a: int, b: int, common: np.ndarray) -> tuple[np.ndarray, int, int]:
    """Which of the ``common`` item codes the two arms have as many runs scored on.

    Args:
        t: the report's table (:class:`~hrbench.stats._table._Table`).
        a: one arm's code.
        b: the other's.
        common: the item codes both arms ran (sorted).

    Returns:
        ``(keep, left_runs, shared_items)``: a boolean mask over ``common`` (items where the
        arms' unscored runs are as many), how many unscored runs fall on the items left out, and
        how many kept items have unscored runs (as many in both arms).
    """
    m = t.reportable & ~np.isnan(t.correct) & np.isin(t.failure, _KINDS)
    if not m.any():
        return np.ones(common.size, dtype=bool), 0, 0
    ca = np.bincount(t.item[m & (t.arm == a)], minlength=t.n_items)[common]
    cb = np.bincount(t.item[m & (t.arm == b)], minlength=t.n_items)[common]
    keep = ca == cb
    return keep, int((ca + cb)[~keep].sum()), int(np.count_nonzero(ca[keep]))


_REMEDY = {
    "budget": "resume the benchmark with a larger budget to score them",
    "error": (
        "remove the errors' cause to score them (the benchmark's note on its failed runs says how; a larger "
        "budget does not help)"
    ),
}


def unscored_reason(budget_stop: int, error: int) -> str:
    """What runs never scored measure, and what scores them, by what kept them from their scorer.

    Args:
        budget_stop: runs the budget stopped, over the arms flagged.
        error: runs that ended in an error, over the same arms.

    Returns:
        One sentence (see the module's rule).

    Example:
        >>> unscored_reason(0, 5)
        "They measure the errors, not the arm: remove the errors' cause to score them (the benchmark's note on its failed runs says how; a larger budget does not help)."
    """
    if not error:
        return f"They measure the budget, not the arm: {_REMEDY['budget']}."
    if not budget_stop:
        return f"They measure the errors, not the arm: {_REMEDY['error']}."
    return (
        f"They measure the budget and the errors, not the arm: for the runs the budget stopped, "
        f"{_REMEDY['budget']}; for those that ended in an error, {_REMEDY['error']}."
    )


def _arms_said(rep: Any, arms: list[Any]) -> str:
    """Each flagged arm's note, or the note once when every arm of several has the same one."""
    notes = {a.unscored_note for a in arms}
    if len(arms) > 1 and len(arms) == len(rep.arms) and len(notes) == 1:
        return f"each of the {len(arms)} arms {notes.pop()}"
    return "; ".join(f"{a.arm} {a.unscored_note}" for a in arms)


def _pairs_line(rep: Any, pairs: list[Any]) -> str:
    """The footnote of the pairs marked: said once when every pair of several has the same note."""
    head = f"{UNSCORED_MARK} paired differences leave out the items where one arm has more runs never scored"
    notes = {c.unscored_note for c in pairs}
    if len(pairs) > 1 and len(pairs) == len(rep.comparisons) and len(notes) == 1:
        return f"{head}; in each of the {len(pairs)} pairs, {notes.pop()}."
    return f"{head}: " + "; ".join(f"{c.arm_a} - {c.arm_b}: {c.unscored_note}" for c in pairs) + "."


def unscored_lines(rep: Any, markdown: bool = False) -> list[str]:
    """The footnotes that explain the ``*`` marks in the arm and pair tables (none when nothing is marked)."""
    arms = [a for a in rep.arms if getattr(a, "unscored_note", None)]
    pairs = [c for c in rep.comparisons if getattr(c, "unscored_note", None)]
    out = []
    if arms:
        out.append(
            f"{UNSCORED_MARK} accuracy and interval count runs never scored as wrong (seed rule): "
            + _arms_said(rep, arms)
            + ". "
            + unscored_reason(
                sum(int(getattr(a, "budget_stop", 0) or 0) for a in arms),
                sum(int(getattr(a, "error", 0) or 0) for a in arms),
            )
        )
    if pairs:
        out.append(_pairs_line(rep, pairs))
    if markdown:
        return [line for s in out for line in ("", f"_{s.replace('*', chr(92) + '*', 1)}_")]
    return [f"  {s}" for s in out]
