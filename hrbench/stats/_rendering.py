"""The :class:`~hrbench.stats.Report` and how it reads: the text table, the Markdown table and the PNG plot.

The report's per-arm and per-pair records (:class:`~hrbench.stats.ArmReport`,
:class:`~hrbench.stats.Comparison`) are in :mod:`hrbench.stats._records`; the report that
holds them lives here with the functions that show it, so neither module needs the other's
back.
"""

from __future__ import annotations

import os
import textwrap
from typing import Any, Literal

import msgspec

from hrbench.errors import ConfigError
from hrbench.records import FAILURE_KINDS, usd_text
from hrbench.stats._agreement import judge_text
from hrbench.stats._consistency import label
from hrbench.stats._frontier import FrontierStep, frontier_lines, frontier_markdown
from hrbench.stats._human import human_text
from hrbench.stats._intervals import FEW_CLUSTERS_NOTE
from hrbench.stats._records import ArmReport, Comparison
from hrbench.stats._stopped import stop_lines, stop_markdown
from hrbench.stats._table import MIN_RUNS
from hrbench.stats._unscored import UNSCORED_MARK, unscored_lines


class Report(msgspec.Struct, kw_only=True):
    """An interval report on a benchmark: one :class:`ArmReport` per arm, paired comparisons.

    ``str(report)`` is a table for a person, :meth:`to_pandas` a frame, :meth:`to_json` JSON
    bytes (``msgspec.to_builtins(report)`` a dict) and :meth:`plot` a PNG of accuracy against
    USD per run.

    Attributes:
        arms: one record per arm, in the benchmark's arm order.
        comparisons: paired differences for every pair of arms (Holm-adjusted together).
        level: the intervals' level (0.95 for 95%).
        method: ``"cluster"`` (clustered Wilson interval) or ``"bootstrap"`` (cluster bootstrap).
        descriptive: ``True`` when the benchmark has fewer than 5 runs per item (allowed by
            ``descriptive=True``): run-to-run spread is not measured and the intervals cover the
            sampling of items (and clusters) only; ``note`` says so.
        runs: runs per item in the benchmark.
        n_boot: bootstrap resamples (``method="bootstrap"``).
        seed: the bootstrap seed.
        note: how to read the report (descriptive label, interval method, multiplicity).
        version: the record's version.
        stop: for a benchmark run with a stop rule, how it stopped and the sequential test's
            numbers (:func:`hrbench.stats.stop_section`); its comparisons then show no
            fixed-sample interval or p, and each arm's interval is marked conditional on the
            clusters run. ``None`` otherwise.
        judge: for a benchmark a judge scored, the judge's agreement with the exact scorer on
            the same rows and its flips (:func:`hrbench.stats._agreement.judge_agreement`);
            ``None`` otherwise.
        human: for a benchmark with human grades, each arm's accuracy and each paired
            difference as humans would grade them, by PPI++ (a
            :class:`~hrbench.stats._ppi.HumanSection` as builtins); ``None`` otherwise.
        frontier: the steps along the cost-accuracy frontier, cheapest arm first, each with the
            paired difference to the next dearer frontier arm (:func:`hrbench.stats.frontier`);
            ``[]`` with fewer than two priced frontier arms.
        scorer: the name of the scorer that scored the rows (the text's and the Markdown's
            first line name it), ``None`` when not known (a report of bare rows).
        max_runs: the most runs of any arm x item cell (``runs`` is the fewest); the header
            says "1 to 5 run(s) per item" when they differ (a descriptive report of unequal
            runs, or of a benchmark still running). ``None``: the same as ``runs``.
    """

    arms: list[ArmReport]
    comparisons: list[Comparison]
    level: float
    method: str
    descriptive: bool
    runs: int
    n_boot: int
    seed: int
    note: str
    version: int = 1
    stop: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None
    human: dict[str, Any] | None = None
    frontier: list[FrontierStep] = msgspec.field(default_factory=list)
    scorer: str | None = None
    max_runs: int | None = None

    def arm(self, name: str) -> ArmReport:
        """The record of the arm called ``name`` (``KeyError`` if there is none)."""
        for a in self.arms:
            if a.arm == name:
                return a
        raise KeyError(name)

    def __str__(self) -> str:
        text = render(self) + judge_text(self.judge) + human_text(self.human)  # judged; human-graded
        if self.stop is None:
            return text
        head, _, rest = text.partition("\n")
        return "\n".join([head, *stop_lines(self.stop), rest])

    def to_markdown(self) -> str:
        """The report as a GitHub-flavoured Markdown table, fit for a pull-request comment.

        One row per arm (accuracy, its interval, items, runs, failures, USD and USD per run),
        then one row per paired difference (difference, interval, p and Holm-adjusted p), then
        the note. A descriptive report (fewer than 5 runs per item) opens with a quoted
        "Descriptive only" line, as ``str(report)`` does (seed 002: fewer than 5 runs are
        descriptive). Pipes in arm names are escaped.

        Returns:
            The Markdown text, ending with a newline.

        Example:
            >>> from hrbench.records import Row
            >>> from hrbench.stats import report
            >>> rows = [Row(cluster=f"c{i}", item=f"q{i}", arm=arm, run=0, split="test",
            ...             correct=(i % 3 != 0) or arm == "b", outcome=None, failure_kind=None)
            ...         for i in range(6) for arm in ("a", "b")]
            >>> md = report(rows, descriptive=True).to_markdown()
            >>> print(md.splitlines()[2])
            > **Descriptive only** (fewer than 5 runs): the intervals cover the sampling of items only.
            >>> [ln.split(" | ")[:2] for ln in md.splitlines() if ln.startswith("| `")]
            [['| `a`', '0.667'], ['| `b`', '1.000'], ['| `a` - `b`', '-0.333']]
        """
        md = (
            render_markdown(self)
            + judge_text(self.judge, markdown=True)
            + human_text(self.human, markdown=True)
        )
        if self.stop is None:
            return md
        lines = md.split("\n")
        return "\n".join([*lines[:2], *stop_markdown(self.stop), *lines[2:]])

    def to_json(self) -> bytes:
        """The report as JSON bytes (``msgspec.json.encode``); ``null`` stands for ``None``."""
        return msgspec.json.encode(self)

    def to_dict(self) -> dict[str, Any]:
        """The report as builtins (``msgspec.to_builtins``), ready for any JSON encoder."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out

    def to_pandas(self, table: Literal["arms", "comparisons"] = "arms") -> Any:
        """One row per arm (or per comparison) as a ``pandas.DataFrame``.

        The frame has a ``descriptive`` column and ``attrs`` holding ``descriptive``, ``note``,
        ``level`` and ``method``.

        Args:
            table: ``"arms"`` or ``"comparisons"``.

        Returns:
            A ``pandas.DataFrame``.

        Raises:
            ImportError: when pandas is not installed (``pip install 'hrbench[pandas]'``).
        """
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - pandas is a dev dependency
            raise ImportError("Report.to_pandas() needs pandas: pip install 'hrbench[pandas]'") from e
        if table == "arms":
            records: list[Any] = self.arms
            cols = list(ArmReport.__struct_fields__)
        elif table == "comparisons":
            records = self.comparisons
            cols = list(Comparison.__struct_fields__)
        else:
            raise ConfigError("table", table, "must be 'arms' or 'comparisons'")
        frame = pd.DataFrame([msgspec.to_builtins(r) for r in records], columns=cols)
        frame["descriptive"] = self.descriptive
        frame.attrs.update(descriptive=self.descriptive, note=self.note, level=self.level, method=self.method)
        return frame

    def plot(self, path: str | Any, *, title: str | None = None) -> Any:
        """Write a PNG of accuracy against USD per run, one point per arm with interval bars.

        Vertical bars are the accuracy interval, horizontal bars the USD-per-run interval; a
        dashed line joins the arms of the cost-accuracy frontier, each step labelled with its
        paired difference and interval (:attr:`frontier`); arms with no price are left out and
        named under the plot. When no arm has a positive USD per
        run (``outputs`` arms that score existing predictions cost nothing) the cost axis would
        be degenerate, so the plot is instead a horizontal dot plot of accuracy per arm with its
        interval, titled accordingly. The title names the level and method, and says when the
        report is descriptive (intervals over items only).

        Args:
            path: where to write the PNG (a path, written whole or not at all, or a binary
                file object).
            title: the plot's title; a default names the level and method.

        Returns:
            ``path``.

        Raises:
            ImportError: when matplotlib is not installed (``pip install 'hrbench[plot]'``).
            ConfigError: the file cannot be written (naming it and why: a full disk, a missing
                folder; for a caller confined to the daemon's exchange folders, a path outside
                ``exports/``); nothing is left behind.
        """
        return plot(self, path, title=title)


def _f(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _ci(lo: float | None, hi: float | None, digits: int = 3) -> str:
    return "-" if lo is None or hi is None else f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def _usd_ci(lo: float | None, hi: float | None) -> str:
    """A USD interval, each end as :func:`~hrbench.records.usd_text` prints it."""
    return "-" if lo is None or hi is None else f"[{usd_text(lo)}, {usd_text(hi)}]"


def _p(v: float | None) -> str:
    if v is None:
        return "-"
    return "<0.001" if v < 0.001 else f"{v:.3f}"


def _mark(rec: ArmReport | Comparison, escape: str = "") -> str:
    """The ``*`` beside a number that rests on runs never scored, or that left them out (:mod:`._unscored`)."""
    return escape + UNSCORED_MARK if rec.unscored_note else ""


def _grid(header: list[str], rows: list[list[str]]) -> list[str]:
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


def render(rep: Report) -> str:
    """The text of ``rep``: its header, the arms, their cost, the paired differences and the notes."""
    pct = f"{rep.level:.0%} CI"
    lines = [_head(rep), *_arm_lines(rep, pct), *_cost_lines(rep, pct), *_consistency_lines(rep, pct)]
    lines += _comparison_lines(rep, pct)
    lines += frontier_lines(rep.frontier, pct)
    for said in unscored_lines(rep):  # what the `*` marks say
        lines += textwrap.wrap(said.strip(), width=100, initial_indent="  ", subsequent_indent="    ")
    lines += textwrap.wrap(rep.note, width=100, initial_indent="  ", subsequent_indent="  ")
    return "\n".join(lines)


def _head(rep: Report) -> str:
    """The first line: arms, items, clusters and runs, the interval method, a descriptive label."""
    n_items = max((a.n_items for a in rep.arms), default=0)
    n_clusters = max((a.n_clusters for a in rep.arms), default=0)
    head = (
        f"<hrbench report> {len(rep.arms)} arm(s) x {n_items} item(s) in {n_clusters} cluster(s) x "
        f"{_runs_text(rep)}; "
    )
    how = (
        "Wilson interval (effective n, CR2, t)"
        if rep.method == "cluster"
        else f"cluster bootstrap ({rep.n_boot} resamples)"
    )
    head += f"{rep.level:.0%} {how}"
    if rep.scorer is not None:
        head += f"; scorer {rep.scorer}"
    if rep.descriptive:
        why = f"fewer than {MIN_RUNS} runs" if rep.runs < MIN_RUNS else "unequal runs"
        head += f"; DESCRIPTIVE ({why}: intervals over items only)"
    return head


def _runs_text(rep: Report) -> str:
    """The header's runs: ``5 run(s)``, or ``1 to 5 run(s) per item (56 runs)`` when cells differ."""
    if rep.max_runs is None or rep.max_runs == rep.runs:
        return f"{rep.runs} run(s)"
    total = sum(a.n_runs for a in rep.arms)
    return f"{rep.runs} to {rep.max_runs} run(s) per item ({total} runs)"


