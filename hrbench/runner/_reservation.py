"""One request's hold on a budget: the reservation, the gate a client passes before each attempt, and the steps every governor shares.

:class:`~hrbench.runner.Governor` (the local budget) and the Ray executor's view of the
cluster's governor (:mod:`hrbench.runner.ray`) both admit requests through these steps: each
defines its own ``reserve`` and ``settle``; :class:`Admitting` gives both ``try_reserve`` and
``gate`` on top of them, and :func:`booked` is the first step of every settlement.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, Protocol

from hrbench.errors import BudgetRefused

__all__ = ["Admitting", "Gate", "Journal", "Reservation", "booked"]


class Journal(Protocol):
    """What a governor asks of the journal that keeps its reservations in the store.

    :class:`hrbench.runner.Journal` is the one hrbench ships (it attaches itself with
    :meth:`~hrbench.runner.Journal.attach`); the governor knows it only by these calls, so
    the ledger depends on the governor and never the other way round.
    """

    def open(self, usd: float | None, tokens: int) -> int:
        """Queue a new reservation for the next commit; its number."""
        ...

    def settle(
        self, number: int, usd: float, tokens: int, calls: int = 1, lost: bool = False, unpriced: int = 0
    ) -> None:
        """Queue reservation ``number``'s settlement (real USD and tokens) for the next commit."""
        ...

    def count(self, calls: int, usd: float, tokens: int) -> None:
        """Queue ``calls`` calls never held open, with what they used, for the next commit."""
        ...

    def durable(self, number: int) -> Awaitable[None] | None:
        """What to await until reservation ``number`` is committed (``None``: it already is)."""
        ...


@dataclass(slots=True)
class Reservation:
    """An admitted request's share of the budget, held until it is settled."""

    usd: float
    tokens: int
    settled: bool = False
    kept: int = 0
    """Its number in the governor's :class:`~hrbench.runner.Journal` (0: not kept)."""
    usd_known: bool = True
    """Whether ``usd`` bounds the request's cost (``False``: no price, or no output limit)."""


class _Cleared:
    """An attempt's commit to await; once done, the client may send it (see :meth:`Gate.abandon`)."""

    __slots__ = ("gate", "pending")

    def __init__(self, gate: Gate, pending: Awaitable[None]) -> None:
        self.gate, self.pending = gate, pending

    def __await__(self) -> Generator[Any, None, None]:
        yield from self.pending.__await__()
        self.gate._cleared = True


class Admitting:
    """What every governor does the same way on top of its own :meth:`reserve` and :meth:`settle`.

    A governor (:class:`~hrbench.runner.Governor`, or a Ray worker's view of the
    cluster's one) defines ``reserve`` and ``settle``; refusing softly (:meth:`try_reserve`) and
    holding one request across its attempts (:meth:`gate`) are the same for all of them.
    """

    def reserve(self, usd: float = 0.0, tokens: int = 0, *, usd_known: bool = True) -> Reservation:
        """Admit one request, holding its estimated cost (USD, tokens), or raise :class:`~hrbench.BudgetRefused`."""
        raise NotImplementedError

    def settle(
        self,
        reservation: Reservation,
        usd: float | None,
        tokens: int,
        *,
        sent: bool = True,
        lost: bool = False,
    ) -> None:
        """Replace a reservation by what the request really cost (USD, tokens)."""
        raise NotImplementedError

    def try_reserve(self, usd: float = 0.0, tokens: int = 0) -> Reservation | None:
        """Like :meth:`reserve`, but ``None`` instead of raising."""
        try:
            return self.reserve(usd, tokens)
        except BudgetRefused:
            return None

    def gate(self, usd: float = 0.0, tokens: int = 0, durable: bool = True, usd_known: bool = True) -> Gate:
        """A :class:`Gate` for one request with this upper-bound estimate (USD, tokens).

        ``durable=False``: a request that contacts no provider, costs nothing (a mock with no
        price) and runs under no call cap is not held until its reservation is committed (see
        :meth:`Gate.attempt`).
        """
        gate = Gate(self, usd, tokens, durable)
        gate.usd_known = usd_known
        return gate


def booked(
    reservation: Reservation, usd: float | None, tokens: int, lost: bool
) -> tuple[float | None, int] | None:
    """Mark ``reservation`` settled; what to book for it, or ``None`` when it already was settled.

    A reply lost after its request was written (``lost``) is booked at the reservation's worst
    case, whatever ``usd`` and ``tokens`` say (it may have been billed).

    Example:
        >>> r = Reservation(usd=0.25, tokens=40)
        >>> booked(r, 0.0, 0, lost=True), booked(r, 0.0, 0, lost=False)
        ((0.25, 40), None)
    """
    if reservation.settled:
        return None
    reservation.settled = True
    return (reservation.usd, reservation.tokens) if lost else (usd, tokens)


