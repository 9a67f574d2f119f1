"""The governor: a benchmark's budget of calls, USD and tokens.

Every request is checked before it is sent (seed 002). Under concurrency the governor
*reserves* an upper-bound estimate of each request's cost at dispatch and *settles* it with the
real cost after the reply (case H13a): many requests in flight against one running
total can never pass a cap, because each admission counts what is already reserved.

A governor with a :class:`~hrbench.runner.Journal` keeps every reservation and
settlement in the benchmark's store as it happens (the reservation before the request is sent,
the settlement right after the reply), so a benchmark resumed after a crash starts from what
was spent and cannot pass ``max_calls`` or ``max_usd`` across the crash.
"""

from __future__ import annotations

import threading
from typing import Any

from hrbench.errors import BudgetRefused, ConfigError
from hrbench.runner._limits import LIMITS, check_limit, options
from hrbench.runner._reservation import Admitting, Gate, Journal, Reservation, booked

__all__ = [
    "DEFAULT_LIMIT_VARIABLES",
    "LIMITS",
    "Gate",
    "Governor",
    "Reservation",
    "check_limit",
    "default_governor",
    "usd_digits",
]


DEFAULT_LIMIT_VARIABLES = ("HRBENCH_MAX_CALLS", "HRBENCH_MAX_USD", "HRBENCH_MAX_TOKENS")
"""The environment variables that override :data:`hrbench.runner._limits`' default limits."""


def default_governor() -> Governor:
    """A governor with the limits of :data:`hrbench.runner._limits` (environment overrides applied).

    Read when a benchmark starts (seed 002: the limits of ``gr_options()``, 400 calls). The
    overrides are :data:`DEFAULT_LIMIT_VARIABLES`, read with
    :func:`~hrbench._util.environ.env_value`: the caller's environment first (the daemon's
    request: ``HRBENCH_MAX_CALLS=50 hrb bench`` holds even for a daemon started before, as
    ``hrb`` sends them), then this process's.

    Raises:
        ConfigError: an environment override that is not a finite number >= 0
            (:func:`check_limit`: ``nan``, ``inf`` and ``-1`` are refused).

    Example:
        >>> from hrbench._util.environ import use_caller_env
        >>> with use_caller_env({"HRBENCH_MAX_CALLS": "50"}):
        ...     default_governor().max_calls
        50
    """
    from hrbench._util.environ import env_value

    limits: dict[str, Any] = options.as_dict()
    for key, kind in LIMITS.items():
        env = env_value("HRBENCH_" + key.upper())
        if env:
            limits[key] = check_limit("HRBENCH_" + key.upper(), env, kind)
    gov = Governor(**limits)
    gov.from_defaults = True
    return gov


def usd_digits(*amounts: float) -> int:
    """Decimals enough (4 to 10) for USD amounts that differ to print differently.

    A refusal said "$0.0006 is more than the $0.0006 left": at 4 decimals the two differed
    by less than the last digit shown.

    Example:
        >>> usd_digits(0.00061, 0.00058), usd_digits(0.000612, 0.000608), usd_digits(1.5, 0.2)
        (5, 6, 4)
    """
    for digits in range(4, 11):
        if len({f"{max(0.0, a):.{digits}f}" for a in amounts}) == len(set(amounts)):
            return digits
    return 10


