"""The governor's ledger, kept per call in the benchmark's store with group commit.

Rule: after a SIGKILL, a resumed benchmark never passes ``max_calls`` and never reports less
USD than the provider billed. A ledger written only when rows are flushed cannot promise that;
a :class:`Journal` attached to a :class:`~hrbench.Governor` does:

- every reservation is written to the store's ``ledger_open`` table **before** its request is
  sent (the client awaits :meth:`Journal.durable`, through :meth:`~hrbench.runner._governor.Gate.attempt`);
- its settlement (the real USD and tokens, or 0 for a failed attempt) is queued **right after**
  the reply returns and lands in the next commit, not at row flush;
- a resumed benchmark starts from what was spent (:meth:`~hrbench.store.Store.ledger_resume`):
  settled use plus every reservation left open at the crash at its reserved, worst-case
  amount, which is reported as spend *unknown, at most* that much.

SQLite is written by one writer thread per journal, never on the event loop. **Group commit**:
the writer takes every change queued while its previous commit ran and writes them in one
transaction, then releases every request waiting on them at once (one hand-off per event
loop), so 100 requests in flight cost a few commits, not 100. A reservation settled before its
commit (a fast reply) is never written as open: only its settlement is.

What need not wait: a cache or recording hit never reserves (it contacts no
provider and costs nothing). A mock client with no price contacts no provider and costs
nothing either: unless a call cap is in force, its reservation is written in the next commit
but its call does not wait for it (the gate's ``durable=False``; :func:`contacts_provider`).
Under ``max_calls`` it waits like any other call: a SIGKILL inside the lazy window let a resumed
benchmark pass the cap (seen on a loaded CI machine). Settlements nobody waits on are gathered the same way: until
written, a settled call is counted at its reservation (never less than it cost).

A run on a Ray cluster reserves in an actor, and keeps this same ledger: each worker's
reservation is committed by the driver before the request is sent, its settlement queued after
the reply (:mod:`hrbench.runner.ray`).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
import uuid
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from hrbench.errors import BudgetRefused, StoreError
from hrbench.records import Step, usd_text
from hrbench.runner._governor import Governor
from hrbench.store import Store

__all__ = [
    "LAZY_S",
    "Journal",
    "contacts_provider",
    "kept_ledger",
    "unknown_of",
    "unknown_sentence",
]

LAZY_S = 0.01
"""How long the writer gathers changes nobody waits on before it commits them (seconds)."""


def contacts_provider(client: Any) -> bool:
    """Whether a client's requests may reach (and be billed by) something outside the process.

    A mock client answers in-process: it does not (one with a price still waits for its
    reservation: the runtime makes its gate durable when the reservation holds USD). A replay
    client does only through its fallback. Anything else is assumed to.

    Example:
        >>> from hrbench import MockClient
        >>> contacts_provider(MockClient(lambda m, p: "ok")), contacts_provider(object())
        (False, True)
    """
    provider = getattr(client, "provider", None)
    if provider == "mock":
        return False
    if provider == "replay":
        fallback = getattr(client, "fallback", None)
        return fallback is not None and contacts_provider(fallback)
    return True


def unknown_sentence(unknown: dict[str, Any] | None) -> str | None:
    """The sentence that reports the spend crashes and cancels left unknown, or ``None`` when none.

    ``unknown`` is the governor's :attr:`~hrbench.Governor.unknown`: ``calls``, ``usd`` and
    ``tokens`` in all, and of those the part that cancels left, ``cancelled_calls`` and
    ``cancelled_usd`` (a request cancelled in flight is not a crash's),
    and the part replies lost after their request was written left, ``lost_calls`` and
    ``lost_usd`` (a timeout, a reset, a garbled 200 body).

    Example:
        >>> unknown_sentence({"calls": 3, "usd": 0.0421, "tokens": 900})
        'in flight at a crash: unknown, at most 0.0421 USD / 3 calls (counted as spent)'
        >>> unknown_sentence({"calls": 3, "usd": 0.0421, "cancelled_calls": 3, "cancelled_usd": 0.0421})
        'cancelled in flight: unknown, at most 0.0421 USD / 3 calls (counted as spent)'
        >>> unknown_sentence({"calls": 2, "usd": 0.002, "lost_calls": 2, "lost_usd": 0.002})
        'reply lost after sending: unknown, at most 0.002 USD / 2 calls (counted as spent)'
        >>> unknown_sentence({"calls": 4, "usd": 0.0, "unpriced_calls": 4})
        'in flight at a crash: unknown USD (no price or no output limit to bound it) / 4 calls (counted as spent)'
    """
    if not unknown or not unknown.get("calls"):
        return None
    calls, usd = int(unknown["calls"]), float(unknown.get("usd") or 0.0)
    cancelled_calls = int(unknown.get("cancelled_calls") or 0)
    cancelled_usd = float(unknown.get("cancelled_usd") or 0.0)
    lost_calls = int(unknown.get("lost_calls") or 0)
    lost_usd = float(unknown.get("lost_usd") or 0.0)
    unpriced = int(unknown.get("unpriced_calls") or 0)
    cancelled_unpriced = int(unknown.get("cancelled_unpriced") or 0)
    lost_unpriced = int(unknown.get("lost_unpriced") or 0)
    parts = [
        _unknown_part(what, n, u, k)
        for what, n, u, k in (
            (
                "in flight at a crash",
                calls - cancelled_calls - lost_calls,
                usd - cancelled_usd - lost_usd,
                unpriced - cancelled_unpriced - lost_unpriced,
            ),
            ("cancelled in flight", cancelled_calls, cancelled_usd, cancelled_unpriced),
            ("reply lost after sending", lost_calls, lost_usd, lost_unpriced),
        )
        if n
    ]
    return "; ".join(parts) + " (counted as spent)"


def _unknown_part(what: str, calls: int, usd: float, unpriced: int) -> str:
    """One part of :func:`unknown_sentence`; ``unpriced`` of its ``calls`` have no USD bound.

    Rule: a call with no price, or sent with no output limit, has no USD bound, and the
    sentence says its USD is unknown rather than print a bound it does not have. A bound below
    a cent is printed to three significant digits (:func:`~hrbench.records.usd_text`):
    four decimals printed "at most 0.0000 USD" for calls that could cost up to $0.00004.
    """
    if not unpriced:
        return f"{what}: unknown, at most {usd_text(usd)} USD / {calls} calls"
    why = "no price or no output limit to bound it"
    if unpriced >= calls:
        return f"{what}: unknown USD ({why}) / {calls} calls"
    return f"{what}: unknown, at most {usd_text(usd)} USD for {calls - unpriced} and unknown USD for {unpriced} ({why}) / {calls} calls"


def unknown_of(ledger: dict[str, Any] | None) -> dict[str, Any] | None:
    """A stored ledger's unknown spend, shaped as :attr:`~hrbench.Governor.unknown` (for :func:`unknown_sentence`).

    ``ledger`` is :meth:`~hrbench.store.Store.ledger_get`'s dict or a benchmark header (its
    ``unknown_*``, ``cancelled_*`` and ``lost_*`` keys).

    Example:
        >>> unknown_sentence(unknown_of({"unknown_calls": 4, "unknown_usd": 0.0079,
        ...                              "cancelled_calls": 4, "cancelled_usd": 0.0079}))
        'cancelled in flight: unknown, at most 0.0079 USD / 4 calls (counted as spent)'
    """
    if not ledger or not ledger.get("unknown_calls"):
        return None
    return {
        "calls": int(ledger["unknown_calls"]),
        "usd": float(ledger.get("unknown_usd") or 0.0),
        "cancelled_calls": int(ledger.get("cancelled_calls") or 0),
        "cancelled_usd": float(ledger.get("cancelled_usd") or 0.0),
        "lost_calls": int(ledger.get("lost_calls") or 0),
        "lost_usd": float(ledger.get("lost_usd") or 0.0),
        "unpriced_calls": int(ledger.get("unpriced_calls") or 0),
        "cancelled_unpriced": int(ledger.get("cancelled_unpriced") or 0),
        "lost_unpriced": int(ledger.get("lost_unpriced") or 0),
    }


class _Pending:
    """What a client awaits before sending: its reservation's commit.

    Not a coroutine: a third-party client that ignores it gets no "never awaited" warning.
    """

    __slots__ = ("future", "journal", "number")

    def __init__(self, journal: Journal, number: int, future: asyncio.Future[None]) -> None:
        self.journal, self.number, self.future = journal, number, future

    def __await__(self) -> Generator[Any, None, None]:
        yield from self.future.__await__()
        self.journal.check(self.number)


class Journal:
    """A governor's reservations and settlements, written to the store as they happen.

    Args:
        store: the benchmark's store.
        benchmark_id: the benchmark whose ledger this is.

    Attributes:
        session: this run's id (the open reservations of a run are ``(session, number)``).
        commits: transactions written so far.
        failed: the store's error once a commit failed (nothing more is sent), else ``None``.

    Example:
        >>> s = Store(":memory:")
        >>> gov = Governor(max_calls=5)
        >>> with kept_ledger(gov, s, "b") as journal:
        ...     r = gov.reserve(0.5, 100)
        ...     journal.durable(r.kept)     # no event loop: waits here for the commit
        ...     s.ledger_get("b")["open_calls"]
        ...     gov.settle(r, 0.01, 12)
        1
        >>> {k: s.ledger_get("b")[k] for k in ("calls", "usd", "open_calls")}
        {'calls': 1, 'usd': 0.01, 'open_calls': 0}
    """

    def __init__(self, store: Store, benchmark_id: str) -> None:
        self.store, self.benchmark_id = store, benchmark_id
        self.session = uuid.uuid4().hex[:12]
        self.commits = 0
        self.failed: StoreError | None = None
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()  # taken directly on the hot path (open, settle): no Python frame
        self._cond = threading.Condition(self._lock)
        self._opened: dict[int, tuple[float | None, int]] = {}  # queued, not yet written
        self._closed: list[int] = []  # written as open, settled since
        self._calls, self._usd, self._tokens = 0, 0.0, 0  # settled since the last commit
        self._lost: tuple[int, float, int, int] = (0, 0.0, 0, 0)  # of those, lost after the write
        self._paid: list[tuple[str, bytes]] = []  # billed replies, (run id, JSON step), since the last commit
        self._through = 0  # every number up to this one is committed
        self._issued = 0  # the last number given out
        self._last_paid = 0  # the number given out with the last bill queued (:meth:`paid`)
        self._waiters: list[tuple[int, Any, Any]] = []  # (number, loop or None, future or Event)
        self._stopping = False
        self._idle = False
        self._lazy = False
        self._thread: threading.Thread | None = None
        self._governor: Governor | None = None

    def __repr__(self) -> str:
        return f"Journal({self.benchmark_id!r}, session={self.session!r}, commits={self.commits})"

    # -- the governor's side ---------------------------------------------------------------
    def attach(self, governor: Governor) -> None:
        """Keep ``governor``'s reservations and settlements from now on; starts the writer."""
        self._governor = governor
        governor.journal = self
        self._thread = threading.Thread(
            target=self._write_loop, name=f"hrbench-ledger-{self.session}", daemon=True
        )
        self._thread.start()

    def open(self, usd: float | None, tokens: int) -> int:
        """Queue a new reservation for the next commit; its number (``usd=None``: no USD bound)."""
        with self._lock:
            n = self._issued = next(self._numbers)
            self._opened[n] = (usd, tokens)
            if self._idle:
                self._wake()
        return n

    def settle(
        self, number: int, usd: float, tokens: int, calls: int = 1, lost: bool = False, unpriced: int = 0
    ) -> None:
        """Queue a reservation's settlement (real USD and tokens) for the next commit.

        ``calls=0``: the attempt could not connect and was not sent, so it is no call.
        ``lost=True``: its reply was lost after it was written (kept as ``lost_*``, a part of
        the unknown spend); ``unpriced=1``: its USD had no bound.
        """
        with self._lock:
            if self._opened.pop(number, None) is None:  # already written as open: delete it
                self._closed.append(number)
            self._calls += calls
            self._usd += usd
            self._tokens += tokens
            if lost:
                c, u, t, k = self._lost
                self._lost = (c + calls, u + usd, t + tokens, k + unpriced)
            if self._idle:
                self._wake()

    def count(self, calls: int, usd: float, tokens: int) -> None:
        """Queue ``calls`` calls never held open (free, under no cap), with their USD and tokens.

        What :meth:`open` then :meth:`settle` of each would queue when no commit falls between
        them: the runtime's fast path (:meth:`~hrbench.runner.Governor.book`).
        """
        with self._lock:
            self._calls += calls
            self._usd += usd
            self._tokens += tokens
            if self._idle:
                self._wake()

    def paid(self, ledger_id: str, step: Step) -> None:
        """Queue a billed reply of run ``ledger_id`` for the next commit (before its settlement).

        Rule (rows add up to the provider's bill after a crash): a run made again on
        resume carries what was paid for it before the crash (:func:`prepaid`).
        """
        raw = msgspec.json.encode(step)
        with self._lock:
            self._paid.append((ledger_id, raw))
            # a number that opens nothing: the commit that holds this bill releases it
            self._last_paid = self._issued = next(self._numbers)
            if self._idle:
                self._wake()

    def bills_kept(self) -> _Pending | None:
        """Wait until every bill queued so far (:meth:`paid`) is committed, as :meth:`durable` waits.

        Rule: a billed reply is written to the cache only after its bill is kept, so a crash
        between the two writes never leaves a cached reply whose bill no row will carry (a
        run made again is served from the cache at the price :func:`prepaid` reads).

        Raises:
            BudgetRefused: ``"ledger_unwritable"`` when the commit failed.
        """
        return self.durable(self._last_paid) if self._last_paid else None

    def _wake(self) -> None:
        """Wake the idle writer (the lock held), once: until it runs, later changes need not.

        Without clearing ``_idle`` here, every reservation made before the writer got the GIL
        back notified again (most of a stream of instant calls).
        """
        self._idle = False
        self._cond.notify()

    def durable(self, number: int) -> _Pending | None:
        """Wait until reservation ``number`` is committed.

        Returns:
            On an event loop, an awaitable that completes at the commit; ``None`` when it is
            already committed, or after waiting here when this thread runs no event loop (a
            worker thread: blocking it does not block the loop).

        Raises:
            BudgetRefused: ``"ledger_unwritable"`` when the commit failed (the request must not
                be sent; the governor refuses every later one).
        """
        waiter: Any = None
        loop: asyncio.AbstractEventLoop | None = None
        with self._cond:
            if number <= self._through:
                return None
            if self.failed is None:
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:
                    loop = None
                waiter = threading.Event() if loop is None else loop.create_future()
                self._waiters.append((number, loop, waiter))
                if self._idle or self._lazy:  # a request waits to be sent: commit now
                    self._idle = False
                    self._cond.notify()
        if waiter is not None:
            if loop is not None:
                return _Pending(self, number, waiter)
            waiter.wait()
        self.check(number)
        return None

    def check(self, number: int) -> None:
        """Raise when reservation ``number`` could not be committed (see :meth:`durable`)."""
        if number > self._through and self.failed is not None:
            raise BudgetRefused(
                f"ledger_unwritable: not sent, the governor's ledger could not be written: {self.failed}",
                limit="ledger_unwritable",
            )

    # -- the writer thread -----------------------------------------------------------------
    def _write_loop(self) -> None:
        while True:
            with self._cond:
                while not (self._opened or self._closed or self._calls or self._paid) and not self._stopping:
                    self._idle = True  # the only time a change must wake the writer
                    self._cond.wait()
                    self._idle = False
                if not (self._opened or self._closed or self._calls or self._paid):
                    return  # stopping, everything written
                # nobody waits on this commit (counts of calls that contact no provider,
                # settlements): gather more for a moment instead of committing at once, so
                # a stream of instant calls costs a commit per LAZY_S, not one per GIL switch
                deadline = time.monotonic() + LAZY_S
                while not self._waiters and not self._stopping:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._lazy = True
                    self._cond.wait(left)
                    self._lazy = False
                opened = [(n, u, t) for n, (u, t) in self._opened.items()]
                last = self._issued  # every number given out so far is in this commit or an earlier one
                closed, settled, lost = self._closed, (self._calls, self._usd, self._tokens), self._lost
                paid, self._paid = self._paid, []
                self._opened, self._closed = {}, []
                self._calls, self._usd, self._tokens = 0, 0.0, 0
                self._lost = (0, 0.0, 0, 0)
            try:
                if self.failed is None:
                    self.store.ledger_apply(
                        self.benchmark_id, self.session, opened, closed, settled, lost, paid
                    )
                    self.commits += 1
            except StoreError as exc:
                self.failed = exc
                if self._governor is not None:
                    self._governor.halt(
                        f"the governor's ledger could not be written: {exc}", "ledger_unwritable"
                    )
            except BaseException as exc:  # a bug: fail safe, send nothing more
                self.failed = StoreError(f"ledger write failed: {type(exc).__name__}: {exc}", self.store.path)
                if self._governor is not None:
                    self._governor.halt(str(self.failed), "ledger_unwritable")
            self._release(last)

    def _release(self, last: int) -> None:
        """Mark numbers up to ``last`` committed (unless the commit failed); wake their waiters."""
        with self._cond:
            if self.failed is None:
                self._through = max(self._through, last)
            ready = [w for w in self._waiters if w[0] <= self._through or self.failed is not None]
            if ready:
                self._waiters = [
                    w for w in self._waiters if not (w[0] <= self._through or self.failed is not None)
                ]
        by_loop: dict[Any, list[Any]] = {}
        for _, loop, waiter in ready:
            if loop is None:
                waiter.set()
            else:
                by_loop.setdefault(loop, []).append(waiter)
        for loop, futures in by_loop.items():  # one hand-off per event loop, for the whole batch
            try:
                loop.call_soon_threadsafe(_resolve, futures)
            except RuntimeError:  # that loop is closed: nobody waits any more
                pass

    def close(self, cancelled: bool = True) -> None:
        """Write what is queued, stop the writer and detach from the governor (blocking).

        Reservations never settled (requests cancelled in flight) are counted as spent,
        *unknown, at most* their amount, once: with ``cancelled=True`` (a clean stop) they are
        folded at once as cancelled in flight (:meth:`~hrbench.store.Store.ledger_cancelled`),
        and the governor's :attr:`~hrbench.Governor.unknown` says so. Otherwise (or when the
        ledger could not be written) they stay open in the store, and the next resume folds
        them as in flight at a crash.

        Raises:
            StoreError: the fold could not be written (they stay open; a resume folds them).
        """
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()
        governor = self._governor
        if governor is not None and governor.journal is self:
            governor.journal = None
        if cancelled and self.failed is None:
            n, usd, tokens, unpriced = self.store.ledger_cancelled(self.benchmark_id, self.session)
            if n and governor is not None:
                governor.count_cancelled(n, usd, tokens, unpriced)