class Gate:
    """The governor's hold on one request across its attempts.

    A client calls :meth:`attempt` before sending each attempt: the first reserves the estimate,
    each retry first settles the failed attempt at no cost (the call stays counted) and reserves
    again; an attempt written whole whose reply was lost is settled at its reservation first
    (:meth:`lost`). The caller settles the last attempt with the reply's cost by :meth:`settle`.
    """

    __slots__ = ("_cleared", "_open", "attempts", "cost", "durable", "governor", "tokens", "usd", "usd_known")

    def __init__(self, governor: Admitting, usd: float, tokens: int, durable: bool = True) -> None:
        self.governor = governor
        self.usd = usd
        self.tokens = tokens
        self.durable = durable
        self.attempts = 0
        self._open: Reservation | None = None
        self._cleared = False  # the client may have sent the open attempt
        self.usd_known = True
        """Whether ``usd`` bounds the request's cost (see :meth:`Governor.reserve`)."""
        self.cost: Callable[[Any, str | None], float | None] | None = None
        """What a reported usage of a model costs in USD (``None``: unknown); set by the runtime."""

    def attempt(self) -> Awaitable[None] | None:
        """Charge one attempt to the governor; await what it returns before sending.

        When the governor keeps a :class:`~hrbench.runner.Journal`, the attempt may be
        sent only once its reservation is committed to the store. On an event loop this returns
        an awaitable that completes then (many reservations share one commit); in a worker
        thread with no event loop (an inline client) it waits here. ``None``: send at once.
        A gate made with ``durable=False`` does not wait (its reservation is still written, in
        the next commit).

        Raises:
            BudgetRefused: when the governor refuses it (or the ledger cannot be written:
                ``"ledger_unwritable"``); the client must not send it.
        """
        return self.hand_over(self.hold())

    def hold(self) -> Awaitable[None] | None:
        """Reserve the next attempt, not yet handed to the client (see :meth:`hand_over`).

        What :meth:`attempt` does first; a caller that reserves before the client asks for it
        (:func:`hrbench.runner._room.reserve_first`) hands it over when the client does.
        """
        if self._open is not None:
            self.governor.settle(self._open, 0.0, 0)
            self._open = None
        self._cleared = False
        self._open = (
            self.governor.reserve(self.usd, self.tokens)
            if self.usd_known
            else self.governor.reserve(self.usd, self.tokens, usd_known=False)
        )
        self.attempts += 1
        journal = getattr(self.governor, "journal", None)  # a Ray worker's proxy has none
        if journal is None or not self.durable or not self._open.kept:
            return None
        return journal.durable(self._open.kept)

    def hand_over(self, pending: Awaitable[None] | None) -> Awaitable[None] | None:
        """Give the client the held attempt: it may send it once ``pending`` (returned wrapped) is done."""
        if pending is None:
            self._cleared = True
            return None
        return _Cleared(self, pending)

    def abandon(self) -> None:
        """The request was cancelled (or its client failed): give back an attempt never sent.

        Rule (calls never counted beyond the requests a server received): an
        attempt the client was not yet cleared to send (its reservation awaiting its commit,
        or held while the request waited for room) was not sent, so it is no call. One the
        client may have sent stays open: it may have been billed, and is counted at most its
        reservation (:meth:`~hrbench.runner.Journal.close`).
        """
        if self._open is not None and not self._cleared:
            self.unsent()

    __call__ = attempt
    """A gate is the ``before_attempt`` callback of a client's ``send``."""

    def unsent(self) -> None:
        """The last attempt could not connect, so nothing was sent: its call is given back."""
        if self._open is not None:
            self.governor.settle(self._open, 0.0, 0, sent=False)
            self._open = None
            self.attempts -= 1

    def lost(self, usage: Any = None, model: str | None = None) -> None:
        """The last attempt was written whole but its reply is lost or unusable: book it now.

        Rule (README: "one written whole stays a call whatever failed
        after (it may have been billed)"): a timeout after the write, a reset, a garbled HTTP
        200 body is settled at its reservation, as spend *unknown, at most* that much
        (:meth:`Governor.settle` with ``lost=True``), so neither the request nor its retries
        can pass a cap. A reply whose usage the provider reported (a 200 with no text, retried)
        is settled at what that usage costs by :attr:`cost` when it is known, else the same
        way. A retry then reserves afresh (:meth:`hold`).
        """
        if self._open is None:
            return
        cost = None
        if usage is not None and getattr(usage, "provenance", None) == "reported" and self.cost is not None:
            cost = self.cost(usage, model)
        if cost is not None:
            self.governor.settle(self._open, cost, usage.total)
        else:
            self.governor.settle(self._open, None, 0, lost=True)
        self._open = None

    def settle(self, usd: float | None, tokens: int) -> None:
        """Settle the last attempt with its real cost (USD) and tokens."""
        if self._open is not None:
            self.governor.settle(self._open, usd, tokens)
            self._open = None