class Governor(Admitting):
    """A budget for a whole benchmark: calls, USD and tokens.

    At most ``max_calls`` requests, ``max_usd`` USD and ``max_tokens`` tokens (``None`` for no
    limit).
    Each attempt sent to a provider counts as a call, retries included; replies served from a
    cache or a recording cost no call and no USD (case H14a); an attempt that could not connect
    was not sent and is given back (:meth:`Gate.unsent`).

    Args:
        max_calls: the most requests sent, a whole number >= 0.
        max_usd: the most spend, in USD.
        max_tokens: the most tokens, input plus output.
        max_calls_per_run: the most requests one run (one arm on one item, one draw) sends.
        max_usd_per_run: the most one run spends, in USD.
        max_tokens_per_run: the most tokens one run spends, input plus output.

    The per-run caps are reserved as the benchmark's are: each request's worst case is held
    against the run's own budget before it is sent (:class:`~hrbench.runner._runcaps.RunBudget`),
    so a run that would pass its cap is refused the request and ends ``budget_stop`` with its
    partial trace (limits ``run_call_cap_reached``, ``run_cost_cap_reached``,
    ``run_token_cap_reached``); the other runs go on. They cap the arm's requests; a judge's
    are capped by the benchmark's caps.

    Raises:
        ConfigError: a negative, infinite, NaN or non-numeric limit (:func:`check_limit`).

    Example:
        >>> gov = Governor(max_usd=5.0)
        >>> gov.usd = 4.7527
        >>> [gov.try_reserve(usd=0.0884) is not None for _ in range(4)]
        [True, True, False, False]
    """

    def __init__(
        self,
        max_calls: int | None = None,
        max_usd: float | None = None,
        max_tokens: int | None = None,
        *,
        max_calls_per_run: int | None = None,
        max_usd_per_run: float | None = None,
        max_tokens_per_run: int | None = None,
    ) -> None:
        per_run = {
            "max_calls_per_run": max_calls_per_run,
            "max_usd_per_run": max_usd_per_run,
            "max_tokens_per_run": max_tokens_per_run,
        }
        caps = (("max_calls", max_calls), ("max_usd", max_usd), ("max_tokens", max_tokens), *per_run.items())
        for name, value in caps:
            if isinstance(value, str):  # a string is the environment's, read by default_governor
                raise ConfigError(name, value, "a limit must be a number >= 0 or None")
            check_limit(name, value, float if "usd" in name or not name.endswith("_per_run") else int)
        self.max_calls = max_calls
        self.max_usd = max_usd
        self.max_tokens = max_tokens
        self.per_run: dict[str, float | int] = {k: v for k, v in per_run.items() if v is not None}
        """The per-run caps set (``max_calls_per_run``, ``max_usd_per_run``, ``max_tokens_per_run``)."""
        self.calls = 0
        self.usd = 0.0
        self.tokens = 0
        self.refused = 0
        self.from_defaults = False
        self.halted: str | None = None
        """Why the governor stopped admitting anything (a reply that cost more than reserved)."""
        self.halted_limit = "reservation_exceeded"
        """The ``limit`` of the refusals after a halt."""
        self.unknown: dict[str, float | int] | None = None
        """Spend that crashes, cancels and lost replies left unknown (``calls``, ``usd``,
        ``tokens``: at most that much; already counted in the use; ``cancelled_calls`` and
        ``cancelled_usd``: the part cancels left; ``lost_calls`` and ``lost_usd``: the part
        replies lost after the request was written left), or ``None`` (see
        :meth:`restore`, :meth:`count_cancelled`, :meth:`settle`)."""
        self.journal: Journal | None = None
        """Where every reservation and settlement is kept as it happens, or ``None``."""
        self._reserved_usd = 0.0
        self._reserved_tokens = 0
        self._lock = threading.Lock()
        self.bill_known: set[tuple[str, str]] = set()
        """The ``(endpoint, requested model)`` pairs whose billed model a reply has confirmed
        (see :meth:`first_bill`)."""
        self._bill_probes: set[tuple[str, str]] = set()  # pairs with their one request in flight

    def __repr__(self) -> str:
        per_run = "".join(f", {k}={v}" for k, v in self.per_run.items())
        return (
            f"Governor(max_calls={self.max_calls}, max_usd={self.max_usd}, max_tokens={self.max_tokens}{per_run}; "
            f"used calls={self.calls}, usd={self.usd:.4f}, tokens={self.tokens})"
        )

    @property
    def limits(self) -> dict[str, float | int | None]:
        """The three limits, and the per-run caps that are set (``Governor(**limits)`` rebuilds it)."""
        return {
            "max_calls": self.max_calls,
            "max_usd": self.max_usd,
            "max_tokens": self.max_tokens,
            **self.per_run,
        }

    def snapshot(self) -> dict[str, Any]:
        """Limits and use so far (settled plus reserved)."""
        with self._lock:
            return {
                **self.limits,
                "calls": self.calls,
                "usd": self.usd + self._reserved_usd,
                "tokens": self.tokens + self._reserved_tokens,
                "refused": self.refused,
                "halted": self.halted,
                "unknown": None if self.unknown is None else dict(self.unknown),
            }

    def restore(self, ledger: dict[str, Any] | None) -> None:
        """Start from the use a stored ledger kept (a resumed benchmark).

        A resumed benchmark starts from what was spent: settled use plus every
        reservation left open by a crash at its reserved, worst-case amount. That open part is
        spend the crash left *unknown, at most* so much; it is kept in :attr:`unknown` and
        shown by :meth:`snapshot` and the benchmark's printout.

        Args:
            ledger: a ledger as :meth:`~hrbench.store.Store.ledger_resume` (or ``ledger_get``)
                returns it; ``None`` changes nothing.

        Example:
            >>> gov = Governor(max_calls=10)
            >>> gov.restore({"calls": 4, "usd": 0.3, "tokens": 90, "unknown_calls": 1,
            ...              "unknown_usd": 0.25, "unknown_tokens": 50})
            >>> gov.calls, gov.snapshot()["unknown"]
            (4, {'calls': 1, 'usd': 0.25, 'tokens': 50})
        """
        if ledger is None:
            return
        with self._lock:
            self.calls, self.usd, self.tokens = (
                int(ledger["calls"]),
                float(ledger["usd"]),
                int(ledger["tokens"]),
            )
            n = int(ledger.get("unknown_calls") or 0)
            self.unknown = (
                None
                if not n
                else {
                    "calls": n,
                    "usd": float(ledger.get("unknown_usd") or 0.0),
                    "tokens": int(ledger.get("unknown_tokens") or 0),
                }
            )
            for part in ("cancelled", "lost"):  # the parts cancels and lost replies left
                if self.unknown is not None and ledger.get(f"{part}_calls"):
                    self.unknown[f"{part}_calls"] = int(ledger[f"{part}_calls"])
                    self.unknown[f"{part}_usd"] = float(ledger.get(f"{part}_usd") or 0.0)
            for key in ("unpriced_calls", "cancelled_unpriced", "lost_unpriced"):  # no USD bound
                if self.unknown is not None and ledger.get(key):
                    self.unknown[key] = int(ledger[key])

    def count_cancelled(self, calls: int, usd: float, tokens: int, unpriced: int = 0) -> None:
        """Count reservations cancelled in flight as spent, unknown at most their amount.

        Called by :meth:`~hrbench.runner.Journal.close` once the store folded them: their calls are counted already; their reserved USD and tokens
        become spend, and :attr:`unknown` says how much of it was cancelled in flight.

        Example:
            >>> gov = Governor()
            >>> r = gov.reserve(0.25, 40)
            >>> gov.count_cancelled(1, 0.25, 40)
            >>> gov.calls, gov.usd, gov.snapshot()["usd"], gov.unknown["cancelled_calls"]
            (1, 0.25, 0.25, 1)
        """
        with self._lock:
            self._reserved_usd = max(0.0, self._reserved_usd - usd)
            self._reserved_tokens = max(0, self._reserved_tokens - tokens)
            self.usd += usd
            self.tokens += tokens
            self._add_unknown("cancelled", calls, usd, tokens, unpriced)

    def reserve(self, usd: float = 0.0, tokens: int = 0, *, usd_known: bool = True) -> Reservation:
        """Admit one request, holding its estimated cost, or refuse it.

        Args:
            usd: an upper-bound estimate of the request's cost, in USD.
            tokens: an upper-bound estimate of its tokens.
            usd_known: ``False`` when ``usd`` bounds nothing (a request to a model with no
                price, or one sent with no output limit and no cap): should its reply never
                come, its USD is reported unknown, not "at most 0".

        Returns:
            A :class:`Reservation` to :meth:`settle` when the reply is in.

        Raises:
            BudgetRefused: with ``limit`` ``"call_cap_reached"``, ``"cost_cap_reached"`` or
                ``"token_cap_reached"``; nothing is reserved then.
        """
        with self._lock:
            self._admit(usd, tokens)
            self._reserved_usd += usd
            self._reserved_tokens += tokens
            r = Reservation(usd=usd, tokens=tokens, usd_known=usd_known)
            if self.journal is not None:  # numbered and queued for the next commit
                r.kept = self.journal.open(usd if usd_known else None, tokens)
            return r

    def _admit(self, usd: float, tokens: int) -> None:
        """Count one more call, or refuse it (the lock held): the caps' check of :meth:`reserve`.

        Raises:
            BudgetRefused: the governor halted, or the call, USD or token cap would be passed.
        """
        limit = None
        if self.halted is not None:
            limit = self.halted_limit
        elif self.max_calls is not None and self.calls + 1 > self.max_calls:
            limit = "call_cap_reached"
        elif self.max_usd is not None and self.usd + self._reserved_usd + usd > self.max_usd + 1e-12:
            limit = "cost_cap_reached"
        elif self.max_tokens is not None and self.tokens + self._reserved_tokens + tokens > self.max_tokens:
            limit = "token_cap_reached"
        if limit is not None:
            self.refused += 1
            why = f": {self.halted}" if self.halted is not None else f"; {self._why(limit, usd, tokens)}"
            raise BudgetRefused(f"the governor refused a request: {limit} ({self!r}){why}", limit=limit)
        self.calls += 1

    def count_call(self) -> None:
        """Count one call that holds nothing: no cap applies and nothing can bill it.

        The runtime's fast path for an in-process client whose model has no price or is free,
        under a governor with no cap (:meth:`hrbench.runner.runtime.Runtime.call`): no
        :class:`Reservation` and no :class:`Gate` are made; :meth:`book` adds what the reply
        used. The same refusal as :meth:`reserve` once the governor halted.

        Raises:
            BudgetRefused: the governor halted (``halted_limit``).

        Example:
            >>> gov = Governor()
            >>> gov.count_call(); gov.book(1, 0.0, 12)
            >>> gov.snapshot()["calls"], gov.snapshot()["tokens"]
            (1, 12)
        """
        with self._lock:
            if (
                self.halted is None
                and self.max_calls is None
                and self.max_usd is None
                and self.max_tokens is None
            ):
                self.calls += 1  # no cap and no halt: what _admit would do
            else:
                self._admit(0.0, 0)

    def book(self, calls: int, usd: float | None, tokens: int) -> None:
        """Add what ``calls`` calls counted by :meth:`count_call` used (``usd=None``: no price, 0).

        Kept in the governor's journal, when it keeps one, as the settlement of calls that were
        never held open (:meth:`~hrbench.runner.Journal.count`).
        """
        with self._lock:
            self.usd += usd or 0.0
            self.tokens += tokens
            if self.journal is not None:
                self.journal.count(calls, usd or 0.0, tokens)

    def _why(self, limit: str, usd: float, tokens: int) -> str:
        """Why a request was refused, in the caps' units (a stop short of a cap says why)."""
        if limit == "call_cap_reached":
            return f"all {self.max_calls} calls are used"
        if limit == "cost_cap_reached":
            cap, used, held, need, unit = self.max_usd or 0.0, self.usd, self._reserved_usd, usd, "$"
            fmt = "{:." + str(usd_digits(need, max(0.0, cap - used - held))) + "f}"
        else:
            cap, used, held, need, unit = self.max_tokens or 0, self.tokens, self._reserved_tokens, tokens, ""
            fmt = "{:,.0f}"
        left = max(0.0, cap - used - held)

        def show(x: float) -> str:
            return unit + fmt.format(max(0.0, x) + 0.0)  # no "-0.0000": a float's dust below 0 is 0

        what = show(need) + (" tokens" if not unit else "")
        shown_left = show(left)
        room = (  # nothing left as shown: say so, not "more than the $0.0000 left"
            "does not fit: no room is left"
            if not shown_left.strip("$0.,")
            else f"is more than the {shown_left} left"
        )
        return (
            f"the next request's worst case ({what}) {room} "
            f"({show(used)} spent, {show(held)} reserved by requests in flight, "
            f"cap {show(cap)}); the worst case is its prompt bound plus the output limit it "
            "sends, so a benchmark stops short of a cap by up to one request's worst case"
        )

    def settle(
        self,
        reservation: Reservation,
        usd: float | None,
        tokens: int,
        *,
        sent: bool = True,
        lost: bool = False,
    ) -> None:
        """Replace a reservation by what the request really cost (``usd=None``: unknown, 0).

        ``sent=False`` gives back the call of an attempt that never left this machine (the
        connection was refused). Rule: ``calls`` counts requests sent, so such an attempt is
        not one (a dead port that received nothing costs no calls).

        ``lost=True``: the attempt was written whole but its reply was lost (a timeout after
        the write, a connection reset, a garbled HTTP 200 body). It may have been billed, so
        it is settled at its reservation whatever ``usd`` and ``tokens`` say, and counted as
        spend *unknown, at most* that much (``lost_calls``, ``lost_usd`` in :attr:`unknown`;
        never booked at $0, which would let calls pass a cap).

        Example:
            >>> gov = Governor(max_usd=1.0)
            >>> gov.settle(gov.reserve(0.25, 40), 0.0, 0, lost=True)
            >>> gov.usd, gov.tokens, gov.unknown["lost_calls"], gov.unknown["lost_usd"]
            (0.25, 40, 1, 0.25)
        """
        with self._lock:
            if (amounts := booked(reservation, usd, tokens, lost)) is None:
                return
            usd, tokens = amounts
            self._reserved_usd -= reservation.usd
            self._reserved_tokens -= reservation.tokens
            if lost:
                self._add_unknown("lost", 1, usd or 0.0, tokens, int(not reservation.usd_known))
            self.usd += usd or 0.0
            self.tokens += tokens
            if not sent:
                self.calls -= 1
            if self.journal is not None and reservation.kept:
                self.journal.settle(
                    reservation.kept,
                    usd or 0.0,
                    tokens,
                    calls=int(sent),
                    lost=lost,
                    unpriced=int(lost and not reservation.usd_known),
                )

    def _add_unknown(self, part: str, calls: int, usd: float, tokens: int, unpriced: int = 0) -> None:
        """Count spend left unknown by ``part`` (``"cancelled"`` or ``"lost"``) in :attr:`unknown` (lock held).

        ``unpriced``: how many of those ``calls`` have no USD bound.
        """
        was = self.unknown or {}
        self.unknown = {
            **was,
            "calls": int(was.get("calls", 0)) + calls,
            "usd": float(was.get("usd", 0.0)) + usd,
            "tokens": int(was.get("tokens", 0)) + tokens,
            f"{part}_calls": int(was.get(f"{part}_calls", 0)) + calls,
            f"{part}_usd": float(was.get(f"{part}_usd", 0.0)) + usd,
        }
        if unpriced:
            self.unknown["unpriced_calls"] = int(was.get("unpriced_calls", 0)) + unpriced
            self.unknown[f"{part}_unpriced"] = int(was.get(f"{part}_unpriced", 0)) + unpriced

    def first_bill(self, key: tuple[str, str]) -> str:
        """Slow start until the bill is known: may a request to ``key`` be sent now?

        Rule (an endpoint may bill ``gpt-4o`` for ``gpt-4o-mini``; with 100 requests in
        flight before the first reply shows it, the USD cap would be passed 16-fold): under a USD cap,
        until a reply has confirmed what an ``(endpoint, requested model)`` pair is billed as,
        at most one request to it is in flight. A reply billed as an undeclared dearer model
        then stops the benchmark before any further request, so the worst overshoot is that
        one request's.

        Args:
            key: ``(endpoint, requested model)``.

        Returns:
            ``"known"``: a reply confirmed the billed model, send at once; ``"probe"``: this
            request is the one in flight (call :meth:`bill_seen` once its reply is checked);
            ``"wait"``: another request of the pair is in flight, ask again later.

        Example:
            >>> gov = Governor(max_usd=1.0)
            >>> k = ("http://127.0.0.1:9/v1", "gpt-4o-mini")
            >>> gov.first_bill(k), gov.first_bill(k)
            ('probe', 'wait')
            >>> gov.bill_seen(k, confirmed=True); gov.first_bill(k)
            'known'
        """
        with self._lock:
            if key in self.bill_known:
                return "known"
            if key in self._bill_probes:
                return "wait"
            self._bill_probes.add(key)
            return "probe"

    def bill_seen(self, key: tuple[str, str], confirmed: bool) -> None:
        """The probe of ``key`` (:meth:`first_bill`) ended; ``confirmed``: its reply showed the billed model."""
        with self._lock:
            self._bill_probes.discard(key)
            if confirmed:
                self.bill_known.add(key)

    def halt(self, reason: str, limit: str = "reservation_exceeded") -> None:
        """Refuse every later request (with ``limit``), for ``reason``.

        Rule: a reply that reports more than was reserved for it (a provider that
        overran ``max_tokens``, a reply billed as a dearer model) breaks the bound the caps
        rest on, so the benchmark stops at once rather than risk passing a cap. So
        does a ledger that cannot be written (``"ledger_unwritable"``).
        """
        with self._lock:
            if self.halted is None:
                self.halted = reason
                self.halted_limit = limit
