"""Model clients built from specs: ``openai``, ``anthropic``, ``replay`` and ``mock`` (SPEC §4).

The key of a remote client is read from the environment variable named by ``api_key_env``, at
request time, by the client; a spec never holds a key. A spec's ``price`` and ``prices`` become
the price table its costs are counted with (:func:`build_pricing`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio

from hrbench._util import forms as _forms
from hrbench._util.messages import did_you_mean, field_under
from hrbench.errors import ConfigError
from hrbench.models import MockClient
from hrbench.specs._loader import _MISSING, _get, _kind, load_object

__all__ = ["CLIENT_FIELDS", "build_client", "build_pricing", "check_recording"]

_HTTP_FIELDS: tuple[str, ...] = ("kind", "model", "base_url", "api_key_env", "timeout_s", "max_connections")
_HTTP_FIELDS += ("max_attempts", "max_total_s", "max_tokens", "billed_as", "settings", "price", "prices")

CLIENT_FIELDS: dict[str, tuple[str, ...]] = {
    "openai": _HTTP_FIELDS,
    "anthropic": (*_HTTP_FIELDS, "anthropic_version"),
    "mock": ("kind", "function", "reply", "replies", "default", "echo", "model", "delay_s"),
    "replay": ("kind", "recording", "strict", "fallback", "model", "provider", "base_url"),
}
"""The fields of each client spec by kind, as :data:`ARM_FIELDS` for arms."""


def _last_content(messages: list[dict[str, Any]]) -> str:
    return str(messages[-1].get("content", "")) if messages else ""


def _mock_client(spec: Any) -> MockClient:
    function, reply, replies = _get(spec, "function"), _get(spec, "reply"), _get(spec, "replies")
    echo, default = bool(_get(spec, "echo", False)), _get(spec, "default")
    delay = _forms.check_number("client.delay_s", _get(spec, "delay_s", 0.0), low=0, unit=" seconds") or 0.0
    model = _get(spec, "model")
    model = "mock" if model is None else _forms.check_name("client.model", model, optional=True)
    chosen = sum(x is not None for x in (function, reply, replies)) + int(echo)
    if chosen != 1:
        raise ConfigError(
            "client", "mock", "a mock client needs exactly one of function, reply, replies, echo"
        )
    fn: Callable[[list[dict[str, Any]], dict[str, Any]], Any]
    if function is not None:
        fn = load_object(function, "client.function")
        if not callable(fn):
            raise ConfigError("client.function", function, "expected a function fn(messages, params)")
    elif reply is not None:

        def fn(messages: list[dict[str, Any]], params: dict[str, Any]) -> Any:
            return reply

    elif replies is not None:
        table = dict(replies)

        def fn(messages: list[dict[str, Any]], params: dict[str, Any]) -> Any:
            return table.get(_last_content(messages), default)

    else:

        def fn(messages: list[dict[str, Any]], params: dict[str, Any]) -> Any:
            return _last_content(messages)

    if delay > 0:
        inner = fn

        async def fn(messages: list[dict[str, Any]], params: dict[str, Any]) -> Any:
            await anyio.sleep(delay)
            return inner(messages, params)

    return MockClient(fn, model=model)


def _http_settings(spec: Any, extra: tuple[str, ...]) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    for key in ("timeout_s", "max_connections", "max_attempts", "max_total_s", *extra):
        value = _get(spec, key, _MISSING)
        if value is not _MISSING and value is not None:
            kw[key] = value
    kw.update(_get(spec, "settings") or {})
    return kw


def _check_output_limits(spec: Any) -> None:
    """Validate a remote client spec's ``max_tokens`` and ``billed_as``.

    Raises:
        ConfigError: ``max_tokens`` not a whole number of 1 or more, or ``billed_as`` not a
            list of model names; the field is named ``client.max_tokens`` / ``client.billed_as``.

    Example:
        >>> _check_output_limits({"max_tokens": 0})
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: client.max_tokens: expected a whole number of tokens, 1 or more (got 0)
    """
    limit = _get(spec, "max_tokens")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError("client.max_tokens", limit, "expected a whole number of tokens, 1 or more")
    billed = _get(spec, "billed_as")
    if billed is not None and (
        isinstance(billed, str)
        or not isinstance(billed, list | tuple)
        or not all(isinstance(m, str) and m for m in billed)
    ):
        raise ConfigError("client.billed_as", billed, "expected a list of model names")
    for i, name in enumerate(billed or ()):
        _forms.refuse_variable(f"client.billed_as[{i}]", name)


def _remote_client(spec: Any, kind: str) -> Any:
    if kind == "openai":
        from hrbench.models import OpenAIClient as cls

        extra: tuple[str, ...] = ("max_tokens", "billed_as")
    else:
        from hrbench.models import AnthropicClient as cls  # type: ignore[assignment]

        extra = ("max_tokens", "anthropic_version", "billed_as")
    _check_output_limits(spec)
    model = _get(spec, "model")
    base_url = _get(spec, "base_url")  # None: the provider's; "" is refused, as any non-URL is
    version = _get(spec, "anthropic_version")
    if kind == "anthropic" and version is not None:
        _forms.refuse_variable("client.anthropic_version", version)
        if not isinstance(version, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", version):
            raise ConfigError("client.anthropic_version", version, "expected a date such as 2023-06-01")
    api_key_env = _get(spec, "api_key_env", _MISSING)
    if api_key_env is _MISSING:
        api_key_env = "OPENAI_API_KEY" if kind == "openai" else "ANTHROPIC_API_KEY"
    try:
        return cls(model, base_url, api_key_env, **_http_settings(spec, extra))
    except TypeError as exc:
        raise ConfigError(
            "client.settings", _get(spec, "settings"), f"rejected by the {kind} client ({exc})"
        ) from None


def check_recording(name: str, recordings: Sequence[str]) -> None:
    """Refuse a replay of a recording that does not exist, before the first run.

    Rule (a misspelt ``recording = "squad-rec-2"`` never gives a ``ReplayMiss`` error run per
    run): a replay client with no ``fallback`` can answer nothing from a
    recording the store does not hold, so the benchmark is refused (exit 2 in ``hrb``), naming
    the recording and the closest names the store has. With a ``fallback`` a new name is
    allowed: the live replies are recorded under it.

    Args:
        name: the spec's ``client.recording``.
        recordings: the names the store holds.

    Raises:
        ConfigError: naming ``client.recording``, the value, the closest names and how many
            recordings there are.

    Example:
        >>> check_recording("squad-rec", ["squad-rec"])
        >>> try:
        ...     check_recording("squad-rec-2", ["squad-rec", "tatqa-rec"])
        ... except ValueError as exc:
        ...     print(str(exc).split(" (got")[0])
        client.recording: no recording has this name; did you mean 'squad-rec'? the store has 2: 'squad-rec', 'tatqa-rec' (record one with `record = NAME`, or give a `fallback`)
    """
    if name in recordings:
        return
    hint = did_you_mean(str(name), list(recordings), n=3)
    shown = ", ".join(map(repr, recordings[:5])) + (", ..." if len(recordings) > 5 else "")
    held = f"the store has {len(recordings)}: {shown}" if recordings else "the store has no recording"
    raise ConfigError(
        "client.recording",
        name,
        f"no recording has this name; {hint}{held} (record one with `record = NAME`, or give a `fallback`)",
    )


def _replay_client(spec: Any, store: Any, role: str = "client") -> Any:
    from hrbench.runner import ReplayClient

    if store is None:  # say what gives one, for a judge too
        how = (
            "run the benchmark with `hrb bench` (the daemon reads the recording from its store), or in "
            'Python build the scorer with build_scorer("judge", settings, store=hrbench.Store(PATH)) or '
            "judge_scorer(hrbench.ReplayClient(store, recording=NAME))"
            if role == "judge"
            else "run the spec with `hrb bench` (the daemon reads the recording from its store), or in "
            "Python give one: build_client(spec, store=hrbench.Store(PATH))"
        )
        raise ConfigError(
            "client",
            "replay",
            f"a replay {role} answers from a recording kept in a store, and none was given: {how}",
        )
    fallback, recording = _get(spec, "fallback"), _get(spec, "recording")
    _forms.check_name("client.recording", recording, "a recording name")
    for field in ("model", "provider"):
        if (value := _get(spec, field)) is not None:
            _forms.check_name(f"client.{field}", value, f"a {field} name", optional=True)
    if (base_url := _get(spec, "base_url")) is not None:
        _forms.check_url("client.base_url", base_url)
    if fallback is not None:
        with field_under("client.fallback", head="client"):
            if _kind(fallback, "client") == "replay":
                raise ConfigError("client.kind", "replay", "a fallback is a live client, not a replay")
            fallback = build_client(fallback, store)
    else:
        check_recording(recording, store.recordings())
    return ReplayClient(
        store,
        recording=recording,
        strict=bool(_get(spec, "strict", True)),
        fallback=fallback,
        model=_get(spec, "model"),
        provider=_get(spec, "provider"),
        base_url=base_url,
    )


def build_client(spec: Any, store: Any = None, role: str = "client") -> Any:
    """The model client a spec describes.

    Args:
        spec: a spec with ``kind`` in ``openai``, ``anthropic``, ``replay``, ``mock``.
        store: the :class:`~hrbench.store.Store` a replay client reads.
        role: whose client it is, as errors name it: ``"client"`` or ``"judge"``.

    Returns:
        A client (the ``Client`` role of :mod:`hrbench.models._base`).

    Raises:
        ConfigError: an unknown kind or a malformed spec.

    Example:
        >>> build_client({"kind": "mock", "reply": "Paris"}).model
        'mock'
    """
    with field_under("client"):  # the client classes name their own fields: `base_url`
        kind = _kind(spec, "client")
        _forms.check_one_of("client.kind", kind, list(CLIENT_FIELDS), "unknown client kind")
        _forms.check_fields("client", spec, CLIENT_FIELDS[kind])
        if kind == "mock":
            return _mock_client(spec)
        if kind == "replay":
            return _replay_client(spec, store, role)
        return _remote_client(spec, kind)


def build_pricing(spec: Any) -> Any:
    """The price table a client spec's ``price`` and ``prices`` add to, or ``None`` without them.

    A TOML or wire spec prices a local or unlisted model in its ``[client]`` table (``price =
    {input = 0.1, output = 0.2}``, USD per million tokens; ``tiers = [{above = 200000, input =
    0.2, output = 0.4}]`` for a long-context price) over the shipped table (or the file
    ``HRBENCH_PRICES`` names); ``prices`` prices other models by name, such as a ``billed_as``
    model with no price (``prices = {"mystery-v9" = {input = 1.0, output = 2.0}}``); ``price``
    wins for the client's own model. ``price = "free"`` (or ``"free"`` in ``prices``) declares
    a model free: a rate of 0 for a model the table prices is refused otherwise.

    Raises:
        ConfigError: a price that is not numbers, or negative, NaN or infinite, or 0 for a
            priced model not declared free, naming ``client.price.<part>`` or
            ``client.prices.<model>.<part>``.

    Example:
        >>> build_pricing({"kind": "openai", "model": "m", "price": {"input": 1.0, "output": 2.0}}).price("m").output
        2.0
        >>> build_pricing({"kind": "openai", "model": "m", "prices": {"dear": {"input": 5.0, "output": 9.0}}}).price("dear").output
        9.0
        >>> build_pricing({"kind": "openai", "model": "gpt-4o", "price": "free"}).price("gpt-4o").free
        True
        >>> build_pricing({"kind": "mock"}) is None
        True
    """
    if spec is None:
        return None
    price, prices = _get(spec, "price"), _get(spec, "prices") or {}
    if price is None and not prices:
        return None
    if not isinstance(prices, Mapping):
        raise ConfigError("client.prices", prices, "expected a table of model names to prices")
    from hrbench.models import FREE, Pricing

    def entry(p: Any) -> Any:
        if p == FREE:
            return FREE
        got: dict[str, Any] = {
            k: v for k in ("input", "cached_input", "output") if (v := _get(p, k)) is not None
        }
        if (tiers := _get(p, "tiers")) is not None:
            got["tiers"] = [{"above": _get(t, "above"), **entry(t)} for t in tiers]
        return got

    model = _get(spec, "model")
    overrides = {str(name): entry(p) for name, p in prices.items()}
    if price is not None:
        overrides[model] = entry(price)
    try:
        return Pricing(overrides=overrides)
    except ConfigError as exc:  # named as the spec names it: client.price.input, client.prices.m.input
        own = f"prices.{model}." if price is not None else None
        old = exc.field
        new = "client.price." + old[len(own) :] if own and old.startswith(own) else f"client.{old}"
        if exc.message.startswith(old):
            exc.message = new + exc.message[len(old) :]
            exc.args = (exc.message,)
        exc.field = exc.context["field"] = new
        raise
