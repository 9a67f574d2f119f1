"""The ``benchmark`` method's spec, from the wire to the library's objects.

:func:`check_resume_only` refuses fields beside ``resume``; :func:`build` makes the arms,
reference (:func:`wire_reference`), client, scorer, metrics, pricing, governor, stop rule and
batch mode of a spec, and refuses what the library refuses before a benchmark is stored
(:func:`~hrbench.runner.refuse_before_start`); :func:`limits_of` are the caps kept with it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import msgspec

from hrbench import specs
from hrbench.errors import ConfigError
from hrbench.reference import Reference, check_keyed
from hrbench.runner import Governor, default_governor, refuse_before_start
from hrbench.runner.batch import Batch
from hrbench.specs import build_stop
from hrbench_client import protocol as p

__all__ = ["add_import_path", "build", "check_resume_only", "limits_of", "wire_reference"]


def check_resume_only(args: p.BenchmarkParams) -> None:
    """Refuse spec fields beside ``resume`` (the stored spec runs), naming the first one given.

    Without ``resume``, refuse ``retry_errors`` (only a resume runs failed runs again).
    """
    if args.resume is None:
        if args.retry_errors:
            raise ConfigError(
                "retry_errors", True, "runs that ended in errors are run again by a resume: give `resume` too"
            )
        return
    bare = p.BenchmarkParams(
        resume=args.resume,
        stream=args.stream,
        concurrency=args.concurrency,
        env=args.env,
        governor=args.governor,
        detach=args.detach,
        retry_errors=args.retry_errors,
    )
    if args != bare:
        given = [f for f in args.__struct_fields__ if getattr(args, f) != getattr(bare, f)]
        raise ConfigError(
            given[0],
            getattr(args, given[0]),
            "`resume` runs the stored spec; leave the other fields out "
            "(except stream, concurrency, env, governor, detach, retry_errors)",
        )


def add_import_path(paths: list[str]) -> None:
    """Put absolute directories on the daemon's import path (for ``import`` arms, mock functions).

    They go at the end: a file there named like a module the daemon imports (a dependency
    imported lazily) never shadows it. Code over TCP is refused (SPEC §4).

    Raises:
        ConfigError: a relative directory.
        CodeRefused: on a TCP connection of a daemon not started with ``--allow-code-over-tcp``.
    """
    for path in paths:
        specs.check_code_allowed("python_path", path)
        if not os.path.isabs(path):
            raise ConfigError("python_path", path, "expected an absolute directory")
        if path not in sys.path:
            sys.path.append(path)


def wire_reference(spec: str | p.ReferenceSpec, store: Any) -> Reference:
    """The reference a request sends (inline, or a stored name or hash), read by the wire's rule.

    Rule: the wire never pairs a list with a mapping by position. A JSON
    object's keys reach the daemon in whatever order the sender's map had (a Lua table's hash
    order), so an inline spec whose ``items`` is a mapping must key ``labels``, ``cluster`` and
    ``split`` by item id (:func:`hrbench.reference.check_keyed`); lists beside a list of items
    still pair by position. ``hrbench_client`` and ``hrb`` send the keyed form for specs whose
    order they know (a Python dict, a TOML file). Used by ``benchmark`` and ``reference/put``.

    Raises:
        ReferenceValueError: ``reference.labels`` (``.cluster``, ``.split``): a list beside a
            mapping of items, with the keyed form.
        ConfigError: a malformed spec, or no stored reference by that name.
    """
    with specs.field_under("reference"):
        if isinstance(spec, p.ReferenceSpec):
            check_keyed(spec.items, {"labels": spec.labels, "cluster": spec.cluster, "split": spec.split})
        return specs.build_reference(spec, store)


def limits_of(governor: Any) -> dict[str, Any]:
    """The caps in force, kept with the benchmark so that ``hrb ls`` shows them.

    The defaults' too (``hrb ls`` shows ``max_calls`` 400, not null, when the default applies);
    a resume with new limits replaces them.
    """
    return {**governor.limits, "default": governor.from_defaults}


def build(params: p.BenchmarkParams, store: Any, governor: Governor | None = None) -> dict[str, Any]:
    """Library objects from the spec (blocking: may read files, import modules, query SQLite).

    ``governor``: a resume's (:func:`resumed_governor`); else the spec's, or the defaults.
    """
    if not params.arms:
        raise ConfigError("arms", [], "a benchmark needs at least one arm (or `resume` with a benchmark id)")
    if params.reference is None:
        raise ConfigError(
            "reference", None, "a benchmark needs a reference (inline, or a stored name or hash)"
        )
    add_import_path(params.python_path)
    arms = []
    for i, a in enumerate(params.arms):
        with specs.field_under(f"arms[{i}]"):  # errors name the full dotted path
            arms.extend(specs.build_arms(a))  # a sweep makes several
    reference = wire_reference(params.reference, store)
    with specs.field_under("client"):
        client = None if params.client is None else specs.build_client(params.client, store)
    pricing = specs.build_pricing(params.client)
    scorer = specs.build_scorer(params.scorer, params.scorer_settings, store)  # a replay judge reads it
    metrics = specs.build_metrics(params.metrics)
    if governor is None:
        governor = specs.build_governor(params.governor) or default_governor()
    refuse_before_start(  # before the benchmark is stored: a refusal leaves nothing
        client,
        governor,
        pricing,  # the spec's `price`
        arms=arms,
        reference=reference,
        split=params.split,
        metrics=metrics,
        runs=params.runs,
        cached=params.cache,
        scorer=scorer,
    )
    splits = [params.split] if isinstance(params.split, str) else list(params.split)
    n_items = sum(1 for s in reference.splits.values() if s in splits)
    return {
        "arms": arms,
        "reference": reference,
        "client": client,
        "scorer": scorer,
        "metrics": metrics,
        "pricing": pricing,
        "governor": governor,
        "total": n_items * len(arms) * params.runs,
        "stop": build_stop(params.stop, store, arms, reference, params.split),  # stop when sure
        "batch": None if params.batch is None else Batch(**msgspec.to_builtins(params.batch)),
    }