def _resolve(futures: list[asyncio.Future[None]]) -> None:
    for f in futures:
        if not f.done():  # a waiter cancelled meanwhile
            f.set_result(None)


@contextmanager
def kept_ledger(governor: Governor, store: Store, benchmark_id: str) -> Iterator[Journal]:
    """Resume ``governor`` from the benchmark's stored ledger and keep it per call meanwhile.

    Blocking (SQLite): from async code enter it in a worker thread, or use the daemon's way
    (``anyio.to_thread.run_sync`` around :meth:`Store.ledger_resume`, :meth:`Journal.attach`
    and :meth:`Journal.close`). Hold the benchmark's lease (:meth:`Store.lease_acquire`)
    meanwhile: two runs of one id would fold each other's open reservations.

    Args:
        governor: the benchmark's governor (its use is replaced by the stored one, if any).
        store: the benchmark's store.
        benchmark_id: the benchmark.

    Yields:
        The attached :class:`Journal`; it is closed (everything written, reservations never
        settled folded as cancelled in flight) on exit.

    Example:
        >>> s, gov = Store(":memory:"), Governor(max_calls=3)
        >>> with kept_ledger(gov, s, "b"):
        ...     r = gov.reserve(0.2, 10)     # cancelled before the reply: never settled
        >>> print(gov.calls, unknown_sentence(gov.snapshot()["unknown"]))
        1 cancelled in flight: unknown, at most 0.2000 USD / 1 calls (counted as spent)
        >>> gov2 = Governor(max_calls=3)
        >>> with kept_ledger(gov2, s, "b"):
        ...     print(gov2.calls, gov2.usd)
        1 0.2
    """
    governor.restore(store.ledger_resume(benchmark_id))
    journal = Journal(store, benchmark_id)
    journal.attach(governor)
    try:
        yield journal
    finally:
        journal.close()