def _arm_lines(rep: Report, pct: str) -> list[str]:
    """The table of the arms' accuracies and intervals (``pct``: the interval's column name)."""
    header = ["arm", "accuracy", "se", pct, "items", "clusters", "runs", "failures"]
    rows = [
        [
            a.arm,
            _f(a.accuracy),
            _f(a.se),
            _ci(a.ci_low, a.ci_high) + _mark(a),
            str(a.n_items),
            f"{a.n_clusters}!" if a.few_clusters else str(a.n_clusters),
            str(a.n_runs),
            str(a.failures),
        ]
        for a in rep.arms
    ]
    lines = _grid(header, rows)
    if any(a.few_clusters for a in rep.arms):
        lines.append(f"  ! {FEW_CLUSTERS_NOTE}")
    return lines


def _cost_lines(rep: Report, pct: str) -> list[str]:
    """The variance components and cost table, with its notes (list price, unpriced runs, failures)."""
    cost_header = ["arm", "var_within", "var_between", "usd", "usd_list", "usd/run", pct, "acc/usd", pct]
    cost_rows = [
        [
            a.arm,
            _f(a.var_within, 4),
            _f(a.var_between, 4),
            usd_text(a.usd),
            usd_text(a.usd_list, "-"),
            usd_text(a.usd_per_run, "-"),
            _usd_ci(a.usd_per_run_low, a.usd_per_run_high),
            _f(a.accuracy_per_usd, 1),
            _ci(a.accuracy_per_usd_low, a.accuracy_per_usd_high, 1),
        ]
        for a in rep.arms
    ]
    lines = ["Variance components (score units squared) and cost:"]
    lines += _grid(cost_header, cost_rows)
    lines.append(
        "  usd is what was paid (0 for cache and recording hits); usd_list prices every reply at what it "
        "cost when first paid, and usd/run and acc/usd use that list price, so arms compare by cost "
        "whatever the cache held."
    )
    logged = [f"{a.arm} ({a.usd_from_log} runs)" for a in rep.arms if a.usd_from_log]
    if logged:
        lines.append(
            f"  From the log, not paid here: the usd_list of {', '.join(logged)} is what the other "
            "tool's log records (- : it records no cost); usd counts those runs 0."
        )
    paid = [a.arm for a in rep.arms if a.usd_list is None and a.usd_per_run is not None]
    if paid:  # rows with no traces (a frame): the list price is not known
        lines.append(f"  usd/run of {', '.join(paid)}: at what was paid (no traces, so no list price).")
    lines += [f"  acc/usd of {a.arm}: {a.accuracy_per_usd_note}" for a in rep.arms if a.accuracy_per_usd_note]
    if _stopped_note(rep):
        lines.append(f"  {_stopped_note(rep)}")
    if any(a.usd_unpriced for a in rep.arms):
        lines.append(
            "  NA: runs with no price ("
            + ", ".join(f"{a.arm}: {a.usd_unpriced}" for a in rep.arms if a.usd_unpriced)
            + "); usd is NA when a model has no price, and acc/usd is not given."
        )
    return lines + _count_notes(rep)


