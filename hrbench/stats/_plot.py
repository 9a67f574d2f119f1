"""A report as a PNG: accuracy against USD per run with the cost-accuracy frontier, or a dot plot of accuracy.

:meth:`hrbench.stats.Report.plot` draws it (its docstring gives the rule); matplotlib is an
optional extra (``pip install 'hrbench[plot]'``), imported only here and only when a plot is drawn.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from hrbench.stats._cells import interval
from hrbench.stats._frontier import FrontierStep
from hrbench.stats._records import ArmReport
from hrbench.stats._table import MIN_RUNS

__all__ = ["plot_arms"]


def plot_arms(
    arms: Sequence[ArmReport],
    frontier: Sequence[FrontierStep],
    path: str | Any,
    *,
    title: str | None,
    level: float,
    method: str,
    runs: int,
    descriptive: bool,
) -> Any:
    """Draw :meth:`~hrbench.stats.Report.plot` of a report's arms and frontier (see there).

    Args:
        arms: the report's arms.
        frontier: the report's frontier steps.
        path: where to write the PNG (a path, written whole or not at all, or a binary file object).
        title: the title; ``None``: one naming the plot, ``level``, ``method``, ``runs`` and
            whether the report is ``descriptive``.
        level: the intervals' level (0.95 for 95%).
        method: ``"cluster"`` or ``"bootstrap"``.
        runs: runs per item.
        descriptive: whether the intervals are over items only.

    Returns:
        ``path``.

    Raises:
        ImportError: when matplotlib is not installed.
        ConfigError: the file cannot be written (:func:`hrbench._util.files.output_file`).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError(
            "Report.plot() needs matplotlib, an optional extra: pip install 'hrbench[plot]'"
        ) from e
    shown = [a for a in arms if a.accuracy is not None]
    by_cost = any((a.usd_per_run or 0.0) > 0 for a in shown if a.usd_per_run is not None)
    size = (6.4, 4.4) if by_cost else (6.4, max(2.8, 1.6 + 0.5 * len(shown)))
    fig = Figure(figsize=size, dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    head = _by_cost(fig, ax, shown, frontier) if by_cost else _by_arm(ax, shown)
    ax.grid(True, alpha=0.3)
    if title is None:
        how = "clustered Wilson" if method == "cluster" else "cluster bootstrap"
        title = f"{head}\n{level:.0%} {how} intervals, {runs} run(s) per item"
        if descriptive:
            title += f"\ndescriptive (fewer than {MIN_RUNS} runs): intervals over items only"
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    if isinstance(path, (str, os.PathLike)):  # whole or not at all (a full disk leaves no partial PNG)
        from hrbench._util.files import output_file

        with output_file(path, "plot") as f:
            fig.savefig(f, format="png")
    else:
        fig.savefig(path, format="png")
    return path


def _bar(est: float, lo: float | None, hi: float | None) -> list[list[float]] | None:
    """An error bar's lengths below and above ``est`` (``None``: no interval)."""
    return None if lo is None or hi is None else [[max(0.0, est - lo)], [max(0.0, hi - est)]]


def _by_cost(fig: Any, ax: Any, shown: list[ArmReport], frontier: Sequence[FrontierStep]) -> str:
    """Accuracy against USD per run, the frontier dashed; the unpriced arms named under it. Returns the title's head."""
    priced = [a for a in shown if a.usd_per_run is not None]
    for a in priced:
        acc, x = float(a.accuracy or 0.0), float(a.usd_per_run or 0.0)
        ax.errorbar(
            [x],
            [acc],
            yerr=_bar(acc, a.ci_low, a.ci_high),
            xerr=_bar(x, a.usd_per_run_low, a.usd_per_run_high),
            fmt="o",
            capsize=4,
        )
        ax.annotate(a.arm, (x, acc), textcoords="offset points", xytext=(6, 6), fontsize=9)
    on = {s.cheaper for s in frontier} | {s.dearer for s in frontier}
    line = sorted((float(a.usd_per_run or 0.0), float(a.accuracy or 0.0)) for a in priced if a.arm in on)
    if len(line) > 1:  # the frontier, each step's paired difference beside it
        ax.plot([x for x, _ in line], [y for _, y in line], linestyle="--", color="0.5", linewidth=1)
        for s, (x0, y0), (x1, y1) in zip(frontier, line, line[1:], strict=False):
            said = f"{s.diff:+.3f} {interval(s.ci_low, s.ci_high)}" if s.diff is not None else "not compared"
            ax.annotate(said, ((x0 + x1) / 2, (y0 + y1) / 2), fontsize=7, color="0.35", ha="center")
    ax.margins(x=0.15, y=0.1)
    ax.set_xlabel("USD per run, at list price")
    ax.set_ylabel("accuracy")
    left_out = [a.arm for a in shown if a.usd_per_run is None]
    if left_out:
        fig.text(0.01, 0.01, "not plotted (no price): " + ", ".join(left_out), fontsize=8)
    return "Accuracy vs USD per run"


def _by_arm(ax: Any, shown: list[ArmReport]) -> str:
    """A horizontal dot plot of accuracy per arm, first arm on top. Returns the title's head."""
    n = len(shown)
    for pos, a in enumerate(shown):
        acc, y = float(a.accuracy or 0.0), n - 1 - pos  # first arm on top
        ax.errorbar([acc], [y], xerr=_bar(acc, a.ci_low, a.ci_high), fmt="o", capsize=4)
        label = f"{acc:.3f}  " + ("(no interval)" if a.ci_low is None else interval(a.ci_low, a.ci_high))
        ax.annotate(label, (acc, y), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    ax.set_yticks(range(n), [a.arm for a in reversed(shown)])
    ax.set_ylim(-0.7, n - 0.3)
    ends = [v for a in shown for v in (a.accuracy, a.ci_low, a.ci_high) if v is not None]
    if ends:
        span = max(max(ends) - min(ends), 0.05)
        ax.set_xlim(max(-0.01, min(ends) - 0.15 * span), min(1.01, max(ends) + 0.15 * span))
    ax.set_xlabel("accuracy")
    return "Accuracy per arm (no cost recorded)"
