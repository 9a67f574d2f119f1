"""The :class:`~hrbench.stats.Report` and how it reads: the text table and the Markdown table.

The report's per-arm and per-pair records (:class:`~hrbench.stats.ArmReport`,
:class:`~hrbench.stats.Comparison`) are in :mod:`hrbench.stats._records`; the report that
holds them lives here with the functions that lay out its sections, so neither module needs the
other's back. How a number reads in a cell and how cells line up is :mod:`hrbench.stats._cells`
(shared with the frontier's and the human-graded sections); the PNG is :mod:`hrbench.stats._plot`.
"""

from __future__ import annotations

import textwrap
from typing import Any, Literal

import msgspec

from hrbench.errors import ConfigError
from hrbench.records import FAILURE_KINDS, usd_text
from hrbench.stats._agreement import judge_text
from hrbench.stats._cells import (
    interval,
    md_cell,
    md_table,
    number,
    p_text,
    text_grid,
    unscored_mark,
    usd_interval,
)
from hrbench.stats._consistency import label
from hrbench.stats._frontier import FrontierStep, frontier_lines, frontier_markdown
from hrbench.stats._human import human_text
from hrbench.stats._intervals import FEW_CLUSTERS_NOTE
from hrbench.stats._plot import plot_arms
from hrbench.stats._records import ArmReport, Comparison
from hrbench.stats._stopped import stop_lines, stop_markdown
from hrbench.stats._table import MIN_RUNS, bootstrap_note
from hrbench.stats._unscored import unscored_lines


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
        return plot_arms(
            self.arms,
            self.frontier,
            path,
            title=title,
            level=self.level,
            method=self.method,
            runs=self.runs,
            descriptive=self.descriptive,
        )


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
            number(a.accuracy),
            number(a.se),
            interval(a.ci_low, a.ci_high) + unscored_mark(a),
            str(a.n_items),
            f"{a.n_clusters}!" if a.few_clusters else str(a.n_clusters),
            str(a.n_runs),
            str(a.failures),
        ]
        for a in rep.arms
    ]
    lines = text_grid(header, rows)
    if any(a.few_clusters for a in rep.arms):
        lines.append(f"  ! {FEW_CLUSTERS_NOTE}")
    if said := _method_note(rep):
        lines.append(f"  ! {said}.")
    return lines


def _method_note(rep: Report) -> str | None:
    """The interval method's own caveat on these clusters (the bootstrap's on fewer than 30)."""
    return bootstrap_note(rep.method, min((a.n_clusters for a in rep.arms), default=0))


def _cost_lines(rep: Report, pct: str) -> list[str]:
    """The variance components and cost table, with its notes (list price, unpriced runs, failures)."""
    cost_header = ["arm", "var_within", "var_between", "usd", "usd_list", "usd/run", pct, "acc/usd", pct]
    cost_rows = [
        [
            a.arm,
            number(a.var_within, 4),
            number(a.var_between, 4),
            usd_text(a.usd),
            usd_text(a.usd_list, "-"),
            usd_text(a.usd_per_run, "-"),
            usd_interval(a.usd_per_run_low, a.usd_per_run_high),
            number(a.accuracy_per_usd, 1),
            interval(a.accuracy_per_usd_low, a.accuracy_per_usd_high, 1),
        ]
        for a in rep.arms
    ]
    lines = ["Variance components (score units squared) and cost:"]
    lines += text_grid(cost_header, cost_rows)
    lines.append(
        "  usd is what was paid (0 for cache and recording hits); usd_list prices every reply at what it "
        "cost when first paid, and usd/run and acc/usd use that list price, so arms compare by cost "
        "whatever the cache held."
    )
    logged = [f"{a.arm} ({a.usd_from_log} runs)" for a in rep.arms if a.usd_from_log]
    if logged:
        lines.append(
            f"  From the log, not paid here: the usd_list of {', '.join(logged)} is what the other "
            "tool's log records; usd counts those runs 0."
        )
    paid = [a.arm for a in rep.arms if a.usd_list is None and a.usd_per_run is not None]
    unrecorded = [a.arm for a in rep.arms if a.usd_from_log and a.usd_list is None and a.arm not in paid]
    if unrecorded:  # with the traces, a log arm's list price is NA only where its log records no cost
        lines.append(
            f"  usd_list of {', '.join(unrecorded)} is - (NA): its log records no cost for some or all of "
            "its runs (a logged cost of 0 counts 0)."
        )
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
            number(a.pass_k),
            interval(a.pass_k_low, a.pass_k_high),
            number(a.flip_rate),
            interval(a.flip_rate_low, a.flip_rate_high),
        ]
        for a in shown
    ]
    return lines + text_grid(["arm", head, pct, "flip rate", pct], rows)


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
            number(c.diff),
            number(c.se),
            interval(c.ci_low, c.ci_high),
            p_text(c.p_value),
            p_text(c.p_holm),
            str(c.n_items) + unscored_mark(c),
            number(c.se_unpaired),
        ]
        for c in rep.comparisons
    ]
    lines += text_grid(ch, crow)
    for c in rep.comparisons:
        if c.note:
            lines += textwrap.wrap(
                f"{c.arm_a} - {c.arm_b}: {c.note}.",
                width=100,
                initial_indent="  ",
                subsequent_indent="    ",
            )
    return lines


def render_markdown(rep: Report) -> str:
    """:meth:`Report.to_markdown` (see there)."""
    pct = f"{rep.level:.0%} CI"
    how = "clustered Wilson" if rep.method == "cluster" else f"cluster bootstrap, {rep.n_boot} resamples"
    n_items = max((a.n_items for a in rep.arms), default=0)
    scored = "" if rep.scorer is None else f"; scorer `{md_cell(rep.scorer)}`"
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
            number(a.accuracy),
            interval(a.ci_low, a.ci_high) + unscored_mark(a, "\\"),
            str(a.n_items),
            str(a.n_runs),
            str(a.failures),
            usd_text(a.usd),
            usd_text(a.usd_list, "-"),
            usd_text(a.usd_per_run, "-"),
        ]
        for a in rep.arms
    ]
    lines += md_table(header, rows)
    if any(a.usd_list is not None for a in rep.arms):
        lines += ["", "_usd/run is at list price (usd list: each reply at what it cost when first paid)._"]
    if rep.comparisons:
        lines += ["", "Paired differences (arm_a - arm_b, on the items both ran):", ""]
        ch = ["pair", "diff", pct, "p", "p_holm", "items"]
        crows = [
            [
                f"`{c.arm_a}` - `{c.arm_b}`",
                number(c.diff),
                interval(c.ci_low, c.ci_high),
                p_text(c.p_value),
                p_text(c.p_holm),
                str(c.n_items) + unscored_mark(c, "\\"),
            ]
            for c in rep.comparisons
        ]
        lines += md_table(ch, crows)
        notes = [f"- `{c.arm_a}` - `{c.arm_b}`: {md_cell(c.note)}." for c in rep.comparisons if c.note]
        if notes:
            lines += ["", *notes]
    lines += frontier_markdown(rep.frontier, pct)
    if any(a.few_clusters for a in rep.arms):
        lines += ["", f"_{FEW_CLUSTERS_NOTE}_"]
    if said := _method_note(rep):
        lines += ["", f"_{md_cell(said)}._"]
    if _stopped_note(rep):
        lines += ["", f"_{_stopped_note(rep)}_"]
    lines += unscored_lines(rep, markdown=True)
    lines += ["", f"<sub>{md_cell(rep.note)}</sub>"]
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
