"""Where a benchmark is planned: its arguments checked, its plan made, what is refused or warned first.

:func:`make_plan` checks the arms, reference, runs, split, seed, scorer and metrics and makes the
:class:`~hrbench.runner._invoke.Plan`; :func:`check_options` the executor, concurrency and
governor; :func:`open_cache` the cache and store. Before the first run, :func:`refuse_spec`
refuses a spec error (an arm's template, a metric's labels, a judge's template),
:func:`refuse_same_items` items that would share draws, :func:`refuse_before_start` a benchmark
that could make no call (the daemon calls it before it stores a benchmark), and
:func:`warn_plan` warns of too few runs and of items with no label.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from hrbench._util.forms import whole
from hrbench._util.messages import field_under
from hrbench._util.warn import warn_at_caller
from hrbench.arm import Arm
from hrbench.errors import (
    ConfigError,
    FewRunsWarning,
    NoLabelsWarning,
    NotCachedWarning,
    UnlabelledItemsWarning,
    UnpricedModelWarning,
)
from hrbench.models import Pricing, default_pricing, reasoning_params
from hrbench.reference import SPLITS, Reference
from hrbench.runner._cache import Cache, as_store
from hrbench.runner._governor import Governor, default_governor
from hrbench.runner._invoke import BenchMetric, Plan, judge_pricing
from hrbench.runner.runtime import explicit_usd_cap, unpriced_message
from hrbench.scoring import Scorer, ScorerLike, exact_scorer
from hrbench.store import Store

__all__ = [
    "MIN_RUNS",
    "check_arms",
    "check_metrics",
    "check_options",
    "check_scorer",
    "make_plan",
    "open_cache",
    "refuse_before_start",
    "refuse_same_items",
    "refuse_spec",
    "run_ids",
    "same_items",
    "warn_plan",
]

MIN_RUNS = 5
"""Fewer runs than this warn (seed 002: ``hr_few_runs``)."""


def check_arms(arms: Arm | Sequence[Arm]) -> list[Arm]:
    """The arms as a list: at least one, each an :class:`~hrbench.Arm`, their names unique.

    Raises:
        ConfigError: ``arms`` (none, or a name twice) or ``arms[i]`` (not an arm).
    """
    arm_list = [arms] if isinstance(arms, Arm) else list(arms)
    if not arm_list:
        raise ConfigError("arms", arms, "a benchmark needs at least one arm")
    for i, a in enumerate(arm_list):
        if not isinstance(a, Arm):
            raise ConfigError(f"arms[{i}]", a, "expected an hrbench.Arm")
    names = [a.name for a in arm_list]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise ConfigError("arms", dup, "arm names must be unique")
    return arm_list


def check_scorer(scorer: Any) -> ScorerLike:
    """The scorer to use: ``exact_scorer()`` for ``None``, a plain function wrapped in a :class:`Scorer`.

    Raises:
        ConfigError: ``scorer`` is not callable.
    """
    if scorer is None:
        return exact_scorer()
    if isinstance(scorer, Scorer) or (callable(scorer) and isinstance(getattr(scorer, "name", None), str)):
        return scorer  # type: ignore[no-any-return]
    if callable(scorer):
        return Scorer(scorer, getattr(scorer, "__name__", "scorer"))
    own = "hb.scorer(fn, name) for a function of your own"
    if isinstance(scorer, str):  # a spec's scorer name: the hint names the spec's scorers, not scorer()
        raise ConfigError(
            "scorer",
            scorer,
            "a scorer's name is for a spec or hrb; in Python pass a scorer: hb.exact_scorer(), "
            f"hrbench.specs.build_scorer({scorer!r}) for the scorer a spec names so, or {own}",
        )
    raise ConfigError("scorer", scorer, f"expected a scorer: hb.exact_scorer(), or {own}")


def check_metrics(metrics: Any) -> list[tuple[str, BenchMetric]]:
    """The benchmark metrics as ``(name, fn)``; a name is the function's ``name`` or ``__name__``."""
    if metrics is None:
        return []
    if callable(metrics) or isinstance(metrics, (str, bytes)):
        metrics = [metrics]
    out: list[tuple[str, BenchMetric]] = []
    for i, fn in enumerate(metrics):
        if not callable(fn):
            raise ConfigError(f"metrics[{i}]", fn, "expected a function fn(item, output, label) -> number")
        name = getattr(fn, "name", None) or getattr(fn, "__name__", None) or f"metric_{i + 1}"
        out.append((str(name), fn))
    return out


