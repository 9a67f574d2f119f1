"""Per-run caps: one run's own budget of calls, USD and tokens, held like the benchmark's.

A run (one arm on one item, one draw) under ``max_calls_per_run``, ``max_usd_per_run`` or
``max_tokens_per_run`` (:class:`~hrbench.runner.Governor`) reserves each request's
worst case against its own budget and the benchmark's together, before the request is sent
(SPEC section 6: reserve before sending, settle after), and settles both with the reply's real
cost. A request the run's budget refuses raises :class:`~hrbench.errors.BudgetRefused` with
``limit`` ``run_call_cap_reached``, ``run_cost_cap_reached`` or ``run_token_cap_reached``: the
run ends ``budget_stop`` with its partial trace, and the other runs go on (Inspect's
per-sample limits; promptfoo has none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hrbench._util.messages import refusal_limits
from hrbench.errors import BudgetRefused
from hrbench.records import Step
from hrbench.runner._governor import Governor
from hrbench.runner._reservation import Admitting, Reservation

__all__ = ["RUN_LIMITS", "RunBudget", "run_budget", "run_cap_of"]

RUN_LIMITS = ("run_call_cap_reached", "run_cost_cap_reached", "run_token_cap_reached")
"""The ``limit`` of a refusal by a run's own caps."""


@dataclass(slots=True)
class _Both(Reservation):
    """A request's hold on the benchmark's budget (``bench``) and on its run's (``run``)."""

    bench: Any = None
    run: Any = None


class RunBudget(Admitting):
    """One run's caps on top of the benchmark's governor: a request is admitted by both or neither.

    Args:
        governor: the benchmark's governor (local, or a Ray worker's view of the cluster's).
        caps: ``max_calls_per_run``, ``max_usd_per_run``, ``max_tokens_per_run`` (each optional).

    Example:
        >>> gov = Governor(max_calls=10)
        >>> run = RunBudget(gov, {"max_calls_per_run": 2})
        >>> r = run.reserve(); run.settle(r, 0.0, 0); r = run.reserve()
        >>> run.reserve()
        Traceback (most recent call last):
        ...
        hrbench.errors.BudgetRefused: the run's own cap refused a request: run_call_cap_reached (per run: max_calls_per_run=2; this run used calls=2, usd=0.0000, tokens=0)); all 2 calls are used
        >>> gov.calls
        2
    """

    def __init__(self, governor: Any, caps: dict[str, Any]) -> None:
        self.governor = governor
        self.caps = dict(caps)
        self.own = Governor(
            max_calls=caps.get("max_calls_per_run"),
            max_usd=caps.get("max_usd_per_run"),
            max_tokens=caps.get("max_tokens_per_run"),
        )
        self.journal = getattr(governor, "journal", None)
        """The benchmark's journal: a request waits for its reservation there (:mod:`hrbench.runner._ledger`)."""
        self.room_of = governor
        """Whose room a request waits for when requests in flight hold it (:func:`hrbench.runner._room.outlook`)."""

    def __getattr__(self, name: str) -> Any:  # max_usd, halted, first_bill... are the benchmark's
        if name == "governor":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.governor, name)

    def reserve(self, usd: float = 0.0, tokens: int = 0, *, usd_known: bool = True) -> Reservation:
        """Admit a request against the run's caps, then the benchmark's, holding its worst case in both.

        Raises:
            BudgetRefused: ``run_*`` when the run's caps refuse it (the benchmark's budget is
                not touched), or the benchmark's own refusal.
        """
        try:
            mine = self.own.reserve(usd, tokens, usd_known=usd_known)
        except BudgetRefused as exc:
            limit = "run_" + exc.limit
            caps = ", ".join(f"{k}={v}" for k, v in self.caps.items())
            own = self.own
            raise BudgetRefused(
                f"the run's own cap refused a request: {limit} (per run: {caps}; this run used "
                f"calls={own.calls}, usd={own.usd:.4f}, tokens={own.tokens})); {own._why(exc.limit, usd, tokens)}",
                limit=limit,
            ) from None
        try:
            theirs = (
                self.governor.reserve(usd, tokens)
                if usd_known
                else self.governor.reserve(usd, tokens, usd_known=False)
            )
        except BudgetRefused:
            self.own.settle(mine, 0.0, 0, sent=False)
            raise
        return _Both(usd=usd, tokens=tokens, kept=theirs.kept, usd_known=usd_known, bench=theirs, run=mine)

    def settle(
        self,
        reservation: Reservation,
        usd: float | None,
        tokens: int,
        *,
        sent: bool = True,
        lost: bool = False,
    ) -> None:
        """Settle a request in the run's budget and the benchmark's with what it really cost."""
        if not isinstance(reservation, _Both) or reservation.settled:
            return
        reservation.settled = True
        self.own.settle(reservation.run, usd, tokens, sent=sent, lost=lost)
        self.governor.settle(reservation.bench, usd, tokens, sent=sent, lost=lost)


def run_budget(ctx: Any, governor: Any) -> Any:
    """The governor a run's request is admitted by: its :class:`RunBudget` under per-run caps, else ``governor``.

    The run's budget is made at its first request and kept on its context (``ctx.budget``).
    """
    caps = getattr(governor, "per_run", None)
    if not caps:
        return governor
    budget = getattr(ctx, "budget", None)
    if budget is None:
        budget = ctx.budget = RunBudget(governor, caps)
    return budget


def run_cap_of(trace: list[Step]) -> str | None:
    """The per-run cap (``run_*_cap_reached``) that stopped a run, when only such caps refused its requests.

    Example:
        >>> run_cap_of([Step(ledger_id="r", source="refused", error="...: run_call_cap_reached (...)")])
        'run_call_cap_reached'
    """
    found = None
    for s in trace:
        if s.source != "refused":
            continue
        limits = refusal_limits(s.error)
        if not limits or not all(n.startswith("run_") for n in limits):
            return None
        found = limits[0]
    return found
