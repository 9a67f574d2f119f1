"""Arms, clients, references, scorers and governors built from specs (SPEC §4).

Over the wire and in TOML files, arms and clients are *specs*, never code: small records
tagged by ``kind``. This module turns a spec into the library object. It reads specs by
attribute (the daemon passes the msgspec Structs of ``hrbench_client.protocol``) or by key (a
plain dict, e.g. from ``tomllib``), so the core imports nothing from the daemon or the clients.

Arms:

- ``prompt``: ``template`` formatted with ``{item}`` and, for a mapping payload, its keys; an
  optional ``system`` message, ``model`` and sampling ``params``; the arm answers with the reply.
- ``reading``: a reading recipe of :mod:`hrbench.reading` by name, with its ``settings``.
- ``outputs``: fixed outputs by item id (one for every run, or a list: one per run), inline or
  from a file: scores outputs made elsewhere.
- ``import``: ``package.module:attribute``: an :class:`~hrbench.arm.Arm`, a function
  ``fn(item, ctx)``, or (with ``settings``) a factory called with them.

Clients: ``openai``, ``anthropic`` (the key is read from the environment variable named by
``api_key_env``, at request time, by the client; a spec never holds a key), ``replay`` (a
recording in the store), ``mock`` (a function by import path, or canned replies).
"""

from __future__ import annotations

import contextvars
import importlib
import json
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from hrbench._util import forms as _forms
from hrbench._util.unique import OnePerId, refuse_repeated_keys
from hrbench.arm import Arm
from hrbench.errors import CodeRefused, ConfigError, did_you_mean, field_under
from hrbench.models.mock import MockClient
from hrbench.reading._imported import FILE_FORMATS, imported_spec_arm, imported_spec_reference
from hrbench.reference import PER_ITEM, Reference, check_keyed
from hrbench.runner.governor import Governor, default_governor
from hrbench.scoring.scorer import Scorer, scorer

__all__ = [
    "ARM_FIELDS",
    "CLIENT_FIELDS",
    "REFERENCE_FIELDS",
    "SCORERS",
    "build_arm",
    "build_client",
    "build_governor",
    "build_metrics",
    "build_reference",
    "build_scorer",
    "check_code_allowed",
    "client_scorers_module",
    "check_prompt",
    "check_recording",
    "code_allowed",
    "field_under",
    "format_prompt",
    "load_object",
]

_MISSING = object()


def _get(spec: Any, name: str, default: Any = None) -> Any:
    if isinstance(spec, Mapping):
        return spec.get(name, default)
    return getattr(spec, name, default)


def _kind(spec: Any, what: str) -> str:
    kind = _get(spec, "kind")
    if kind is None and not isinstance(spec, Mapping):  # a msgspec tagged Struct keeps its tag on the class
        config = getattr(type(spec), "__struct_config__", None)
        kind = getattr(config, "tag", None)
    if not isinstance(kind, str):
        raise ConfigError(f"{what}.kind", kind, "a spec needs a `kind`")
    return kind


_MTIMES: dict[str, int] = {}


def _mtime(module: Any) -> int | None:
    file = getattr(module, "__file__", None)
    try:
        return os.stat(file).st_mtime_ns if file else None
    except OSError:
        return None


_RELOAD_LOCK = threading.RLock()  # reentrant: a module's body may itself call load_object


def _import(module_name: str) -> Any:
    """Import a module; reload one imported here before whose file changed since.

    Safe from several threads at once (the daemon builds concurrent benchmarks in worker
    threads): the module always comes from ``importlib.import_module``, which waits while
    another thread is still running the module's body, never from a bare ``sys.modules``
    look-up, which can return a module half initialised (its later attributes missing).
    """
    if module_name not in sys.modules:
        importlib.invalidate_caches()  # a module written after start-up must be found
        module = importlib.import_module(module_name)
        with _RELOAD_LOCK:
            _MTIMES[module_name] = _mtime(module) or 0
        return module
    module = importlib.import_module(module_name)
    with _RELOAD_LOCK:
        seen = _MTIMES.get(module_name)
        now = _mtime(module)
        if seen is not None and now is not None and now != seen:
            module = importlib.reload(module)
            _MTIMES[module_name] = now
    return module


code_allowed: contextvars.ContextVar[bool] = contextvars.ContextVar("hrbench_code_allowed", default=True)
"""Whether specs may name code (import paths, ``python_path``) in this context.

True in the library and over the daemon's stdio and Unix socket; the daemon sets it false for
a TCP connection unless started with ``--allow-code-over-tcp`` (SPEC §4). Worker threads see
the value of the task that started them (``anyio.to_thread`` copies the context).
"""


def check_code_allowed(field: str, value: Any) -> None:
    """Refuse code (an import path, a ``python_path``) where :data:`code_allowed` is false.

    Raises:
        CodeRefused: naming the field and the value.

    Example:
        >>> check_code_allowed("scorer", "mymod:score")  # the library: allowed
    """
    if not code_allowed.get():
        raise CodeRefused(
            field,
            value,
            "an import path is code run with the daemon user's rights; it is refused over TCP "
            "(use the Unix socket or stdio, or start the daemon with --allow-code-over-tcp)",
        )