def run_ids(reference: Reference, splits: Sequence[str]) -> list[str]:
    """The ids of the reference's items on ``splits``, in the reference's order."""
    ref_splits = reference.splits
    return [i for i in reference.ids if ref_splits[i] in splits]


def make_plan(
    arms: Any,
    reference: Any,
    runs: Any,
    scorer: Any,
    split: Any,
    seed: Any,
    bench_id: str | None,
    metrics: Any = None,
) -> Plan:
    """The :class:`~hrbench.runner._invoke.Plan` of a benchmark, its arguments checked in this order.

    The arms, the reference, ``runs``, the split(s), the seed, the items on the split(s), the
    scorer, then the metrics (:func:`check_metrics`); ``bench_id`` is a fresh id when ``None``.

    Raises:
        ConfigError: the first bad argument, named with its value.
    """
    arm_list = check_arms(arms)
    if not isinstance(reference, Reference):
        raise ConfigError("reference", reference, "expected an hrbench.Reference")
    runs = whole("runs", runs, least=1)
    splits = [split] if isinstance(split, str) else list(split)
    for s in splits:
        if s not in SPLITS:
            raise ConfigError("split", s, f"unknown split; expected some of {SPLITS}")
    seed = whole("seed", seed)
    item_ids = run_ids(reference, splits)
    if not item_ids:
        raise ConfigError("split", split, "no item of the reference is on this split")
    plan = Plan(
        arm_list,
        reference,
        item_ids,
        runs,
        splits,
        seed,
        check_scorer(scorer),
        bench_id or uuid.uuid4().hex[:16],
    )
    plan.metrics = check_metrics(metrics)
    return plan


def refuse_spec(
    arms: Sequence[Arm],
    reference: Reference,
    item_ids: Sequence[str],
    metrics: Any,
    client: Any,
    runs: int = 1,
    scorer: Any = None,
) -> None:
    """Refuse a spec error once, before the first run, rather than in every run.

    Each arm's ``check`` sees the run items, the ids an output may name (the reference's, or
    its source's: :attr:`~hrbench.reference.Reference.source_ids`) and the runs (a template
    naming a field the items lack, a prompt arm with no client, an outputs arm that leaves a
    run without an output), each metric's ``check_labels`` their labels, and a scorer's
    ``check_items`` the run items (a judge template naming ``{document}`` that an item lacks:
    :meth:`hrbench.scoring._judge.JudgeScorer.check_items`), and an arm's reasoning settings the
    client's API (:func:`~hrbench.models.reasoning_params`: a ``thinking_budget`` for
    an OpenAI-compatible API is refused, not dropped). An arm's error names its place,
    ``arms[i].field``; a scorer's, ``scorer_settings.field``.
    """
    items, labels = reference.items, reference.labels
    run_items = {i: items[i] for i in item_ids}
    known = reference.source_ids or items.keys()
    for n, arm in enumerate(arms):
        if arm.check is not None:
            with field_under(f"arms[{n}]"):
                arm.check(run_items, client, known, runs)
        if arm.reasoning and client is not None:  # a setting the client's API has no field for
            with field_under(f"arms[{n}]"):
                reasoning_params(arm.reasoning, getattr(client, "provider", ""), {})
    for _, fn in metrics:  # a metric that needs labels of one form says so up front
        check_labels = getattr(fn, "check_labels", None)
        if callable(check_labels):
            check_labels({i: labels[i] for i in item_ids})
    check_items = getattr(scorer, "check_items", None)
    if callable(check_items):  # a judge whose template names a field the items lack
        with field_under("scorer_settings"):
            check_items(run_items)


def same_items(items: Mapping[str, Any], item_ids: Iterable[str]) -> list[list[str]]:
    """Groups of item ids whose payloads are identical, each in the reference's order.

    Two payloads are the same when their canonical JSON is (mapping keys sorted); a payload
    JSON cannot hold is compared by its ``repr``.

    Example:
        >>> same_items({"q1": "France", "q2": "Peru", "q3": "France"}, ["q1", "q2", "q3"])
        [['q1', 'q3']]
        >>> same_items({"a": {"x": 1, "y": 2}, "b": {"y": 2, "x": 1}}, ["a", "b"])
        [['a', 'b']]
    """
    seen: dict[bytes, list[str]] = {}
    for i in item_ids:
        try:
            canon = _canon_json.encode(items[i])
        except (TypeError, ValueError, msgspec.EncodeError):
            canon = repr(items[i]).encode()
        seen.setdefault(canon, []).append(i)
    return [ids for ids in seen.values() if len(ids) > 1]


