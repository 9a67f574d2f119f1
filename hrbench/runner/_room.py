"""Waiting for room under a cap before refusing a request.

The governor reserves each request's worst case (SPEC section 6), which is far above what a
reply usually costs. With many requests in flight, their reservations can fill a cap that
their settled cost will leave mostly free: refusing a request then would stop a benchmark far
short of its cap. Rule: a request whose worst case does not fit *now*, but would
fit once the requests in flight settle, waits for them; it is refused only when, with nothing
in flight, its worst case still does not fit (or waiting cannot help: the call cap, a halt).

This is kept apart from :mod:`hrbench.runner._governor`, whose ``reserve`` decides; the functions here
only wait, then ``reserve`` checks again (another request may have taken the room meanwhile).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from hrbench.errors import BudgetRefused
from hrbench.runner._governor import Gate, Governor

__all__ = ["POLL_S", "outlook", "reserve_first", "reserve_first_blocking"]

BeforeAttempt = Callable[[], Awaitable[None] | None]
"""What a client calls before each attempt; it awaits what that returns before sending."""

POLL_S = 0.005
"""How often a waiting request looks again (seconds)."""


def outlook(governor: Any, usd: float, tokens: int) -> str:
    """Whether a worst case fits the governor now, or later once the requests in flight settle.

    Args:
        governor: a :class:`~hrbench.runner.Governor` (any other kind: ``"now"``, its own
            ``reserve`` decides).
        usd: the request's worst case in USD.
        tokens: its worst case in tokens.

    Returns:
        ``"later"`` when it does not fit now but fits with nothing in flight and something is
        in flight; otherwise ``"now"`` (``reserve`` admits or refuses it at once).

    Example:
        >>> gov = Governor(max_tokens=100)
        >>> held = gov.reserve(tokens=60)
        >>> outlook(gov, 0.0, 50), outlook(gov, 0.0, 120)
        ('later', 'now')
        >>> gov.settle(held, None, 10)
        >>> outlook(gov, 0.0, 50)
        'now'
    """
    if not isinstance(governor, Governor):  # a run's own budget waits on the benchmark's room
        governor = getattr(governor, "room_of", None)
    if not isinstance(governor, Governor) or governor.halted is not None:
        return "now"
    snap = governor.snapshot()
    caps = (
        (governor.max_usd, snap["usd"], governor.usd, usd),
        (governor.max_tokens, snap["tokens"], governor.tokens, tokens),
    )
    fits_now = all(cap is None or with_held + need <= cap + 1e-12 for cap, with_held, _, need in caps)
    if fits_now:
        return "now"
    fits_settled = all(cap is None or settled + need <= cap + 1e-12 for cap, _, settled, need in caps)
    in_flight = any(with_held - settled > 1e-12 for cap, with_held, settled, _ in caps if cap is not None)
    return "later" if fits_settled and in_flight else "now"


async def reserve_first(gate: Gate) -> BeforeAttempt:
    """Reserve a request's first attempt, waiting while the requests in flight hold the room.

    Returns the ``before_attempt`` callback to give the client: its first call gives the
    reservation made here (with the ledger commit to await before sending), each
    later one (a retry) reserves again as :meth:`Gate.attempt` does. The governor settles from
    worker threads too and gives no awaitable signal of a settlement, so this looks again every
    :data:`POLL_S` seconds.

    Raises:
        BudgetRefused: when the worst case does not fit and waiting cannot make it fit.
    """
    while (got := _try(gate)) is None:  # noqa: ASYNC110 - settled from threads: no event to await
        await anyio.sleep(POLL_S)
    return got


def reserve_first_blocking(gate: Gate) -> BeforeAttempt:
    """:func:`reserve_first` for a worker thread (a sync arm's inline call): sleeps the thread."""
    while (got := _try(gate)) is None:
        time.sleep(POLL_S)
    return got


def _try(gate: Gate) -> BeforeAttempt | None:
    """The ``before_attempt`` callback once reserved; ``None``: wait and try again."""
    if outlook(gate.governor, gate.usd, gate.tokens) == "later":
        return None
    try:
        pending = gate.hold()  # handed over when the client asks for its first attempt
    except BudgetRefused as exc:  # another request took the room first: wait again if that helps
        if exc.limit.startswith("run_") or outlook(gate.governor, gate.usd, gate.tokens) != "later":
            raise  # a run's own cap: no other run's settlement frees room in it
        return None
    return _later_attempts(gate, pending)


def _later_attempts(gate: Gate, pending: Awaitable[None] | None) -> BeforeAttempt:
    return _Attempts(gate, pending)


class _Attempts:
    """A client's ``before_attempt`` whose first attempt is already reserved.

    Like the :class:`~hrbench.runner._governor.Gate` it wraps, it has ``unsent()``: a client that
    could not connect gives the attempt's call back; and ``lost()``: one whose reply was lost
    after the request was written books it at its reservation.
    """

    def __init__(self, gate: Gate, pending: Awaitable[None] | None) -> None:
        self.gate, self.pending, self.first = gate, pending, True

    def __call__(self) -> Awaitable[None] | None:
        if self.first:  # reserved already: the client awaits its commit to the ledger
            self.first = False
            return self.gate.hand_over(self.pending)
        return self.gate.attempt()

    def unsent(self) -> None:
        self.gate.unsent()

    def lost(self, usage: Any = None, model: str | None = None) -> None:
        self.gate.lost(usage, model)
