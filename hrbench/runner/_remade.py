"""Runs made again on resume: what was paid for them before, and the time a re-scored run keeps.

A run whose row was lost in a crash, or replaced on resume (a budget stop, a retried error), is
made again. Its row must add up to what the provider billed for it, each call counted once
(:func:`prepaid`, :func:`carry_prepaid`), and a retried run whose calls are all served again is
the same run scored again, keeping its time (:func:`rescored_seconds`).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from hrbench.records import Row, Step
from hrbench.store import Store

__all__ = ["PREPAID_NOTE", "carry_prepaid", "prepaid", "rescored_seconds"]


PREPAID_NOTE = (
    "paid before the benchmark was interrupted (a crash, a stop or a cancel) with no row kept for "
    "this run; the run was made again and its row carries this bill too"
)
"""The ``error`` of a trace step that carries a bill paid for a run before it was made again."""


def prepaid(store: Store, benchmark_id: str, kept: Iterable[str]) -> dict[str, list[Step]]:
    """The bills a benchmark paid for runs that no kept row holds, by run id (blocking: SQLite).

    Rows add up to the provider's bill after a crash (README "Budgets hold across crashes"):
    every reply the provider billed is kept with its settlement
    (:meth:`hrbench.runner.Journal.paid`). A run whose row was lost in a crash (or
    replaced on resume: a budget stop, a retried error) and is made again carries what was
    already paid for it, once, in its row (:func:`carry_prepaid`): a reply served from the
    cache on resume that was paid before the crash costs the row that bill, not $0, its tokens
    counted once; a reply paid before the crash and sent again costs the row both bills and both
    calls' tokens, as the provider billed both. A call whose reply
    was never read (in flight at a crash) is in no row: what it cost is unknown, at most its
    reservation, and the governor's "in flight at a crash" says so.

    Args:
        store: the benchmark's store.
        benchmark_id: the benchmark.
        kept: the run ids (``Row.ledger_id``) of the rows the resume keeps as they are.

    Returns:
        Per run id to be made again, the steps of its bills.
    """
    kept = set(kept)
    return {lid: steps for lid, steps in store.ledger_paid(benchmark_id).items() if lid not in kept}


_SERVED = frozenset({"cache", "recording"})


def _served_again(bill: Step, served: dict[str, list[Step]]) -> bool:
    """Whether a bill's reply is one the run made again was served (its step taken from ``served``).

    The same request key and the same provider response id; with no id on either side (a
    provider that gives none), the same usage. A bill with no id beside a served reply with
    one is another reply (an attempt retried or lost: the cache keeps only replies used).
    """
    steps = served.get(bill.key or "")
    for i, s in enumerate(steps or ()):
        if bill.response_id or s.response_id:
            same = bill.response_id == s.response_id
        else:
            same = bill.usage == s.usage
        if same:
            del steps[i]  # type: ignore[union-attr]
            return True
    return False


def carry_prepaid(prepaid: dict[str, list[Step]], row: Row, trace: list[Step]) -> Row:
    """Add to a run's row and trace what was paid for it before it was made again (see :func:`prepaid`).

    Each bill is taken once (it leaves ``prepaid``) and becomes an ``attempt`` step of the trace
    (``source`` ``"live"``, its USD, :data:`PREPAID_NOTE`); the row's ``usd`` grows by as much
    (``usd`` stays ``None`` when it is). A row's usage is its calls', each counted once (seed
    002: tokens over the run's model calls; usd what they cost): a bill whose reply the run made
    again was served from the cache or a recording (the same request key and response id) is
    that call, whose tokens the served step already counts, so only its
    USD is added and the carried step has no usage; a bill whose request was sent again is
    another call the provider billed, so its tokens are added too.

    Example:
        >>> from hrbench.records import Usage
        >>> paid = {"b/a/q/1": [Step(ledger_id="b/a/q/1", kind="attempt", key="k", usd=0.25,
        ...                          usage=Usage(tokens_in=3, tokens_out=2))]}
        >>> row = Row(cluster="q", item="q", arm="a", run=1, split="test", correct=True, outcome=None,
        ...           failure_kind=None, usd=0.0, ledger_id="b/a/q/1")
        >>> trace: list[Step] = []
        >>> row = carry_prepaid(paid, row, trace)
        >>> row.usd, row.tokens_in, trace[0].source, paid
        (0.25, 3, 'live', {})
        >>> paid = {"b/a/q/1": [Step(ledger_id="b/a/q/1", kind="attempt", key="k", usd=0.25,
        ...                          response_id="r1", usage=Usage(tokens_in=3, tokens_out=2))]}
        >>> cached = Step(ledger_id="b/a/q/1", key="k", source="cache", response_id="r1", usd=0.0,
        ...               usage=Usage(tokens_in=3, tokens_out=2))
        >>> row = msgspec.structs.replace(row, usd=0.0, tokens_in=3, tokens_out=2)
        >>> row = carry_prepaid(paid, row, trace := [cached])
        >>> row.usd, row.tokens_in, trace[1].usage
        (0.25, 3, None)
    """
    steps = prepaid.pop(row.ledger_id, None)
    if not steps:
        return row
    served: dict[str, list[Step]] = {}
    for s in trace:
        if s.kind == "request" and s.source in _SERVED and s.key is not None:
            served.setdefault(s.key, []).append(s)
    usd = row.usd
    tin, tout, treas, tcache = row.tokens_in, row.tokens_out, row.tokens_reasoning, row.tokens_cached
    for step in steps:
        again = _served_again(step, served)
        carried = msgspec.structs.replace(
            step,
            ledger_id=row.ledger_id,
            kind="attempt",
            source="live",
            error=PREPAID_NOTE,
            usage=None if again else step.usage,
        )
        trace.append(carried)
        usd = None if usd is None or step.usd is None else usd + step.usd
        if step.usage is not None and not again:
            tin += step.usage.tokens_in
            tout += step.usage.tokens_out
            treas += step.usage.tokens_reasoning
            tcache += step.usage.tokens_cached
    return msgspec.structs.replace(
        row, usd=usd, tokens_in=tin, tokens_out=tout, tokens_reasoning=treas, tokens_cached=tcache
    )


def rescored_seconds(replaced: Row | None, row: Row, trace: list[Step]) -> Row:
    """A retried run that sent no request keeps the ``seconds`` of the row it replaces.

    Seed 002: ``seconds`` is the run's wall-clock time. A run that ended in an error and is
    made again (``--retry-errors``) whose every request was answered from the cache or a
    recording -- its calls were made before, and are served again -- is the same run scored
    again: its row keeps the seconds of the row it replaces, not the time the re-score took.
    A run made again that sent a request keeps its own time.

    Args:
        replaced: the row the run made again replaces (``None``: no row).
        row: the run's new row.
        trace: its trace (before :func:`carry_prepaid` adds the bills paid earlier).

    Example:
        >>> old = Row(cluster="q", item="q", arm="a", run=1, split="test", correct=False, outcome=None,
        ...           failure_kind="error", seconds=2.5, ledger_id="b/a/q/1")
        >>> new = msgspec.structs.replace(old, correct=True, failure_kind=None, seconds=0.001)
        >>> rescored_seconds(old, new, [Step(ledger_id="b/a/q/1", source="cache")]).seconds
        2.5
        >>> rescored_seconds(old, new, [Step(ledger_id="b/a/q/1", source="live")]).seconds
        0.001
    """
    if replaced is None or replaced.failure_kind != "error":
        return row
    if any(s.source == "live" and s.kind in ("request", "attempt") for s in trace):
        return row
    return msgspec.structs.replace(row, seconds=replaced.seconds)
