"""What the client adds to a spec before sending it: lists keyed by item id, the caller's variables."""

from __future__ import annotations

import os
from typing import Any

import msgspec

from hrbench_client import protocol as p
from hrbench_client.errors import ReferenceValueError

__all__ = ["LIMIT_VARIABLES", "keyed_reference", "with_caller_env"]

_PER_ITEM = ("labels", "cluster", "split")


def keyed_reference(spec: Any) -> Any:
    """``spec`` with the lists beside a mapping of items keyed by item id, as the wire asks.

    Rule: the daemon never pairs a list with a mapping by position (a
    JSON object's keys arrive in the sender's map order, a Lua table's hash order), and refuses
    it (:func:`hrbench.reference.check_keyed`). A Python caller does define the order: a dict
    keeps its insertion order, and ``hrb`` reads a TOML file into dicts in the file's order. So
    the client turns ``labels``, ``cluster`` and ``split`` given as lists beside ``items`` given
    as a mapping into mappings by item id before sending, pairing them by position as
    ``hrbench.Reference`` does; a spec that keys them already, gives one value for all, or gives
    ``items`` as a list is sent as it is. The caller's spec is not changed.

    Args:
        spec: a benchmark spec (:class:`~hrbench_client.protocol.BenchmarkParams` or a dict) or a
            reference spec (:class:`~hrbench_client.protocol.ReferenceSpec` or a dict).

    Raises:
        ReferenceValueError: a list whose length is not the number of items, named
            ``reference.labels`` (``.cluster``, ``.split``).

    Example:
        >>> keyed_reference({"items": {"q1": "France", "q2": "Peru"}, "labels": ["Paris", "Lima"]})["labels"]
        {'q1': 'Paris', 'q2': 'Lima'}
        >>> keyed_reference({"reference": {"items": ["France"], "labels": ["Paris"]}})["reference"]["labels"]
        ['Paris']
    """
    if isinstance(spec, p.BenchmarkParams) or (isinstance(spec, dict) and "reference" in spec):
        ref = spec.reference if isinstance(spec, msgspec.Struct) else spec["reference"]
        keyed = _keyed(ref)
        if keyed is ref:
            return spec
        return (
            msgspec.structs.replace(spec, reference=keyed)
            if isinstance(spec, msgspec.Struct)
            else {**spec, "reference": keyed}
        )
    return _keyed(spec)


def _keyed(ref: Any) -> Any:
    """One reference spec with its lists keyed by id (see :func:`keyed_reference`)."""
    struct = isinstance(ref, p.ReferenceSpec)
    if not (struct or isinstance(ref, dict)):
        return ref  # a stored name or hash, or something the daemon will refuse by name
    get = (lambda k: getattr(ref, k)) if struct else ref.get
    items = get("items")
    if not isinstance(items, dict):
        return ref
    ids = [str(k) for k in items]
    changed: dict[str, Any] = {}
    for name in _PER_ITEM:
        value = get(name)
        if not isinstance(value, (list, tuple)):
            continue
        if len(value) != len(ids):
            raise ReferenceValueError(
                f"reference.{name}: {len(value)} value{'s' * (len(value) != 1)} for {len(ids)} "
                f"item{'s' * (len(ids) != 1)}; a list gives one value per item, in the order of "
                "`items` (or key it by item id: {item id: value})",
                data={"name": "ReferenceValueError", "field": f"reference.{name}"},
            )
        changed[name] = dict(zip(ids, value, strict=True))
    if not changed:
        return ref
    return msgspec.structs.replace(ref, **changed) if struct else {**ref, **changed}


_KEY_DEFAULTS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def _key_names(spec: Any) -> set[str]:
    """The environment variables holding API keys that a spec's model clients name."""
    names: set[str] = set()
    if isinstance(spec, dict):
        if spec.get("kind") in _KEY_DEFAULTS:
            name = spec.get("api_key_env", _KEY_DEFAULTS[spec["kind"]])
            if isinstance(name, str):
                names.add(name)
        for key, value in spec.items():
            if key != "env":
                names |= _key_names(value)
    elif isinstance(spec, list):
        for value in spec:
            names |= _key_names(value)
    return names


LIMIT_VARIABLES = ("HRBENCH_MAX_CALLS", "HRBENCH_MAX_USD", "HRBENCH_MAX_TOKENS")
"""The default-limit variables a client sends from its own environment (``hrbench.runner._limits``)."""


def with_caller_env(spec: Any) -> Any:
    """``spec`` plus ``env``: this process's values of the variables the request depends on (SPEC §4).

    Those are the key variables the spec's clients name, and the default limits
    :data:`LIMIT_VARIABLES` (``HRBENCH_MAX_CALLS``, ``HRBENCH_MAX_USD``,
    ``HRBENCH_MAX_TOKENS``). The daemon uses them for this request only, before its own
    environment, and never stores or logs them; so ``OPENAI_API_KEY=... hrb bench`` works
    against a daemon started without it, and ``HRBENCH_MAX_CALLS=50 hrb bench`` gives the
    limits the spec and the flags do not set (the shell's, not only the daemon's own
    environment at start). Variables not set here
    are not sent; an ``env`` already in the spec is kept as given.

    Example:
        >>> os.environ["HRB_DOC_KEY"] = "k"
        >>> with_caller_env({"client": {"kind": "openai", "model": "m", "api_key_env": "HRB_DOC_KEY"}})["env"]
        {'HRB_DOC_KEY': 'k'}
        >>> del os.environ["HRB_DOC_KEY"]
    """
    struct = isinstance(spec, msgspec.Struct)
    plain = msgspec.to_builtins(spec) if struct else spec
    if not isinstance(plain, dict) or plain.get("env"):
        return spec
    env = {n: os.environ[n] for n in sorted(_key_names(plain) | set(LIMIT_VARIABLES)) if os.environ.get(n)}
    if not env:
        return spec
    return msgspec.structs.replace(spec, env=env) if struct else {**plain, "env": env}
