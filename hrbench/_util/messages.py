"""Helpers that word hrbench's error messages: a close name, a field's full place, a failed call's cause.

Standard library and :mod:`hrbench.errors` only, so every floor above may use them.
"""

from __future__ import annotations

import contextlib
import difflib
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from hrbench.errors import ConfigError, ModelError

__all__ = [
    "NO_OUTPUT",
    "REFUSAL_LIMITS",
    "did_you_mean",
    "not_an_arm",
    "failure_cause",
    "field_under",
    "model_error",
    "refusal_limits",
]


def did_you_mean(name: str, known: Sequence[str], n: int = 1, shown: Mapping[str, str] | None = None) -> str:
    """A hint naming the closest of ``known`` to ``name`` (``""`` when none is close), for messages.

    A known name that differs from ``name`` only by case (``ID`` for ``id``) comes first: to
    :func:`difflib.get_close_matches` ``"ID"`` and ``"id"`` share no character, yet a CSV header
    written in another case is the likeliest slip.

    Args:
        name: what was given.
        known: the names it could have been.
        n: at most this many are named, the closest first.
        shown: how a known name is said, when not as itself (an id prefix said as its whole id).

    Example:
        >>> did_you_mean("labl", ["id", "item", "label"])
        "did you mean 'label'? "
        >>> did_you_mean("ID", ["id", "item", "label"])
        "did you mean 'id'? "
        >>> did_you_mean("zzz", ["id"])
        ''
        >>> did_you_mean("3f2b", ["3f2a", "9c10"], shown={"3f2a": "3f2a77c0d1e2f3a4"})
        "did you mean '3f2a77c0d1e2f3a4'? "
    """
    folded = name.casefold()
    same_but_case = [k for k in known if k.casefold() == folded and k != name]
    close = list(dict.fromkeys([*same_but_case, *difflib.get_close_matches(name, list(known), n=n)]))[:n]
    said = list(dict.fromkeys((shown or {}).get(c, c) for c in close))
    return f"did you mean {', '.join(map(repr, said))}? " if said else ""


def not_an_arm(field: str, name: Any, arms: Sequence[str]) -> ConfigError:
    """The error for ``name`` given as ``field`` that is none of a benchmark's ``arms``: the closest named, then all.

    Example:
        >>> str(not_an_arm("arm_b", "chaty", ["terse", "chatty"]))
        "arm_b: is not an arm of this benchmark (did you mean 'chatty'? arms: terse, chatty) (got 'chaty')"
    """
    hint = did_you_mean(str(name), arms)
    return ConfigError(field, name, f"is not an arm of this benchmark ({hint}arms: {', '.join(arms)})")


_HEADS = ("arm.", "reference.", "client.")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+")


@contextlib.contextmanager
def field_under(prefix: str, head: str | None = None) -> Iterator[None]:
    """Name every spec error raised inside by its full dotted path under ``prefix``.

    A builder names the field it knows (``path``, ``arm.path``, ``reference.path``); the
    caller that knows where the spec sits (``arms[0]``, ``reference``) puts it in front,
    replacing a generic head (``arm.``, ``reference.``, ``client.``), so that an error says
    ``arms[0].path: cannot import module 'm'`` rather than ``path: ...``. A field already under
    ``prefix`` is kept, and so is an environment variable's name (``HRBENCH_IMPORT_MAX_BYTES``),
    which is no place in the spec.

    Args:
        prefix: the spec's place, e.g. ``"arms[1]"`` or ``"reference"``.
        head: the head the builder inside names its fields by, replaced by ``prefix``
            (``field_under("client.fallback", head="client")``: a replay's fallback client,
            whose builder says ``client.base_url``); by default the generic heads above.

    Raises:
        ConfigError: the error raised inside, its ``field`` and message rewritten.

    Example:
        >>> try:
        ...     with field_under("arms[0]"):
        ...         raise ConfigError("arm.path", "m:f", "cannot import module 'm'")
        ... except ConfigError as exc:
        ...     print(exc)
        arms[0].path: cannot import module 'm' (got 'm:f')
    """
    try:
        yield
    except ConfigError as exc:
        old = exc.field
        if (
            old == prefix
            or old.startswith((f"{prefix}.", f"{prefix}[", f"{prefix} "))
            or _ENV_NAME.fullmatch(old)
        ):
            raise
        rest = old
        if head is not None and (old == head or old.startswith(f"{head}.")):
            rest = old[len(head) + 1 :]
        for generic in _HEADS if head is None else ():
            if rest.startswith(generic) and (generic != "client." or prefix == "client"):
                rest = rest[len(generic) :]
                break
        new = f"{prefix}.{rest}" if rest else prefix
        if exc.message.startswith(old):
            exc.message = new + exc.message[len(old) :]
            exc.args = (exc.message,)
        exc.field = new
        exc.context["field"] = new
        raise