def _consistency_lines(rep: Report, pct: str) -> list[str]:
    """Repeat consistency (``pass^k`` and the flip rate, with intervals) when items have 2 or more runs."""
    shown = [a for a in rep.arms if a.pass_k is not None and a.runs >= 2]
    if rep.runs < 2 or not shown:
        return []
    k = shown[0].pass_k_runs
    head = f"pass^{k}"
    lines = [
        f"Repeat consistency ({head}: {k} runs of an item all right; flip rate: two runs of an item disagree):"
    ]
    rows = [
        [
            a.arm,
            _f(a.pass_k),
            _ci(a.pass_k_low, a.pass_k_high),
            _f(a.flip_rate),
            _ci(a.flip_rate_low, a.flip_rate_high),
        ]
        for a in shown
    ]
    return lines + _grid(["arm", head, pct, "flip rate", pct], rows)


def _count_notes(rep: Report) -> list[str]:
    """The notes on the counts: failures by kind, and the runs on items with no label."""
    lines = []
    kinds = [k for k in FAILURE_KINDS if any(getattr(a, k) for a in rep.arms)]
    if kinds:
        lines.append(
            "  failures by kind: "
            + "; ".join(
                f"{a.arm}: " + (", ".join(f"{k} {getattr(a, k)}" for k in kinds if getattr(a, k)) or "none")
                for a in rep.arms  # an arm with no failure says so (never a bare "careful: ")
            )
        )
    if any(a.unlabelled_runs for a in rep.arms):
        lines.append(
            "  items, runs and failures count labelled runs only; print(bench) also counts the runs on "
            "items with no label ("
            + ", ".join(f"{a.arm}: {a.unlabelled_runs}" for a in rep.arms if a.unlabelled_runs)
            + ") in its items, runs, wrong and failed columns."
        )
    return lines


