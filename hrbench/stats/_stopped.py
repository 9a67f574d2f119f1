"""What a report says of a benchmark that stopped when sure (a :class:`~hrbench.StopWhenSure` rule).

A stopped benchmark looked at its data after every cluster, so the fixed-sample interval and
p-value of a paired difference are not valid for it: :func:`apply_stop` removes them from the
report's comparisons (each says why) and puts the sequential test's own numbers in
``report.stop``: the e-value and anytime p of each pair, the difference with its time-uniform
confidence sequence (valid at every look), which arm won, after how many clusters of how many,
what share of the full run it cost, and the estimand ("clusters like these": the clusters the
reference's were drawn from; "about this reference only" for ``goal = "full_run"``). The
per-arm intervals stay, marked "conditional on the clusters run".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "CONDITIONAL",
    "NOT_VALID",
    "RAN_THROUGH",
    "RAN_THROUGH_PRINTOUT",
    "apply_stop",
    "headline",
    "ran_through",
    "reported_rows",
    "stop_lines",
    "stop_markdown",
    "stop_section",
]

CONDITIONAL = "conditional on the clusters run (the benchmark stopped when sure)"
"""The note on each arm's interval in the report of a stopped benchmark."""

NOT_VALID = (
    "fixed-sample interval and p not shown: the benchmark stopped when sure, looking after every cluster, "
    "so they are not valid; see the stop's confidence sequence and anytime p"
)
"""The note on each paired comparison of a stopped benchmark."""

_SURE = ("decided", "equivalent", "tolerance")

RAN_THROUGH = (
    "the stop rule ran its most clusters, a number fixed before it began: the fixed design's interval and p over "
    "them are shown to describe the difference, not to decide it (the stop's own decisions hold at alpha; taken "
    "as a second decision on the same clusters, a p below alpha here would add its false positives to the stop's)"
)
"""The note on each paired comparison of a benchmark that ran to its stop rule's most clusters.

The rule (docs/guides/stop-when-sure.md, "The guarantee, in plain words"): a stop rule's
decisions are its sequential test's; the fixed design's numbers over the clusters it ran are
shown, labelled, and are never a second decision. Under equal arms the stop decides an arm
better at most ``alpha`` of the time; counting the fixed p below ``alpha`` as a decision too
adds the fixed test's false positives: in ``bench/stop_claims.py`` (two arms, goal ``"rank"``
without a margin, ``alpha = 0.05``) 0.052-0.056 in all, where the stop alone decided
0.013-0.014. With a margin or a tolerance, the benchmarks that run to the end are those whose
difference looked larger: with the plan's margin and ``max_clusters`` the plan's clusters,
the fixed p fell below 0.05 in 0.28-0.42 of them (2 and 5 arms), so no bound given that the rule did not
stop earlier holds.
"""


def stop_section(record: Mapping[str, Any]) -> dict[str, Any]:
    """The report's ``stop`` section from a stop record (:class:`~hrbench.runner._stopping.StopRecord`'s dict).

    Its ``headline`` is :func:`headline`'s line, which the report, the printout and ``hrb view`` show.

    Example:
        >>> s = stop_section({"reason": "decided", "clusters": 4, "of": 20, "rows": 90, "full_rows": 400,
        ...                   "winner": "new", "summary": {"alpha": 0.05, "method": "exact"}, "pairs": []})
        >>> s["stopped_when_sure"], s["share"], s["row_share"], s["estimand"]
        (True, 0.2, 0.225, 'clusters like these')
    """
    summary = dict(record.get("summary") or {})
    of = int(record.get("of") or 0)
    full = int(record.get("full_rows") or 0)
    reason = str(record.get("reason"))
    clusters = int(record.get("clusters") or 0)
    out = {
        "reason": reason,
        "stopped_when_sure": reason in _SURE,
        "winner": record.get("winner"),
        "clusters": clusters,
        "of": of,
        "planned": record.get("planned"),
        "share": clusters / of if of else None,
        "rows": int(record.get("rows") or 0),
        "full_rows": full,
        "row_share": (int(record.get("rows") or 0) / full) if full else None,
        "unreported_rows": int(record.get("unreported_rows") or 0),
        "unreported_usd": float(record.get("unreported_usd") or 0.0),
        "order_seed": record.get("order_seed"),
        "alpha": summary.get("alpha"),
        "method": summary.get("method"),
        "goal": summary.get("goal"),
        "estimand": summary.get("estimand") or "clusters like these",
        "pairs": [dict(p) for p in record.get("pairs") or []],
        "active_arms": list(record.get("active_arms") or []),
        "margin": summary.get("margin"),
        "order": summary.get("order") or "uniform",
        "fixed_valid": ran_through(record),
    }
    out["headline"] = headline(out)
    return out


