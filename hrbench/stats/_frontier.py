"""The cost-accuracy frontier: the arms no other arm beats on both cost and accuracy, and each step along it.

An arm is on the frontier when every arm that costs no more per run (at list price) is less
accurate, and it is priced (``usd_per_run`` known). Along the frontier, from the cheapest arm,
each step to the next dearer arm carries what it adds per run (USD) and the paired difference
in accuracy with its interval and Holm-adjusted p (:class:`~hrbench.stats.Comparison`, on the
items both arms ran), so a reader sees whether the dearer arm (a higher reasoning effort, a
bigger model) buys an accuracy gain the intervals support. A point estimate alone is no
frontier: a step whose interval includes 0 is said to be so.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from hrbench.records import usd_text
from hrbench.stats._cells import interval, number, p_text, text_grid
from hrbench.stats._records import ArmReport, Comparison

__all__ = ["FrontierStep", "frontier", "frontier_lines", "frontier_markdown"]


class FrontierStep(msgspec.Struct, kw_only=True):
    """One step along the cost-accuracy frontier: from ``cheaper`` to the next dearer arm ``dearer``.

    Attributes:
        cheaper, dearer: the two frontier arms (``dearer`` costs more per run and is more accurate).
        usd_per_run_added: what ``dearer`` costs per run over ``cheaper`` (USD, list price).
        diff: the paired difference ``dearer - cheaper`` in accuracy, on the items both ran.
        ci_low, ci_high: its interval (``None`` when the comparison has none).
        p_value, p_holm: its p-value and Holm-adjusted p-value (``None`` when not given).
        reads: ``"gain"`` (the interval is above 0 and so is the Holm-adjusted test at the
            interval's level), ``"gain before Holm only"`` (the interval is above 0, the
            Holm-adjusted p is not below ``1 - level``), ``"interval includes 0"``, their
            ``"loss"`` twins, or ``"no interval"``.
        note: the comparison's note, or why the step has no comparison.
    """

    cheaper: str
    dearer: str
    usd_per_run_added: float
    diff: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    p_holm: float | None = None
    reads: str = "no interval"
    note: str | None = None


def _flip(c: Comparison) -> Comparison:
    """``arm_b - arm_a`` from ``arm_a - arm_b``."""
    return msgspec.structs.replace(
        c,
        arm_a=c.arm_b,
        arm_b=c.arm_a,
        diff=None if c.diff is None else -c.diff,
        ci_low=None if c.ci_high is None else -c.ci_high,
        ci_high=None if c.ci_low is None else -c.ci_low,
        accuracy_a=c.accuracy_b,
        accuracy_b=c.accuracy_a,
    )


def frontier(arms: Sequence[ArmReport], comparisons: Sequence[Comparison]) -> list[FrontierStep]:
    """The steps along the cost-accuracy frontier of a report's arms, cheapest first.

    Args:
        arms: the report's arms (their ``accuracy`` and ``usd_per_run``).
        comparisons: the report's paired comparisons (either direction of a pair is used).

    Returns:
        One :class:`FrontierStep` per consecutive pair of frontier arms; ``[]`` with fewer than
        two priced frontier arms.

    Example:
        >>> def arm(name, acc, usd):
        ...     return ArmReport(arm=name, accuracy=acc, se=None, ci_low=None, ci_high=None, df=None,
        ...         n_items=4, n_clusters=2, runs=5, n_runs=20, var_within=None, var_between=None, usd=None,
        ...         usd_unpriced=0, usd_per_run=usd, usd_per_run_low=None, usd_per_run_high=None,
        ...         accuracy_per_usd=None, accuracy_per_usd_low=None, accuracy_per_usd_high=None, failures=0,
        ...         parse_failure=0, refusal=0, not_in_document=0, wrong=0, budget_stop=0, error=0,
        ...         unlabelled_runs=0, dev_accuracy=None)
        >>> [(s.cheaper, s.dearer) for s in frontier([arm("low", 0.6, 0.01), arm("mid", 0.5, 0.02),
        ...                                            arm("high", 0.8, 0.05)], [])]
        [('low', 'high')]
    """
    priced = [a for a in arms if a.accuracy is not None and a.usd_per_run is not None]
    # equal costs (to 12 decimals: a mean over runs carries float dust) keep the more accurate first
    priced.sort(key=lambda a: (round(float(a.usd_per_run or 0.0), 12), -(a.accuracy or 0.0)))
    on: list[ArmReport] = []
    for a in priced:
        if not on or (a.accuracy or 0.0) > (on[-1].accuracy or 0.0):
            on.append(a)
    by_pair = {(c.arm_a, c.arm_b): c for c in comparisons}
    steps = []
    for lo, hi in zip(on, on[1:], strict=False):
        c = by_pair.get((hi.arm, lo.arm))
        if c is None and (lo.arm, hi.arm) in by_pair:
            c = _flip(by_pair[(lo.arm, hi.arm)])
        added = float(hi.usd_per_run or 0.0) - float(lo.usd_per_run or 0.0)
        if c is None:
            steps.append(
                FrontierStep(cheaper=lo.arm, dearer=hi.arm, usd_per_run_added=added, note="not compared")
            )
            continue
        steps.append(
            FrontierStep(
                cheaper=lo.arm,
                dearer=hi.arm,
                usd_per_run_added=added,
                diff=c.diff,
                ci_low=c.ci_low,
                ci_high=c.ci_high,
                p_value=c.p_value,
                p_holm=c.p_holm,
                reads=_reads(c),
                note=c.note,
            )
        )
    return steps


def _reads(c: Comparison) -> str:
    """How a step's paired difference reads: a gain or loss its interval and Holm-adjusted test support."""
    if c.ci_low is None or c.ci_high is None:
        return "no interval"
    if c.ci_low <= 0 <= c.ci_high:
        return "interval includes 0"
    way = "gain" if c.ci_low > 0 else "loss"
    if c.p_holm is not None and c.p_holm >= 1 - c.level:
        return f"{way} before Holm only"
    return way


def frontier_lines(steps: Sequence[FrontierStep], pct: str) -> list[str]:
    """The report's text section on the frontier (none without a step)."""
    if not steps:
        return []
    rows = [
        [
            f"{s.cheaper} -> {s.dearer}",
            "+" + usd_text(s.usd_per_run_added),
            number(s.diff),
            interval(s.ci_low, s.ci_high),
            p_text(s.p_holm if s.p_holm is not None else s.p_value),
            s.reads,
        ]
        for s in steps
    ]
    header = ["step", "+usd/run", "diff", pct, "p_holm", "reads"]
    return [
        "Cost-accuracy frontier (arms no cheaper arm matches; each step to the next dearer one, paired):",
        *text_grid(header, rows),
    ]


def frontier_markdown(steps: Sequence[FrontierStep], pct: str) -> list[str]:
    """The report's Markdown section on the frontier (none without a step)."""
    if not steps:
        return []
    lines = ["", "Cost-accuracy frontier (each step to the next dearer arm, paired):", ""]
    lines.append(f"| step | +usd/run | diff | {pct} | p_holm | reads |")
    lines.append("|:---|---:|---:|---:|---:|---:|")
    for s in steps:
        step = f"`{s.cheaper}` -> `{s.dearer}`".replace("|", "\\|")
        lines.append(
            f"| {step} | +{usd_text(s.usd_per_run_added)} | {number(s.diff)} | {interval(s.ci_low, s.ci_high)} | "
            f"{p_text(s.p_holm if s.p_holm is not None else s.p_value)} | {s.reads} |"
        )
    return lines