def _comparison_lines(rep: Report, pct: str) -> list[str]:
    """The table of paired differences and each pair's note; none without comparisons."""
    if not rep.comparisons:
        return []
    what = {label(c.metric, c.pass_k_runs) for c in rep.comparisons} - {"accuracy"}
    of = f" of {', '.join(sorted(what))}" if what else ""
    lines = [f"Paired differences{of} (arm_a - arm_b, on the items both ran):"]
    ch = ["pair", "diff", "se", pct, "p", "p_holm", "items", "se_unpaired"]
    crow = [
        [
            f"{c.arm_a} - {c.arm_b}",
            _f(c.diff),
            _f(c.se),
            _ci(c.ci_low, c.ci_high),
            _p(c.p_value),
            _p(c.p_holm),
            str(c.n_items) + _mark(c),
            _f(c.se_unpaired),
        ]
        for c in rep.comparisons
    ]
    lines += _grid(ch, crow)
    for c in rep.comparisons:
        if c.note:
            lines += textwrap.wrap(
                f"{c.arm_a} - {c.arm_b}: {c.note}.",
                width=100,
                initial_indent="  ",
                subsequent_indent="    ",
            )
    return lines


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(_md_cell(h) for h in header) + " |"]
    out.append("|" + "|".join([":---", *("---:" for _ in header[1:])]) + "|")
    out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
    return out