def ran_through(record: Mapping[str, Any]) -> bool:
    """Whether a stop rule ran its most clusters without stopping sooner: a size fixed before it began.

    A report then shows the fixed design's interval and p-value over those clusters, labelled
    descriptive (:data:`RAN_THROUGH`): the stop's decisions are the decisions.

    Example:
        >>> ran_through({"reason": "max_clusters", "clusters": 5, "planned": 5}), ran_through({"reason": "decided"})
        (True, False)
    """
    planned = record.get("planned")
    clusters = int(record.get("clusters") or 0)
    return record.get("reason") == "max_clusters" and planned is not None and clusters >= int(planned) > 0


def reported_rows(bench: Any) -> Any:
    """The rows a stopped benchmark reports: those of its committed clusters (and the dev split's).

    The finished rows of clusters cancelled at the stop (``reportable = False`` on a reportable
    split) never entered the test: the report leaves them out (the stop section counts them and
    their cost). A frame or a mapping of columns is returned as it is.

    Example:
        >>> rows = [{"split": "test", "reportable": False}, {"split": "dev", "reportable": False}]
        >>> reported_rows(rows)
        [{'split': 'dev', 'reportable': False}]
    """
    rows = getattr(bench, "rows", bench)
    if hasattr(rows, "columns") or isinstance(rows, Mapping):
        return bench

    def keep(r: Any) -> bool:
        get = r.get if isinstance(r, Mapping) else lambda k: getattr(r, k)
        return bool(get("reportable")) or get("split") == "dev"

    return [r for r in rows if keep(r)]


def apply_stop(rep: Any, record: Mapping[str, Any] | None) -> Any:
    """Put a stop record in a :class:`~hrbench.stats.Report`: ``rep.stop``, the notes, no fixed-sample p.

    Does nothing without a record. Returns ``rep`` (changed in place).
    """
    if not record:
        return rep
    rep.stop = stop_section(record)
    if rep.stop["fixed_valid"]:  # a size fixed in advance: the fixed design's numbers, shown to describe
        for c in rep.comparisons:
            if c.note is None or RAN_THROUGH not in c.note:
                c.note = RAN_THROUGH if not c.note else f"{c.note}; {RAN_THROUGH}"
        return rep
    for a in rep.arms:
        if a.note is None or CONDITIONAL not in a.note:
            a.note = CONDITIONAL if not a.note else f"{a.note}; {CONDITIONAL}"
    from hrbench.stats._comparisons import reading_note  # numpy's: on the first stopped report only

    for c in rep.comparisons:
        # the note on how to read the interval and p withheld is withheld with them
        said = reading_note(c) if c.ci_low is not None else None
        if said and c.note:
            c.note = "; ".join(part for part in c.note.split("; ") if part != said) or None
        c.ci_low = c.ci_high = c.p_value = c.p_holm = None
        if c.note is None or NOT_VALID not in c.note:
            c.note = NOT_VALID if not c.note else f"{c.note}; {NOT_VALID}"
    return rep


def _num(v: Any, digits: int = 3) -> str:
    return "NA" if v is None else f"{float(v):.{digits}f}"


