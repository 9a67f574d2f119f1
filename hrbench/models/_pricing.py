"""Prices per model and the cost of a reply, in USD.

A model's price comes from an override (``Pricing(overrides=...)``, a spec's ``price``), the
genai-prices package's data, or the table shipped with hrbench (``hrbench/data/prices.json``: USD
per million input, cached-input and output tokens, with the date it was checked); the file
``HRBENCH_PRICES`` names replaces the last two. Every price is checked where it is loaded, before
any call (:mod:`hrbench.models._rates`): a rate that is not a finite number >= 0 is refused, and so
is a rate of 0 where another source prices the model, unless the model is declared free. Prices
with tiers (a dearer rate for every token once a prompt passes a size) are billed at the tier a
reply's prompt reaches, and reserved at the dearest tier a request's prompt can reach. The rules:
``docs/guides/prices.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from importlib import resources
from typing import Any

from hrbench._util.files import decoded
from hrbench.errors import ConfigError
from hrbench.models._model_names import closest, is_snapshot_of
from hrbench.models._price_package import PACKAGE as PACKAGE_NAME
from hrbench.models._price_package import (
    TIERS_NOTE,
    PriceInfo,
    TierInfo,
    package_names,
    package_price,
    package_version,
)
from hrbench.models._rates import (
    CACHE_WRITE_1H,
    CACHE_WRITE_5M,
    FREE,
    Price,
    check_rates,
    read_entry,
    refuse_zero,
)
from hrbench.models._tokens import prompt_bound
from hrbench.records import Request, Step, Usage

__all__ = [
    "CACHE_WRITE_1H",
    "CACHE_WRITE_5M",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "FREE",
    "Price",
    "Pricing",
    "default_pricing",
    "default_pricing_loaded",
    "output_limit",
    "trace_cost",
]

DEFAULT_MAX_OUTPUT_TOKENS = 1024
"""The output limit sent with a request made under a USD or token cap that sets none (tokens)."""

SHIPPED = "hrbench's shipped table (hrbench/data/prices.json)"
"""The source of a price from the table hrbench ships."""

OVERRIDE = "an override (the spec or Pricing(overrides=...))"
"""The source of a price given over the table."""


class Pricing:
    """A price table.

    A model is looked up by its exact name, then as a dated snapshot or release of a listed
    name (``gpt-4o-2024-08-06`` is priced as ``gpt-4o``, ``claude-3-5-sonnet-latest`` as
    ``claude-3-5-sonnet``), then with a provider prefix such as ``openai/`` removed. Any other
    name has no price, however it starts (``gpt-4o-mni`` is not ``gpt-4o``; :meth:`closest`
    names the model it may mean). A model with no price costs ``None`` (the seed's NA).

    Args:
        table: ``{"models": {name: {"input", "cached_input", "output"}}, "checked": date}``;
            the shipped file when ``None``.
        overrides: ``{model: {"input", "cached_input", "output"}}`` on top of the table.
            A model may also give ``cache_write_5m`` and ``cache_write_1h`` (USD per million
            prompt tokens written to the prompt cache; 1.25x and 2x ``input`` by default), and
            ``tiers``: ``[{"above": tokens, "input", "output", ...}]``, the rates of every token
            of a request whose prompt has more than ``above`` tokens. ``"free"`` in place of a
            price declares the model free.
        free: models declared free: every rate 0 (a local model, a free endpoint). A rate of 0
            for a model another source prices is refused unless the model is declared free.

    Raises:
        ConfigError: a table that cannot be read, a price that is not a finite number >= 0
            (NaN, infinite, negative), or a rate of 0 where genai-prices' bundled data or
            hrbench's shipped table prices the model and it is not declared free, naming
            ``prices.<model>.<part>`` and the value. A price from genai-prices' data is
            checked the same way when a model is first looked up (:meth:`check` does it for a
            benchmark's models before its first call).

    Example:
        >>> p = Pricing(overrides={"m": {"input": 1.0, "cached_input": 0.5, "output": 2.0}})
        >>> p.cost(Usage(tokens_in=2000, tokens_cached=1500, tokens_out=50), "m")
        0.00135
        >>> Pricing(free={"my-local-llama"}).price("my-local-llama").free
        True
    """

    def __init__(
        self,
        table: Mapping[str, Any] | None = None,
        overrides: Mapping[str, Any] | None = None,
        *,
        free: Iterable[str] = (),
    ) -> None:
        self.package = table is None and not os.environ.get("HRBENCH_PRICES")
        """Whether prices come from genai-prices first (:mod:`hrbench.models._price_package`), the
        table after it: the default table, not one given or named by ``HRBENCH_PRICES``."""
        self.source = "the table given (Pricing(table=...))" if table is not None else SHIPPED
        self._from_package: dict[str, Price | None] = {}
        self._priced: dict[str, Price | None] = {}  # price() per model: prefix lookups scan the table
        shipped = _shipped()  # read now (not on an event loop later): a rate of 0 is checked against it
        if table is None:
            named = _table_named()
            table = shipped if named is None else named
            path = os.environ.get("HRBENCH_PRICES")
            self.source = f"HRBENCH_PRICES ({path})" if path else SHIPPED
        models = table.get("models", {}) if isinstance(table, Mapping) else None
        if not isinstance(models, Mapping):
            raise ConfigError("prices.models", models, "expected a table of model names to prices")
        self.checked = table.get("checked")
        self.overrides: dict[str, Any] = _declared_free(overrides or {}, free)
        """The per-model prices given on top of the table (:meth:`with_overrides` layers them)."""
        self.prices: dict[str, Price] = {}
        for whose, entries in ((self.source, models), (OVERRIDE, self.overrides)):
            for name, entry in entries.items():
                self.prices[name] = read_entry(name, entry)
                if entry != FREE and whose != SHIPPED:  # the shipped table is held equal to the package
                    refuse_zero(name, self.prices[name], _references(name), whose)

    def with_overrides(self, overrides: Mapping[str, Any]) -> Pricing:
        """This table with ``overrides`` on top: a judge's own prices over the benchmark's.

        Raises:
            ConfigError: a price that is not numbers, or negative, NaN or infinite, or 0 for a
                priced model not declared free.

        Example:
            >>> base = Pricing(table={"models": {"a": {"input": 1.0, "output": 2.0}}})
            >>> both = base.with_overrides({"j": {"input": 3.0, "output": 4.0}})
            >>> both.price("a").output, both.price("j").output, base.price("j")
            (2.0, 4.0, None)
        """
        if not overrides:
            return self
        layered = Pricing(table={"models": {}, "checked": self.checked}, overrides=overrides)
        layered.package, layered.source = self.package, self.source
        layered.prices = {**self.prices, **layered.prices}
        layered.overrides = {**self.overrides, **layered.overrides}
        return layered

    def check(self, models: Iterable[str | None]) -> None:
        """Look up each model's price now, so a bad one is refused before any call.

        A price from genai-prices' data is read and checked at its model's first lookup; a
        benchmark calls this with its client's model and ``billed_as`` models (a judge's too).

        Raises:
            ConfigError: a rate that is not a finite number >= 0, or 0 where another source
                prices the model, naming ``prices.<model>.<part>``, the value and the source.
        """
        for model in models:
            self.price(model)

    def billed_models(self, model: str | None, billed_as: Iterable[str] = ()) -> list[str | None]:
        """The models a reply to ``model`` may be billed as, for its worst case.

        ``model`` and every ``billed_as`` model; a ``model`` with no price but with
        ``billed_as`` models is left out (a router such as ``openrouter/auto`` has no
        price of its own, its replies are billed as the models it routes to, which
        ``billed_as`` names).

        Example:
            >>> p = Pricing(table={"models": {"gpt-4o": {"input": 2.5, "output": 10.0}}})
            >>> p.billed_models("openrouter/auto", ["gpt-4o"]), p.billed_models("gpt-4o", ["x"])
            (['gpt-4o'], ['gpt-4o', 'x'])
        """
        if not billed_as:  # the common case (an empty tuple): the model alone
            return [model]
        also: list[str | None] = [m for m in dict.fromkeys(billed_as) if m and m != model]
        if self.price(model) is not None or not also:
            return [model, *also]
        return also

    def unpriced(self, model: str | None, billed_as: Iterable[str] = ()) -> str | None:
        """The first model a reply to ``model`` may be billed as that has no price, or ``None``.

        Example:
            >>> p = Pricing(table={"models": {"gpt-4o": {"input": 2.5, "output": 10.0}}})
            >>> p.unpriced("openrouter/auto", ["gpt-4o"]), p.unpriced("openrouter/auto")
            (None, 'openrouter/auto')
        """
        for m in self.billed_models(model, billed_as):
            if self.price(m) is None:
                return str(m)
        return None

    def price(self, model: str | None) -> Price | None:
        """The price of ``model``, or ``None`` when it has none (looked up once per model)."""
        if not model:
            return None
        try:
            return self._priced[model]
        except KeyError:
            found = self._priced[model] = self._lookup(model)
            return found

    def _lookup(self, model: str) -> Price | None:
        """:meth:`price` uncached: overrides, then the package (default table only), then the table."""
        if self.package and self._listed(model, self.overrides) is None:
            if model not in self._from_package:
                self._from_package[model] = _package_price(model)
            if (found := self._from_package[model]) is not None:
                return found
        name = self._listed(model, self.prices)
        return None if name is None else self.prices[name]

    @staticmethod
    def _listed(model: str, names: Mapping[str, Any]) -> str | None:
        """The name ``model`` is listed under in ``names``: itself, else the longest it is a dated snapshot of.

        ``gpt-4o-2024-08-06`` is listed as ``gpt-4o``; ``gpt-4o-mni`` is not (its own model, or
        a typo: :func:`~hrbench.models._model_names.is_snapshot_of`).
        """
        for name in (model, model.split("/", 1)[-1]):
            if name in names:
                return name
            best = max((k for k in names if is_snapshot_of(name, k)), key=len, default=None)
            if best is not None:
                return best
        return None

    def closest(self, model: str | None) -> str | None:
        """The priced name closest to ``model`` (a misspelling's model), or ``None``.

        Looked for among this table's names, its overrides and, for the default table,
        genai-prices' model names and aliases.

        Example:
            >>> Pricing(table={"models": {"gpt-4o": {"input": 2.5, "output": 10.0},
            ...                           "gpt-4o-mini": {"input": 0.15, "output": 0.6}}}).closest("gpt-4o-mni")
            'gpt-4o-mini'
        """
        if not model:
            return None
        return closest(model, [*self.prices, *(package_names() if self.package else ())])

    def did_you_mean(self, model: str | None) -> str:
        """``" (did you mean gpt-4o-mini?)"`` for an unpriced ``model`` close to a priced name, else ``""``.

        Example:
            >>> Pricing(table={"models": {"gpt-4o-mini": {"input": 0.15, "output": 0.6}}}).did_you_mean("gpt-4o-mni")
            ' (did you mean gpt-4o-mini?)'
        """
        near = self.closest(model)
        return f" (did you mean {near}?)" if near else ""

    def describe(self, model: str) -> PriceInfo | None:
        """``model``'s price with its source and date (what ``hrb prices MODEL`` shows), or ``None``.

        Raises:
            ConfigError: the model's price is refused (:meth:`check`).

        Example:
            >>> info = Pricing(overrides={"m": {"input": 1.0, "output": 2.0}}).describe("m")
            >>> info.input, info.output, info.source
            (1.0, 2.0, 'an override (the spec or Pricing(overrides=...))')
        """
        p = self.price(model)
        if p is None:
            return None
        listed = self._listed(model, self.prices)
        if self.package and self._listed(model, self.overrides) is None and self._from_package.get(model):
            return _package_info(model)
        overridden = listed is not None and listed in self.overrides
        return PriceInfo(
            model=model,
            input=p.input,
            cached_input=p.cached_input,
            output=p.output,
            cache_write_5m=p.write_5m,
            cache_write_1h=p.write_1h,
            priced_as=listed or model,
            provider=None,
            source=OVERRIDE if overridden else self.source,
            date=None if overridden else self.checked,
            note=TIERS_NOTE if p.tiers else None,
            tiers=tuple(
                TierInfo(above, t.input, t.cached_input, t.output, t.write_5m, t.write_1h)
                for above, t in p.tiers
            ),
        )

    def cost(self, usage: Usage, model: str | None) -> float | None:
        """What a reply cost in USD, or ``None`` when the model has no price.

        Cached input tokens (cache reads) are billed at the cached-input rate, prompt tokens
        written to the prompt cache at the cache-write rates (5 minutes: 1.25x input, 1 hour:
        2x input, unless the table says otherwise) and the rest of the input at the input rate;
        output tokens (reasoning included, counted once) at the output rate (cases H14b, H14d,
        H4-14, H4-15). A price with tiers bills every token at the rates of the highest tier the
        reply's prompt (``tokens_in``) passes (genai-prices' rule; case H4-13: gemini-2.5-pro at
        300,000 prompt tokens, 0.6 USD).

        Example:
            >>> p = Pricing(overrides={"c": {"input": 3.0, "cached_input": 0.3, "output": 15.0}})
            >>> u = Usage(tokens_in=4000, tokens_cached=1000, tokens_cache_write_5m=1000,
            ...           tokens_cache_write_1h=1000, tokens_out=100)
            >>> round(p.cost(u, "c") * 1e6, 6)   # 1000*3 + 1000*0.3 + 1000*3.75 + 1000*6 + 100*15
            14550.0
        """
        p = self.price(model)
        if p is None:
            return None
        if p.tiers:
            p = p.at(usage.tokens_in)
        cached = min(usage.tokens_cached, usage.tokens_in)
        if not (usage.tokens_cache_write_5m or usage.tokens_cache_write_1h):  # no cache writes: same sum
            return (
                (usage.tokens_in - cached) * p.input + cached * p.cached_input + usage.tokens_out * p.output
            ) / 1e6
        w5 = min(usage.tokens_cache_write_5m, usage.tokens_in - cached)
        w1 = min(usage.tokens_cache_write_1h, usage.tokens_in - cached - w5)
        plain = usage.tokens_in - cached - w5 - w1
        return (
            plain * p.input
            + cached * p.cached_input
            + w5 * p.write_5m
            + w1 * p.write_1h
            + usage.tokens_out * p.output
        ) / 1e6

    def reservation(self, request: Request, billed_as: Iterable[str] = ()) -> tuple[float | None, int]:
        """The true worst case of a request, in USD and tokens, for the governor (SPEC section 6).

        Prompt tokens are bounded from above (:func:`hrbench.models._tokens.prompt_bound`: the
        model's tokenizer where hrbench ships it, else one token per UTF-8 byte), plus the
        output limit the request carries (:func:`output_limit`; the runner always sends one
        under a USD or token cap, else :data:`DEFAULT_MAX_OUTPUT_TOKENS` is assumed), the whole
        times ``n`` (each choice bills its output, and a provider may bill the prompt per
        choice). USD prices input and output at the dearest of the requested model and every
        model in ``billed_as`` (the models the reply can be billed as), component by component,
        and of every tier the prompt can reach: a request whose prompt bound passes a tier's
        size is reserved at that tier's rates (a long-context price).

        Args:
            request: the request as sent (``wire`` filled, so the client's defaults count).
            billed_as: other models the reply may be billed as (a router, an alias).

        Returns:
            ``(usd, tokens)``; ``usd`` is ``None`` when one of those models has no price.

        Example:
            >>> p = Pricing(overrides={"m": {"input": 1.0, "output": 2.0}})
            >>> r = Request(messages=[{"role": "user", "content": "hi"}], model="m", params={"max_tokens": 10, "n": 2})
            >>> p.reservation(r)
            (7.4e-05, 54)
        """
        out = output_limit(request)
        out = DEFAULT_MAX_OUTPUT_TOKENS if out is None else out
        n = request.params.get("n") if request.provider != "anthropic" else 1
        n = n if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else 1
        prompt, _ = prompt_bound(request.messages, request.model, request.tools)
        tokens = n * (prompt + out)
        prices = []
        for m in self.billed_models(request.model, billed_as):  # as unpriced(): the first with no price
            price = self.price(m)
            if price is None:
                return None, tokens
            prices.append(price)
        known = (
            prices[0].reachable(n * prompt)
            if len(prices) == 1
            else [r for p in prices for r in p.reachable(n * prompt)]
        )
        if len(known) == 1:  # one model at one rate, the common case: no generators
            rate, out_rate = _prompt_rate(known[0], request), known[0].output
        else:
            rate, out_rate = max(_prompt_rate(p, request) for p in known), max(p.output for p in known)
        usd = n * (prompt * rate + out * out_rate) / 1e6
        return usd, tokens


def _prompt_rate(price: Price, request: Request) -> float:
    """The dearest rate a request's prompt tokens can be billed at (USD per million).

    A request that marks part of its prompt for the provider's prompt cache (``cache_control``,
    Anthropic's) may be billed for writing it, at up to the 1-hour write rate (2x input); any
    other prompt at most the input rate.

    Example:
        >>> p = Price(input=1.0, cached_input=0.1, output=5.0)
        >>> r = Request(messages=[{"role": "user", "content": [{"type": "text", "text": "x",
        ...     "cache_control": {"type": "ephemeral"}}]}])
        >>> _prompt_rate(p, r), _prompt_rate(p, Request(messages=[{"role": "user", "content": "x"}]))
        (2.0, 1.0)
    """
    if _marks_cache(request):
        return max(price.input, price.write_5m, price.write_1h)
    return price.input


def _marks_cache(request: Request) -> bool:
    """Whether a request asks the provider to write its prompt cache (a ``cache_control`` anywhere).

    OpenAI caches prompts by itself and bills no writes; a mock bills nothing.
    """
    import msgspec

    if request.provider in ("openai", "mock"):
        return False
    for part in (request.messages, request.tools, request.params.get("system")):
        if part and b'"cache_control"' in msgspec.json.encode(part):
            return True
    return False


def output_limit(request: Request) -> int | None:
    """The output limit a request carries as sent: its own, else the client's default; or ``None``.

    Example:
        >>> output_limit(Request(messages=[], params={"max_completion_tokens": 5}))
        5
        >>> output_limit(Request(messages=[], wire={"defaults": {"max_tokens": 1024}}))
        1024
    """
    for params in (request.params, (request.wire or {}).get("defaults") or {}):
        for key in ("max_tokens", "max_completion_tokens"):
            v = params.get(key)
            if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                return v
    return None


def _package_info(model: str, bundled: bool = False) -> PriceInfo | None:
    """genai-prices' price of ``model`` (or of the name after its ``provider/`` prefix)."""
    for name in dict.fromkeys((model, model.split("/", 1)[-1])):
        provider = model.split("/", 1)[0] if name != model else None
        info = package_price(name, provider, bundled) or (
            package_price(name, None, bundled) if provider else None
        )
        if info is not None:
            return info
    return None


def _as_price(info: PriceInfo) -> Price:
    tiers = tuple(
        (t.above, Price(t.input, t.cached_input, t.output, t.cache_write_5m, t.cache_write_1h))
        for t in info.tiers
    )
    return Price(info.input, info.cached_input, info.output, info.cache_write_5m, info.cache_write_1h, tiers)


def _package_price(model: str) -> Price | None:
    """genai-prices' price of ``model``, checked as any table's: finite, >= 0, and 0 only where others agree.

    Raises:
        ConfigError: naming ``prices.<model>.<part>``, the value and the package's version.
    """
    info = _package_info(model)
    if info is None:
        return None
    price = _as_price(info)
    whose = f"{PACKAGE_NAME} {package_version()}'s data"
    check_rates(model, price, f"from {whose}: reinstall it, or give the model a price of your own")
    refuse_zero(model, price, _references(model), whose)
    return price


def _references(model: str) -> Iterator[tuple[str, Price | None]]:
    """The prices a rate of 0 for ``model`` is checked against: genai-prices' bundled data, the shipped table.

    Lazy: a price with no rate of 0 asks neither.
    """
    bundled = _package_info(model, bundled=True)
    yield (
        f"{PACKAGE_NAME} {package_version()}'s bundled data",
        None if bundled is None else _as_price(bundled),
    )
    shipped = _shipped().get("models", {})
    name = Pricing._listed(model, shipped)
    yield SHIPPED, None if name is None else read_entry(name, shipped[name])


_SHIPPED: dict[str, Any] | None = None


def _shipped() -> dict[str, Any]:
    """The table hrbench ships (``hrbench/data/prices.json``), read once."""
    global _SHIPPED
    if _SHIPPED is None:
        _SHIPPED = json.loads(resources.files("hrbench").joinpath("data/prices.json").read_text("utf-8"))
    return _SHIPPED


def _table_named() -> dict[str, Any] | None:
    """The table the file ``HRBENCH_PRICES`` names, or ``None`` when the variable is not set.

    Raises:
        ConfigError: ``HRBENCH_PRICES``: the file cannot be read, is not UTF-8 or is not JSON.
    """
    path = os.environ.get("HRBENCH_PRICES")
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            text = decoded(f.read(), path, "HRBENCH_PRICES")
        table: dict[str, Any] = json.loads(text)
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError("HRBENCH_PRICES", path, f"cannot read the price table: {exc}") from None
    return table


def _declared_free(overrides: Mapping[str, Any], free: Iterable[str]) -> dict[str, Any]:
    """``overrides`` with each model of ``free`` declared free (``"free"``).

    Raises:
        ConfigError: ``free``: a model declared free that ``overrides`` also prices.
    """
    out = dict(overrides)
    for model in [free] if isinstance(free, str) else free:
        if out.get(model, FREE) != FREE:
            raise ConfigError(
                "free", model, f"declared free and priced at {out[model]!r} in the overrides: keep one"
            )
        out[model] = FREE
    return out


_DEFAULT: Pricing | None = None


def default_pricing() -> Pricing:
    """The shipped price table (or ``HRBENCH_PRICES``), loaded once."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Pricing()
    return _DEFAULT


def default_pricing_loaded() -> Pricing | None:
    """:func:`default_pricing` when it is loaded already (nothing left to read), else ``None``.

    Example:
        >>> table = default_pricing()
        >>> default_pricing_loaded() is table
        True
    """
    return _DEFAULT


def trace_cost(trace: Iterable[Step], pricing: Pricing | None = None) -> float | None:
    """What a trace cost in USD (the seed's ``gr_trace_cost``).

    Every request step is priced at its own model: a step served from a cache or a recording
    costs 0; a live step costs its recorded ``usd``, or, when it has none, its usage priced by
    ``pricing`` (the shipped table by default). A retried attempt whose reply the provider
    billed (its step carries usage) counts the same way. ``None`` when a live step's model has
    no price.

    Args:
        trace: the steps of a run (``bench.traces[ledger_id]``) or of a whole benchmark
            (``bench.trace``).
        pricing: the price table for steps that carry no cost.

    Returns:
        The cost in USD, or ``None``.

    Example:
        >>> from hrbench.records import Step, Usage
        >>> steps = [Step(ledger_id="r", source="live", usd=0.002),
        ...          Step(ledger_id="r", source="cache", usd=0.0, usd_nominal=0.002)]
        >>> trace_cost(steps)
        0.002
    """
    total = 0.0
    for s in trace:
        if s.kind not in ("request", "attempt") or s.source != "live":
            continue
        if s.kind == "attempt" and s.usage is None:  # a failed attempt nobody billed (or not known)
            continue
        usd = s.usd
        if usd is None and s.usage is not None:
            usd = (pricing or default_pricing()).cost(s.usage, s.model)
        if usd is None:
            return None
        total += usd
    return total
