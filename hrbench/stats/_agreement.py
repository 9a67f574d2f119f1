"""How far a judge can be trusted: its agreement with an exact or official scorer, and its flips.

:func:`judge_agreement` takes a benchmark scored by a judge (:func:`hrbench.judge_scorer`) on
labelled items and sets each row's verdict beside a reference verdict on the same row: the
exact (or any other) scorer applied to the text the judge graded, which the judge notes in the
row's trace (:func:`judged_text`), or the rows of another benchmark scored otherwise on the same
outputs (``against``; a cached rerun of the same spec with ``scorer = "exact"`` or an official
metric costs nothing). With more than one judge draw per row it also counts how often the
draws of one row disagree (a flip).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from hrbench.errors import ConfigError
from hrbench.records import Row

__all__ = [
    "JudgeAgreement",
    "JudgedRows",
    "judge_agreement",
    "judge_lines",
    "judge_markdown",
    "judge_section",
    "judge_text",
    "judged_text",
]

_UNSCORED = frozenset({"error", "budget_stop", "reasoning_exhausted"})  # runs no scorer saw


class JudgeAgreement(msgspec.Struct, kw_only=True):
    """A judge's agreement with a reference scorer on the same rows, and its flips.

    Attributes:
        reference: what the judge was held to (a scorer's name, or ``"benchmark ID"``).
        n: rows compared (labelled, judged and scored both ways).
        agree: rows on which the two verdicts are the same.
        rate, ci_low, ci_high: the agreement averaged as an accuracy is (over an item's rows,
            then over items: ``agree / n`` when every item has as many rows compared) and its
            interval at ``level``, the clustered one an accuracy gets (rows nested in items,
            items in clusters); no interval with one cluster.
        level: the interval's level.
        confusion: ``{"both_right", "judge_only", "reference_only", "both_wrong"}``: rows the
            judge and the reference both call right, only the judge, only the reference, neither.
        kappa: Cohen's kappa of the two verdicts (``None`` when chance agreement is 1).
        judge_runs: the most judge draws of a row.
        n_multi: rows with more than one judge draw.
        flipped: of those, rows whose draws did not all agree.
        flip_rate, flip_low, flip_high: the share of rows that flipped, averaged the same way,
            and its interval (``None`` without rows of several draws).
        skipped: rows left out (no label, an error or budget stop, no judged text or grades found).
        note: why rows were left out, or ``None``.
    """

    reference: str
    n: int
    agree: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    level: float
    confusion: dict[str, int]
    kappa: float | None
    judge_runs: int
    n_multi: int
    flipped: int
    flip_rate: float | None = None
    flip_low: float | None = None
    flip_high: float | None = None
    skipped: int = 0
    note: str | None = None


def _draws(outcome: str | None, pass_mark: int) -> list[bool] | None:
    """The judge's verdict of each draw, from a judged row's ``outcome`` (its grades)."""
    if not outcome:
        return None
    out = []
    for g in outcome.split():
        if g in ("correct", "incorrect"):
            out.append(g == "correct")
        elif g.isdigit():
            out.append(int(g) >= pass_mark)
        else:
            return None
    return out


def judged_text(trace: Any) -> str | None:
    """The text a judge graded in a run, from the run's trace; ``None`` when it graded none.

    The judge notes it before its first request (a ``note`` step whose ``source`` is
    :data:`~hrbench.scoring.JUDGED_SOURCE`): the arm's output as the judge read it, for
    every kind of arm (a prompt arm's reply, what a function arm returned, an outputs arm's
    imported text), not the model's last reply, which an arm may have read an answer out of.

    Example:
        >>> from hrbench.records import Step
        >>> judged_text([Step(ledger_id="r", text="The capital is Paris."),
        ...              Step(ledger_id="r", kind="note", source="judged", text="Paris")])
        'Paris'
    """
    from hrbench.scoring import JUDGED_SOURCE

    for s in trace or ():
        if s.kind == "note" and s.source == JUDGED_SOURCE:
            return s.text  # type: ignore[no-any-return]
    return None


def _rescored(bench: Any, scorer: Any) -> dict[tuple[str, str, int], bool | None]:
    """The reference scorer's verdict of each judged row, on the text the judge graded (:func:`judged_text`)."""
    traces = getattr(bench, "traces", None) or {}
    ref = getattr(bench, "reference", None)
    if ref is None:
        raise ConfigError("bench", type(bench).__name__, "needs a reference to rescore (or give `against`)")
    out: dict[tuple[str, str, int], bool | None] = {}
    for r in bench.rows:
        text = judged_text(traces.get(r.ledger_id))
        if text is None:
            continue
        score = scorer(ref.payload(r.item), text, ref.labels.get(r.item))
        out[(r.arm, r.item, r.run)] = score.correct
    return out


def _interval(
    flags: list[tuple[str, str, bool]], level: float
) -> tuple[float | None, float | None, float | None]:
    """A proportion of rows with the clustered interval an accuracy gets: (cluster, item, flag) per row."""
    from hrbench.stats._intervals import _compact, proportion_interval
    from hrbench.stats._table import _items, _table

    if not flags:
        return None, None, None
    runs: dict[str, int] = {}
    rows = []
    for cluster, item, flag in flags:
        runs[item] = runs.get(item, 0) + 1
        rows.append(Row(cluster=cluster, item=item, arm="x", run=runs[item], split="test", correct=flag,
                        outcome=None, failure_kind=None))  # fmt: skip
    it = _items(_table(rows), 0)
    g, n_g = _compact(it.cluster)
    p = float(it.y.mean())
    if n_g < 2:  # one cluster: no interval (as an accuracy gets none)
        return p, None, None
    iv = proportion_interval(it.y, g, n_g, level, float(it.k.sum()))
    return p, iv.low, iv.high


def judge_agreement(
    bench: Any,
    against: Any = None,
    scorer: Any = None,
    *,
    level: float = 0.95,
    pass_mark: int = 7,
) -> JudgeAgreement:
    """How often a judge's verdicts agree with an exact or official scorer's on the same rows.

    Args:
        bench: a benchmark scored by :func:`hrbench.judge_scorer` (a :class:`~hrbench.Bench`,
            with its traces and reference).
        against: the reference verdicts as another benchmark (or its rows) of the same arms,
            items and runs scored otherwise; rows are paired by arm, item and run. When
            ``None``, the text the judge graded in each row (:func:`judged_text`: the arm's
            output, for prompt, function and outputs arms alike) is scored by ``scorer``.
        scorer: the reference scorer (:func:`hrbench.exact_scorer` by default; any scorer,
            e.g. :func:`hrbench.squad_scorer`).
        level: the intervals' level.
        pass_mark: a rubric judge's pass mark (grades at or above it are "right"), to read
            each draw's verdict; as given to :func:`hrbench.judge_scorer` (7 by default).

    Returns:
        A :class:`JudgeAgreement`: the agreement rate with its interval, the confusion counts,
        Cohen's kappa and, with several judge draws per row, how often they flip.

    Raises:
        ConfigError: a bad ``level``; no reference to rescore by.

    Example:
        >>> from hrbench.records import Row
        >>> mk = lambda right, outcome: [Row(cluster=f"c{i}", item=f"q{i}", arm="a", run=1, split="test",
        ...     correct=ok, outcome=o, failure_kind=None) for i, (ok, o) in enumerate(zip(right, outcome))]
        >>> judged = mk([True, True, False, True], ["correct", "correct correct incorrect", "incorrect", "correct"])
        >>> exact = mk([True, False, False, True], [None] * 4)
        >>> a = judge_agreement(judged, against=exact)
        >>> a.agree, a.n, a.confusion["judge_only"], a.flipped, a.n_multi
        (3, 4, 1, 1, 1)
    """
    if not 0 < level < 1:
        raise ConfigError("level", level, "must be between 0 and 1, e.g. 0.95")
    rows = list(getattr(bench, "rows", bench))
    if against is not None:
        ref_rows = list(getattr(against, "rows", against))
        ref = {(r.arm, r.item, r.run): r.correct for r in ref_rows if r.failure_kind not in _UNSCORED}
        name = f"benchmark {getattr(against, 'id', 'rows')}"
    else:
        from hrbench.scoring import exact_scorer

        sc = scorer if scorer is not None else exact_scorer()
        ref, name = _rescored(bench, sc), str(getattr(sc, "name", sc))
    counts = dict.fromkeys(("both_right", "judge_only", "reference_only", "both_wrong"), 0)
    agree_flags: list[tuple[str, str, bool]] = []
    flip_flags: list[tuple[str, str, bool]] = []
    skipped, most = 0, 0
    for r in rows:
        draws = _draws(r.outcome, pass_mark)
        theirs = ref.get((r.arm, r.item, r.run))
        if r.correct is None or r.failure_kind in _UNSCORED or draws is None or theirs is None:
            skipped += 1
            continue
        mine, theirs = bool(r.correct), bool(theirs)
        key = (
            "both_right"
            if mine and theirs
            else "judge_only"
            if mine
            else "reference_only"
            if theirs
            else "both_wrong"
        )
        counts[key] += 1
        agree_flags.append((r.cluster, r.item, mine == theirs))
        most = max(most, len(draws))
        if len(draws) > 1:
            flip_flags.append((r.cluster, r.item, len(set(draws)) > 1))
    n = len(agree_flags)
    rate, lo, hi = _interval(agree_flags, level)
    f_rate, f_lo, f_hi = _interval(flip_flags, level)
    return JudgeAgreement(
        reference=name,
        n=n,
        agree=sum(f for _, _, f in agree_flags),
        rate=rate,
        ci_low=lo,
        ci_high=hi,
        level=level,
        confusion=counts,
        kappa=_kappa(counts),
        judge_runs=most,
        n_multi=len(flip_flags),
        flipped=sum(f for _, _, f in flip_flags),
        flip_rate=f_rate,
        flip_low=f_lo,
        flip_high=f_hi,
        skipped=skipped,
        note=None
        if not skipped
        else f"{skipped} row(s) left out: no label, an error or budget stop, or no output or grades to compare",
    )


def _kappa(c: Mapping[str, int]) -> float | None:
    """Cohen's kappa of two binary raters from their confusion counts."""
    n = sum(c.values())
    if n == 0:
        return None
    judge_yes = (c["both_right"] + c["judge_only"]) / n
    ref_yes = (c["both_right"] + c["reference_only"]) / n
    chance = judge_yes * ref_yes + (1 - judge_yes) * (1 - ref_yes)
    observed = (c["both_right"] + c["both_wrong"]) / n
    return None if chance >= 1 else (observed - chance) / (1 - chance)


def _pct(lo: float | None, hi: float | None) -> str:
    return "" if lo is None or hi is None else f" [{lo:.3f}, {hi:.3f}]"


def judge_lines(a: JudgeAgreement | Mapping[str, Any]) -> list[str]:
    """The report's judge section as text lines (``a`` may be the section as a dict).

    Example:
        >>> a = JudgeAgreement(reference="exact", n=4, agree=3, rate=0.75, ci_low=0.3, ci_high=0.95, level=0.95,
        ...     confusion={"both_right": 2, "judge_only": 1, "reference_only": 0, "both_wrong": 1},
        ...     kappa=0.5, judge_runs=1, n_multi=0, flipped=0)
        >>> print(judge_lines(a)[1])
          agrees with exact on 3 of 4 rows: 0.750 [0.300, 0.950]; kappa 0.500
    """
    if isinstance(a, Mapping):
        a = msgspec.convert(a, JudgeAgreement)
    c = a.confusion
    kappa = "NA" if a.kappa is None else f"{a.kappa:.3f}"
    rate = "NA" if a.rate is None else f"{a.rate:.3f}{_pct(a.ci_low, a.ci_high)}"
    out = [
        "Judge agreement:",
        f"  agrees with {a.reference} on {a.agree} of {a.n} rows: {rate}; kappa {kappa}",
        f"  both right {c['both_right']}, judge only {c['judge_only']}, {a.reference} only "
        f"{c['reference_only']}, both wrong {c['both_wrong']}",
    ]
    if a.n_multi:
        out.append(
            f"  {a.flipped} of {a.n_multi} rows judged {a.judge_runs} times flipped between draws: "
            f"{a.flip_rate:.3f}{_pct(a.flip_low, a.flip_high)}"
        )
    if a.note:
        out.append(f"  {a.note}")
    return out


def judge_markdown(a: JudgeAgreement | Mapping[str, Any]) -> list[str]:
    """The report's judge section as Markdown lines."""
    lines = judge_lines(a)
    return ["", "**" + lines[0].rstrip(":") + "**", "", *(f"- {ln.strip()}" for ln in lines[1:])]


def judge_text(section: Mapping[str, Any] | None, markdown: bool = False) -> str:
    """What the report's text (or Markdown) ends with: its judge section, or nothing."""
    if section is None:
        return ""
    return "\n".join(judge_markdown(section)) + "\n" if markdown else "\n" + "\n".join(judge_lines(section))


class JudgedRows(msgspec.Struct, kw_only=True):
    """A stored benchmark a judge scored, as its report's judge section reads it.

    A :class:`~hrbench.Bench` carries its reference, traces and scorer's name; a benchmark
    read back from a store is rows, traces and a spec, so the daemon's report and ``hrb view``
    hand :func:`~hrbench.stats.report` this instead of bare rows
    (:func:`hrbench.results.browse.judged_rows` builds it).

    Attributes:
        rows: the benchmark's rows (:class:`~hrbench.records.Row`).
        traces: ``{ledger_id: [Step, ...]}``: each run's steps, the note of the text the judge
            graded among them (:func:`judged_text`), which the exact scorer scores again.
        reference: the benchmark's :class:`~hrbench.Reference` (payloads and labels).
        pass_mark: the judge's pass mark (a rubric judge's grades at or above it are "right").
        scorer_name: the judge's name.

    Example:
        >>> from hrbench import Reference
        >>> from hrbench.records import Row, Step
        >>> rows = [Row(cluster="c", item="q1", arm="a", run=1, split="test", correct=True,
        ...             outcome="correct", failure_kind=None, ledger_id="b/a/q1/1")]
        >>> traces = {"b/a/q1/1": [Step(ledger_id="b/a/q1/1", text="Lima"),
        ...                        Step(ledger_id="b/a/q1/1", kind="note", source="judged", text="Lima"),
        ...                        Step(ledger_id="b/a/q1/1", text="CORRECT")]}
        >>> j = JudgedRows(rows=rows, traces=traces, reference=Reference({"q1": "Peru"}, labels=["Paris"]))
        >>> judge_section(j, 0.95)["confusion"]["judge_only"]
        1
    """

    rows: list[Row]
    traces: dict[str, Any]
    reference: Any
    pass_mark: int = 7
    scorer_name: str = "judge"


def judge_section(bench: Any, level: float) -> dict[str, Any] | None:
    """The report's judge section of a benchmark a judge scored (rescored exactly), else ``None``.

    ``bench`` is a :class:`~hrbench.Bench` whose scorer's name starts with ``judge``, or a
    :class:`JudgedRows`; anything else (bare rows, a frame) has no section, and neither has a
    benchmark with no row to compare.
    """
    judged = isinstance(bench, JudgedRows) or str(getattr(bench, "scorer_name", "")).startswith("judge")
    if not judged or getattr(bench, "reference", None) is None:
        return None
    a = judge_agreement(bench, level=level, pass_mark=getattr(bench, "pass_mark", 7))
    return msgspec.to_builtins(a) if a.n else None
