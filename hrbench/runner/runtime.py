"""The runtime every run of one benchmark shares: client, cache, governor, recorder, checks.

:class:`Runtime` sends a run's requests (``ctx.call`` / ``ctx.acall`` reach it through the run
context); the runner (:mod:`hrbench.runner.benchmark`) and ``evaluate()`` (:mod:`hrbench.evaluation.modules`)
make one. It does not import the run context: :mod:`hrbench.arm` imports this module, and the
runner imports both, so the dependency goes one way.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from hrbench.errors import BudgetRefused, ConfigError, DuplicateDrawError
from hrbench.models.pricing import DEFAULT_MAX_OUTPUT_TOKENS, Pricing, output_limit
from hrbench.results.records import Request, Result, Step, Usage
from hrbench.runner.cache import IN_FLIGHT, Cache, cache_key, request_hash
from hrbench.runner.governor import Gate, Governor
from hrbench.runner.ledger import contacts_provider
from hrbench.runner.room import POLL_S, reserve_first, reserve_first_blocking
from hrbench.scoring.scorer import output_text
from hrbench.store import Store

__all__ = [
    "DEFAULT_GRACE_S",
    "HTTP_PROVIDERS",
    "INLINE_CHARS",
    "Drain",
    "Runtime",
    "cancel_grace_s",
    "drive",
    "heavy_scorer_threads",
    "off_loop",
    "offloaded",
    "unpriced_message",
]

Context = Any
"""The run context (:class:`hrbench.arm.Context`); not imported, so that arm.py may import this."""


HTTP_PROVIDERS = frozenset({"openai", "anthropic"})
"""Providers whose requests carry an output limit under a USD or token cap."""


ADVICE: contextvars.ContextVar[str] = contextvars.ContextVar("hrbench_advice", default="python")
"""Whom hrbench's advice is for: ``"python"`` (a library caller) or ``"spec"`` (a TOML spec or
``hrb`` flags, through the daemon, which sets it for its benchmarks). newcomer finding: advice names
what the caller can change."""


def unpriced_message(model: str, max_usd: float | None, who: str = "client") -> str:
    """Why a model with no price cannot run under a USD cap, and how to give it one (case R04a).

    ``who``: ``"client"`` or ``"judge"`` (a judge scorer's model: the advice names the judge's
    own client table and ``judge_scorer(..., pricing=...)``; a higher cap cannot help).

    Decided (issue 12, kept in newcomer finding): only an explicit USD cap refuses an unpriced model;
    the default cap (``hrbench.runner.limits.max_usd``) is not enforced on it. The advice fits
    :data:`ADVICE`: Python for the library, the spec's fields and ``hrb`` flags for the daemon.

    Example:
        >>> "pricing=hrbench.Pricing(overrides=" in unpriced_message("m", 1.0)
        True
    """
    head = (
        f"unpriced_model: {'the judge' + chr(39) + 's ' if who == 'judge' else ''}model {model!r} has no "
        f"price, so the explicit USD cap (max_usd={max_usd}) cannot be enforced; "
    )
    if who == "judge":
        if ADVICE.get() == "spec":
            return head + (
                "give it a price in the spec's [scorer_settings.client] table: price = {input = USD_PER_M, "
                f"output = USD_PER_M}} (USD per million tokens), or prices = {{{json.dumps(model)} = {{input = "
                "USD_PER_M, output = USD_PER_M}}, or a price table file named by HRBENCH_PRICES in the "
                "daemon's environment; a higher --max-usd cannot help"
            )
        return head + (
            f"give the judge a price with judge_scorer(client, pricing=hrbench.Pricing(overrides={{{model!r}: "
            "{'input': USD_PER_M, 'output': USD_PER_M}})) (USD per million tokens), or the benchmark's "
            "pricing=..., or a price table file named by the HRBENCH_PRICES environment variable; a "
            "higher max_usd cannot help"
        )
    if ADVICE.get() == "spec":
        return head + (
            f"give it a price in the spec's [client] table: prices = {{{json.dumps(model)} = {{input = USD_PER_M, "
            "output = USD_PER_M}} (USD per million tokens; for the client's own model, price = {input = "
            "USD_PER_M, output = USD_PER_M} does too), or a price table file named by HRBENCH_PRICES in the "
            "daemon's environment (see the README), or run without a USD cap: leave max_usd out of "
            "[governor] and --max-usd off (the default cap is not enforced on a model with no price)"
        )
    return head + (
        f"give it one with pricing=hrbench.Pricing(overrides={{{model!r}: {{'input': USD_PER_M, "
        "'output': USD_PER_M}}) (USD per million tokens), or a price table file named by the "
        "HRBENCH_PRICES environment variable, or run with Governor(max_usd=None)"
    )


INLINE_CHARS = 2000
"""The most text (characters of the reply and the label) a scorer is called with on the event loop.

