"""Arms built from specs: ``prompt``, ``reading``, ``outputs`` and ``import`` (SPEC §4).

A prompt arm may give ``tools`` (name -> ``package.module:function``, run by
:func:`hrbench.tools.tool_loop_async` for at most ``max_steps`` turns); prompt, reading and import
arms take the reasoning settings ``reasoning_effort`` and ``thinking_budget``
(:mod:`hrbench.models._reasoning`), and ``sweep`` makes one arm per value (:func:`build_arms`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from hrbench._util import forms as _forms
from hrbench.arm import Arm
from hrbench.errors import ConfigError
from hrbench.interop import FILE_FORMATS, imported_spec_arm
from hrbench.specs._loader import _get, _kind, load_object

__all__ = ["ARM_FIELDS", "build_arm", "build_arms", "check_prompt", "format_prompt"]


class _Fields(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        raise KeyError(key)


def _fill(template: str, item: Any) -> str:
    fields = _Fields(item=item)
    if type(item) is not str and isinstance(item, Mapping):  # a str item is common: no ABC check
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


def _tools(spec: Any) -> tuple[dict[str, str], dict[str, Any], int]:
    """A prompt arm's tools (name -> import path, and the functions loaded) and its ``max_steps``."""
    paths = _get(spec, "tools") or {}
    if not isinstance(paths, Mapping):
        raise ConfigError(
            "tools", paths, 'expected a table of tool names to import paths, {lookup = "pkg.mod:fn"}'
        )
    fns: dict[str, Any] = {}
    for tool, path in paths.items():
        fn = load_object(path, f"tools.{tool}")
        if not callable(fn):
            raise ConfigError(f"tools.{tool}", path, "expected a Python function")
        fns[str(tool)] = fn
    steps = _get(spec, "max_steps", 8)
    steps = 8 if steps is None else steps
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ConfigError("max_steps", steps, "expected a whole number of turns >= 1")
    if fns:
        from hrbench.tools import tool_definitions

        tool_definitions(fns)  # every name both providers accept, every signature readable
    return dict(paths), fns, steps


def _prompt_arm(spec: Any) -> Arm:
    name, template = _get(spec, "name"), _get(spec, "template")
    if not isinstance(template, str):
        raise ConfigError("template", template, "a prompt arm needs a template string")
    system = _get(spec, "system")
    model = _get(spec, "model")
    if model is not None:  # "" is refused, never dropped silently for the client's model
        _forms.check_name("arm.model", model, optional=True)
    params = dict(_get(spec, "params") or {})
    for reserved in ("draw_index", "messages", "tools"):
        if reserved in params:
            raise ConfigError(f"params.{reserved}", params[reserved], "is set by the runner, not by the spec")
    paths, fns, max_steps = _tools(spec)
    sent = {**params, "model": model} if model else params

    async def prompt_arm(item: Any, ctx: Any) -> Any:
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": format_prompt(template, item)})
        if not fns:
            return await ctx.acall(messages, **sent)
        from hrbench.tools import tool_loop_async

        loop = await tool_loop_async(ctx, messages, fns, max_steps, **sent)
        if loop.stopped is not None:  # no answer within max_steps: nothing to score (parse_failure)
            return {"text": None, "notes": [loop.stopped]}
        return loop.result

    settings = {"kind": "prompt", "template": template, "system": system, "model": model, "params": params}
    if paths:
        settings.update(tools=paths, max_steps=max_steps)
    settings.update(_reasoning(spec))
    arm = Arm(name, prompt_arm, version=str(_get(spec, "version", "1") or "1"), settings=settings)
    arm.output_is_reply = True  # a scorer of one's own gets the reply's text (docs/rules/scoring.md)
    arm.check = lambda items, client, known, runs=1: check_prompt(name, template, items, client)
    return arm


def _reasoning(spec: Any) -> dict[str, Any]:
    """A spec's reasoning settings (``reasoning_effort``, ``thinking_budget``), checked."""
    from hrbench.models import REASONING_SETTINGS, check_reasoning

    return check_reasoning({k: _get(spec, k) for k in REASONING_SETTINGS})


def _with_reasoning(arm: Arm, spec: Any) -> Arm:
    """An import or reading arm with the spec's reasoning settings added to its own."""
    extra = _reasoning(spec)
    if not extra:
        return arm
    made = Arm(
        arm.name,
        arm.fn,
        version=arm.version,
        derived_from=arm.derived_from,
        settings={**arm.settings, **extra},
    )
    made.check = arm.check
    return made


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


def _positional(template: str) -> bool:
    """Whether a template holds a positional field (``{}``, ``{:>5}``), which no item fills."""
    import string

    return any(name == "" for _, name, _, _ in string.Formatter().parse(template))


def _same_prompt(items: Mapping[str, Any]) -> str:
    """Why a template naming no field is refused, and the placeholders the items allow."""
    first = next(iter(items.values()), None)
    fields = [str(k) for k in first][:8] if isinstance(first, Mapping) else []
    allowed = "{item} (the whole item)" + (
        f" or a field of the item: {', '.join('{' + f + '}' for f in fields)}" if fields else ""
    )
    return (
        f"names no field of the item, so every item would get the same prompt; "
        f"a prompt arm's item reaches the model only through its template: write {allowed}"
    )


