"""A clean cancel.

The grace it gives, the drain that sends nothing new while sent requests finish, and the in-flight
key a held request gives up.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from hrbench.errors import ConfigError
from hrbench.records import Result
from hrbench.runner._cache import IN_FLIGHT
from hrbench.runner._governor import Gate

__all__ = ["DEFAULT_GRACE_S", "Drain", "cancel_grace_s"]


DEFAULT_GRACE_S = 10.0
"""How long a clean cancel waits for the requests already sent (seconds; see :class:`Drain`)."""


def cancel_grace_s() -> float:
    """The grace of a clean cancel: ``HRBENCH_CANCEL_GRACE_S`` (seconds) when set, else :data:`DEFAULT_GRACE_S`.

    Raises:
        ConfigError: the variable is not a number >= 0.

    Example:
        >>> import os; os.environ.pop("HRBENCH_CANCEL_GRACE_S", None) and None
        >>> cancel_grace_s()
        10.0
    """
    raw = os.environ.get("HRBENCH_CANCEL_GRACE_S")
    if not raw:
        return DEFAULT_GRACE_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise ConfigError("HRBENCH_CANCEL_GRACE_S", raw, "expected a number of seconds >= 0")
    return value


class Drain:
    """A clean cancel's wait for the requests already sent.

    Rule: replies already on their way are not lost (a resume would pay for them again); a
    clean cancel first begins a drain (:meth:`begin`). From then on no attempt
    is sent (one held for a request not yet handed to its client is given back, as never
    sent; a retry is not made): such a request waits there until the benchmark is cancelled.
    A run whose request was already sent goes on: its reply is settled at its real cost,
    cached when the benchmark caches, scored and saved as a row, so a resume does not send it
    again. :meth:`wait` returns when no such run is left, or after the grace; the caller then
    cancels the benchmark, and only what is still in flight then is counted "cancelled in
    flight: unknown, at most" its reservation (:meth:`hrbench.runner.Journal.close`). A run
    of several requests whose later request was not sent is run again, whole, by a resume.

    One drain serves every runtime of a benchmark (the arms' and a judge's). Requests a sync
    client answers inline (in a worker thread) are not held: they finish at once.

    Example:
        >>> drain = Drain()
        >>> drain.sent("b/a/x/1"); drain.live
        1
        >>> drain.begin(); drain.finished("b/a/x/1"); drain.live, drain.started
        (0, True)
    """

    def __init__(self) -> None:
        self.started = False
        self._live: set[str] = set()

    @property
    def live(self) -> int:
        """Runs with a request sent that have not finished (nor stopped at the drain)."""
        return len(self._live)

    def begin(self) -> None:
        """Send nothing more; the runs already sending go on."""
        self.started = True

    def sent(self, run: str) -> None:
        """Run ``run`` (its ledger id) handed a request to its client."""
        self._live.add(run)

    def finished(self, run: str) -> None:
        """Run ``run`` ended (its row is out), or stopped at the drain."""
        self._live.discard(run)

    async def wait(self, grace_s: float) -> bool:
        """Wait until no run sends any more, at most ``grace_s`` seconds; ``True`` if none does."""
        deadline = time.monotonic() + max(0.0, grace_s)
        while self._live and time.monotonic() < deadline:  # noqa: ASYNC110 - runs end on other tasks
            await anyio.sleep(0.02)
        return not self._live


class Lead:
    """The in-flight key a call leads (:class:`~hrbench.runner._cache.InFlight`), landed once.

    A leader held at a clean cancel's drain (it sends nothing more, and waits there until its
    benchmark is cancelled, up to the grace) must not keep its key, or a request of another
    benchmark waiting on it would stall for the grace before sending its own. A held leader
    lands the key at once with no reply to share: a waiter takes over. The call's
    own landing afterwards is then a no-op (it must not end the new leader's flight).
    """

    def __init__(self, scope: str, key: str) -> None:
        self.scope, self.key, self.landed = scope, key, False

    def land(self, result: Result | None) -> None:
        if not self.landed:
            self.landed = True
            IN_FLIGHT.land(self.scope, self.key, result)


class Draining:
    """A client's ``before_attempt`` that sends nothing once the benchmark's :class:`Drain` began."""

    def __init__(self, inner: Any, gate: Gate, drain: Drain, run: str, lead: Lead | None = None) -> None:
        self.inner, self.gate, self.drain, self.run, self.lead = inner, gate, drain, run, lead

    def __call__(self) -> Awaitable[None] | None:
        if not self.drain.started:
            pending = self.inner()
            self.drain.sent(self.run)
            return pending
        # not sent: a reservation held for it is given back; a failed attempt before it stays a call
        if getattr(self.inner, "first", False):
            self.gate.unsent()
        else:
            self.gate.settle(0.0, 0)
        self.drain.finished(self.run)
        if self.lead is not None:  # a request of another benchmark waiting on this one sends its own now
            self.lead.land(None)
        return anyio.sleep_forever()  # until the benchmark is cancelled

    def unsent(self) -> None:
        self.inner.unsent()

    def lost(self, usage: Any = None, model: str | None = None) -> None:
        self.gate.lost(usage, model)


class Counted(msgspec.Struct, gc=False):
    """The ``before_attempt`` of a call that holds nothing: it counts the call, or stops at the drain.

    The runtime's fast path (:meth:`hrbench.runner.runtime.Runtime.call`): under a governor with
    no cap, for an in-process client whose model costs nothing, each attempt is counted
    (:meth:`~hrbench.runner.Governor.count_call`) with no reservation held, and the
    reply's use is booked once (:meth:`book`). Once a clean cancel's drain began, nothing is
    counted and the attempt is not made, as :class:`Draining` does.

    Made for every such call: a Struct (built in C, outside the garbage collector's tracking: it
    refers to the governor, the drain and the lead, none of which refers back to it).

    Example:
        >>> from hrbench.runner import Governor
        >>> gov = Governor()
        >>> counted = Counted(gov, None, "b/a/x/1")
        >>> counted(); counted.book(0.0, 7); gov.calls, gov.tokens
        (1, 7)
    """

    governor: Any
    drain: Drain | None
    run: str
    lead: Lead | None = None
    calls: int = 0

    def __call__(self) -> Awaitable[None] | None:
        drain = self.drain
        if drain is not None and drain.started:  # not sent, nothing counted (Draining)
            drain.finished(self.run)
            if self.lead is not None:
                self.lead.land(None)
            return anyio.sleep_forever()
        self.governor.count_call()
        self.calls += 1
        if drain is not None:
            drain.sent(self.run)
        return None

    def book(self, usd: float | None, tokens: int) -> None:
        """The reply is in: book what its calls used."""
        self.governor.book(self.calls, usd, tokens)

    def abandon(self) -> None:
        """The call raised (or was cancelled) after its attempts were counted: they stay open.

        As a held call's reservation does, each stays open in the governor's journal, counted as
        cancelled in flight when the journal closes (:meth:`~hrbench.runner.Journal.close`).
        """
        journal = self.governor.journal
        if journal is not None:
            for _ in range(self.calls):
                journal.open(0.0, 0)