_canon_json = msgspec.json.Encoder(order="sorted")


def refuse_same_items(items: Mapping[str, Any], item_ids: Sequence[str], client: Any, cached: bool) -> None:
    """Refuse items with identical payloads under a cache or a replay.

    Rule (seed 002 refuses runs that are not distinct
    draws): two items with the same payload send the same requests, so under a draw-keyed
    cache or a replay the later item is served the first one's draws, and the benchmark used to
    be refused as duplicate draws only after the calls were made, blaming the arm. With a
    client and a cache or replay this is now a :class:`~hrbench.errors.ConfigError` on
    ``reference.items`` before any call, naming the ids. Without a cache or replay each item
    gets its own draws, so nothing is refused (a reference may hold one input twice, as
    many test sets do); arms that call no model (``client is None``) are not concerned.
    """
    if client is None or not cached:
        return
    groups = same_items(items, item_ids)
    if not groups:
        return
    shown = "; ".join(" = ".join(repr(i) for i in g) for g in groups[:5])
    if len(groups) > 5:
        shown += f"; and {len(groups) - 5} more group(s)"
    raise ConfigError(
        "reference.items",
        shown,
        "items with the same payload send the same requests, so under the cache (or a replay) the "
        "later ones are served the first one's draws and refused as duplicate draws after "
        "their calls; give each item its own payload (drop the repeats), or run without a cache "
        "(`cache = false` in a spec, cache=None in Python)",
    )


def refuse_before_start(
    client: Any,
    governor: Governor,
    pricing: Pricing | None = None,
    *,
    arms: Sequence[Arm] | None = None,
    reference: Reference | None = None,
    split: str | Sequence[str] = "test",
    metrics: Any = None,
    runs: int = 1,
    cached: bool = False,
    scorer: Any = None,
) -> None:
    """Refuse a benchmark that could make no call or has a spec error, before anything runs or is stored.

    The daemon calls this before it stores a new benchmark, so a refusal leaves no empty
    benchmark behind; :func:`benchmark_async` calls it too.

    Args:
        client: the benchmark's model client (``None``: no client).
        governor: its governor.
        pricing: the price table (default: the shipped one; reading it blocks on first use).
        arms: with ``reference``, the arms whose spec is checked against the run items
            (templates, clients) as :func:`benchmark_async` checks them.
        reference: the reference, for ``arms`` and ``metrics``.
        split: the split(s) run, as for :func:`benchmark`.
        metrics: the benchmark's metrics, whose label needs are checked.
        runs: the runs per item (an outputs arm must have an output for each).
        cached: the benchmark reads a cache: items with the same payload are refused
            (:func:`refuse_same_items`).
        scorer: the benchmark's scorer, whose ``check_items`` (a judge's template fields) sees
            the run items.

    Raises:
        ConfigError: a hosted API's key set nowhere (``client.api_key_env``), a price the
            table refuses (``prices.<model>.<part>``: :func:`refuse_bad_prices`), or, under an
            explicit USD cap, a model or ``billed_as`` model with no price
            (``client.model``, case R04a), or a spec error of an arm or a metric.

    Example:
        >>> from hrbench.models import OpenAIClient
        >>> refuse_before_start(OpenAIClient("no-such-model", "http://127.0.0.1:9", None), Governor(max_usd=1.0))
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: client.model: unpriced_model: model 'no-such-model' has no price, ...
    """
    if arms is not None and reference is not None:
        ids = run_ids(reference, [split] if isinstance(split, str) else list(split))
        refuse_spec(check_arms(arms), reference, ids, check_metrics(metrics), client, runs, scorer)
        replays = getattr(client, "provider", "") == "replay"
        refuse_same_items(reference.items, ids, client, cached or replays)
    require_key = getattr(client, "require_key", None)
    if callable(require_key):  # a hosted API's key set nowhere: refused before the first call
        require_key()
    refuse_bad_prices(client, scorer, pricing)
    explicit = explicit_usd_cap(governor)
    if getattr(client, "bills", False) and explicit:  # case R04a: refused before the first call
        pricing = default_pricing() if pricing is None else pricing
        m = pricing.unpriced(getattr(client, "model", None), getattr(client, "billed_as", ()))
        if m is not None:  # a router priced by its billed_as models passes (README)
            why = unpriced_message(m, explicit[1], cap=explicit[0], hint=pricing.did_you_mean(m))
            raise ConfigError("client.model", m, why)
    judge = getattr(scorer, "client", None) if getattr(scorer, "needs_context", False) else None
    if getattr(judge, "bills", False) and explicit:  # a judge too, before the arms' first call
        priced = judge_pricing(scorer, default_pricing() if pricing is None else pricing)
        m = priced.unpriced(getattr(judge, "model", None), getattr(judge, "billed_as", ()))
        if m is not None:
            why = unpriced_message(m, explicit[1], who="judge", cap=explicit[0], hint=priced.did_you_mean(m))
            raise ConfigError("scorer_settings.client.model", m, why)


