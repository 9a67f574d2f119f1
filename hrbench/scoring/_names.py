"""The scorers a name builds: the one registry of scorer names, and the plain ones built by name.

:data:`SCORERS` maps each name to the module and factory that make it and a line saying what it
does. Every module it names is in :mod:`hrbench.scoring`, so a scorer that builds another by
name (:func:`~hrbench.scoring.pattern_scorer`'s ``then``) stays in this package.
:func:`hrbench.specs.build_scorer` adds what needs more than the package (a judge's client, a
``package.module:function`` path).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from hrbench._util.messages import did_you_mean
from hrbench.errors import ConfigError

__all__ = ["NEEDS_A_CLIENT", "SCORERS", "factory_of", "plain_scorer"]

SCORERS: dict[str, tuple[str, str, str]] = {
    "exact": (
        "hrbench.scoring._scorer",
        "exact_scorer",
        "exact match after folding case and white space",
    ),
    "exact_normalised": ("hrbench.scoring._scorer", "exact_scorer", "the same as exact"),
    "answer_contains": (
        "hrbench.scoring._answer",
        "answer_scorer",
        "the number-aware reading scorer: right when the reply contains an accepted answer",
    ),
    "answer": ("hrbench.scoring._answer", "answer_scorer", "the same as answer_contains"),
    "numeric": (
        "hrbench.scoring._numeric",
        "numeric_scorer",
        "the reply's number equals the label's, within a tolerance",
    ),
    "choice": ("hrbench.scoring._choice", "choice_scorer", "the one letter a reply picks equals the label's"),
    "pattern": (
        "hrbench.scoring._pattern",
        "pattern_scorer",
        'what a regex captures, scored by exact, settings {"pattern": ...}',
    ),
    "tatqa": ("hrbench.scoring._tatqa_scorer", "tatqa_scorer", "the official TAT-QA exact match"),
    "squad": ("hrbench.scoring._squad_scorer", "squad_scorer", "the official SQuAD v2.0 exact match"),
    "judge": (
        "hrbench.scoring._judge",
        "judge_scorer",
        'an LLM judge, in a benchmark only, settings {"client": {...}}',
    ),
    "tool_sequence": (
        "hrbench.scoring._trajectory",
        "tool_sequence_scorer",
        'the run\'s tool calls match, in a benchmark only, settings {"expected": [...], "mode": "exact"}',
    ),
    "tool_args": (
        "hrbench.scoring._trajectory",
        "tool_args_scorer",
        'a tool was called with the expected arguments, in a benchmark only, settings {"tool": ..., "expected": {...}}',
    ),
    "step_count": (
        "hrbench.scoring._trajectory",
        "step_count_scorer",
        'the run took at most max_steps turns, in a benchmark only, settings {"max_steps": N}',
    ),
    "trajectory_judge": (
        "hrbench.scoring._trajectory",
        "trajectory_judge",
        'an LLM judge of the run\'s tool calls and answer, in a benchmark only, settings {"client": {...}}',
    ),
}
"""Every scorer a name builds: name -> (module, factory, what it does).

``hrb score --help`` lists it (through the generated ``hrbench_client/_scorers.py``, since the
client imports nothing from the core), and an unknown name's error names it.
"""

NEEDS_A_CLIENT = frozenset({"judge", "trajectory_judge"})
"""Names whose factory needs a model client: only :func:`hrbench.specs.build_scorer` builds them."""


def factory_of(name: str) -> Callable[..., Any]:
    """The factory :data:`SCORERS` names for ``name`` (imported when first asked for).

    Raises:
        ConfigError: ``name`` is not in :data:`SCORERS`; the message lists the names.

    Example:
        >>> factory_of("exact").__name__
        'exact_scorer'
    """
    if name not in SCORERS:
        raise ConfigError(
            "scorer",
            name,
            f"unknown scorer; {did_you_mean(name, list(SCORERS))}expected {', '.join(SCORERS)} "
            "or package.module:function",
        )
    module, attr, _ = SCORERS[name]
    return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]


def plain_scorer(name: str, settings: Mapping[str, Any] | None = None) -> Any:
    """A scorer that needs no model client, built by its name in :data:`SCORERS`.

    Args:
        name: a name of :data:`SCORERS` other than ``judge``.
        settings: keyword arguments of its factory.

    Raises:
        ConfigError: an unknown name, ``judge`` (it needs a client: build it with
            :func:`hrbench.specs.build_scorer`), or settings the factory rejects.

    Example:
        >>> plain_scorer("numeric")(None, "about 41.99", 42).correct
        False
    """
    if name in NEEDS_A_CLIENT:
        raise ConfigError("scorer", name, "this scorer needs a model client; give the scorer itself")
    factory = factory_of(name)
    kw = dict(settings or {})
    try:
        return factory(**kw)
    except TypeError as exc:
        raise ConfigError("scorer_settings", kw, f"rejected by scorer {name!r} ({exc})") from None
