"""A CI gate: is a candidate benchmark worse than a baseline by more than a tolerated drop?

:func:`gate` pairs the two benchmarks on the items both ran (an arm of each), takes the paired
clustered difference ``candidate - baseline`` of :func:`~hrbench.stats.compare` and fails only
when the whole one-sided interval lies below ``-max_drop``: the candidate is worse by more than
``max_drop`` with confidence ``1 - alpha``. A difference that noise could explain passes.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from hrbench._util.forms import check_one_of
from hrbench.errors import ConfigError, NotFound
from hrbench.records import Row
from hrbench.stats._consistency import label
from hrbench.stats._stopped import ran_through

__all__ = ["GateResult", "gate"]

Decision = Literal["pass", "fail", "cannot"]

_EXIT = {"pass": 0, "fail": 1, "cannot": 3}


class GateResult(msgspec.Struct, kw_only=True):
    """What :func:`gate` concluded, and why.

    Attributes:
        decision: ``"fail"`` (the candidate is worse than the baseline by more than
            ``max_drop`` at confidence ``1 - alpha``), ``"pass"`` (it is not) or ``"cannot"``
            (no comparison could be made: ``reason`` says why).
        reason: the decision in one sentence.
        candidate, baseline: what was compared (a benchmark id, a file, ``"rows"``).
        arm_candidate, arm_baseline: the arm of each that was compared.
        diff: candidate accuracy minus baseline accuracy on the items both ran (a fraction).
        ci_low, ci_high: the two-sided ``1 - 2 * alpha`` interval of ``diff``; ``ci_high`` is its
            one-sided ``1 - alpha`` upper bound, which the decision reads.
        confidence: ``1 - alpha``.
        max_drop, alpha: as given.
        n_items, n_clusters: the items both ran and their clusters.
        accuracy_candidate, accuracy_baseline: each arm's accuracy on those items.
        human: when either benchmark has human grades of the compared arm's rows, the
            difference as humans would grade it, by PPI++ (a
            :class:`~hrbench.stats._ppi.GradedEstimate` as builtins, at level ``1 - 2 * alpha``):
            the decision then reads its interval; ``None`` otherwise.
        descriptive: fewer than 5 runs per item: the interval covers the sampling of items only.
        note: how to read the interval (no disagreement, few clusters disagreeing), or ``None``.
        exit_code: 0 pass, 1 fail, 3 cannot (``hrb gate``'s exit code).
        metric: what is gated: ``"accuracy"``, ``"pass^k"`` (the chance that ``pass_k_runs``
            runs of an item are all right) or ``"flip_rate"`` (the chance that two runs of an
            item disagree; there a rise is the drop: the gate fails when the candidate's flip
            rate is higher by more than ``max_drop``). ``diff``, its interval and the
            ``accuracy_*`` fields are then that metric's.
        pass_k_runs: the ``k`` of ``pass^k``, or ``None``.
        n_items_candidate, n_items_baseline: the items each side ran of the compared arm (by
            item id, labelled or not).
        n_items_not_in_baseline: the candidate's items the baseline did not run; the gate refuses
            a baseline that holds fewer than half of the candidate's items (:func:`gate`).
        n_items_not_in_candidate: the baseline's items the candidate did not run.
        coverage: when the decision is not on every item of both sides, what it left out, in one
            clause (``"22 of them are not in the baseline"``); ``None`` when it is.
    """

    decision: Decision
    reason: str
    candidate: str
    baseline: str
    arm_candidate: str | None = None
    arm_baseline: str | None = None
    diff: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float
    max_drop: float
    alpha: float
    n_items: int = 0
    n_clusters: int = 0
    accuracy_candidate: float | None = None
    accuracy_baseline: float | None = None
    human: dict[str, Any] | None = None
    descriptive: bool = False
    note: str | None = None
    exit_code: int = 0
    metric: str = "accuracy"
    pass_k_runs: int | None = None
    n_items_candidate: int = 0
    n_items_baseline: int = 0
    n_items_not_in_baseline: int = 0
    n_items_not_in_candidate: int = 0
    coverage: str | None = None

    def __post_init__(self) -> None:
        self.exit_code = _EXIT[self.decision]


def _stopped(field: str) -> str:
    """Why a benchmark that ran under a stop rule cannot be gated (its clusters were chosen by the data)."""
    return (
        f"the {field} ran under a stop rule (stop when sure), so which clusters it ran depended on "
        "its results and the fixed-sample interval the gate uses is not valid for it; gate "
        "benchmarks run in full (without --stop or a [stop] table)"
    )


def _as_dict(stop: Any) -> dict[str, Any]:
    return dict(stop) if isinstance(stop, dict) else stop.to_dict()


def _stored(x: Any) -> bool:
    """Whether ``x`` names a stored benchmark (an id, prefix or name), not a rows file or rows."""
    return isinstance(x, (str, os.PathLike)) and not Path(x).is_file()


def _source(x: Any, store: Any, field: str) -> tuple[list[Row], str, Any]:
    """The rows of a benchmark given as a Bench, rows, a rows file, or a stored id or name.

    Returns:
        ``(rows, name, stop)``: ``stop`` is its stop rule's record (``None``: it ran in full, or
        a rows file, which keeps none).
    """
    if _stored(x):
        bid = store.benchmark_resolve(str(x))
        if bid is None:
            raise NotFound(
                f"{field}: no file and no stored benchmark has this id, id prefix or name (got {str(x)!r})",
                benchmark=str(x),
                field=field,
            )
        return store.rows_get(bid), bid, store.benchmark_stop_get(bid)
    if isinstance(x, (str, os.PathLike)):
        from hrbench.rowfile import read_rows

        return read_rows(Path(x), field), str(x), None
    rows = list(getattr(x, "rows", x))
    return rows, str(getattr(x, "id", "rows")), getattr(x, "stop", None)


def _arms(rows: Sequence[Any]) -> list[str]:
    return list(dict.fromkeys(r.arm if hasattr(r, "arm") else r["arm"] for r in rows))


def _pick(arm: str | None, cand: list[str], base: list[str]) -> tuple[str, str] | str:
    """The arms to compare, or why none can be.

    Raises:
        ConfigError: no ``arm`` named while the two sides share more than one arm (or none).
    """
    if not cand or not base:
        return f"the {'candidate' if not cand else 'baseline'} has no rows"
    if arm is not None:
        for what, arms in (("candidate", cand), ("baseline", base)):
            if arm not in arms:
                return f"arm {arm!r} is not in the {what} (its arms: {', '.join(arms)})"
        return arm, arm
    if len(cand) == 1 and len(base) == 1:
        return cand[0], base[0]
    shared = [a for a in cand if a in base]
    if len(shared) == 1:
        return shared[0], shared[0]
    raise ConfigError(  # a missing option is bad input (exit 2), not a comparison that failed
        "arm",
        None,
        f"the benchmarks have several arms (candidate: {', '.join(cand)}; baseline: {', '.join(base)}): "
        "name the one to gate with `arm` (`--arm`)",
    )


def _check(max_drop: float, alpha: float, metric: str) -> None:
    from hrbench.stats._consistency import METRICS

    check_one_of("metric", metric, METRICS)
    if not (isinstance(max_drop, (int, float)) and math.isfinite(max_drop) and 0 <= max_drop < 1):
        raise ConfigError("max_drop", max_drop, "must be a number from 0 up to (not including) 1")
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 0.5):
        raise ConfigError("alpha", alpha, "must be a number between 0 and 0.5 (0.05 is 95% confidence)")


def gate(
    candidate: Any,
    baseline: Any,
    arm: str | None = None,
    max_drop: float = 0.02,
    alpha: float = 0.05,
    *,
    store: Any = None,
    metric: str = "accuracy",
    pass_k: int | None = None,
) -> GateResult:
    """Whether ``candidate`` is worse than ``baseline`` by more than ``max_drop``, with confidence.

    The two are paired on the items both ran, each item's mean score over runs taken per arm,
    and compared as :func:`~hrbench.stats.compare` compares two arms (clustered by the items'
    clusters, the boundary-aware interval) at level ``1 - 2 * alpha``: the upper end of that
    interval is the one-sided ``1 - alpha`` upper bound of ``candidate - baseline``. The gate
    fails when that bound is below ``-max_drop``; otherwise it passes. Fewer than 5 runs per
    item are allowed (the result is then ``descriptive``).

    The items are matched by id. A baseline that holds fewer than half of the items the
    candidate's arm ran is refused (``ConfigError``, ``hrb gate`` exits 2): a decision on the
    part both ran would pass or fail the candidate on items it mostly never compared, and such a
    baseline is most often a benchmark of another reference. Above that, the result says on how
    many of the candidate's items it was decided (``n_items`` of ``n_items_candidate``) and
    ``coverage`` what was left out (docs/guides/ci-gate.md).

    Args:
        candidate: the benchmark under test: a :class:`~hrbench.Bench`, its rows, a rows file
            (``hrb rows ID --format jsonl|csv|parquet -o FILE``), or a stored benchmark's id,
            unique id prefix or name.
        baseline: the benchmark to hold it to, in any of the same forms.
        arm: the arm to compare, present in both; ``None`` when each has one arm (their names
            may differ) or exactly one arm name is in both.
        max_drop: the drop in accuracy tolerated (a fraction: 0.02 is 2 points).
        alpha: the chance of failing a candidate that is not worse by more than ``max_drop``.
        store: the :class:`~hrbench.store.Store` ids and names are looked up in (the default
            state directory's when ``None`` and one is needed).
        metric: ``"accuracy"`` (the default), ``"pass^k"`` or ``"flip_rate"``
            (:mod:`hrbench.stats._consistency`): gate a drop in ``pass^k`` (every one of ``k``
            runs of an item right) or a rise in the flip rate instead, by the same paired
            interval (``hrb gate --metric pass^k``).
        pass_k: the ``k`` of ``pass^k`` (default: the fewest runs per item of the two).

    Returns:
        A :class:`GateResult`; ``decision == "cannot"`` (with the reason) when the items they share
        have no label, the arm is missing, no interval can be had (one cluster, an arm
        whose every run failed), or either stopped under a stop rule (:class:`~hrbench.StopWhenSure`:
        the clusters it ran depended on its results, so no fixed-sample interval holds for it);
        one that ran its rule's most clusters without deciding is gated as a fixed design of
        that size (:func:`~hrbench.stats._stopped.ran_through`).

    Raises:
        ConfigError: ``max_drop`` not in [0, 1) or ``alpha`` not in (0, 0.5); a file that is
            not a rows file; no ``arm`` named when the two sides do not share exactly one arm
            and do not each have one (a missing option: ``hrb gate`` exits 2); a baseline that
            holds fewer than half of the candidate's items (the message names both and the counts).
        NotFound: a string that names no file and no stored benchmark.

    Example:
        >>> rows = lambda arm, right: [Row(cluster=f"c{i}", item=f"q{i}", arm=arm, run=r, split="test",
        ...     correct=i < right, outcome=None, failure_kind=None) for i in range(40) for r in range(5)]
        >>> gate(rows("new", 20), rows("old", 36)).decision
        'fail'
        >>> gate(rows("new", 35), rows("old", 36)).decision
        'pass'
    """
    from hrbench.stats._comparisons import compare

    _check(max_drop, alpha, metric)
    if store is None and (_stored(candidate) or _stored(baseline)):  # one store for both
        from hrbench.store import Store

        store = Store()
    rows_c, name_c, stop_c = _source(candidate, store, "candidate")
    rows_b, name_b, stop_b = _source(baseline, store, "baseline")
    head: dict[str, Any] = dict(
        candidate=name_c, baseline=name_b, confidence=1 - alpha, max_drop=max_drop, alpha=alpha
    )
    for stop, field in ((stop_c, "candidate"), (stop_b, "baseline")):
        if stop is not None and not ran_through(_as_dict(stop)):
            return GateResult(decision="cannot", reason=f"cannot compare: {_stopped(field)}", **head)
    picked = _pick(arm, _arms(rows_c), _arms(rows_b))
    if isinstance(picked, str):
        return GateResult(decision="cannot", reason=f"cannot compare: {picked}", **head)
    a_c, a_b = picked
    head.update(arm_candidate=a_c, arm_baseline=a_b)
    head.update(_overlap(_items(rows_c, a_c), _items(rows_b, a_b), (name_c, name_b), a_c))
    both = [_as_row(r, "candidate") for r in rows_c if _arm(r) == a_c]
    both += [_as_row(r, "baseline") for r in rows_b if _arm(r) == a_b]
    c = compare(
        both,
        "candidate",
        "baseline",
        level=1 - 2 * alpha,
        descriptive=True,
        warn=False,
        metric=metric,
        pass_k=pass_k,
    )
    head.update(metric=metric, pass_k_runs=c.pass_k_runs)
    head.update(
        diff=c.diff,
        ci_low=c.ci_low,
        ci_high=c.ci_high,
        n_items=c.n_items,
        n_clusters=c.n_clusters,
        accuracy_candidate=c.accuracy_a,
        accuracy_baseline=c.accuracy_b,
        descriptive=c.descriptive,
        note=c.note,
        coverage=_coverage(c.n_items, head),
    )
    human = _human(both, [(candidate, a_c, "candidate"), (baseline, a_b, "baseline")], store, 1 - 2 * alpha)
    if human is not None:  # human grades: the decision reads the PPI++ interval
        head.update(human=human)
        if human["ci_high"] is not None:
            c = msgspec.structs.replace(
                c, diff=human["estimate"], ci_low=human["ci_low"], ci_high=human["ci_high"]
            )
            head.update(diff=c.diff, ci_low=c.ci_low, ci_high=c.ci_high)
    if c.ci_high is None or c.diff is None:
        why = (c.note or "no interval").removeprefix("no interval: ")
        return GateResult(decision="cannot", reason=f"cannot compare: {why}", **head)
    return _decide(c, human, metric, max_drop, alpha, head)


def _items(rows: Sequence[Any], arm: str) -> set[Any]:
    """The item ids of ``arm``'s rows."""
    return {r.item if hasattr(r, "item") else r["item"] for r in rows if _arm(r) == arm}


def _overlap(cand: set[Any], base: set[Any], names: tuple[str, str], arm: str) -> dict[str, int]:
    """The item counts of :class:`GateResult`, after refusing a baseline that holds under half the candidate's items.

    Raises:
        ConfigError: the baseline ran fewer than half of the items the candidate's arm ran (none
            included): a decision on that part would speak for items the baseline never saw, and
            such a baseline is most often a benchmark of another reference.
    """
    shared = len(cand & base)
    if 2 * shared < len(cand):
        raise ConfigError(
            "baseline",
            names[1],
            f"holds {shared} of the {len(cand)} items the candidate {names[0]!r} ran (arm {arm!r}); "
            f"{len(cand) - shared} are not in it, and the gate decides only against a baseline that "
            "holds at least half of the candidate's items: is the baseline a benchmark of another "
            "reference?",
        )
    return dict(
        n_items_candidate=len(cand),
        n_items_baseline=len(base),
        n_items_not_in_baseline=len(cand) - shared,
        n_items_not_in_candidate=len(base) - shared,
    )


def _coverage(n_items: int, head: dict[str, Any]) -> str | None:
    """What a decision on ``n_items`` items leaves out of either side, in one clause; ``None`` when nothing.

    Example:
        >>> _coverage(6, dict(n_items_candidate=28, n_items_not_in_baseline=22, n_items_not_in_candidate=0))
        '22 of them are not in the baseline'
        >>> _coverage(40, dict(n_items_candidate=40, n_items_not_in_baseline=0, n_items_not_in_candidate=0))
    """
    missing, extra = head["n_items_not_in_baseline"], head["n_items_not_in_candidate"]
    unscored = head["n_items_candidate"] - missing - n_items
    parts = [
        f"{missing} of them {'is' if missing == 1 else 'are'} not in the baseline" if missing else "",
        f"{unscored} {'was' if unscored == 1 else 'were'} not scored on both sides (no label, or no "
        "scored run in one)"
        if unscored > 0
        else "",
        f"the baseline's {extra} other item{'' if extra == 1 else 's'} {'is' if extra == 1 else 'are'} "
        "not in the candidate"
        if extra
        else "",
    ]
    return "; ".join(p for p in parts if p) or None


def _decide(
    c: Any, human: dict[str, Any] | None, metric: str, max_drop: float, alpha: float, head: dict[str, Any]
) -> GateResult:
    """The gate's decision on the comparison ``c``: fail only when the bound shows a drop past ``max_drop``.

    For ``flip_rate`` a rise is the drop: it fails when the lower bound is above ``max_drop``.
    """
    what = "" if metric == "accuracy" else f" in {label(metric, c.pass_k_runs)}"
    if metric == "flip_rate":  # a rise in the flip rate is the drop
        assert c.ci_low is not None
        bound = f"its {1 - alpha:.0%} lower bound {c.ci_low:+.3f}"
        if c.ci_low > max_drop:
            reason = f"candidate is worse by more than {max_drop:.3f}{what}: {bound} is above {max_drop:+.3f}"
            return GateResult(decision="fail", reason=reason, **head)
        reason = f"no rise of more than {max_drop:.3f}{what} shown: {bound} is not above {max_drop:+.3f}"
        return GateResult(decision="pass", reason=reason, **head)
    bound = f"its {1 - alpha:.0%} upper bound {c.ci_high:+.3f}"
    if human is not None and human["ci_high"] is not None:
        bound = f"as humans grade it (PPI++ on {human['n_graded']} human grades), {bound}"
    if c.ci_high < -max_drop:
        reason = f"candidate is worse by more than {max_drop:.3f}{what}: {bound} is below {-max_drop:+.3f}"
        return GateResult(decision="fail", reason=reason, **head)
    reason = f"no drop of more than {max_drop:.3f}{what} shown: {bound} is not below {-max_drop:+.3f}"
    return GateResult(decision="pass", reason=reason, **head)


def _human(
    rows: list[Row], sides: list[tuple[Any, str, str]], store: Any, level: float
) -> dict[str, Any] | None:
    """The PPI++ estimate of ``candidate - baseline`` from either side's human grades of its arm, or ``None``.

    A side's grades are a benchmark's own (:func:`hrbench.human_grades`) or, for a stored one,
    the store's (:meth:`~hrbench.store.Store.grades_get`); a rows file has none.
    """
    from hrbench.stats._ppi import ppi_estimate

    grades = []
    for x, arm, name in sides:
        if _stored(x):
            got = store.grades_get(store.benchmark_resolve(str(x)))
        else:
            got = getattr(x, "grades", None) or []
        grades += [{**msgspec.to_builtins(g), "arm": name} for g in got if _field(g, "arm") == arm]
    if not grades:
        return None
    s = ppi_estimate(rows, grades, level, judge={"arms": [], "comparisons": []})
    return None if s is None or not s.pairs else msgspec.to_builtins(s.pairs[0])


def _field(g: Any, name: str) -> Any:
    return g[name] if isinstance(g, dict) else getattr(g, name)


def _arm(r: Any) -> str:
    return str(r.arm if hasattr(r, "arm") else r["arm"])


def _as_row(r: Any, arm: str) -> Row:
    """A row renamed to ``arm`` (a dict becomes a :class:`Row`)."""
    from msgspec.structs import replace

    if isinstance(r, Row):
        return replace(r, arm=arm)
    return msgspec.convert({**dict(r), "arm": arm}, Row, strict=False)