def render_markdown(rep: Report) -> str:
    """:meth:`Report.to_markdown` (see there)."""
    pct = f"{rep.level:.0%} CI"
    how = "clustered Wilson" if rep.method == "cluster" else f"cluster bootstrap, {rep.n_boot} resamples"
    n_items = max((a.n_items for a in rep.arms), default=0)
    scored = "" if rep.scorer is None else f"; scorer `{_md_cell(rep.scorer)}`"
    lines = [
        f"**hrbench report**: {len(rep.arms)} arm(s) x {n_items} item(s) x {_runs_text(rep)}; "
        f"{rep.level:.0%} intervals ({how}){scored}",
        "",
    ]
    if rep.descriptive:
        why = f"fewer than {MIN_RUNS} runs" if rep.runs < MIN_RUNS else "unequal runs"
        lines += [f"> **Descriptive only** ({why}): the intervals cover the sampling of items only.", ""]
    header = ["arm", "accuracy", pct, "items", "runs", "failures", "usd paid", "usd list", "usd/run"]
    rows = [
        [
            f"`{a.arm}`",
            _f(a.accuracy),
            _ci(a.ci_low, a.ci_high) + _mark(a, "\\"),
            str(a.n_items),
            str(a.n_runs),
            str(a.failures),
            usd_text(a.usd),
            usd_text(a.usd_list, "-"),
            usd_text(a.usd_per_run, "-"),
        ]
        for a in rep.arms
    ]
    lines += _md_table(header, rows)
    if any(a.usd_list is not None for a in rep.arms):
        lines += ["", "_usd/run is at list price (usd list: each reply at what it cost when first paid)._"]
    if rep.comparisons:
        lines += ["", "Paired differences (arm_a - arm_b, on the items both ran):", ""]
        ch = ["pair", "diff", pct, "p", "p_holm", "items"]
        crows = [
            [
                f"`{c.arm_a}` - `{c.arm_b}`",
                _f(c.diff),
                _ci(c.ci_low, c.ci_high),
                _p(c.p_value),
                _p(c.p_holm),
                str(c.n_items) + _mark(c, "\\"),
            ]
            for c in rep.comparisons
        ]
        lines += _md_table(ch, crows)
        notes = [f"- `{c.arm_a}` - `{c.arm_b}`: {_md_cell(c.note)}." for c in rep.comparisons if c.note]
        if notes:
            lines += ["", *notes]
    lines += frontier_markdown(rep.frontier, pct)
    if any(a.few_clusters for a in rep.arms):
        lines += ["", f"_{FEW_CLUSTERS_NOTE}_"]
    if _stopped_note(rep):
        lines += ["", f"_{_stopped_note(rep)}_"]
    lines += unscored_lines(rep, markdown=True)
    lines += ["", f"<sub>{_md_cell(rep.note)}</sub>"]
    return "\n".join(lines) + "\n"