REFUSAL_LIMITS = (
    "call_cap_reached",
    "cost_cap_reached",
    "token_cap_reached",
    "limit_refused",
    "reservation_exceeded",
    "unpriced_model",
    "run_call_cap_reached",
    "run_cost_cap_reached",
    "run_token_cap_reached",
)
"""Every ``limit`` a :class:`BudgetRefused` names (``run_*``: a run's own cap, ``max_*_per_run``)."""


def refusal_limits(error: str | None) -> list[str]:
    """The :data:`REFUSAL_LIMITS` a refusal's message names (a trace step's ``error``).

    What stopped a run is kept in its trace as the refusal's message; the stop note of a
    stored benchmark reads the caps that stopped it from there.

    Example:
        >>> refusal_limits("the governor refused a request: token_cap_reached (Governor(...))")
        ['token_cap_reached']
        >>> refusal_limits("the run's own cap refused a request: run_call_cap_reached (...)")
        ['run_call_cap_reached']
        >>> refusal_limits(None)
        []
    """
    if not error:
        return []
    return [n for n in REFUSAL_LIMITS if re.search(rf"(?<!\w){n}(?!\w)", error)]


NO_OUTPUT = re.compile(r"LookupError: (no output for item (?:'[^']*'|\"[^\"]*\"))")
"""An outputs arm's error for an item its outputs leave out (``missing = "error"``), as a trace
keeps it; group 1 is the run's cause (:func:`failure_cause`)."""


def failure_cause(error: str, status: int | None = None) -> str:
    """A short label of a failed call's message, to group failed runs by cause.

    Example:
        >>> failure_cause("openai: HTTP 401: invalid API key (key from OPENAI_API_KEY)", 401)
        'openai: HTTP 401'
        >>> failure_cause("openai: cannot connect to http://127.0.0.1:9/v1 (ConnectError: refused)")
        'openai: cannot connect to http://127.0.0.1:9/v1'
        >>> failure_cause("openai: quota exhausted (HTTP 429): insufficient_quota: ...", 429)
        'openai: quota exhausted'
        >>> failure_cause("openai: reply cut at the output limit (finish_reason 'length'): raise max_tokens")
        'openai: reply cut at the output limit'
        >>> failure_cause("anthropic: batch line expired (no result)")
        'anthropic: batch line expired'
        >>> failure_cause("LookupError: no output for item 'q3': the outputs of arm 'a' leave it out")
        "no output for item 'q3'"
    """
    missing = NO_OUTPUT.match(error)
    if missing is not None:  # the cause names the item, not "LookupError"
        return missing.group(1)
    m = re.match(
        r"(\w+: (?:HTTP \d+|quota exhausted|cannot connect to \S+|no reply within [\d.]+ s|malformed reply"
        r"|transport error|reply cut at the output limit|reply has no text"
        r"|batch line (?:expired|cancelled|failed)))",
        error,
    )
    if m:
        return m.group(1)
    if status is not None:
        return f"HTTP {status}"
    return error.split(":", 1)[0][:60] if ":" in error else error[:60]


def model_error(result: Any) -> ModelError:
    """The :class:`~hrbench.errors.ModelError` of a failed call's result, its cause labelled.

    Example:
        >>> from hrbench.records import Result
        >>> err = model_error(Result(ok=False, error="openai: HTTP 401: invalid API key", status=401))
        >>> err.status, err.cause
        (401, 'openai: HTTP 401')
    """
    error = getattr(result, "error", None) or "unknown error"
    status = getattr(result, "status", None)
    key_env = getattr(result, "key_env", None)
    err = ModelError(f"the model call failed, so it has no text: {error}", status=status, key_env=key_env)
    err.status, err.key_env, err.cause = status, key_env, failure_cause(error, status)
    return err
