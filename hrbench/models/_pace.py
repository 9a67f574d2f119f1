"""The pace of requests to one provider key and model: the rate the provider allows.

A provider limits a key per model by rate (requests, and tokens, per minute) and says so in every
reply's headers; the concurrency a user sets is only a ceiling. :class:`Pace` sends at the rate
the provider states, as a local token bucket kept in step with the provider's:

- **The limits are read from the reply headers** (:mod:`hrbench.models._limits`): OpenAI's
  ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``
  (https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers) and Anthropic's
  ``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}``
  (https://docs.anthropic.com/en/api/rate-limits#response-headers). A limit is per minute, so
  the rate is ``limit / 60`` per second, and the bucket holds ``remaining + rate * reset``.
  A token limit becomes a request rate through the tokens a reply uses (a running mean).
- **The local bucket never holds more than the provider's**: each reply's ``remaining``, carried
  forward from when that request was sent (refill since, minus this pace's sends since), lowers
  it, so another process using the same key is seen. The pace sends at :data:`MAX_SHARE` of
  the stated rate, which leaves the provider's bucket a margin against network jitter.
- **A 429 holds every request of the pace** until its ``retry-after-ms`` / ``Retry-After``
  passes and empties the bucket. **A storm of them lowers the rate** (at least
  :data:`STORM_COUNT` 429s, :data:`STORM_SHARE` of the replies of the last :data:`WINDOW_S`
  seconds; once per episode: a 429 of a request sent before the last cut does not cut again):
  a stated rate is cut to :data:`CUT` of the share used; with no stated rate, the pace learns
  one, :data:`CUT` of the rate the provider accepted in the window (none accepted: of half the
  rate of its refusals). The share heals by :data:`HEAL_PER_S` a second; a learned
  rate is forgotten :data:`FORGET_S` seconds after its last 429.
- **Until the first reply shows whether the provider states limits**, one request goes alone,
  and the requests in flight double every :data:`START_STEP_S` seconds (a slow start): a
  benchmark that opens with 64 requests against a bucket of 20 would lose 44 to 429s.
- In flight is bounded only by the client's ceiling (its ``max_connections``): when latency
  rises and no 429 comes, more requests go in flight at the same rate (Little's law).

Paces are kept per ``(provider, base_url, key fingerprint, model)`` for the whole process
(:func:`pace_for`), so every benchmark and script a daemon runs shares one pace per key and
model. The key is identified by a keyed BLAKE2b hash under a random salt made when the process
starts (:func:`fingerprint`): held in memory only, never written anywhere, and not comparable
across processes. Waiting never blocks the event loop: waiters queue first come, first served,
and only the first sleeps, until the next token is due.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import anyio

from hrbench._util.per_loop import PerLoop, running_loop
from hrbench.models._limits import Limit, parse_limits

__all__ = ["Pace", "PaceRefused", "Ticket", "fingerprint", "forget", "pace_for"]

MAX_SHARE = 0.98
"""The share of a stated rate the pace sends at."""

CUT = 0.75
"""What a 429 episode leaves of the rate (a stated rate's share, or a learned rate)."""

MIN_SHARE = 0.05
"""The least share of a stated rate the cuts leave."""

HEAL_PER_S = 0.02
"""How much of the stated rate the share regains per second with no 429."""

MIN_RATE = 0.2
"""The slowest a learned rate falls to (requests per second)."""

WINDOW_S = 2.0
"""Seconds of replies over which 429s are counted and the accepted rate measured."""

STORM_COUNT = 3
"""The fewest 429s in :data:`WINDOW_S` that cut the rate (with :data:`STORM_SHARE`)."""

STORM_SHARE = 0.02
"""The least share of the replies in :data:`WINDOW_S` that must be 429s to cut the rate: below
it, a 429 only holds (the goal is at most 2% of calls refused)."""

FORGET_S = 60.0
"""Seconds after its last 429 when a learned rate (no stated limit) is forgotten."""

START_STEP_S = 0.5
"""Before the first reply, the requests in flight double every this many seconds, from one."""

DEFAULT_HOLD_S = 1.0
"""The hold after a 429 that names no wait and when no rate is known (seconds)."""

POLL_S = 0.25
"""The longest a waiting request sleeps before it looks again (another event loop may have changed the pace)."""

COST_WEIGHT = 0.2
"""The weight of the latest reply in the running mean of tokens per request."""

MAX_PACES = 1024
"""Paces kept before the idle ones are forgotten (each distinct key and model makes one)."""


_SALT = os.urandom(16)


def fingerprint(key: str | None) -> bytes | None:
    """A key's identity for this process: a keyed hash under a salt made at start, never stored.

    Example:
        >>> fingerprint("sk-a") == fingerprint("sk-a") != fingerprint("sk-b")
        True
        >>> fingerprint(None) is None
        True
    """
    if not key:
        return None
    return hashlib.blake2b(key.encode(), key=_SALT, digest_size=16).digest()


class PaceRefused(Exception):
    """Raised by :meth:`Pace.acquire` when the wait is longer than the caller allows.

    Attributes:
        wait_s: the seconds still to wait.
        held: whether it is a 429's wait (else the pace's next turn, past the caller's time).
    """

    def __init__(self, wait_s: float, held: bool) -> None:
        what = "a 429's wait" if held else "the next turn of the provider's rate"
        super().__init__(f"rate limited: {what} is {wait_s:.3g} s away")
        self.wait_s = wait_s
        self.held = held


@dataclass(slots=True)
class Ticket:
    """One request let through by a pace: when it was sent, and how many the pace had sent before."""

    sent_at: float
    index: int


class _Queue:
    """The requests of one event loop waiting on a pace, first come first served."""

    __slots__ = ("changed", "waiters")

    def __init__(self) -> None:
        self.waiters: deque[anyio.Event] = deque()
        self.changed: anyio.Event | None = None

    def poke(self) -> None:
        if self.changed is not None:
            self.changed.set()


class Pace:
    """The rate at which one provider key and model is sent requests (see the module's docstring).

    Thread-safe: its state is shared by every event loop of the process; each loop has its own
    queue of waiting requests.

    Args:
        clock: the time base, monotonic seconds (``time.monotonic`` by default; a test may give its own).

    Attributes:
        sent: requests let through. limited: 429s seen (quota refusals apart).
        in_flight: requests let through and not yet answered.

    Example:
        >>> now = [0.0]
        >>> p = Pace(clock=lambda: now[0])
        >>> t = p.try_take()                       # the first request goes alone
        >>> p.on_reply(t, {"x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "0",
        ...                "x-ratelimit-reset-requests": "1s"}, 200)
        >>> p.release(t)
        >>> round(p.rate(), 2), p.try_take() is None  # 10/s stated, sent at 98% of it; none left
        (9.8, True)
        >>> now[0] = 0.11; p.try_take() is not None   # one token later
        True
    """

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self.clock: Callable[[], float] = clock or time.monotonic
        self._lock = threading.Lock()
        now = self.clock()
        self.seen = False
        self.started: float | None = None
        self.in_flight = 0
        self.sent = 0
        self.limited = 0
        self.limits: dict[str, Limit] = {}
        self.costs: dict[str, float] = {}
        self.level = 0.0
        self._metered = False
        self.stamp = now
        self.used = now
        self.hold_until = -math.inf
        self.cut_at = -math.inf
        self.cut_share = MAX_SHARE
        self.learned: float | None = None
        self._last_cut = -math.inf
        self._replies: deque[tuple[float, bool]] = deque()
        self._queues: PerLoop[_Queue] = PerLoop()

    def __repr__(self) -> str:
        rate = self.rate()
        shown = "unmetered" if rate is None else f"{rate:.3g}/s"
        return f"Pace({shown}, in_flight={self.in_flight}, sent={self.sent}, limited={self.limited})"

    # -- the allowance ---------------------------------------------------------------------------

    def _factor(self, now: float) -> float:
        f = self.cut_share + HEAL_PER_S * max(0.0, now - self.cut_at)
        return min(MAX_SHARE, f) if self.limits else f

    def _allowance(self, now: float) -> tuple[float | None, float]:
        """The rate this pace sends at (requests per second; ``None``: unmetered) and its bucket size."""
        if not self.limits and self.learned is None:  # nothing stated nor learned: unmetered
            return None, math.inf
        pairs: list[tuple[float, float]] = []
        for dim, lim in self.limits.items():
            cost = 1.0 if dim == "requests" else self.costs.get(dim)
            if cost:
                pairs.append((lim.rate / cost, lim.capacity() / cost))
        if self.learned is not None and now - self.cut_at > FORGET_S:
            self.learned = None
        if self.learned is not None:
            pairs.append((self.learned, 1.0))
        if not pairs:
            return None, math.inf
        rate = min(r for r, _ in pairs) * self._factor(now)
        return max(rate, 1e-6), max(1.0, min(c for _, c in pairs))

    def rate(self) -> float | None:
        """The rate this pace sends at now (requests per second), or ``None`` when unmetered."""
        with self._lock:
            return self._allowance(self.clock())[0]

    def _refill(self, now: float) -> float | None:
        """Fill the bucket up to ``now``; the rate it fills at (requests per second; ``None``: unmetered)."""
        rate, cap = self._allowance(now)
        self._metered = rate is not None
        if rate is not None:
            self.level = min(cap, self.level + rate * max(0.0, now - self.stamp))
        self.stamp = now
        return rate

    def _wait(self, now: float) -> float:
        """Seconds until a request may be sent (0: now)."""
        if now < self.hold_until:
            return self.hold_until - now
        if not self.seen:
            if self.started is None:
                self.started = now
            steps = (now - self.started) / START_STEP_S
            if steps < 16 and self.in_flight >= 2 ** int(steps):
                return max(0.001, START_STEP_S * (int(steps) + 1) - (now - self.started))
        rate = self._refill(now)
        if rate is None or self.level >= 1.0:
            return 0.0
        return (1.0 - self.level) / rate

    def try_take(self) -> Ticket | None:
        """Let one request through now if the pace allows it, else ``None`` (never waits)."""
        with self._lock:
            now = self.clock()
            if self._wait(now) > 0:
                return None
            return self._take(now)

    def take_now(self) -> Ticket | None:
        """Let one request through now if no request of this event loop waits and the pace allows it.

        Never waits: ``None`` says to :meth:`acquire` instead (a request that comes while others
        wait queues behind them).
        """
        if self._queue().waiters:
            return None
        return self.try_take()

    def _take(self, now: float) -> Ticket:
        if self._metered:  # set by the _refill of the _wait that allowed it
            self.level -= 1.0
        self.in_flight += 1
        self.sent += 1
        self.used = now
        return Ticket(now, self.sent - 1)

    async def acquire(self, max_hold_s: float = math.inf, within_s: float = math.inf) -> Ticket:
        """Wait until the pace lets one request through, first come first served.

        Args:
            max_hold_s: the longest wait told by a 429 that the caller accepts (seconds).
            within_s: the longest the caller may wait at all (seconds; a retry's time left).

        Returns:
            The request's ticket: pass it to :meth:`on_reply` (or :meth:`on_rate_limited`) and
            to :meth:`release` when the request ends.

        Raises:
            PaceRefused: when a 429's wait still to run is longer than ``max_hold_s``, or the
                wait would run past ``within_s``.
        """
        deadline = self.clock() + within_s
        queue = self._queue()
        if not queue.waiters:
            ticket = self.try_take()
            if ticket is not None:
                return ticket
        me = anyio.Event()
        queue.waiters.append(me)
        try:
            if queue.waiters[0] is not me:
                await me.wait()  # until the request ahead is let through
            while True:
                with self._lock:
                    now = self.clock()
                    wait = self._wait(now)
                    if wait <= 0:
                        return self._take(now)
                    held = self.hold_until - now
                if held > max_hold_s or now + wait > deadline:
                    raise PaceRefused(wait, held > max_hold_s)
                queue.changed = changed = anyio.Event()
                with anyio.move_on_after(min(wait, POLL_S)):
                    await changed.wait()
        finally:
            first = bool(queue.waiters) and queue.waiters[0] is me
            with contextlib.suppress(ValueError):
                queue.waiters.remove(me)
            if first and queue.waiters:
                queue.waiters[0].set()

    def _queue(self) -> _Queue:
        return self._queues.get(running_loop(), _Queue, self._lock)

    def _poke(self) -> None:
        self._queue().poke()

    # -- what replies say ------------------------------------------------------------------------

    def on_reply(self, ticket: Ticket, headers: Mapping[str, str], status: int) -> None:
        """Read a reply (not a 429): the limits it states; a 2xx that states none clears them."""
        with self._lock:
            now = self.clock()
            self._refill(now)
            self.seen = True
            ok = 200 <= status < 300
            if ok:
                self._replies.append((now, True))
                if len(self._replies) > 4096:  # pruned when a 429 comes; bounded meanwhile
                    self._replies.popleft()
            self._read_limits(ticket, headers, now, clear=ok)
        self._poke()

    def on_rate_limited(self, ticket: Ticket, wait_s: float | None, headers: Mapping[str, str]) -> None:
        """Read a 429: hold every request for its wait, empty the bucket, and cut the rate once per episode."""
        with self._lock:
            now = self.clock()
            self._refill(now)
            self.seen = True
            self.limited += 1
            self._replies.append((now, False))
            self._read_limits(ticket, headers, now, clear=False)
            while self._replies and self._replies[0][0] < now - WINDOW_S:
                self._replies.popleft()
            refused = sum(1 for _, ok in self._replies if not ok)
            storm = refused >= STORM_COUNT and refused >= STORM_SHARE * len(self._replies)
            if storm and ticket.sent_at >= self._last_cut:  # a new episode: sent after the last cut
                self._cut(now)
                self._last_cut = now
            self.level = min(self.level, 0.0)
            if wait_s is None:
                rate, _ = self._allowance(now)
                wait_s = DEFAULT_HOLD_S if rate is None else min(DEFAULT_HOLD_S, 1.0 / rate)
            self.hold_until = max(self.hold_until, now + wait_s)
        self._poke()

    def on_usage(self, tokens_in: int, tokens_out: int) -> None:
        """Fold a reply's reported tokens into the running mean of tokens per request."""
        with self._lock:
            self._refill(self.clock())
            costs = self.costs  # three dimensions, written out: this runs for every reply
            total = tokens_in + tokens_out
            old = costs.get("tokens")
            costs["tokens"] = float(total) if old is None else old + COST_WEIGHT * (total - old)
            old = costs.get("input_tokens")
            costs["input_tokens"] = float(tokens_in) if old is None else old + COST_WEIGHT * (tokens_in - old)
            old = costs.get("output_tokens")
            costs["output_tokens"] = (
                float(tokens_out) if old is None else old + COST_WEIGHT * (tokens_out - old)
            )

    def release(self, ticket: Ticket) -> None:
        """The request of ``ticket`` ended (answered, failed or cancelled)."""
        with self._lock:
            self.in_flight = max(0, self.in_flight - 1)
            self.used = self.clock()
            starting = not self.seen
        if starting:  # the slow start bounds the requests in flight
            self._poke()

    def unsent(self, ticket: Ticket) -> None:
        """The request of ``ticket`` was let through but not sent: its token is given back."""
        with self._lock:
            self._refill(self.clock())
            if self._metered:
                self.level += 1.0

    def _read_limits(self, ticket: Ticket, headers: Mapping[str, str], now: float, clear: bool) -> None:
        limits = parse_limits(headers)
        if not limits:
            if clear and self.limits:
                self.limits = {}
            return
        was_metered = self._allowance(now)[0] is not None
        self.limits = limits
        self.learned = None
        rate, cap = self._allowance(now)
        if rate is None:
            return
        if not was_metered:
            self.level = cap
        # the stated remaining, carried forward from the send (refill since, minus this pace's
        # sends since; at the first reading, with no refill: when the provider counted it is unknown)
        since = self.sent - ticket.index - 1
        refilled = max(0.0, now - ticket.sent_at) if was_metered else 0.0
        for dim, lim in limits.items():
            cost = 1.0 if dim == "requests" else self.costs.get(dim)
            if lim.remaining is None or not cost:
                continue
            there = (lim.remaining + lim.rate * refilled) / cost - since
            self.level = min(self.level, max(-cap, there))

    def _cut(self, now: float) -> None:
        """Lower the rate after a 429: the stated rate's share, or a rate learned from what was accepted."""
        if self.limits:
            self.cut_share = max(MIN_SHARE, self._factor(now) * CUT)
        else:
            accepted = sum(1 for _, ok in self._replies if ok)
            span = max(0.25, now - self._replies[0][0]) if self._replies else WINDOW_S
            # none accepted: half the rate the refusals came at
            measured = (accepted if accepted else 0.5 * len(self._replies)) / span
            self.learned = max(MIN_RATE, measured)
            self.cut_share = CUT
        self.cut_at = now


_PACES: dict[tuple[str, str, bytes | None, str], Pace] = {}
_REGISTRY = threading.Lock()


def pace_for(provider: str, base_url: str, key: str | None, model: str) -> Pace:
    """The process's :class:`Pace` of ``(provider, base_url, key, model)``, made on first use.

    The key is held only as its :func:`fingerprint`. When :data:`MAX_PACES` are kept, the idle
    ones (nothing in flight or waiting) least recently used are forgotten first.

    Example:
        >>> pace_for("openai", "http://x/v1", "k", "m") is pace_for("openai", "http://x/v1", "k", "m")
        True
        >>> pace_for("openai", "http://x/v1", "k", "m") is pace_for("openai", "http://x/v1", "k2", "m")
        False
    """
    k = (provider, base_url, fingerprint(key), model)
    with _REGISTRY:
        pace = _PACES.get(k)
        if pace is None:
            if len(_PACES) >= MAX_PACES:
                idle = sorted(
                    (p.used, name)
                    for name, p in _PACES.items()
                    if p.in_flight == 0 and not any(q.waiters for q in p._queues.values())
                )
                for _, name in idle[: max(1, len(_PACES) - MAX_PACES // 2)]:
                    del _PACES[name]
            pace = _PACES[k] = Pace()
        return pace


def forget() -> None:
    """Forget every pace (what the providers said, the cuts, the holds): for tests."""
    with _REGISTRY:
        _PACES.clear()