The built-in scorers take one to three microseconds a character (NFKC folding, number reading):
2,000 characters take a few milliseconds at worst, and a hand-off to a worker thread costs about
a tenth of a millisecond, more than scoring a short reply. Past this, the thread is the cheaper
of the two for the daemon's other clients."""


def offloaded(scorer: Any) -> bool:
    """Whether ``scorer`` declares itself heavy: ``offload = True`` (the pattern scorer does).

    Example:
        >>> from hrbench.scoring.scorer import exact_scorer
        >>> offloaded(exact_scorer())
        False
    """
    return getattr(scorer, "offload", False) is True


def off_loop(scorer: Any, output: Any, label: Any = None) -> bool:
    """Whether scoring ``output`` against ``label`` runs in a worker thread, off the event loop.

    Decided (issue 24, case S12a): a scorer that may take long on one reply declares it
    (:func:`offloaded`: the pattern scorer, whose pattern may backtrack up to its time limit),
    and a long reply or label (over :data:`INLINE_CHARS` characters) is scored there too; the
    runner and the daemon's ``score`` then call the scorer in a worker thread, so the event loop
    goes on serving (other runs' requests, the daemon's other clients). A short reply with a
    scorer that does not declare itself heavy is scored inline: a thread hop per row would cost
    more than the scorer (the runner's rows/s). A scorer of one's own that may be slow says so by
    the attribute (``my_scorer.offload = True``).

    Example:
        >>> from hrbench.scoring.scorer import exact_scorer
        >>> off_loop(exact_scorer(), "Paris", "Paris"), off_loop(exact_scorer(), "Paris " * 400, "Paris")
        (False, True)
        >>> off_loop(exact_scorer(), Result(ok=False, error="openai: HTTP 500"), "Paris")
        False
    """
    if offloaded(scorer):
        return True
    if type(output) is str:
        n = len(output)
    elif type(output) is Result:  # its stored text (a failed reply's .text raises)
        n = len(output.raw_text or "")
    else:
        try:
            n = len(output_text(output) or "")
        except Exception:  # an output whose text cannot be read: scored where a scorer's fault is safe
            return True
    if type(label) is str:
        return n + len(label) > INLINE_CHARS
    if isinstance(label, (list, tuple)):
        for answer in label:
            n += len(answer) if type(answer) is str else 16
            if n > INLINE_CHARS:
                return True
    return n > INLINE_CHARS


def heavy_scorer_threads() -> int:
    """How many heavy scorers (:func:`offloaded`) one benchmark, or the daemon's ``score``, runs at once.

    A core is left for the event loop: a pattern scorer matches without the GIL, so each of them
    may keep a core busy until its time limit.
    """
    return max(1, (os.cpu_count() or 1) - 1)


