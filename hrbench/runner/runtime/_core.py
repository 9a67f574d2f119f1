"""The :class:`Runtime` one benchmark's runs share.

A request through the cache, the governor, the client, the recorder and the run's trace.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import msgspec

from hrbench.errors import BudgetRefused, DuplicateDrawError
from hrbench.models import DEFAULT_MAX_OUTPUT_TOKENS, Pricing, output_limit
from hrbench.records import Request, Result, Step
from hrbench.runner._cache import IN_FLIGHT, Cache, cache_key, request_hash
from hrbench.runner._governor import Gate, Governor
from hrbench.runner._ledger import contacts_provider
from hrbench.runner._room import reserve_first, reserve_first_blocking
from hrbench.runner._runcaps import run_budget
from hrbench.runner.runtime._billing import Billing, Paying
from hrbench.runner.runtime._drain import Counted, Drain, Draining, Lead
from hrbench.runner.runtime._rules import HTTP_PROVIDERS, explicit_usd_cap, unpriced_message
from hrbench.store import Store

if TYPE_CHECKING:
    from hrbench.arm import Context

__all__ = ["Runtime"]


@dataclass
class _Cell:
    """Draw history of one arm on one item: what earlier runs were served."""

    served: dict[str, int] = field(default_factory=dict)  # request key (draw index included) -> first run
    response_ids: dict[str, int] = field(default_factory=dict)  # response id -> run


class Runtime(Billing):
    def __init__(
        self,
        client: Any,
        governor: Governor,
        cache: Cache | None,
        record: str | None,
        store: Store | None,
        pricing: Pricing,
    ) -> None:
        self.client = client
        self.governor = governor
        self.cache = cache
        self.record = record
        self.store = store
        self.pricing = pricing
        self.cells: dict[tuple[str, str], _Cell] = defaultdict(_Cell)
        self.drain: Drain | None = None
        """A clean cancel's drain (:class:`Drain`), shared by the benchmark's runtimes, or ``None``."""
        self.arm_response_ids: dict[str, dict[str, tuple[str, int]]] = defaultdict(dict)
        self.inline = getattr(client, "inline", False) is True
        per_run = getattr(governor, "per_run", None) or {}
        self.capped = (
            governor.max_usd is not None
            or governor.max_tokens is not None
            or "max_usd_per_run" in per_run
            or "max_tokens_per_run" in per_run
        )
        # the defaults' USD cap (hrbench.options) is not one the caller set, so a model with no
        # price runs under it (the default call cap still bounds it); an explicit max_usd or
        # max_usd_per_run refuses an unpriced model before the first call (case R04a)
        self.usd_cap = explicit_usd_cap(governor)
        """The caller's USD cap as ``(field, USD)`` (:func:`explicit_usd_cap`), or ``None``."""
        self.strict_usd = self.usd_cap is not None
        self.bills = bool(getattr(client, "bills", False))
        self.sends = contacts_provider(client)
        """Whether requests may reach a provider: they then wait for their reservation's commit
        when the governor keeps a ledger (:mod:`hrbench.runner._ledger`)."""
        self.counts_only = (
            isinstance(governor, Governor)
            and not self.capped
            and governor.max_calls is None
            and not self.bills
            and getattr(client, "provider", None) == "mock"
        )
        """Whether a request to a model that costs nothing only counts its call (:meth:`_counted`):
        an in-process mock under a governor with no cap holds no reservation."""
        self.bills_known: set[tuple[str, str]] = set()
        """The slow-start pairs (:meth:`_bill_key`) this runtime saw known: no governor call for them."""
        self.prices: dict[str, Any] = {}
        self._free: dict[str, bool] = {}  # per model, whether its replies cost nothing (_costs_nothing)
        self._zero_rated: dict[str, bool] = {}  # per model, whether every rate of its price is 0 (cost)
        self.billed_as: dict[str, set[str]] = defaultdict(set)
        """Per requested model, the models replies were billed as (served-model switches seen)."""
        self.check_draws = True
        """Whether a reply that repeats an earlier run's draw is a DuplicateDrawError (not for a judge)."""
        self.role = "client"
        """Whose requests these are, as a stop names it: ``"client"``, or ``"judge"`` (a judge scorer's)."""
        self.halted_by: dict[str | None, Result] = {}
        """Failures every later request would share (``Result.halts``), by model (``None``: the
        client's): no such request is sent, it fails at once with that cause."""
        wire = getattr(client, "wire", None)
        self.wire: Callable[[Request], dict[str, Any] | None] | None = wire if callable(wire) else None
        self.replays = getattr(client, "provider", "") == "replay"
        """A replay client answers from its recording: no cache in front of it."""
        if getattr(client, "cacheable", True) is False:  # a mock that cannot be fingerprinted
            self.cache = None

    def _duplicate(self, ctx: Context, key: str, result: Result, cell: _Cell) -> DuplicateDrawError | None:
        """Whether this reply repeats an earlier run's draw (seed 002); ``cell``: the run's arm and item."""
        if result.source in ("cache", "recording"):
            where = _where(ctx)
            earlier = cell.served.get(key)
            if earlier is not None and earlier != ctx.run:
                return DuplicateDrawError(
                    f"{where} was served the reply of run {earlier} (same request and draw index); "
                    "every request of a run should carry the run's draw index",
                    arm=ctx.arm,
                    item=ctx.item_id,
                    run=ctx.run,
                    key=key,
                )
            if not result.draw_keyed and ctx.run > 1:
                return DuplicateDrawError(
                    f"{where} was served a recorded reply without its own draw key",
                    arm=ctx.arm,
                    item=ctx.item_id,
                    run=ctx.run,
                    key=key,
                )
        rid = result.response_id
        if rid:
            earlier_run = cell.response_ids.get(rid)
            seen = self.arm_response_ids[ctx.arm].get(rid)
            if (earlier_run is not None and earlier_run != ctx.run) or (
                seen is not None and seen != (ctx.item_id, ctx.run)
            ):
                return DuplicateDrawError(
                    f"{_where(ctx)} got a reply whose provider response id {rid!r} was seen in an earlier run",
                    arm=ctx.arm,
                    item=ctx.item_id,
                    run=ctx.run,
                    key=rid,
                )
        return None

    def kept(self, arm: str, item: str, run: int, trace: Iterable[Step], cell: bool = True) -> None:
        """Seed the distinct-draw check with a kept run's draws (a resume).

        Seed 002 refuses a run that repeats an earlier run's draw; across a resume the earlier
        runs are the kept ones. Their requests' keys (``cell``: only needed while their item
        runs) and their replies' provider response ids are remembered as if they had just run,
        so a run made again (``--retry-errors``, or a run a crash or a stop left undone) whose
        reply repeats one of theirs is refused again, whether the cache or the provider served it.

        Example:
            >>> from hrbench.runner import Governor
            >>> rt = Runtime(None, Governor(), None, None, None, None)
            >>> rt.kept("a", "q1", 1, [Step(ledger_id="b/1", key="k1", response_id="id-1")])
            >>> rt.arm_response_ids["a"]["id-1"], rt.cells[("a", "q1")].served["k1"]
            (('q1', 1), 1)
        """
        for step in trace:
            if step.kind != "request" or step.source not in ("live", "cache", "recording"):
                continue
            if cell and step.key:
                self.cells[(arm, item)].served.setdefault(step.key, run)
            if step.response_id:
                if cell:
                    self.cells[(arm, item)].response_ids.setdefault(step.response_id, run)
                self.arm_response_ids[arm].setdefault(step.response_id, (item, run))

    def _remember(self, ctx: Context, key: str, result: Result, cell: _Cell) -> None:
        cell.served.setdefault(key, ctx.run)
        if result.response_id:
            cell.response_ids.setdefault(result.response_id, ctx.run)
            self.arm_response_ids[ctx.arm].setdefault(result.response_id, (ctx.item_id, ctx.run))

    async def _blocking(self, inline: bool, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(*args) if inline else await anyio.to_thread.run_sync(fn, *args)

    def _shares(self, cache: Cache | None, inline: bool) -> str | None:
        """The in-flight scope this call shares replies in, or ``None``.

        Only a cache that both reads and writes shares: a waiter is served what the cache would
        have given it a moment later. An inline call (a client that answers without suspending)
        has nothing in flight to share and no event loop to wait on. A cache without a
        ``scope`` (the Ray executor's proxy of the driver's cache, in a worker) does not share:
        requests in flight on different workers are not seen from one place.
        """
        if cache is None or not (cache.read and cache.write) or inline:
            return None
        scope = getattr(cache, "scope", None)  # a Ray worker's proxy of the driver's cache has none
        if not isinstance(scope, str):
            return None
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # not on asyncio (anyio's trio backend): no waiting across loops
            return None
        return scope

    async def _obtain(
        self,
        ctx: Context,
        request: Request,
        keys: tuple[str, str],
        cache: Cache | None,
        inline: bool,
        lead: Lead | None,
    ) -> tuple[Result, float | None]:
        """The reply to a request, from the cache or sent under the governor: ``(result, usd charged)``.

        ``keys``: the request's :func:`~hrbench.runner._cache.request_hash` and
        :func:`~hrbench.runner._cache.cache_key`, made once and handed to the cache and the recorder.
        """
        hashed, key = keys
        known = (key, hashed) if isinstance(cache, Cache) else ()  # another cache (a Ray worker's) keys it
        if cache is not None and cache.read:
            hit = await self._blocking(inline, cache.get, request, ctx.arm, *known[:1])
            if hit is not None:
                return msgspec.structs.replace(hit, source="cache"), 0.0
        halt = (self.halted_by.get(None) or self.halted_by.get(request.model)) if self.halted_by else None
        if halt is not None:  # the provider refused the quota or the key: send no more
            return self._not_sent(halt, request), 0.0
        result = await (self._counted if self._only_counted(request) else self._held)(
            ctx, request, key, inline, lead
        )
        if result.source != "live":
            return result, 0.0
        if cache is not None and cache.write and await self.bill_kept(result):
            await self._blocking(inline, cache.put, request, result, ctx.arm, *known)
        if self.record and self.store is not None and result.ok and not result.refused:
            await self._blocking(
                inline, self.store.recording_put, self.record, ctx.arm, hashed, request, result
            )
        return result, result.usd

    def _only_counted(self, request: Request) -> bool:
        """Whether ``request`` takes :meth:`_counted`'s fast path: :attr:`counts_only`, a model that costs nothing."""
        if not self.counts_only:
            return False
        declared = getattr(self.client, "billed_as", ())
        if not declared and not self.billed_as and (free := self._free.get(request.model)) is not None:
            return free  # the verdict kept per model (_costs_nothing), without the call
        return self._costs_nothing(request.model, declared, self.billed_as.get(request.model))

    async def bill_kept(self, result: Result) -> bool:
        """Whether a reply may be cached: free, or its bill is committed to the governor's ledger.

        A billed reply cached before its bill was kept would, after a crash between the two
        writes, be served on resume at $0 (:meth:`~hrbench.runner.Journal.bills_kept`).
        A reply whose bill could not be written is not cached (the governor halts).
        """
        if not result.usd:
            return True
        journal = getattr(self.governor, "journal", None)
        if journal is None:
            return True
        try:
            pending = journal.bills_kept()
            if pending is not None:
                await pending
        except BudgetRefused:
            return False
        return True

    async def _held(
        self, ctx: Context, request: Request, key: str, inline: bool, lead: Lead | None
    ) -> Result:
        """A request sent under the governor's reservation (:class:`Gate`), its reply settled."""
        usd_est, tokens_est, unpriced, usd_known = self._reservation(request)
        # durable before the call: a request that may be billed, or any call under a call cap
        # (a free mock's call counted only lazily let a SIGKILL in that window pass max_calls)
        durable = self.sends or usd_est > 0 or self.governor.max_calls is not None
        gate = run_budget(ctx, self.governor).gate(usd_est, tokens_est, durable, usd_known)
        if self.sends:  # Gate.lost prices a reported usage; an in-process mock never reports one lost
            gate.cost = lambda usage, model: self.cost(usage, model or request.model)
        paying: Paying | None = None
        probe: tuple[str, str] | None = None
        try:
            if unpriced is not None:  # only under a caller's USD cap (Billing._worst_case)
                field, usd = self.usd_cap or ("max_usd", self.governor.max_usd)
                why = unpriced_message(unpriced, usd, self.role, cap=field)
                raise BudgetRefused(why, limit="unpriced_model")
            if (pair := self._bill_key(request)) is not None and pair not in self.bills_known:  # slow start
                probe = await self._first_bill(pair, inline)
            before_attempt: Any = gate  # a Gate is the client's before_attempt (and gives back unsent calls)
            if (usd_est or tokens_est) and self.capped:  # room held by requests in flight: wait for
                # them; with no USD or token cap there is no room to wait for (the worst case is
                # reserved only to bound what a crash may leave unknown)
                before_attempt = reserve_first_blocking(gate) if inline else await reserve_first(gate)
            if self.drain is not None and not inline:  # a clean cancel sends nothing new (Drain)
                before_attempt = Draining(before_attempt, gate, self.drain, ctx.ledger_id, lead)
            # only a client that reaches a provider reports a billed reply it could not use
            # (Gate.lost with a usage): a mock's attempts need no keeping before they settle
            if self.sends and getattr(getattr(self.governor, "journal", None), "paid", None) is not None:
                before_attempt = paying = Paying(before_attempt, self, ctx, key, request)
            result = await self.client.send(request, before_attempt)  # gate.unsent() when it cannot connect
        except BudgetRefused as exc:
            self._refused(ctx, key, request, gate, probe, exc)
            raise
        except BaseException:  # cancelled: an attempt never sent is no call
            gate.abandon()
            self._bill_seen(probe, request, None)
            raise
        if result.source != "live":
            gate.settle(0.0, 0)
            if probe is not None:
                self._bill_seen(probe, request, None)
            return result
        return self._settled(ctx, key, request, result, gate, probe, paying)

    async def _counted(
        self, ctx: Context, request: Request, key: str, inline: bool, lead: Lead | None
    ) -> Result:
        """:meth:`_obtain`'s fast path: a call that holds nothing (:attr:`counts_only`, a model that costs nothing).

        No reservation, gate or slow start: the call is counted when the client makes it
        (:class:`Counted`) and its reply's use booked once it is in. The reply is priced and
        kept as :meth:`_settled` does (a reply billed as a priced model is charged and kept in
        the ledger; a reply that halts is remembered).
        """
        counted = Counted(self.governor, None if inline else self.drain, ctx.ledger_id, lead)
        try:
            result = await self.client.send(request, counted)
        except BudgetRefused as exc:  # the governor halted
            self._refused(ctx, key, request, None, None, exc)
            raise
        except BaseException:
            counted.abandon()
            raise
        if result.source != "live":
            counted.book(0.0, 0)
            return result
        if result.halts is not None:
            self.halted_by.setdefault(request.model if result.halts == "model" else None, result)
        served = result.model or request.model
        if result.usd is None:  # a zero-rated model (a mock's) costs 0 whatever the usage (cost)
            usd = 0.0 if served and self._zero_rated.get(served) else self.cost(result.usage, served)
            if usd is not None:
                result = msgspec.structs.replace(result, usd=usd)
        if served and served != request.model:
            self.billed_as[request.model].add(served)  # later requests reserve at its price too
        if result.usd:
            self.paid(ctx, key, request, result.usage, result.model, result.usd, result.response_id)
        counted.book(result.usd, result.usage.total)
        return result

    def _not_sent(self, halt: Result, request: Request) -> Result:
        """A request not sent because an earlier one got an answer every later one would share."""
        return msgspec.structs.replace(
            halt,
            error=f"{halt.error} (not sent: an earlier request of this benchmark got this answer)",
            model=request.model or halt.model,
            source="halted",
            seconds=0.0,
        )

    def _refused(
        self,
        ctx: Context,
        key: str,
        request: Request,
        gate: Gate | None,
        probe: tuple[str, str] | None,
        exc: BudgetRefused,
    ) -> None:
        """A request the governor refused: nothing settled, the refusal noted and in the run's trace."""
        if gate is not None:
            gate.settle(0.0, 0)
        self._bill_seen(probe, request, None)
        ctx.notes.append(exc.limit)
        ctx.trace.append(
            Step(
                ledger_id=ctx.ledger_id,
                key=key,
                model=request.model,
                source="refused",
                draw_index=request.draw_index,
                messages=request.messages,
                usd=0.0,
                error=str(exc),
            )
        )

    def _settled(
        self,
        ctx: Context,
        key: str,
        request: Request,
        result: Result,
        gate: Gate,
        probe: tuple[str, str] | None,
        paying: Paying | None,
    ) -> Result:
        """A live reply priced (USD), checked against its reservation, kept in the ledger and settled."""
        if result.halts is not None:
            self.halted_by.setdefault(request.model if result.halts == "model" else None, result)
        if (
            result.usd is None and (usd := self.cost(result.usage, result.model or request.model)) is not None
        ):  # a model with no price (a mock's) stays at None: no copy
            result = msgspec.structs.replace(result, usd=usd)
        self._check_reserved(request, result, gate.usd, gate.tokens)
        if probe is not None:
            self._bill_seen(probe, request, result)  # after the check: a halt comes first
        # a reply billed as a model with no price is charged its reservation (fail safe)
        spent = result.usd if result.usd is not None or not self.bills else gate.usd
        # kept before it is settled (rows match the bill); a reply that cost nothing keeps nothing
        if result.usd and (paying is None or not paying.last):
            self.paid(ctx, key, request, result.usage, result.model, result.usd, result.response_id)
        gate.settle(spent, result.usage.total)
        return result

    async def call(self, ctx: Context, request: Request, inline: bool = False) -> Result:
        """Send one request of a run through cache, governor, client, recorder and trace.

        With ``inline=True`` (a sync arm's worker thread, and a client that answers without
        suspending: ``client.inline``) SQLite is called directly instead of through a worker
        thread, and the coroutine is driven to completion by :func:`drive` without the event
        loop, which saves two thread hops per request.

        A request identical to one in flight in this process (same cache file and
        :func:`~hrbench.runner._cache.cache_key`, from any benchmark) is not sent again: it waits for
        that reply and is served it as a cache hit (trace source ``"cache"``, ``usd = 0``),
        reserving nothing from the governor (see
        :class:`~hrbench.runner._cache.InFlight` for what happens when the first one fails).
        """
        if self.wire is not None and request.wire is None:  # key the request as sent (case R03a)
            request = msgspec.structs.replace(request, wire=self.wire(request))
        if self.capped and request.provider in HTTP_PROVIDERS and output_limit(request) is None:
            # under a USD or token cap every request carries an output limit (SPEC section 6)
            request = msgspec.structs.replace(
                request, params={**request.params, "max_tokens": DEFAULT_MAX_OUTPUT_TOKENS}
            )
        hashed = request_hash(request)  # once: the cache and the recorder are handed it
        key = cache_key(request, ctx.arm, hashed)
        start = time.perf_counter()
        result: Result | None = None
        charged: float | None = 0.0
        cache = None if self.replays else self.cache
        scope = None if cache is None else self._shares(cache, inline)
        while scope is not None:  # a request identical to one in flight waits for its reply
            waiting = IN_FLIGHT.join(scope, key)
            if waiting is None:  # this call leads; it lands its reply below, whatever happens
                break
            result = await waiting
            if result is not None:
                assert cache is not None
                cache.hits += 1
                result = msgspec.structs.replace(result, source="cache")
                scope = None  # served: nothing to land
        if (
            result is None
            and cache is None
            and not self.halted_by
            and not self.record
            and self._only_counted(request)
        ):
            # :meth:`_obtain` with nothing to read, write, record or share: the call only counted
            result = await self._counted(ctx, request, key, inline, None)
            charged = result.usd if result.source == "live" else 0.0
        elif result is None:
            shared: Result | None = None
            lead = None if scope is None else Lead(scope, key)
            try:
                result, charged = await self._obtain(ctx, request, (hashed, key), cache, inline, lead)
                if lead is not None and result.source in ("cache", "live") and Cache.keeps(result):
                    shared = result  # what the requests waiting on this one are served
            finally:
                if lead is not None:
                    lead.land(shared)
        dup = None
        if self.check_draws:
            cell = self.cells[(ctx.arm, ctx.item_id)]
            if result.response_id or result.source in _SERVED:  # a live reply with no id repeats nothing
                dup = self._duplicate(ctx, key, result, cell)
            self._remember(ctx, key, result, cell)
        if result.source == "live" and result.retried:
            self._trace_attempts(ctx, key, request, result)
        ctx.trace.append(
            Step(
                ledger_id=ctx.ledger_id,
                key=key,
                model=result.model or request.model,
                source=result.source,
                draw_index=request.draw_index,
                messages=request.messages,
                text=result.raw_text,
                finish_reason=result.finish_reason,
                response_id=result.response_id,
                usage=result.usage,
                usd=charged,
                usd_nominal=result.usd,
                seconds=time.perf_counter() - start,
                error=result.error,
                tool_calls=result.tool_calls,
            )
        )
        if result.note:
            ctx.notes.append(result.note)
        if dup is not None:
            raise dup
        return result

    def _trace_attempts(self, ctx: Context, key: str, request: Request, result: Result) -> None:
        """Every retried attempt of a live reply in the run's trace, with its bill when it had one.

        Retries are in the trace, not only in the log. One the provider billed (a reply with no
        text) carries that bill, as the governor counts it, so the row's usd is what the provider
        billed (rule: rows match the bill).
        """
        billed = result.retried_billed or ()
        for i, failed in enumerate(result.retried or ()):
            bill = billed[i] if i < len(billed) else None
            cost = None if bill is None else self.cost(bill.usage, bill.model or request.model)
            ctx.trace.append(
                Step(
                    ledger_id=ctx.ledger_id,
                    kind="attempt",
                    key=key,
                    model=request.model if bill is None else bill.model or request.model,
                    source="unsent" if "(no call counted)" in failed else "live",
                    draw_index=request.draw_index,
                    usage=None if bill is None else bill.usage,
                    usd=0.0 if bill is None else cost,
                    usd_nominal=cost,
                    error=failed,
                )
            )


_SERVED = frozenset({"cache", "recording"})
"""Sources of a reply served again rather than sampled (:meth:`Runtime._duplicate` checks their draws)."""


def _where(ctx: Context) -> str:
    return f"arm {ctx.arm!r}, item {ctx.item_id!r}, run {ctx.run}"