def _e(v: Any) -> str:
    return "NA" if v is None else (f"{float(v):.3g}" if float(v) < 1e6 else f"{float(v):.2e}")


def _decided(s: Mapping[str, Any]) -> str:
    """What the stop decided, whatever ended it: ``"terse was decided better"``, ``"1 of 3 pairs were decided"`` or ``""``.

    A pair decided along the way stays decided (its test holds whenever the benchmark stops), so
    a benchmark that then ran to its most clusters, or that a budget or a cancel stopped, still
    names it: the winner when one arm was decided better than every other it is compared with.
    """
    pairs = s.get("pairs") or []
    n = sum(1 for p in pairs if p.get("decided"))
    if s.get("winner"):
        return f"{s['winner']} was decided better"
    return f"{n} of {len(pairs)} pairs {'was' if n == 1 and len(pairs) == 1 else 'were'} decided" if n else ""


def headline(s: Mapping[str, Any]) -> str:
    """The stop section's one-line account: why it stopped, after how many clusters, and what it decided.

    The rule (docs/guides/stop-when-sure.md, "In a benchmark"): the reason says what ended the
    benchmark, and what was decided is said whatever the reason (:func:`_decided`); only a stop
    that decided no pair and was not sure reads "Not decided".

    Example:
        >>> s = {"reason": "max_clusters", "clusters": 12, "of": 12, "row_share": None, "winner": "terse",
        ...      "goal": "tolerance", "pairs": [{"decided": "terse"}]}
        >>> headline(s)
        'Stopped at its most clusters before every difference was known within the tolerance, after 12 of 12 clusters; terse was decided better.'
    """
    reason, got = s["reason"], _decided(s)
    where = f"after {s['clusters']} of {s['of']} clusters"
    share = "" if s["row_share"] is None else f" ({s['row_share']:.0%} of the full run's runs{_cut(s)})"
    if reason == "decided":
        won = f": {s['winner']} is better" if s.get("winner") else ""
        return f"Stopped when sure{won}, {where}{share}."
    if reason == "tolerance":
        won = f"; {got}" if got else ""
        return f"Stopped when sure: every difference is known within the tolerance{won}, {where}{share}."
    if reason == "equivalent":
        won = f"; {s['winner']} is better" if s.get("winner") else ""
        return (
            f"Stopped when sure: no difference larger than {_num(s.get('margin'))} where none was decided{won}, "
            f"{where}{share}."
        )
    if reason == "running":
        return f"Stopping when sure: still running, {s['clusters']} of {s['of']} clusters committed so far."
    if reason == "max_clusters":
        fixed = (
            "; the fixed design's interval and p over them are shown, to describe, not to decide"
            if s.get("fixed_valid")
            else ""
        )
        if not got:
            return f"Not decided: stopped at its most clusters, {where}{share}{fixed}."
        unmet = (
            "every difference was known within the tolerance"
            if s.get("goal") == "tolerance"
            else "every pair was decided"
        )
        return f"Stopped at its most clusters before {unmet}, {where}{share}; {got}{fixed}."
    what = "the budget stopped it" if reason == "budget" else "cancelled"
    then = (
        "a resume with a larger budget goes on"
        if reason == "budget"
        else "a resume goes on with the same order and test"
    )
    if got:
        return f"Stopped before the end ({what}) {where}{share}; {got} so far; {then}."
    return f"Not decided: {what} {where}{share}; {then}."


def _pair_line(p: Mapping[str, Any], margin: Any) -> str:
    dec = f"decided: {p['decided']} better" if p.get("decided") else "not decided"
    if not p.get("decided") and p.get("within_margin"):
        dec = f"settled: no difference larger than {_num(margin)}"
    return (
        f"{p['a']} - {p['b']}: diff {_num(p.get('diff'))}, confidence sequence "
        f"[{_num(p.get('cs_low'))}, {_num(p.get('cs_high'))}], e-value {_e(p.get('e_value'))}, "
        f"anytime p {_num(p.get('p_anytime'), 4)}; {dec}"
    )