def warn_unpriced(client: Any, governor: Governor, pricing: Pricing | None) -> None:
    """Warn :class:`~hrbench.errors.UnpricedModelWarning` once when the client's model has no price.

    Rule (seed 002: usd is NA when a model has no price): said once, at the start of the
    benchmark, so that NA costs are never a surprise; an explicit USD cap refuses such a model
    instead (:func:`refuse_before_start`), and a model given a price is not warned about. A
    name close to a priced one (a misspelling, ``gpt-4o-mni``) is named: "did you mean gpt-4o-mini?".
    """
    if not getattr(client, "bills", False) or explicit_usd_cap(governor):
        return
    table = default_pricing() if pricing is None else pricing
    m = table.unpriced(getattr(client, "model", None), getattr(client, "billed_as", ()))
    if m is not None:
        warn_at_caller(
            f"model {m!r} has no price{table.did_you_mean(m)}: its runs' USD is unknown (NA in the rows, the summary, the report "
            "and hrb ls; never 0); give it a price (a spec client's `price = {input = USD_PER_M, output = "
            "USD_PER_M}`, hrbench.Pricing(overrides=...), or HRBENCH_PRICES)",
            UnpricedModelWarning,
        )


def refuse_bad_prices(client: Any, scorer: Any, pricing: Pricing | None) -> None:
    """Refuse, before the first call, a price of the client's or the judge's models that the table refuses.

    Each model a reply may be billed as (the client's ``model`` and ``billed_as``, a judge's
    at the judge's own prices) is looked up now: a price from genai-prices' data that is not a
    finite number >= 0, or is 0 where the package's bundled data or hrbench's shipped table
    prices the model and the user did not declare it free, is refused here rather than at the
    first reply (:meth:`~hrbench.models.Pricing.check`). Without a client, nothing to check.

    Raises:
        ConfigError: ``prices.<model>.<part>``, with the value and where the price came from.
    """
    judge = getattr(scorer, "client", None) if getattr(scorer, "needs_context", False) else None
    if getattr(client, "model", None) is None and getattr(judge, "model", None) is None:
        return
    pricing = default_pricing() if pricing is None else pricing
    if client is not None:
        pricing.check([getattr(client, "model", None), *getattr(client, "billed_as", ())])
    if judge is not None:
        judge_pricing(scorer, pricing).check(
            [getattr(judge, "model", None), *getattr(judge, "billed_as", ())]
        )


def warn_plan(plan: Plan, reference: Reference, runs: int) -> None:
    """Warn, before the first run, of too few runs and of items with no label."""
    if runs < MIN_RUNS:
        warn_at_caller(
            f"{runs} run(s) per item: with fewer than {MIN_RUNS}, run-to-run spread cannot be told from the "
            "differences between arms; interval reports will refuse this benchmark unless it is labelled descriptive",
            FewRunsWarning,
        )
    unlabelled = [i for i in plan.item_ids if plan.unlabelled[i]]
    omitted = [i for i in unlabelled if i in getattr(reference, "labels_omitted", ())]
    if plan.item_ids and len(unlabelled) == len(plan.item_ids):
        warn_at_caller(
            f"no item of reference {reference.hash[:12]} on split(s) {', '.join(plan.split)} has a label: "
            "every run is NA and accuracy is NA (give each item a `label`)",
            NoLabelsWarning,
        )
    elif omitted:  # a labels table that left an item out: say how many
        more = f" and {len(omitted) - 5} more" if len(omitted) > 5 else ""
        warn_at_caller(
            f"{len(omitted)} of {len(plan.item_ids)} items on split(s) {', '.join(plan.split)} are given no "
            f"label ({', '.join(map(repr, omitted[:5]))}{more}: left out of a `labels` table, or an empty or "
            f"missing `label` in the reference file): their runs are NA and accuracy averages the "
            f"{len(plan.item_ids) - len(unlabelled)} labelled items "
            "(give them a label, or a null label to say so, or leave them out of the reference)",
            UnlabelledItemsWarning,
        )


