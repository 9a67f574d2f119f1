"""Scorers and benchmark metrics built from names (the registry :data:`~hrbench.scoring.SCORERS`) and import paths."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hrbench._util.messages import field_under
from hrbench.errors import ConfigError
from hrbench.scoring import NEEDS_A_CLIENT, SCORERS, Scorer, factory_of, scorer
from hrbench.specs._clients import build_client, build_pricing
from hrbench.specs._loader import load_object

__all__ = ["SCORERS", "build_metrics", "build_scorer", "client_scorers_module", "stored_scorer"]


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
        name: a name of :data:`SCORERS`: ``exact`` (:func:`~hrbench.scoring.exact_scorer`,
            folding by default), ``exact_normalised``, ``answer_contains`` (:func:`hrbench.reading.answer_scorer`),
            ``numeric`` (:func:`hrbench.scoring.numeric_scorer`), ``choice``
            (:func:`hrbench.scoring.choice_scorer`), ``pattern``
            (:func:`hrbench.scoring.pattern_scorer`, with ``{"pattern": ...}`` in ``settings``),
            ``tatqa`` (the official TAT-QA exact match, :func:`hrbench.reading.tatqa_scorer`),
            ``squad`` (the official SQuAD v2.0 exact match, :func:`hrbench.reading.squad_scorer`),
            ``judge`` (:func:`hrbench.scoring._judge.judge_scorer`; ``settings["client"]`` is the judge's
            client spec, as a benchmark's ``[client]``), the trajectory scorers
            ``tool_sequence``, ``tool_args``, ``step_count`` and ``trajectory_judge``
            (:mod:`hrbench.scoring._trajectory`: they read the run's trace, so they score inside a
            benchmark), or ``package.module:attribute``:
            a Scorer, a factory (called with ``settings``), or a function wrapped with
            :func:`~hrbench.scoring.scorer`.
        settings: keyword arguments of the factory.
        store: the :class:`~hrbench.store.Store` a judge's ``replay`` client reads its
            recording from (the daemon gives its own).

    A scorer function is called ``fn(item, output, label)``, three positional arguments in
    that order (seed 000): the item's payload as the reference holds it, the arm's output (a
    prompt arm's reply text; what any other arm returned: a string, an
    :class:`~hrbench.records.Answer`, a :class:`~hrbench.records.Result`, a dict with ``text``),
    and the item's label (``None`` for an item with no label). A run whose model call failed
    never reaches it: the runner makes that run an ``error``
    (:func:`hrbench.runner._invoke.checked`). It returns a
    :class:`~hrbench.records.Score`, a dict of ``correct``/``outcome``/``failure_kind``, a
    ``(correct, outcome, failure_kind)`` tuple, or a bool. A function whose parameter names say
    another order (``def s(output, label, item=None)``) or that cannot take three arguments is
    refused when it is loaded (:func:`~hrbench.scoring._scorer.check_signature`); one that returns
    anything else (``None``: a missing ``return``) or raises makes that run an ``error`` row
    naming the scorer (:class:`~hrbench.scoring.Scorer`), never a silent NA or ``wrong``.

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
        if name in NEEDS_A_CLIENT:
            if not isinstance(kw.get("client"), Mapping):
                raise ConfigError(
                    "scorer_settings.client",
                    kw.get("client"),
                    "the judge scorer needs its client's spec (a table)",
                )
            with field_under("scorer_settings.client", head="client"):
                kw["pricing"] = build_pricing(kw["client"])  # the judge's own price and prices
                kw["client"] = build_client(kw["client"], store, role="judge")
        factory = factory_of(name)
    elif ":" in name:
        obj = load_object(name, "scorer")
        if isinstance(obj, Scorer) or (hasattr(obj, "name") and callable(obj) and not kw):
            return obj  # type: ignore[no-any-return]
        if kw:
            factory = obj
        else:
            return scorer(obj, name=name.rpartition(":")[2])
    else:
        factory = factory_of(name)  # raises: an unknown name, with the names there are
    try:
        out = factory(**kw)
    except TypeError as exc:
        raise ConfigError("scorer_settings", kw, f"rejected by scorer {name!r} ({exc})") from None
    if not callable(out):
        raise ConfigError("scorer", name, "the factory did not return a scorer")
    return out  # type: ignore[no-any-return]


def stored_scorer(spec: Mapping[str, Any]) -> str:
    """The name of the scorer that scored a stored benchmark's rows, as its exports label them.

    The name the scorer itself bears (``exact_normalised`` for ``scorer = "exact"``, a
    function's name for ``"package.module:function"``, a Scorer object's own name), kept in the
    stored spec under ``scorer`` when the benchmark was created. A spec stored without it is
    named from its ``params``: a registry name builds its scorer (a judge without its client, or
    an extra not installed, keeps the spec's name); an import path is not imported only to be
    named: the function's name stands.

    Args:
        spec: a stored benchmark's spec (``{"scorer": ..., "params": {...}}``).

    Example:
        >>> stored_scorer({"params": {"scorer": "exact"}}), stored_scorer({"params": {"scorer": "m:own"}})
        ('exact_normalised', 'own')
        >>> stored_scorer({"scorer": "starts_right", "params": {"scorer": "m:STARTS"}})
        'starts_right'
    """
    kept = spec.get("scorer")
    if isinstance(kept, str) and kept:
        return kept
    params = spec.get("params") or {}
    name = str(params.get("scorer") or "exact")
    if ":" in name:
        return name.rpartition(":")[2]
    try:
        return build_scorer(name, params.get("scorer_settings") or None).name
    except (ConfigError, ImportError, TypeError):
        return name


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