RAN_THROUGH_PRINTOUT = (
    "The stop rule ran its most clusters, a number fixed before it began: the report shows the fixed design's paired "
    "differences over them, to describe the difference, not to decide it (the stop's own decisions hold at alpha; "
    "taken as a second decision on the same clusters, a p below alpha there would add its false positives to the "
    "stop's)."
)
"""What a benchmark's printout, which shows no paired differences, says in place of :data:`RAN_THROUGH`."""


def stop_lines(s: Mapping[str, Any], pairs_follow: bool = True) -> list[str]:
    """The text lines a report (or a benchmark's printout) shows for its stop section.

    Args:
        s: the stop section (:func:`stop_section`).
        pairs_follow: whether paired differences follow these lines (a report's); a
            benchmark's printout shows none, so it points to the report for them.
    """
    lines = [f"  {headline(s)}"]
    for p in s.get("pairs") or []:
        lines.append(f"    {_pair_line(p, s.get('margin'))}")
    how = (
        "clusters drawn with probabilities from earlier benchmarks of this reference, each weighted by the "
        "inverse of its probability"
        if s.get("order") == "informative"
        else "clusters in a seeded order"
    )
    margin = (
        "" if s.get("margin") is None else f" A pair is settled as no different within +-{_num(s['margin'])}."
    )
    lines.append(
        f"  Sequential test: {s.get('method')}, alpha {s.get('alpha')}, {how} "
        f"(seed {s.get('order_seed')}); the confidence sequence and anytime p hold at every look.{margin} "
        f"Estimand: {s.get('estimand')}."
    )
    if s.get("unreported_rows"):
        lines.append(
            f"  {s['unreported_rows']} run(s) of clusters cancelled at the stop are kept, not reportable; "
            f"they cost {s['unreported_usd']:.4f} USD (counted in the spend)."
        )
    if s.get("fixed_valid") and not pairs_follow:
        lines.append(f"  {RAN_THROUGH_PRINTOUT}")
    elif s.get("fixed_valid"):
        lines.append(f"  The paired differences below are the fixed design's: {RAN_THROUGH}.")
    else:
        lines.append(f"  Per-arm intervals are {CONDITIONAL}; no fixed-sample p is valid here.")
    return lines


def stop_markdown(s: Mapping[str, Any]) -> list[str]:
    """The Markdown lines of a stop section (a quoted headline, a table of pairs, the notes)."""
    lines = [f"> **{headline(s)}**", ""]
    if s.get("pairs"):
        lines += [
            "| pair | diff | confidence sequence | e-value | anytime p | decided |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for p in s["pairs"]:
            lines.append(
                f"| `{p['a']}` - `{p['b']}` | {_num(p.get('diff'))} | [{_num(p.get('cs_low'))}, "
                f"{_num(p.get('cs_high'))}] | {_e(p.get('e_value'))} | {_num(p.get('p_anytime'), 4)} | "
                f"{p.get('decided') or ('within ' + _num(s.get('margin')) if p.get('within_margin') else '-')} |"
            )
        lines.append("")
    tail = (
        f"Fixed design's differences: {RAN_THROUGH}."
        if s.get("fixed_valid")
        else f"Per-arm intervals are {CONDITIONAL}."
    )
    lines.append(
        f"_Sequential test {s.get('method')}, alpha {s.get('alpha')}, seeded cluster order (seed "
        f"{s.get('order_seed')}); estimand: {s.get('estimand')}. {tail}_"
    )
    return [*lines, ""]


def _cut(s: Mapping[str, Any]) -> str:
    """What the runs share counts beyond the clusters reported: the runs of cancelled clusters."""
    n = s["unreported_rows"]
    return f", {n} of them in clusters cancelled at the stop, paid and not reported" if n else ""