# --------------------------------------------------------------------------------------------
# The runtime shared by every run of one benchmark: client, cache, governor, recorder, checks.
# --------------------------------------------------------------------------------------------
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
    """A clean cancel's wait for the requests already sent (decided, newcomer finding).

    ``hrb cancel`` used to cancel a benchmark at once: replies already on their way were lost,
    their calls counted at their worst case as "cancelled in flight", and a resume paid for
    them again. Decided: a clean cancel first begins a drain (:meth:`begin`). From then on no attempt
    is sent (one held for a request not yet handed to its client is given back, as never
    sent; a retry is not made): such a request waits there until the benchmark is cancelled.
    A run whose request was already sent goes on: its reply is settled at its real cost,
    cached when the benchmark caches, scored and saved as a row, so a resume does not send it
    again. :meth:`wait` returns when no such run is left, or after the grace; the caller then
    cancels the benchmark, and only what is still in flight then is counted "cancelled in
    flight: unknown, at most" its reservation (:meth:`hrbench.runner.ledger.Journal.close`). A run
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


class _Lead:
    """The in-flight key a call leads (:class:`~hrbench.runner.cache.InFlight`), landed once.

    Newcomer finding 25: a leader held at a clean cancel's drain (it sends nothing more, and
    waits there until its benchmark is cancelled, up to the grace) kept its key, so a request
    of another benchmark waiting on it stalled for the grace before sending its own. A held
    leader now lands the key at once with no reply to share: a waiter takes over. The call's
    own landing afterwards is then a no-op (it must not end the new leader's flight).
    """

    def __init__(self, scope: str, key: str) -> None:
        self.scope, self.key, self.landed = scope, key, False

    def land(self, result: Result | None) -> None:
        if not self.landed:
            self.landed = True
            IN_FLIGHT.land(self.scope, self.key, result)


class _Draining:
    """A client's ``before_attempt`` that sends nothing once the benchmark's :class:`Drain` began."""

    def __init__(self, inner: Any, gate: Gate, drain: Drain, run: str, lead: _Lead | None = None) -> None:
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


class _Paying:
    """A client's ``before_attempt`` that keeps every billed reply in the ledger (rows match the bill).

    Decided (rows must add up to the provider's bill after a crash): an attempt whose reply
    the provider billed but could not be used (no text, retried) is kept in the governor's
    ledger, with its run, before it is settled, so a run made again after a crash carries it
    (:meth:`Runtime.paid`). ``last``: whether the last attempt's bill was kept so. Only for a
    client that reaches a provider (:attr:`Runtime.sends`): an in-process mock reports no lost
    reply, and its last reply is kept by :meth:`Runtime.paid` as any is.
    """

    def __init__(self, inner: Any, rt: Runtime, ctx: Context, key: str, request: Request) -> None:
        self.inner, self.rt, self.ctx, self.key, self.request = inner, rt, ctx, key, request
        self.last = False

    def __call__(self) -> Awaitable[None] | None:
        self.last = False
        return self.inner()  # type: ignore[no-any-return]

    def unsent(self) -> None:
        unsent = getattr(self.inner, "unsent", None)
        if unsent is not None:
            unsent()

    def lost(self, usage: Any = None, model: str | None = None) -> None:
        if usage is not None and getattr(usage, "provenance", None) == "reported":
            usd = self.rt.pricing.cost(usage, model or self.request.model)
            self.last = self.rt.paid(self.ctx, self.key, self.request, usage, model, usd, None)
        lost = getattr(self.inner, "lost", None)
        if lost is not None:
            lost(usage, model)


@dataclass
class _Cell:
    """Draw history of one arm on one item: what earlier runs were served."""

    served: dict[str, int] = field(default_factory=dict)  # request key (draw index included) -> first run
    response_ids: dict[str, int] = field(default_factory=dict)  # response id -> run


class Runtime:
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
        self.capped = governor.max_usd is not None or governor.max_tokens is not None
        # decided: the defaults' USD cap (hrbench.options) is not one the caller set, so a model
        # with no price runs under it (the default call cap still bounds it); an explicit
        # max_usd refuses an unpriced model before the first call (case R04a)
        self.strict_usd = governor.max_usd is not None and not governor.from_defaults
        self.bills = bool(getattr(client, "bills", False))
        self.sends = contacts_provider(client)
        """Whether requests may reach a provider: they then wait for their reservation's commit
        when the governor keeps a ledger (issue 13; :mod:`hrbench.runner.ledger`)."""
        self.bills_known: set[tuple[str, str]] = set()
        """The slow-start pairs (:meth:`_bill_key`) this runtime saw known: no governor call for them."""
        self.prices: dict[str, Any] = {}
        self._free: dict[str, bool] = {}  # per model, whether its replies cost nothing (_costs_nothing)
        self.billed_as: dict[str, set[str]] = defaultdict(set)
        """Per requested model, the models replies were billed as (served-model switches seen)."""
        self.check_draws = True
        """Whether a reply that repeats an earlier run's draw is a DuplicateDrawError (not for a judge)."""
        self.role = "client"
        """Whose requests these are, as a stop names it: ``"client"``, or ``"judge"`` (a judge scorer's)."""
        self.halted_by: dict[str | None, Result] = {}
        """Failures every later request would share (``Result.halts``), by model (``None``: the
        client's): no such request is sent, it fails at once with that cause (newcomer finding)."""
        wire = getattr(client, "wire", None)
        self.wire: Callable[[Request], dict[str, Any] | None] | None = wire if callable(wire) else None
        self.replays = getattr(client, "provider", "") == "replay"
        """A replay client answers from its recording: no cache in front of it."""
        if getattr(client, "cacheable", True) is False:  # a mock that cannot be fingerprinted
            self.cache = None

    def paid(
        self,
        ctx: Context,
        key: str,
        request: Request,
        usage: Usage,
        model: str | None,
        usd: float | None,
        response_id: str | None,
    ) -> bool:
        """Keep a billed reply of run ``ctx`` in the governor's ledger; whether it was kept.

        Only when the governor keeps a ledger (:class:`~hrbench.runner.ledger.Journal`) and the reply
        cost something. A run made again after a crash carries it in its row
        (:func:`hrbench.runner.ledger.carry_prepaid`), so the rows add up to the provider's bill.
        """
        if not usd:  # most replies (a mock's, a free model's): no ledger lookup
            return False
        keep = getattr(getattr(self.governor, "journal", None), "paid", None)
        if keep is None:
            return False
        keep(
            ctx.ledger_id,
            Step(
                ledger_id=ctx.ledger_id,
                kind="attempt",
                key=key,
                model=model or request.model,
                source="live",
                draw_index=request.draw_index,
                response_id=response_id,
                usage=usage,
                usd=usd,
                usd_nominal=usd,
            ),
        )
        return True

    def _price(self, model: str) -> Any:
        if model not in self.prices:
            self.prices[model] = self.pricing.price(model)
        return self.prices[model]

    def _costs_nothing(self, model: str, declared: Any = (), seen: Any = None) -> bool:
        """Whether a reply to ``model`` (or billed as one ``declared`` or ``seen``) costs nothing.

        True when one of them has no price, or all are free (a mock, the built-in "mock"): no
        bound to compute (prompt_bound cost ~8 us a request at 30k requests/s). With nothing
        declared or seen, the verdict is kept per model (its price never changes).
        """
        if declared or seen:
            return self._all_free([model, *declared, *(seen or ())])
        free = self._free.get(model)
        if free is None:
            free = self._free[model] = self._all_free([model])
        return free

    def _all_free(self, models: list[str]) -> bool:
        prices = [self._price(m) for m in models]
        return any(pr is None for pr in prices) or not any(
            pr.input or pr.cached_input or pr.output for pr in prices
        )

    def _reserves(self, request: Request, also: set[str]) -> bool:
        """Whether this request is reserved: under a cap, with a price, a token cap or a bill."""
        if not self.capped:
            return False
        if self.bills or self.governor.max_tokens is not None:
            return True
        return all(self._price(m) is not None for m in (request.model, *also))  # a priced mock

    def _reservation(self, request: Request) -> tuple[float, int, str | None, bool]:
        """The true worst case of a request: ``(usd, tokens, unpriced model or None, usd known)`` (SPEC 6).

        Decided (newcomer finding 13: after a crash with no USD cap, "at most 0.0000 USD / 4
        calls" for calls that could cost money): a request that may be billed is reserved at
        its worst case even without a cap, when its price is known, so that the spend a crash,
        a cancel or a lost reply leaves unknown is reported with a true bound. With no price,
        or sent with no output limit (no cap makes one), nothing bounds its USD: ``usd known``
        is ``False`` and the report says its USD is unknown.
        """
        declared = getattr(self.client, "billed_as", ())
        seen = self.billed_as.get(request.model)
        if not self.capped and not self.bills and self._costs_nothing(request.model, declared, seen):
            return 0.0, 0, None, True
        also = {*declared, *(seen or ())}
        if not self.capped:
            usd, tokens = self.pricing.reservation(request, also)
            known = usd is not None and output_limit(request) is not None
            return (usd if usd is not None and known else 0.0), tokens, None, known
        if not self._reserves(request, also):
            return 0.0, 0, None, not self.bills
        usd, tokens = self.pricing.reservation(request, also)
        if usd is None:
            if self.bills and self.strict_usd:
                missing = self.pricing.unpriced(request.model, sorted(also)) or request.model
                return 0.0, tokens, missing, False
            return 0.0, tokens, None, not self.bills
        return usd, tokens, None, True

    def _check_reserved(self, request: Request, result: Result, usd: float, tokens: int) -> None:
        """Stop the benchmark at once when a reply reports more than was reserved (issue 12)."""
        served = result.model or request.model
        if served and served != request.model:
            self.billed_as[request.model].add(served)  # later requests reserve at its price too
        if not self._reserves(request, set()):
            return
        over = []
        if (
            self.bills
            and self.governor.max_usd is not None
            and result.usd is not None
            and result.usd > usd + 1e-12
        ):
            over.append(f"${result.usd:.6f} against ${usd:.6f} reserved")
        if self.governor.max_tokens is not None and result.usage.total > tokens:
            over.append(f"{result.usage.total} tokens against {tokens} reserved")
        if self._undeclared_dearer(request, served):  # decided: stop at the first such reply
            self.governor.halt(
                f"a reply to a request for {request.model!r} was billed as {served!r}, a dearer model "
                f"{'the judge' if self.role == 'judge' else 'the client'} does not declare, so its "
                f"requests were reserved at the cheaper price ({self._declare(served)}); the benchmark "
                f"was stopped before any further request; {self._passed(result, usd)}"
            )
        elif over:
            self.governor.halt(
                f"a reply of {served!r} (asked for {request.model!r}) reported {' and '.join(over)}: the "
                f"provider passed the output limit sent, or billed a dearer model ({self._declare(served)}); "
                f"the benchmark was stopped before any further request; {self._passed(result, usd)}"
            )

    def _declare(self, served: str) -> str:
        """How to declare ``served`` as a model replies may be billed as, for whoever runs this."""
        table = "[scorer_settings.client]" if self.role == "judge" else "[client]"
        if ADVICE.get() == "spec":
            return f"declare it with billed_as = [{json.dumps(served)}] in the spec's {table} table"
        whose = "the judge's client" if self.role == "judge" else "the client"
        return f"declare it with {whose}'s billed_as=[{served!r}]"

    def _passed(self, result: Result, reserved: float) -> str:
        """Whether the reply that stops a benchmark passed the USD cap (said as it is, never hidden)."""
        cap = self.governor.max_usd
        if cap is None:
            return "no USD cap applies"
        if result.usd is None:
            return (
                f"its cost is unknown (the model has no price; counted at its ${reserved:.6f} reservation), "
                f"so this one request may have passed the ${cap:g} USD cap"
            )
        spent = float(getattr(self.governor, "usd", 0.0)) + result.usd  # settled so far, and this reply
        if spent > cap + 1e-12:
            return f"this one request passed the USD cap: ${spent:.6f} spent against a cap of ${cap:g}"
        return f"no cap was passed (${spent:.6f} spent against a cap of ${cap:g})"

    def _undeclared_dearer(self, request: Request, served: str | None) -> bool:
        """Whether a reply billed as ``served`` is billed dearer than every model declared for it.

        Under a USD cap only, for a client that bills. Declared: the model asked for and the
        client's ``billed_as``. A dated name of the same model (``gpt-4o-mini-2024-07-18``)
        is priced as it, so it is not dearer; a model with no price is, when a declared one
        has one (its cost cannot be bounded).
        """
        if not self.bills or self.governor.max_usd is None or not served or served == request.model:
            return False
        declared = {request.model, *getattr(self.client, "billed_as", ())}
        if served in declared:
            return False
        known = [p for p in (self._price(m) for m in declared if m) if p is not None]
        if not known:
            return False  # nothing declared has a price: the cap was not enforced on it
        p = self._price(served)
        if p is None:
            return True
        return any(
            getattr(p, part) > max(getattr(k, part) for k in known) + 1e-12
            for part in ("input", "cached_input", "output")
        )

    def _bill_key(self, request: Request) -> tuple[str, str] | None:
        """The ``(endpoint, requested model)`` whose slow start a request waits on, or ``None``."""
        if not self.bills or self.governor.max_usd is None:
            return None
        endpoint = getattr(self.client, "base_url", None) or getattr(self.client, "provider", "")
        return (str(endpoint), request.model or "")

    async def _first_bill(self, key: tuple[str, str], inline: bool) -> tuple[str, str] | None:
        """Slow start until the bill is known (:meth:`~hrbench.runner.governor.Governor.first_bill`).

        ``key`` is the request's :meth:`_bill_key`. Returns it when this request is its probe
        (:meth:`_bill_seen` ends it), else ``None``: the pair's billed model is known, or the
        governor halted while this request waited (its reservation is then refused). A pair
        once known stays known (the governor never forgets one), so it is remembered in
        :attr:`bills_known`: later requests to it ask the governor nothing (the caller checks).
        """
        # settled from other tasks and threads: no event to await; a Ray worker's proxy asks its
        # actor (a round trip), so it polls less often
        poll_s = float(getattr(self.governor, "poll_s", POLL_S))
        while (state := self.governor.first_bill(key)) == "wait":
            if self.governor.halted is not None:
                return None
            if inline:
                time.sleep(poll_s)  # noqa: ASYNC251 - inline: a worker thread drives this, no event loop
            else:
                await anyio.sleep(poll_s)
        if state == "known":
            self.bills_known.add(key)
            return None
        return key if state == "probe" else None

    def _bill_seen(self, probe: tuple[str, str] | None, request: Request, result: Result | None) -> None:
        """End a probe: its reply confirmed the billed model when the provider answered and it is not dearer.

        A reply with no ``model`` field is taken as billed as asked (nothing else can be known).
        """
        if probe is None:
            return
        confirmed = (
            result is not None
            and result.source == "live"
            and (result.ok or getattr(result.usage, "provenance", None) == "reported")
            and not self._undeclared_dearer(request, result.model or request.model)
        )
        self.governor.bill_seen(probe, confirmed)
        if confirmed:
            self.bills_known.add(probe)

    def _duplicate(self, ctx: Context, key: str, result: Result) -> DuplicateDrawError | None:
        """Seed 002: is this reply a repeat of an earlier run's draw?"""
        cell = self.cells[(ctx.arm, ctx.item_id)]
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
            where = _where(ctx)
            earlier_run = cell.response_ids.get(rid)
            seen = self.arm_response_ids[ctx.arm].get(rid)
            if (earlier_run is not None and earlier_run != ctx.run) or (
                seen is not None and seen != (ctx.item_id, ctx.run)
            ):
                return DuplicateDrawError(
                    f"{where} got a reply whose provider response id {rid!r} was seen in an earlier run",
                    arm=ctx.arm,
                    item=ctx.item_id,
                    run=ctx.run,
                    key=rid,
                )
        return None

    def kept(self, arm: str, item: str, run: int, trace: Iterable[Step], cell: bool = True) -> None:
        """Seed the distinct-draw check with a kept run's draws (a resume; newcomer finding).

        Seed 002 refuses a run that repeats an earlier run's draw; across a resume the earlier
        runs are the kept ones. Their requests' keys (``cell``: only needed while their item
        runs) and their replies' provider response ids are remembered as if they had just run,
        so a run made again (``--retry-errors``, or a run a crash or a stop left undone) whose
        reply repeats one of theirs is refused again, whether the cache or the provider served it.

        Example:
            >>> from hrbench.runner.governor import Governor
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

    def _remember(self, ctx: Context, key: str, result: Result) -> None:
        cell = self.cells[(ctx.arm, ctx.item_id)]
        cell.served.setdefault(key, ctx.run)
        if result.response_id:
            cell.response_ids.setdefault(result.response_id, ctx.run)
            self.arm_response_ids[ctx.arm].setdefault(result.response_id, (ctx.item_id, ctx.run))

    async def _blocking(self, inline: bool, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(*args) if inline else await anyio.to_thread.run_sync(fn, *args)

    def _shares(self, cache: Cache | None, inline: bool) -> str | None:
        """The in-flight scope this call shares replies in, or ``None`` (issue 15, point 4).

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
        self, ctx: Context, request: Request, key: str, cache: Cache | None, inline: bool, lead: _Lead | None
    ) -> tuple[Result, float | None]:
        """The reply to a request, from the cache or sent under the governor: ``(result, usd charged)``."""
        if cache is not None and cache.read:
            hit = await self._blocking(inline, cache.get, request, ctx.arm)
            if hit is not None:
                return msgspec.structs.replace(hit, source="cache"), 0.0
        charged: float | None = 0.0
        usd_est, tokens_est, unpriced, usd_known = self._reservation(request)
        # durable before the call: a request that may be billed, or any call under a call cap
        # (a free mock's call counted only lazily let a SIGKILL in that window pass max_calls)
        durable = self.sends or usd_est > 0 or self.governor.max_calls is not None
        gate = self.governor.gate(usd_est, tokens_est, durable, usd_known)
        if self.sends:  # Gate.lost prices a reported usage; an in-process mock never reports one lost
            gate.cost = lambda usage, model: self.pricing.cost(usage, model or request.model)
        halt = (self.halted_by.get(None) or self.halted_by.get(request.model)) if self.halted_by else None
        if halt is not None:  # the provider refused the quota or the key: send no more (newcomer finding)
            gate.abandon()
            return msgspec.structs.replace(
                halt,
                error=f"{halt.error} (not sent: an earlier request of this benchmark got this answer)",
                model=request.model or halt.model,
                source="halted",
                seconds=0.0,
            ), 0.0
        paying: _Paying | None = None
        probe: tuple[str, str] | None = None
        try:
            if unpriced is not None:
                raise BudgetRefused(
                    unpriced_message(unpriced, self.governor.max_usd, self.role), limit="unpriced_model"
                )
            if (pair := self._bill_key(request)) is not None and pair not in self.bills_known:  # slow start
                probe = await self._first_bill(pair, inline)
            before_attempt: Any = gate  # a Gate is the client's before_attempt (and gives back unsent calls)
            if (usd_est or tokens_est) and self.capped:  # room held by requests in flight: wait for
                # them (newcomer finding); with no USD or token cap there is no room to wait for (the
                # worst case is reserved only to bound what a crash may leave unknown: finding 13)
                before_attempt = reserve_first_blocking(gate) if inline else await reserve_first(gate)
            if self.drain is not None and not inline:  # a clean cancel sends nothing new (Drain)
                before_attempt = _Draining(before_attempt, gate, self.drain, ctx.ledger_id, lead)
            # only a client that reaches a provider reports a billed reply it could not use
            # (Gate.lost with a usage): a mock's attempts need no keeping before they settle
            if self.sends and getattr(getattr(self.governor, "journal", None), "paid", None) is not None:
                before_attempt = paying = _Paying(before_attempt, self, ctx, key, request)
            result = await self.client.send(request, before_attempt)  # gate.unsent() when it cannot connect
        except BudgetRefused as exc:
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
            raise
        except BaseException:  # cancelled: an attempt never sent is no call (newcomer finding)
            gate.abandon()
            self._bill_seen(probe, request, None)
            raise
        if result.halts is not None and result.source == "live":
            self.halted_by.setdefault(request.model if result.halts == "model" else None, result)
        if result.source == "live":
            if result.usd is None:
                result = msgspec.structs.replace(
                    result, usd=self.pricing.cost(result.usage, result.model or request.model)
                )
            charged = result.usd
            self._check_reserved(request, result, gate.usd, gate.tokens)
            if probe is not None:
                self._bill_seen(probe, request, result)  # after the check: a halt comes first
            # a reply billed as a model with no price is charged its reservation (fail safe)
            spent = result.usd if result.usd is not None or not self.bills else gate.usd
            # kept before it is settled (rows match the bill); a reply that cost nothing keeps nothing
            if result.usd and (paying is None or not paying.last):
                self.paid(ctx, key, request, result.usage, result.model, result.usd, result.response_id)
            gate.settle(spent, result.usage.total)
            if cache is not None and cache.write:
                await self._blocking(inline, cache.put, request, result, ctx.arm)
            if self.record and self.store is not None and result.ok and not result.refused:
                await self._blocking(
                    inline,
                    self.store.recording_put,
                    self.record,
                    ctx.arm,
                    request_hash(request),
                    request,
                    result,
                )
        else:
            gate.settle(0.0, 0)
            if probe is not None:
                self._bill_seen(probe, request, None)
        return result, charged

    async def call(self, ctx: Context, request: Request, inline: bool = False) -> Result:
        """Send one request of a run through cache, governor, client, recorder and trace.

        With ``inline=True`` (a sync arm's worker thread, and a client that answers without
        suspending: ``client.inline``) SQLite is called directly instead of through a worker
        thread, and the coroutine is driven to completion by :func:`drive` without the event
        loop, which saves two thread hops per request.

        A request identical to one in flight in this process (same cache file and
        :func:`~hrbench.runner.cache.cache_key`, from any benchmark) is not sent again: it waits for
        that reply and is served it as a cache hit (trace source ``"cache"``, ``usd = 0``),
        reserving nothing from the governor (issue 15, point 4; see
        :class:`~hrbench.runner.cache.InFlight` for what happens when the first one fails).
        """
        if self.wire is not None and request.wire is None:  # key the request as sent (case R03a)
            request = msgspec.structs.replace(request, wire=self.wire(request))
        if self.capped and request.provider in HTTP_PROVIDERS and output_limit(request) is None:
            # under a USD or token cap every request carries an output limit (SPEC section 6)
            request = msgspec.structs.replace(
                request, params={**request.params, "max_tokens": DEFAULT_MAX_OUTPUT_TOKENS}
            )
        key = cache_key(request, ctx.arm)
        start = time.perf_counter()
        result: Result | None = None
        charged: float | None = 0.0
        cache = None if self.replays else self.cache
        scope = self._shares(cache, inline)
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
        if result is None:
            shared: Result | None = None
            lead = None if scope is None else _Lead(scope, key)
            try:
                result, charged = await self._obtain(ctx, request, key, cache, inline, lead)
                if result.source in ("cache", "live") and Cache.keeps(result):
                    shared = result
            finally:
                if lead is not None:
                    lead.land(shared)
        dup = None
        if self.check_draws:
            dup = self._duplicate(ctx, key, result)
            self._remember(ctx, key, result)
        retried = result.retried if result.source == "live" else None
        billed = (result.retried_billed or ()) if retried else ()
        for i, failed in enumerate(retried or ()):
            # every attempt is in the run's trace (newcomer finding: retries only in the log); one
            # the provider billed (a reply with no text) carries that bill, as the governor counts
            # it, so the row's usd is what the provider billed (decided: rows match the bill)
            bill = billed[i] if i < len(billed) else None
            cost = None if bill is None else self.pricing.cost(bill.usage, bill.model or request.model)
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
            )
        )
        if result.note:
            ctx.notes.append(result.note)
        if dup is not None:
            raise dup
        return result


def _where(ctx: Context) -> str:
    return f"arm {ctx.arm!r}, item {ctx.item_id!r}, run {ctx.run}"


def drive(coro: Any) -> Any:
    """Run a coroutine that never suspends to completion, without an event loop.

    Raises:
        RuntimeError: when the coroutine suspends (it is closed first).
    """
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("an inline request suspended; its client must not set `inline = True`")