def check_prompt(arm: str, template: str, items: Mapping[str, Any], client: Any) -> None:
    """Refuse a prompt arm that would fail on every run (or on some items), before the first.

    Rule (a template naming a field the items lack, a malformed template and a prompt arm
    with no ``[client]`` never give one error row per run): a template that names no field
    (``"Capital of France?"``) is refused, as every item would get the same prompt (the
    template is the only way a prompt arm's item reaches the model: ``system`` is sent as
    written); the template is filled with the first item (which finds a malformed template and a field it lacks), then
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
        >>> try:
        ...     check_prompt("ask", "Capital of France?", {"q1": {"country": "France"}}, client=object())
        ... except ValueError as exc:
        ...     print(str(exc))
        template: names no field of the item, so every item would get the same prompt; a prompt arm's item reaches the model only through its template: write {item} (the whole item) or a field of the item: {country} (got 'Capital of France?')
    """
    where = "template"
    if client is None:
        raise ConfigError(
            "client",
            None,
            f"prompt arm {arm!r} calls a model: give the benchmark a client ([client])",
        )
    try:
        roots = _root_fields(template)
    except ValueError as exc:
        raise ConfigError(where, template, f"malformed template ({exc})") from None
    if not roots and not _positional(template):  # a positional {} is refused as one below
        raise ConfigError(where, template, _same_prompt(items))
    if not items:
        return
    first_id, first = next(iter(items.items()))
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
    from hrbench.reading import NO_OUTPUT, missing_output, with_check

    name, outputs, path = _get(spec, "name"), _get(spec, "outputs"), _get(spec, "path")
    if (outputs is None) == (path is None):
        raise ConfigError("outputs", outputs, "an outputs arm needs exactly one of `outputs` or `path`")
    fmt = _get(spec, "format", "outputs") or "outputs"
    _forms.check_one_of("arm.format", fmt, ("outputs", "tatqa", *FILE_FORMATS))
    id_field, prediction_field = _get(spec, "id_field"), _get(spec, "prediction_field")
    if fmt in FILE_FORMATS:  # another tool's results (hrbench.interop)
        return imported_spec_arm(spec, fmt, _get)
    if _get(spec, "id_var") is not None:
        raise ConfigError(
            "arm.id_var",
            _get(spec, "id_var"),
            'names a promptfoo test variable: give format = "promptfoo" (a file of predictions names its id with id_field)',
        )
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
    from hrbench.reading import read_outputs

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
    _forms.check_one_of("recipe", recipe, sorted(known), "unknown reading recipe")
    factory = getattr(reading, recipe)
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


_REASONING_FIELDS = ("reasoning_effort", "thinking_budget", "sweep")

ARM_FIELDS: dict[str, tuple[str, ...]] = {
    "prompt": ("kind", "name", "template", "system", "model", "params", "version", "tools", "max_steps")
    + _REASONING_FIELDS,
    "reading": ("kind", "recipe", "name", "model", "settings", *_REASONING_FIELDS),
    "outputs": ("kind", "name", "outputs", "path", "id_field", "prediction_field", "scale_field")
    + ("format", "missing", "source_arm", "id_var"),
    "import": ("kind", "path", "name", "settings", *_REASONING_FIELDS),
}
"""The fields of each arm spec by kind, for a spec given as a mapping (the library, a judge's
settings); on the wire the Structs of ``hrbench_client.protocol`` hold the same fields (a test
compares them) and their decoder refuses any other."""

_ARMS: dict[str, Callable[[Any], Arm]] = {
    "prompt": _prompt_arm,
    "outputs": _outputs_arm,
    "import": lambda spec: _with_reasoning(_import_arm(spec), spec),
    "reading": lambda spec: _with_reasoning(_reading_arm(spec), spec),
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
    _forms.check_one_of("arm.kind", kind, sorted(_ARMS), "unknown arm kind")
    builder = _ARMS[kind]
    _forms.check_fields("arm", spec, ARM_FIELDS[kind])
    if _get(spec, "sweep") is not None:
        raise ConfigError(
            "sweep", _get(spec, "sweep"), "a sweep makes several arms: build them with build_arms"
        )
    return builder(spec)


def build_arms(spec: Any) -> list[Arm]:
    """The arms a spec describes: one, or one per combination of its ``sweep``'s values.

    ``sweep = {reasoning_effort = ["low", "high"]}`` (and/or ``thinking_budget = [...]``) makes
    one arm per value, named ``"{name}-{value}"`` (:func:`hrbench.arm.sweep`), each sending its
    setting with every request; the spec's own ``reasoning_effort``/``thinking_budget`` may not
    be swept too.

    Raises:
        ConfigError: as :func:`build_arm`; a sweep that is not a table of lists of reasoning
            settings, or one on an ``outputs`` arm (it calls no model), naming ``sweep.FIELD``.

    Example:
        >>> [a.name for a in build_arms({"kind": "prompt", "name": "ask", "template": "{item}?",
        ...                              "sweep": {"reasoning_effort": ["low", "high"]}})]
        ['ask-low', 'ask-high']
    """
    from hrbench.arm import sweep

    axes = _get(spec, "sweep")
    if axes is None:
        return [build_arm(spec)]
    kind = _kind(spec, "arm")
    if kind == "outputs":
        raise ConfigError("sweep", axes, "an outputs arm calls no model: there is nothing to sweep")
    if hasattr(axes, "__struct_fields__"):  # the wire's SweepSpec
        axes = {k: v for k in axes.__struct_fields__ if (v := getattr(axes, k)) is not None}
    if not isinstance(axes, Mapping) or not axes:
        raise ConfigError(
            "sweep", axes, 'expected a table of values, sweep = {reasoning_effort = ["low", "high"]}'
        )
    for key in axes:
        if _get(spec, key) is not None:
            raise ConfigError(
                f"sweep.{key}", axes[key], f"the arm sets {key} too: sweep it or set it, not both"
            )
    base = {k: _get(spec, k) for k in ARM_FIELDS.get(kind, ()) if k != "sweep" and _get(spec, k) is not None}
    base["kind"] = kind
    return sweep(build_arm(base), **axes)


# -- clients --------------------------------------------------------------------------------