def check_options(plan: Plan, executor: Any, concurrency: Any, governor: Any) -> tuple[Any, Governor, int]:
    """The executor the cells go to (``None``: here), the governor and ``concurrency`` as an int.

    ``executor`` ``None`` or ``"local"`` runs the cells here; anything else is resolved to a
    Ray executor (:func:`hrbench.runner.ray.resolve_executor`; Ray is imported only then). A
    ``governor`` of ``None`` gives the default limits (:func:`~hrbench.runner.default_governor`).

    Raises:
        ConfigError: ``executor`` with a scorer that calls a judge model (its runtime lives here)
            or a bad executor spec, ``concurrency`` not a whole number >= 1, or ``governor``
            not a :class:`~hrbench.Governor`.
    """
    remote = None
    if executor is not None and executor != "local":
        if getattr(plan.scorer, "needs_context", False):  # the judge's runtime lives here
            raise ConfigError(
                "executor", executor, f"scorer {plan.scorer.name!r} calls a judge model: run it locally"
            )
        from hrbench.runner.ray import resolve_executor  # Ray itself is imported only when it runs

        remote = resolve_executor(executor)
    concurrency = whole("concurrency", concurrency, least=1)
    if governor is not None and not isinstance(governor, Governor):
        raise ConfigError("governor", governor, "expected an hrbench.Governor or None")
    return remote, governor if governor is not None else default_governor(), concurrency


def open_cache(
    cache: Cache | str | os.PathLike[str] | bool | None,
    record: str | None,
    store: Store | str | os.PathLike[str] | None,
    client: Any,
) -> tuple[Cache | None, Store | None, bool]:
    """The cache and store a benchmark uses, and whether it reads draws again (a cache or a replay).

    ``cache=True`` opens the cache in ``store`` (the default store when ``None``); a path (for
    ``cache`` or ``store``) opens the SQLite file there; anything else is a
    :class:`~hrbench.errors.ConfigError` naming the argument, before any run starts; a
    ``record`` without a store records into the cache's store (or the default one). A client
    whose function cannot be fingerprinted warns, once, that its replies are not cached
    (:class:`~hrbench.errors.NotCachedWarning`).

    Returns:
        ``(cache, store, cached)``: ``cached`` when replies may be served again (a replay
        client, or a cache that reads for a cacheable client): :func:`refuse_same_items` then applies.
    """
    if store is not None:
        store = as_store("store", store)
    if cache is False:
        cache = None
    elif cache is True:
        cache = Cache(store or Store())
    elif isinstance(cache, str | os.PathLike):  # the path of the cache's SQLite file
        cache = Cache(as_store("cache", cache))
    elif cache is not None and not (hasattr(cache, "get") and hasattr(cache, "put")):
        # a Cache, or an object that serves as one (get and put: the Ray executor's proxy)
        raise ConfigError(
            "cache", cache, "expected an hrbench Cache, True (the store's cache), a path or None"
        )
    if record is not None and store is None:
        store = cache.store if cache is not None else Store()
    if (
        cache is not None
        and getattr(client, "cacheable", True) is False
        and not getattr(client, "warned", True)
    ):
        client.warned = True
        warn_at_caller(
            f"{client!r}: its function cannot be fingerprinted ({getattr(client, 'not_cacheable_why', '')}), "
            "so its replies are not cached: every request calls it",
            NotCachedWarning,
        )
    replays = getattr(client, "provider", "") == "replay"
    cached = replays or (cache is not None and cache.read and getattr(client, "cacheable", True) is not False)
    return cache, store, cached