def load_object(path: str, field: str = "path") -> Any:
    """Import ``package.module:attribute`` (the attribute may be dotted).

    A long-lived process (the daemon) sees edits: a module first imported by this function is
    reloaded when its file changed since.

    Args:
        path: the import path.
        field: the spec field named in errors.

    Returns:
        The attribute.

    Raises:
        ConfigError: a malformed path, a module that cannot be imported, a missing attribute.
        CodeRefused: where :data:`code_allowed` is false (a TCP connection to the daemon).

    Example:
        >>> load_object("json:dumps")([1])
        '[1]'
    """
    check_code_allowed(field, path)
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(field, path, "expected `package.module:attribute`")
    try:
        obj: Any = _import(module_name)
    except ImportError as exc:
        raise ConfigError(
            field, path, f"cannot import module {module_name!r} ({type(exc).__name__})"
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(field, path, f"module {module_name!r} has no attribute {attr!r}") from None
    return obj


class _Fields(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        raise KeyError(key)


def _fill(template: str, item: Any) -> str:
    fields = _Fields(item=item)
    if isinstance(item, Mapping):
        fields.update({str(k): v for k, v in item.items()})
    return template.format_map(fields)


def format_prompt(template: str, item: Any) -> str:
    """Fill a prompt template with an item's payload.

    ``{item}`` is the payload itself; when the payload is a mapping its keys are fields too.

    Raises:
        ConfigError: the template names a field the item lacks, or is malformed.

    Example:
        >>> format_prompt("Capital of {item}?", "France")
        'Capital of France?'
        >>> format_prompt("Q: {question}", {"question": "Why?"})
        'Q: Why?'
    """
    try:
        return _fill(template, item)
    except KeyError as exc:
        raise ConfigError("template", template, f"names {{{exc.args[0]}}}, which the item lacks") from None
    except (ValueError, IndexError) as exc:
        raise ConfigError("template", template, f"malformed template ({exc})") from None


# -- arms ----------------------------------------------------------------------------------


def _prompt_arm(spec: Any) -> Arm:
    name, template = _get(spec, "name"), _get(spec, "template")
    if not isinstance(template, str):
        raise ConfigError("template", template, "a prompt arm needs a template string")
    system = _get(spec, "system")
    model = _get(spec, "model")
    if model is not None:  # "" was dropped silently: the client's model answered (newcomer finding)
        _forms.check_name("arm.model", model, optional=True)
    params = dict(_get(spec, "params") or {})
    for reserved in ("draw_index", "messages"):
        if reserved in params:
            raise ConfigError(f"params.{reserved}", params[reserved], "is set by the runner, not by the spec")

    async def prompt_arm(item: Any, ctx: Any) -> Any:
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": format_prompt(template, item)})
        kw = dict(params)
        if model:
            kw["model"] = model
        return await ctx.acall(messages, **kw)

    settings = {"kind": "prompt", "template": template, "system": system, "model": model, "params": params}
    arm = Arm(name, prompt_arm, version=str(_get(spec, "version", "1") or "1"), settings=settings)
    arm.check = lambda items, client, known, runs=1: check_prompt(name, template, items, client)
    return arm


def _root_fields(template: str) -> list[str]:
    """The top-level field names a template reads (``{a.b}`` and ``{a[0]}`` read ``a``)."""
    import string

    roots: list[str] = []
    for _, name, _, _ in string.Formatter().parse(template):
        if name:
            root = name.split(".", 1)[0].split("[", 1)[0]
            if root not in roots:
                roots.append(root)
    return roots


def check_prompt(arm: str, template: str, items: Mapping[str, Any], client: Any) -> None:
    """Refuse a prompt arm that would fail on every run (or on some items), before the first.

    Decided (issue: a template naming a field the items lack, a malformed template and a
    prompt arm with no ``[client]`` each gave exit 3 and one error row per run): the template
    is filled with the first item (which finds a malformed template and a field it lacks), then
    every item is checked for the fields the template names, and a benchmark without a client
    is refused.

    Args:
        arm: the arm's name, said in the error.
        template: the arm's template.
        items: the items the benchmark will run, id -> payload, in order.
        client: the benchmark's client (``None`` for none).

    Raises:
        ConfigError: naming ``template`` and the template (the benchmark puts ``arms[i].`` in
            front), with the field and the items that lack it (the first few ids and how many),
            or ``client``.

    Example:
        >>> check_prompt("ask", "Capital of {item}?", {"q1": "France"}, client=object())
        >>> try:
        ...     check_prompt("ask", "Capital of {country}?", {"q1": "France"}, client=object())
        ... except ValueError as exc:
        ...     print(str(exc).split(" (got")[0])
        template: names {country}, which item 'q1' lacks (1 of 1 item(s) lack it: q1)
    """
    where = "template"
    if client is None:
        raise ConfigError(
            "client",
            None,
            f"prompt arm {arm!r} calls a model: give the benchmark a client ([client])",
        )
    if not items:
        return
    first_id, first = next(iter(items.items()))
    try:
        roots = _root_fields(template)
    except ValueError as exc:
        raise ConfigError(where, template, f"malformed template ({exc})") from None
    for root in roots:
        lacking = [
            i
            for i, payload in items.items()
            if root != "item" and not (isinstance(payload, Mapping) and root in payload)
        ]
        if lacking:
            shown = ", ".join(lacking[:5]) + (", ..." if len(lacking) > 5 else "")
            raise ConfigError(
                where,
                template,
                f"names {{{root}}}, which item {lacking[0]!r} lacks ({len(lacking)} of {len(items)} item(s) lack it: {shown})",
            )
    try:
        _fill(template, first)  # what parsing alone lets through: positional fields, bad specs
    except (KeyError, ValueError, IndexError, AttributeError, TypeError) as exc:
        raise ConfigError(
            where, template, f"cannot be filled with item {first_id!r} ({type(exc).__name__}: {exc})"
        ) from None


def _outputs_arm(spec: Any) -> Arm:
    from hrbench.reading._outputs import NO_OUTPUT, missing_output, with_check

    name, outputs, path = _get(spec, "name"), _get(spec, "outputs"), _get(spec, "path")
    if (outputs is None) == (path is None):
        raise ConfigError("outputs", outputs, "an outputs arm needs exactly one of `outputs` or `path`")
    fmt = _get(spec, "format", "outputs") or "outputs"
    _forms.check_one_of("arm.format", fmt, ("outputs", "tatqa", *FILE_FORMATS))
    id_field, prediction_field = _get(spec, "id_field"), _get(spec, "prediction_field")
    if fmt in FILE_FORMATS:  # another tool's results (hrbench.reading._imported)
        return imported_spec_arm(spec, fmt, _get)
    scale_field = _get(spec, "scale_field")
    missing = _get(spec, "missing", "refuse") or "refuse"
    if path is not None and (fmt == "tatqa" or id_field or prediction_field or scale_field):
        # predictions made elsewhere, one per item: the reading module's loaders
        from hrbench.reading import outputs_arm as reading_outputs_arm
        from hrbench.reading import tatqa_outputs

        try:
            if fmt == "tatqa":
                run = tatqa_outputs(path, scaled=True)
                return with_check(reading_outputs_arm(name, run), list(run), source=path, missing=missing)
            return reading_outputs_arm(
                name,
                path,
                id_field=id_field or "id",
                prediction_field=prediction_field or "prediction",
                scale_field=scale_field,
                missing=missing,
            )
        except OSError as exc:
            raise ConfigError(
                "arm.path", path, f"cannot read the predictions ({type(exc).__name__})"
            ) from None
    if fmt == "tatqa":
        raise ConfigError("arm.format", fmt, "`tatqa` reads a run file: give `path`")
    from hrbench.reading._outputs_file import read_outputs

    table: dict[str, Any] = dict(outputs) if outputs is not None else read_outputs(path)

    async def outputs_arm(item: Any, ctx: Any) -> Any:
        if ctx.item_id not in table:  # refused before the first run (check_outputs), or missing = "error"
            raise missing_output(ctx.arm, ctx.item_id, source=path)
        out = table[ctx.item_id]
        if isinstance(out, list):
            if ctx.run > len(out) or out[ctx.run - 1] is NO_OUTPUT:
                raise missing_output(ctx.arm, ctx.item_id, ctx.run, source=path)
            return out[ctx.run - 1]
        return out

    per_run = {k: v for k, v in table.items() if isinstance(v, list)}
    arm = Arm(name, outputs_arm, settings={"kind": "outputs", "outputs": table})
    return with_check(arm, list(table), per_run=per_run, source=path, missing=missing)


def _import_arm(spec: Any) -> Arm:
    path, name, settings = _get(spec, "path"), _get(spec, "name"), _get(spec, "settings")
    obj = load_object(path)
    if settings is not None:
        if not callable(obj):
            raise ConfigError("path", path, "with `settings`, the attribute must be a factory")
        try:
            obj = obj(**settings)
        except TypeError as exc:
            raise ConfigError("settings", settings, f"the factory rejected them ({exc})") from None
    if isinstance(obj, Arm):
        if name and name != obj.name:
            return Arm(
                name, obj.fn, version=obj.version, derived_from=obj.derived_from, settings=obj.settings
            )
        return obj
    if callable(obj):
        return Arm(
            name or getattr(obj, "__name__", path.rpartition(":")[2]),
            obj,
            settings={"import": path, **(settings or {})},
        )
    raise ConfigError("path", path, "expected an Arm, a function fn(item, ctx) or a factory of one")


def _reading_arm(spec: Any) -> Arm:
    recipe, name, model = _get(spec, "recipe"), _get(spec, "name"), _get(spec, "model")
    if isinstance(model, str):  # a recipe also takes a client spec or a client (hrbench.reading)
        _forms.check_name("arm.model", model, optional=True)
    settings = dict(_get(spec, "settings") or {})
    if not isinstance(recipe, str) or not recipe.isidentifier() or recipe.startswith("_"):
        raise ConfigError("recipe", recipe, "expected a recipe name such as `direct`")
    try:
        reading = importlib.import_module("hrbench.reading")
    except ImportError:  # pragma: no cover - the package ships with hrbench
        raise ConfigError("recipe", recipe, "reading recipes are not available") from None
    known = tuple(getattr(reading, "RECIPES", ("direct", "chunked", "retrieve")))
    factory = getattr(reading, recipe, None) if recipe in known else None
    if not callable(factory):
        raise ConfigError("recipe", recipe, f"unknown reading recipe; expected one of {sorted(known)}")
    kwargs = dict(settings)
    if model:
        kwargs["model"] = model
    if name:
        kwargs["name"] = name
    try:
        arm = factory(**kwargs)
    except TypeError as exc:
        raise ConfigError("settings", settings, f"recipe {recipe!r} rejected them ({exc})") from None
    if not isinstance(arm, Arm):
        raise ConfigError("recipe", recipe, "the recipe factory did not return an Arm")
    return arm


ARM_FIELDS: dict[str, tuple[str, ...]] = {
    "prompt": ("kind", "name", "template", "system", "model", "params", "version"),
    "reading": ("kind", "recipe", "name", "model", "settings"),
    "outputs": ("kind", "name", "outputs", "path", "id_field", "prediction_field", "scale_field")
    + ("format", "missing", "source_arm"),
    "import": ("kind", "path", "name", "settings"),
}
"""The fields of each arm spec by kind, for a spec given as a mapping (the library, a judge's
settings); on the wire the Structs of ``hrbench_client.protocol`` hold the same fields (a test
compares them) and their decoder refuses any other."""

_HTTP_FIELDS: tuple[str, ...] = ("kind", "model", "base_url", "api_key_env", "timeout_s", "max_connections")
_HTTP_FIELDS += ("max_attempts", "max_total_s", "max_tokens", "billed_as", "settings", "price", "prices")

CLIENT_FIELDS: dict[str, tuple[str, ...]] = {
    "openai": _HTTP_FIELDS,
    "anthropic": (*_HTTP_FIELDS, "anthropic_version"),
    "mock": ("kind", "function", "reply", "replies", "default", "echo", "model", "delay_s"),
    "replay": ("kind", "recording", "strict", "fallback", "model", "provider", "base_url"),
}
"""The fields of each client spec by kind, as :data:`ARM_FIELDS` for arms."""

_ARMS: dict[str, Callable[[Any], Arm]] = {
    "prompt": _prompt_arm,
    "outputs": _outputs_arm,
    "import": _import_arm,
    "reading": _reading_arm,
}


def build_arm(spec: Any) -> Arm:
    """The :class:`~hrbench.arm.Arm` a spec describes.

    Args:
        spec: a spec with ``kind`` in ``prompt``, ``reading``, ``outputs``, ``import``.

    Returns:
        The arm; its settings (and so its hash) include the spec's content.

    Raises:
        ConfigError: an unknown kind or a malformed spec.

    Example:
        >>> arm = build_arm({"kind": "prompt", "name": "ask", "template": "Capital of {item}?"})
        >>> arm.name, arm.settings["template"]
        ('ask', 'Capital of {item}?')
    """
    kind = _kind(spec, "arm")
    builder = _ARMS.get(kind)
    if builder is None:
        raise ConfigError("arm.kind", kind, f"unknown arm kind; expected one of {sorted(_ARMS)}")
    _forms.check_fields("arm", spec, ARM_FIELDS[kind])
    return builder(spec)


# -- clients --------------------------------------------------------------------------------


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
    """Validate a remote client spec's ``max_tokens`` and ``billed_as`` (issue 12).

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
        from hrbench.models.openai import OpenAIClient as cls

        extra: tuple[str, ...] = ("max_tokens", "billed_as")
    else:
        from hrbench.models.anthropic import AnthropicClient as cls  # type: ignore[assignment]

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

    Decided (newcomer finding: a misspelt ``recording = "squad-rec-2"`` gave 40 ``ReplayMiss``
    error runs and exit 3): a replay client with no ``fallback`` can answer nothing from a
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
    from hrbench.runner.replay import ReplayClient

    if store is None:  # decided: say what gives one, for a judge too
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
        A client (the ``Client`` role of :mod:`hrbench.models.base`).

    Raises:
        ConfigError: an unknown kind or a malformed spec.

    Example:
        >>> build_client({"kind": "mock", "reply": "Paris"}).model
        'mock'
    """
    with field_under("client"):  # the client classes name their own fields: `base_url`
        kind = _kind(spec, "client")
        if kind not in CLIENT_FIELDS:
            raise ConfigError(
                "client.kind", kind, "unknown client kind; expected openai, anthropic, replay or mock"
            )
        _forms.check_fields("client", spec, CLIENT_FIELDS[kind])
        if kind == "mock":
            return _mock_client(spec)
        if kind == "replay":
            return _replay_client(spec, store, role)
        return _remote_client(spec, kind)


def build_pricing(spec: Any) -> Any:
    """The price table a client spec's ``price`` and ``prices`` add to, or ``None`` without them.

    newcomer finding: a TOML or wire spec prices a local or unlisted model in its ``[client]`` table
    (``price = {input = 0.1, output = 0.2}``, USD per million tokens) over the shipped table
    (or the file ``HRBENCH_PRICES`` names). Newcomer finding 19: ``prices`` prices other models
    by name, such as a ``billed_as`` model with no price (``prices = {"mystery-v9" = {input =
    1.0, output = 2.0}}``); ``price`` wins for the client's own model.

    Raises:
        ConfigError: a price that is not numbers, or negative, NaN or infinite (naming
            ``prices.<model>.<part>``).

    Example:
        >>> build_pricing({"kind": "openai", "model": "m", "price": {"input": 1.0, "output": 2.0}}).price("m").output
        2.0
        >>> build_pricing({"kind": "openai", "model": "m", "prices": {"dear": {"input": 5.0, "output": 9.0}}}).price("dear").output
        9.0
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
    from hrbench.models.pricing import Pricing

    def entry(p: Any) -> dict[str, Any]:
        return {k: v for k in ("input", "cached_input", "output") if (v := _get(p, k)) is not None}

    overrides = {str(name): entry(p) for name, p in prices.items()}
    if price is not None:
        overrides[_get(spec, "model")] = entry(price)
    return Pricing(overrides=overrides)


# -- references, scorers, governors -------------------------------------------------------------


_RECORD_FIELDS = ("id", "item", "label", "cluster", "split")
"""The fields of a reference record (``format = "rows"``)."""


def _unknown_field(where: str, name: str, known: Sequence[str]) -> ConfigError:
    """An error naming an unknown field, with the closest known name when there is one."""
    return ConfigError(
        where, name, f"unknown field; {did_you_mean(name, known)}expected one of {', '.join(known)}"
    )


_AS_PRINTED = {"path": None, "format": "rows", "limit": None, "ids": None, "ids_from": None, "id_field": "id"}
"""The other fields ``hrb ref get`` prints, at the values a reference file may hold them."""


def _reference_object(obj: dict[str, Any], p: Path) -> Reference:
    """A reference from a JSON file holding one ``{"items", "labels", "cluster", "split"}`` object.

    Decided (issue 25): the form ``hrb ref get`` prints is a reference file too, read by the
    wire's rule (:func:`hrbench.reference.check_keyed`): a JSON object's keys have no order,
    so beside ``items`` given as a mapping, ``labels``, ``cluster`` and ``split`` are keyed by
    item id (or one value for all), and a list is refused. The fields ``hrb ref get`` prints
    beside them are read when they hold what it prints (``"path": null``, ...); any other
    field is refused, with the closest name.
    """
    known = ("items", *PER_ITEM)
    for key, value in obj.items():
        if key in _AS_PRINTED and value != _AS_PRINTED[key]:
            raise ConfigError(
                f"reference.path {p.name}",
                key,
                f"a reference file holds {', '.join(known)}; give `{key}` in the spec, beside `path`",
            )
        if key not in known and key not in _AS_PRINTED:
            raise _unknown_field(f"reference.path {p.name}", key, known)
    check_keyed(obj["items"], {k: obj.get(k) for k in PER_ITEM}, where=f"reference.path {p.name}: ")
    return Reference(obj["items"], obj.get("labels"), obj.get("cluster"), obj.get("split") or "test")


def _one_json(text: str) -> Any:
    """The one JSON value ``text`` holds; ``None`` when it is not one (JSON lines, malformed)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _reference_rows(path: str, limit: int | None = None) -> Reference:
    """A reference from a JSON lines (or JSON list) file of ``{"id", "item", "label", "cluster", "split"}``.

    Each record holds its own id and label, so no order is needed; a JSON file holding one
    ``{"items", "labels", ...}`` object (as ``hrb ref get`` prints) is read by
    :func:`_reference_object`, under the rule of the wire.

    Decided (seed silent; a newcomer's ``"labl"`` was stored as no label, and its benchmark ended
    "done" with accuracy NA): a record with a field outside these is refused, naming the field,
    the line and the closest known name; two different records with one id are refused, naming
    the id and both lines (the second no longer replaces the first; a record repeated
    identically is read once, :mod:`hrbench._util.unique`). A label that is not a string, a
    number, a list of them or a mapping with ``answers`` is refused
    (:func:`hrbench.reference.check_label`).

    Raises:
        ConfigError: an unreadable file, a line that is not JSON, a record without ``item``,
            an unknown field, a duplicate id, or a bad label.
    """
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            "reference.path", path, f"cannot read the reference ({type(exc).__name__})"
        ) from None
    where = "record"
    if text.lstrip().startswith("{") and isinstance(obj := _one_json(text), dict) and "items" in obj:
        obj = json.loads(text, object_pairs_hook=refuse_repeated_keys("reference.path", path, "entries"))
        ref = _reference_object(obj, p)  # one {"items", "labels", ...} object, as `hrb ref get` prints
        return ref if limit is None else _select(ref, ref.ids[:limit])
    if text.lstrip().startswith("["):
        try:
            numbered = list(enumerate(json.loads(text), 1))
        except json.JSONDecodeError as exc:
            raise ConfigError(
                "reference.path", path, f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
            ) from None
    else:
        from hrbench.reading._reference import json_lines

        where = "line"
        numbered = json_lines(text, path, "reference.path", objects=False)
    if limit is not None:
        numbered = numbered[:limit]
    items: dict[str, Any] = {}
    seen = OnePerId("reference.path", path, "id", "records", where)
    labels, clusters, splits = {}, {}, {}
    for n, rec in numbered:
        if not isinstance(rec, dict) or "item" not in rec:
            raise ConfigError("reference.path", path, f'{where} {n}: expected {{"id", "item", "label", ...}}')
        for key in rec:
            if key not in _RECORD_FIELDS:
                raise _unknown_field(f"reference.path {p.name} {where} {n}", key, _RECORD_FIELDS)
        item_id = str(rec.get("id", n))
        if not seen.first(item_id, {k: v for k, v in rec.items() if k != "id"}, n):
            continue
        items[item_id] = rec["item"]
        labels[item_id] = rec.get("label")
        if rec.get("cluster") is not None:
            clusters[item_id] = str(rec["cluster"])
        splits[item_id] = rec.get("split", "test")
    return Reference(items, labels=labels, cluster=clusters or None, split=splits)


REFERENCE_FIELDS: tuple[str, ...] = ("items", "labels", "cluster", "split", "path", "format", "limit", "ids")
REFERENCE_FIELDS += ("ids_from", "id_field")
"""The fields of a reference spec, as :data:`ARM_FIELDS` for arms."""


def build_reference(spec: Any, store: Any = None) -> Reference:
    """The :class:`~hrbench.reference.Reference` a spec describes.

    Args:
        spec: the name or hash of a stored reference (a string, looked up in ``store``), or a
            spec with ``items`` (+ ``labels``, ``cluster``, ``split``), or ``path`` (+ ``format``:
            ``"rows"``, ``"squad"`` or ``"tatqa"``); either may keep only some items with
            ``ids`` and/or ``ids_from`` (a JSON lines file) + ``id_field``.
        store: the store holding named references.

    Raises:
        ConfigError: a malformed spec, or no stored reference by that name.

    Example:
        >>> build_reference({"items": {"q1": "France"}, "labels": ["Paris"]}).labels
        {'q1': 'Paris'}
    """
    if isinstance(spec, str):
        stored: Reference | None = None if store is None else store.reference_get(spec)
        if stored is None:
            raise ConfigError("reference", spec, "no stored reference has this name or hash")
        return stored
    _forms.check_fields("reference", spec, REFERENCE_FIELDS)  # a "lables" was no labels (newcomer finding)
    items, path = _get(spec, "items"), _get(spec, "path")
    if (items is None) == (path is None):
        raise ConfigError("reference", None, "a reference needs exactly one of `items` or `path`")
    if path is None:
        ref: Reference = Reference(
            items,
            labels=_get(spec, "labels"),
            cluster=_get(spec, "cluster"),
            split=_get(spec, "split", "test"),
        )
    keep = _wanted_ids(spec)
    limit = _forms.check_number("reference.limit", _get(spec, "limit"), low=1, whole=True)
    if path is not None:
        # the whole file: its ids are the ones an outputs arm may name (Reference.source_ids)
        ref = _reference_file(path, _get(spec, "format", "rows") or "rows", None)
    if keep is None and limit is None:
        return ref
    # with ids, `limit` keeps the first of the selected items, not of the file
    selected = ref if keep is None else _select(ref, keep)
    if limit is not None:
        selected = _select(selected, selected.ids[:limit])
    selected.source_ids = frozenset(ref.ids)
    return selected


def _reference_file(path: str, fmt: str, limit: int | None) -> Reference:
    if fmt in FILE_FORMATS:  # another tool's results (hrbench.reading._imported)
        return imported_spec_reference(path, fmt)
    if fmt not in ("rows", "squad", "tatqa"):
        raise ConfigError(
            "reference.format", fmt, f"expected `rows`, `squad`, `tatqa` or one of {FILE_FORMATS}"
        )
    if fmt == "rows":
        return _reference_rows(path, limit)
    from hrbench.reading import qa_reference, tatqa_reference

    try:
        return qa_reference(path, limit=limit) if fmt == "squad" else tatqa_reference(path, limit=limit)
    except OSError as exc:
        raise ConfigError(
            "reference.path", path, f"cannot read the reference ({type(exc).__name__})"
        ) from None


def _wanted_ids(spec: Any) -> list[str] | None:
    """The item ids a reference spec keeps (``ids`` and/or the ids in ``ids_from``), or ``None``."""
    ids, ids_from = _get(spec, "ids"), _get(spec, "ids_from")
    if ids is None and ids_from is None:
        return None
    wanted = [str(i) for i in ids] if ids is not None else None
    if ids_from is not None:
        field = _get(spec, "id_field", "id") or "id"
        from hrbench.reading._reference import read_rows

        try:
            rows = read_rows(Path(ids_from).expanduser(), "reference.ids_from")
        except OSError as exc:
            raise ConfigError(
                "reference.ids_from", ids_from, f"cannot read it ({type(exc).__name__})"
            ) from None
        found = [str(r[field]) for r in rows if field in r]
        if not found:
            raise ConfigError("reference.id_field", field, f"no row of {ids_from} has this field")
        wanted = found if wanted is None else [i for i in wanted if i in set(found)]
    return wanted


def _select(ref: Reference, ids: list[str]) -> Reference:
    """The items of ``ref`` whose ids are in ``ids``, in the reference's order.

    Raises:
        ConfigError: an id the reference does not hold, or none left.
    """
    have = set(ref.ids)
    missing = [i for i in ids if i not in have]
    if missing:
        raise ConfigError(
            "reference.ids", missing[0], f"not an item of the reference ({len(missing)} missing)"
        )
    want = set(ids)
    keep = [i for i in ref.ids if i in want]
    if not keep:
        raise ConfigError("reference.ids", ids, "no item left")
    items, labels, clusters, splits = ref.items, ref.labels, ref.clusters, ref.splits
    return Reference(
        {i: items[i] for i in keep},
        labels={i: labels[i] for i in keep},
        cluster={i: clusters[i] for i in keep},
        split={i: splits[i] for i in keep},
    )


SCORERS: dict[str, tuple[str, str, str]] = {
    "exact": (
        "hrbench.scoring.scorer",
        "exact_scorer",
        "exact match after folding case and white space",
    ),
    "exact_normalised": ("hrbench.scoring.scorer", "exact_scorer", "the same as exact"),
    "answer_contains": (
        "hrbench.reading",
        "answer_scorer",
        "the number-aware reading scorer: right when the reply contains an accepted answer",
    ),
    "answer": ("hrbench.reading", "answer_scorer", "the same as answer_contains"),
    "numeric": (
        "hrbench.scoring.numeric",
        "numeric_scorer",
        "the reply's number equals the label's, within a tolerance",
    ),
    "choice": ("hrbench.scoring.choice", "choice_scorer", "the one letter a reply picks equals the label's"),
    "pattern": (
        "hrbench.scoring.pattern",
        "pattern_scorer",
        'what a regex captures, scored by exact, settings {"pattern": ...}',
    ),
    "tatqa": ("hrbench.reading", "tatqa_scorer", "the official TAT-QA exact match"),
    "squad": ("hrbench.reading", "squad_scorer", "the official SQuAD v2.0 exact match"),
    "judge": (
        "hrbench.scoring.judge",
        "judge_scorer",
        'an LLM judge, in a benchmark only, settings {"client": {...}}',
    ),
}
"""Every scorer a name builds (:func:`build_scorer`): name -> (module, factory, what it does).

The one registry of scorer names: ``hrb score --help`` lists it (through the generated
``hrbench_client/_scorers.py``, since the client imports nothing from the core:
:func:`client_scorers_module`), and an unknown name's error names it.
"""


def client_scorers_module() -> str:
    """The text of ``hrbench_client/_scorers.py``: :data:`SCORERS`' names and help, for ``hrb``.

    ``make schema`` writes it; a test fails when it differs from this (it is generated, never
    hand-edited).
    """
    lines = [
        '"""The scorer names ``hrb score --help`` lists: generated from ``hrbench.specs.SCORERS``.',
        "",
        "Never hand-edited: ``make schema`` writes it, and a test fails when it is stale.",
        '"""',
        "",
        "# fmt: off",
        "SCORERS: dict[str, str] = {",
        *(f"    {name!r}: {entry[2]!r}," for name, entry in SCORERS.items()),
        "}",
        "# fmt: on",
        '"""Scorer name -> what it does, in the registry\'s order."""',
        "",
    ]
    return "\n".join(lines)


def build_scorer(name: str = "exact", settings: Mapping[str, Any] | None = None, store: Any = None) -> Scorer:
    """A scorer by name.

    Args:
        name: a name of :data:`SCORERS`: ``exact`` (:func:`~hrbench.scoring.scorer.exact_scorer`,
            folding by default), ``exact_normalised``, ``answer_contains`` (:func:`hrbench.reading.answer_scorer`),
            ``numeric`` (:func:`hrbench.scoring.numeric.numeric_scorer`), ``choice``
            (:func:`hrbench.scoring.choice.choice_scorer`), ``pattern``
            (:func:`hrbench.scoring.pattern.pattern_scorer`, with ``{"pattern": ...}`` in ``settings``),
            ``tatqa`` (the official TAT-QA exact match, :func:`hrbench.reading.tatqa_scorer`),
            ``squad`` (the official SQuAD v2.0 exact match, :func:`hrbench.reading.squad_scorer`),
            ``judge`` (:func:`hrbench.scoring.judge.judge_scorer`; ``settings["client"]`` is the judge's
            client spec, as a benchmark's ``[client]``; issue 18), or ``package.module:attribute``:
            a Scorer, a factory (called with ``settings``), or a function wrapped with
            :func:`~hrbench.scoring.scorer.scorer`.
        settings: keyword arguments of the factory.
        store: the :class:`~hrbench.store.Store` a judge's ``replay`` client reads its
            recording from (the daemon gives its own).

    A scorer function is called ``fn(item, output, label)``, three positional arguments in
    that order (seed 000): the item's payload as the reference holds it, what the arm returned
    (a string, or an :class:`~hrbench.results.records.Answer` / dict with ``text``), and the item's
    label (``None`` for an item with no label). It returns a
    :class:`~hrbench.results.records.Score`, a dict of ``correct``/``outcome``/``failure_kind``, a
    ``(correct, outcome, failure_kind)`` tuple, or a bool. A function whose parameter names say
    another order (``def s(output, label, item=None)``) or that cannot take three arguments is
    refused when it is loaded (:func:`~hrbench.scoring.scorer.check_signature`); one that returns
    anything else (``None``: a missing ``return``) or raises makes that run an ``error`` row
    naming the scorer (:class:`~hrbench.scoring.scorer.Scorer`), never a silent NA or ``wrong``.

    Raises:
        ConfigError: an unknown name or settings the factory rejects.

    Example:
        >>> build_scorer("exact")(None, " paris ", "Paris").correct
        True
    """
    kw = dict(settings or {})
    factory: Callable[..., Any]
    if name in SCORERS:
        if name == "pattern" and "pattern" not in kw:
            raise ConfigError(
                "scorer_settings.pattern",
                None,
                'the pattern scorer needs a regex: {"pattern": "ANSWER: (.+)"}',
            )
        if name == "judge":
            if not isinstance(kw.get("client"), Mapping):
                raise ConfigError(
                    "scorer_settings.client",
                    kw.get("client"),
                    "the judge scorer needs its client's spec (a table)",
                )
            with field_under("scorer_settings.client", head="client"):
                kw["pricing"] = build_pricing(kw["client"])  # the judge's own price and prices
                kw["client"] = build_client(kw["client"], store, role="judge")
        module, attr, _ = SCORERS[name]
        factory = getattr(importlib.import_module(module), attr)
    elif ":" in name:
        obj = load_object(name, "scorer")
        if isinstance(obj, Scorer) or (hasattr(obj, "name") and callable(obj) and not kw):
            return obj  # type: ignore[no-any-return]
        if kw:
            factory = obj
        else:
            return scorer(obj, name=name.rpartition(":")[2])
    else:
        raise ConfigError(
            "scorer", name, f"unknown scorer; expected {', '.join(SCORERS)} or package.module:function"
        )
    try:
        out = factory(**kw)
    except TypeError as exc:
        raise ConfigError("scorer_settings", kw, f"rejected by scorer {name!r} ({exc})") from None
    if not callable(out):
        raise ConfigError("scorer", name, "the factory did not return a scorer")
    return out  # type: ignore[no-any-return]


_METRICS = {"tatqa": "tatqa_scores", "squad": "squad_scores", "answer_contains": "answer_contains_scores"}


def build_metrics(names: Sequence[str]) -> list[Callable[[Any, Any, Any], Any]]:
    """Benchmark metrics by name: graded scores reported beside the scorer's accuracy.

    Args:
        names: ``tatqa`` (the official TAT-QA EM and F1, :func:`hrbench.reading.tatqa_scores`:
            columns ``tatqa_em``, ``tatqa_f1``), ``squad`` (SQuAD v2.0 EM and F1,
            :func:`hrbench.reading.squad_scores`: ``squad_em``, ``squad_f1``), ``answer_contains``
            (seed 001's scorer as a side column, :func:`hrbench.reading.answer_contains_scores`:
            ``answer_contains``), or
            ``package.module:function``: ``fn(item, output, label)`` returning a number or a
            mapping of names to numbers.

    Returns:
        The functions, for ``benchmark(metrics=...)``.

    Raises:
        ConfigError: an unknown name, or an import path that is not a function.

    Example:
        >>> [m.__name__ for m in build_metrics(["tatqa", "squad"])]
        ['tatqa_scores', 'squad_scores']
    """
    out: list[Callable[[Any, Any, Any], Any]] = []
    for i, name in enumerate(names):
        if name in _METRICS:
            from hrbench import reading

            out.append(getattr(reading, _METRICS[name]))
        elif isinstance(name, str) and ":" in name:
            fn = load_object(name, f"metrics[{i}]")
            if not callable(fn):
                raise ConfigError(f"metrics[{i}]", name, "expected a function fn(item, output, label)")
            out.append(fn)
        else:
            raise ConfigError(
                f"metrics[{i}]",
                name,
                f"unknown metric; expected one of {sorted(_METRICS)} or package.module:function",
            )
    return out


def build_governor(spec: Any) -> Governor | None:
    """The :class:`~hrbench.runner.governor.Governor` a spec describes, or ``None`` for no spec.

    A limit left ``None`` is no cap, unless ``defaults`` is true: it is then the default's
    (:func:`~hrbench.runner.governor.default_governor`), and the governor keeps the defaults' rule
    while ``max_usd`` is not given (decided, newcomer finding: ``hrb bench FILE --max-calls N``
    on a spec with no ``[governor]`` replaces one limit, as ``--resume`` does).

    Example:
        >>> build_governor({"max_calls": 10}).max_usd is None
        True
        >>> build_governor({"max_calls": 10, "defaults": True}).max_usd
        5.0
    """
    if spec is None:
        return None
    _forms.check_fields("governor", spec, ("max_calls", "max_usd", "max_tokens", "defaults"))
    given = {k: v for k in ("max_calls", "max_usd", "max_tokens") if (v := _get(spec, k)) is not None}
    if not _get(spec, "defaults", False):
        return Governor(**given)
    gov = Governor(**{**default_governor().limits, **given})
    gov.from_defaults = "max_usd" not in given
    return gov
