"""What a runtime reserves for a request and what its reply was billed.

Prices, reservations, the slow start, a reply dearer than reserved, and billed replies kept in the
ledger.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from hrbench.errors import ConfigError
from hrbench.models import Price, Pricing, output_limit
from hrbench.records import Request, Result, Step, Usage
from hrbench.runner._governor import Governor
from hrbench.runner._room import POLL_S
from hrbench.runner.runtime._rules import ADVICE

if TYPE_CHECKING:
    from hrbench.arm import Context


class Paying:
    """A client's ``before_attempt`` that keeps every billed reply in the ledger (rows match the bill).

    Rule (rows add up to the provider's bill after a crash): an attempt whose reply
    the provider billed but could not be used (no text, retried) is kept in the governor's
    ledger, with its run, before it is settled, so a run made again after a crash carries it
    (:meth:`Runtime.paid`). ``last``: whether the last attempt's bill was kept so. Only for a
    client that reaches a provider (:attr:`Runtime.sends`): an in-process mock reports no lost
    reply, and its last reply is kept by :meth:`Runtime.paid` as any is.
    """

    def __init__(self, inner: Any, rt: Billing, ctx: Context, key: str, request: Request) -> None:
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
            usd = self.rt.cost(usage, model or self.request.model)
            self.last = self.rt.paid(self.ctx, self.key, self.request, usage, model, usd, None)
        lost = getattr(self.inner, "lost", None)
        if lost is not None:
            lost(usage, model)


class Billing:
    """What a runtime reserves for a request and what its reply was billed.

    Prices and the reservation of a request, the slow start until a provider's bill is known,
    a reply that cost more than was reserved for it, and billed replies kept in the ledger.
    :class:`Runtime` is one; these attributes are set by its constructor.
    """

    client: Any
    governor: Governor
    pricing: Pricing
    prices: dict[str, Any]
    _free: dict[str, bool]
    _zero_rated: dict[str, bool]
    billed_as: dict[str, set[str]]
    bills: bool
    bills_known: set[tuple[str, str]]
    capped: bool
    strict_usd: bool
    role: str

    @property
    def per_run(self) -> dict[str, Any]:
        """The benchmark's per-run caps (:class:`~hrbench.runner._runcaps.RunBudget`), ``{}`` for none."""
        return getattr(self.governor, "per_run", None) or {}

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

        Only when the governor keeps a ledger (:class:`~hrbench.runner.Journal`) and the reply
        cost something. A run made again after a crash carries it in its row
        (:func:`hrbench.runner._remade.carry_prepaid`), so the rows add up to the provider's bill.
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

    def cost(self, usage: Usage, model: str | None) -> float | None:
        """What a reply cost in USD (:meth:`Pricing.cost`), or ``None`` when its model has no usable price.

        The benchmark's models are checked before its first call (:meth:`Pricing.check`); a reply
        billed as another model whose price is refused (NaN, negative, a 0 no one declared)
        halts the benchmark and is charged its reservation, as a model with no price is.
        """
        if model and self._zero_rated.get(model):  # every rate 0 (a mock's): 0 USD whatever the usage
            return 0.0
        try:
            usd = self.pricing.cost(usage, model)
        except ConfigError as exc:
            self._refused_price(model, exc)
            return None
        if model and model not in self._zero_rated:  # its price, looked up once above, stays put
            price = self.pricing.price(model)
            self._zero_rated[model] = price is not None and price.free
        return usd

    def _refused_price(self, model: str | None, exc: ConfigError) -> None:
        self.governor.halt(
            f"a reply was billed as {model!r}, whose price is refused ({exc}); the benchmark was "
            "stopped before any further request",
            limit="unpriced_model",
        )

    def _price(self, model: str) -> Any:
        if model not in self.prices:
            try:
                self.prices[model] = self.pricing.price(model)
            except ConfigError as exc:  # a served model met mid-run: stop, and reserve as unpriced
                self._refused_price(model, exc)
                return None
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
        return any(pr is None for pr in prices) or all(pr.free for pr in prices)

    def _reserves(self, request: Request, also: set[str]) -> bool:
        """Whether this request is reserved: under a cap, with a price, a token cap or a bill."""
        if not self.capped:
            return False
        if self.bills or self.governor.max_tokens is not None or "max_tokens_per_run" in self.per_run:
            return True
        return all(self._price(m) is not None for m in (request.model, *also))  # a priced mock

    def _reservation(self, request: Request) -> tuple[float, int, str | None, bool]:
        """:meth:`_worst_case`; a price refused mid-run (a model a reply was billed as) halts the governor.

        The governor then refuses the request before it is sent.
        """
        try:
            return self._worst_case(request)
        except ConfigError as exc:
            self._refused_price(request.model, exc)
            return 0.0, 0, None, False

    def _worst_case(self, request: Request) -> tuple[float, int, str | None, bool]:
        """The true worst case of a request: ``(usd, tokens, unpriced model or None, usd known)`` (SPEC 6).

        A request that may be billed is reserved at
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
        """Stop the benchmark at once when a reply reports more than was reserved."""
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
        if self._undeclared_dearer(request, served):  # stop at the first such reply
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
            _top(p, part) > max(_top(k, part) for k in known) + 1e-12
            for part in ("input", "cached_input", "output")
        )

    def _bill_key(self, request: Request) -> tuple[str, str] | None:
        """The ``(endpoint, requested model)`` whose slow start a request waits on, or ``None``."""
        if not self.bills or self.governor.max_usd is None or getattr(self.client, "batched", False):
            return None  # a batch's bill is known when it ends: no request waits on one
        endpoint = getattr(self.client, "base_url", None) or getattr(self.client, "provider", "")
        return (str(endpoint), request.model or "")

    async def _first_bill(self, key: tuple[str, str], inline: bool) -> tuple[str, str] | None:
        """Slow start until the bill is known (:meth:`~hrbench.runner.Governor.first_bill`).

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


def _top(price: Price, part: str) -> float:
    """The dearest rate ``part`` of ``price`` over its tiers (USD per million tokens)."""
    return max(float(getattr(rates, part)) for rates in [price, *(tier for _, tier in price.tiers)])