def _stopped_note(rep: Report) -> str | None:
    """A note that a run the budget stopped made no call (cost 0) and pulls usd/run down."""
    stopped = sum(a.budget_stop for a in rep.arms)
    if not stopped:
        return None
    return (
        f"usd/run averages every run, the {stopped} run(s) the budget stopped included (they cost 0): "
        "it understates what a whole run costs."
    )


def plot(rep: Report, path: str | Any, *, title: str | None = None) -> Any:
    """Draw :meth:`Report.plot` (see there)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError(
            "Report.plot() needs matplotlib, an optional extra: pip install 'hrbench[plot]'"
        ) from e
    shown = [a for a in rep.arms if a.accuracy is not None]
    priced = [a for a in shown if a.usd_per_run is not None]
    by_cost = any((a.usd_per_run or 0.0) > 0 for a in priced)

    def bar(est: float, lo: float | None, hi: float | None) -> list[list[float]] | None:
        return None if lo is None or hi is None else [[max(0.0, est - lo)], [max(0.0, hi - est)]]

    size = (6.4, 4.4) if by_cost else (6.4, max(2.8, 1.6 + 0.5 * len(shown)))
    fig = Figure(figsize=size, dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    if by_cost:
        for a in priced:
            acc, x = float(a.accuracy or 0.0), float(a.usd_per_run or 0.0)
            ax.errorbar(
                [x],
                [acc],
                yerr=bar(acc, a.ci_low, a.ci_high),
                xerr=bar(x, a.usd_per_run_low, a.usd_per_run_high),
                fmt="o",
                capsize=4,
            )
            ax.annotate(a.arm, (x, acc), textcoords="offset points", xytext=(6, 6), fontsize=9)
        on = {s.cheaper for s in rep.frontier} | {s.dearer for s in rep.frontier}
        line = sorted((float(a.usd_per_run or 0.0), float(a.accuracy or 0.0)) for a in priced if a.arm in on)
        if len(line) > 1:  # the frontier, each step's paired difference beside it
            ax.plot([x for x, _ in line], [y for _, y in line], linestyle="--", color="0.5", linewidth=1)
            for s, (x0, y0), (x1, y1) in zip(rep.frontier, line, line[1:], strict=False):
                said = f"{s.diff:+.3f} {_ci(s.ci_low, s.ci_high)}" if s.diff is not None else "not compared"
                ax.annotate(said, ((x0 + x1) / 2, (y0 + y1) / 2), fontsize=7, color="0.35", ha="center")
        ax.margins(x=0.15, y=0.1)
        ax.set_xlabel("USD per run, at list price")
        ax.set_ylabel("accuracy")
        left_out = [a.arm for a in shown if a.usd_per_run is None]
        if left_out:
            fig.text(0.01, 0.01, "not plotted (no price): " + ", ".join(left_out), fontsize=8)
        head = "Accuracy vs USD per run"
    else:
        n = len(shown)
        for pos, a in enumerate(shown):
            acc, y = float(a.accuracy or 0.0), n - 1 - pos  # first arm on top
            ax.errorbar([acc], [y], xerr=bar(acc, a.ci_low, a.ci_high), fmt="o", capsize=4)
            label = f"{acc:.3f}  " + ("(no interval)" if a.ci_low is None else _ci(a.ci_low, a.ci_high))
            ax.annotate(label, (acc, y), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
        ax.set_yticks(range(n), [a.arm for a in reversed(shown)])
        ax.set_ylim(-0.7, n - 0.3)
        ends = [v for a in shown for v in (a.accuracy, a.ci_low, a.ci_high) if v is not None]
        if ends:
            span = max(max(ends) - min(ends), 0.05)
            ax.set_xlim(max(-0.01, min(ends) - 0.15 * span), min(1.01, max(ends) + 0.15 * span))
        ax.set_xlabel("accuracy")
        head = "Accuracy per arm (no cost recorded)"
    ax.grid(True, alpha=0.3)
    if title is None:
        how = "clustered Wilson" if rep.method == "cluster" else "cluster bootstrap"
        title = f"{head}\n{rep.level:.0%} {how} intervals, {rep.runs} run(s) per item"
        if rep.descriptive:
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
