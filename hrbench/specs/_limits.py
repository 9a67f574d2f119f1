"""What ends a benchmark early, from its spec: the ``[governor]``'s caps and the ``[stop]`` rule.

The ``[stop]`` table becomes a :class:`~hrbench.StopWhenSure` rule. It names the rule's
settings: ``goal``, ``pairs``, ``tolerance``, ``alpha``, ``max_clusters``, ``min_clusters``,
``method``, ``seed``, ``best_arm``, ``margin``, ``order``, and a ``plan`` table whose ``diff``
(the difference worth finding) and variance settings, or ``pilot`` (a stored benchmark whose
rows give them), are what :func:`hrbench.power` takes. With ``order = "informative"`` the
history is the store's earlier benchmarks of the same reference. Errors name the field under
``stop``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hrbench._util import forms as _forms
from hrbench._util.messages import field_under
from hrbench.errors import ConfigError
from hrbench.runner import Governor, default_governor
from hrbench.specs._loader import _get

__all__ = ["GOVERNOR_LIMITS", "PLAN_FIELDS", "STOP_FIELDS", "build_governor", "build_stop", "store_history"]


def build_governor(spec: Any) -> Governor | None:
    """The :class:`~hrbench.runner.Governor` a spec describes, or ``None`` for no spec.

    A limit left ``None`` is no cap, unless ``defaults`` is true: it is then the default's
    (:func:`~hrbench.runner.default_governor`), and the governor keeps the defaults' rule
    while ``max_usd`` is not given (``hrb bench FILE --max-calls N`` on a spec with no
    ``[governor]`` replaces one limit, as ``--resume`` does).

    Example:
        >>> build_governor({"max_calls": 10}).max_usd is None
        True
        >>> build_governor({"max_calls": 10, "defaults": True}).max_usd
        5.0
        >>> build_governor({"max_calls_per_run": 3}).per_run
        {'max_calls_per_run': 3}
    """
    if spec is None:
        return None
    _forms.check_fields("governor", spec, (*GOVERNOR_LIMITS, "defaults"))
    given = {k: v for k in GOVERNOR_LIMITS if (v := _get(spec, k)) is not None}
    with field_under("governor", head="governor"):
        if not _get(spec, "defaults", False):
            return Governor(**given)
        gov = Governor(**{**default_governor().limits, **given})
    gov.from_defaults = "max_usd" not in given
    return gov


GOVERNOR_LIMITS = (
    "max_calls",
    "max_usd",
    "max_tokens",
    "max_calls_per_run",
    "max_usd_per_run",
    "max_tokens_per_run",
)
"""The caps of a ``[governor]`` table: the benchmark's, and each run's own (``*_per_run``)."""


STOP_FIELDS = (
    "goal",
    "pairs",
    "tolerance",
    "alpha",
    "plan",
    "max_clusters",
    "min_clusters",
    "method",
    "seed",
    "best_arm",
    "margin",
    "order",
)
"""The fields of a ``[stop]`` table."""

PLAN_FIELDS = (
    "diff",
    "power",
    "pilot",
    "arm_a",
    "arm_b",
    "var_within",
    "var_between",
    "var_cluster",
    "runs",
    "items_per_cluster",
    "accuracy",
)
"""The fields of a ``[stop.plan]`` table (:func:`hrbench.power`'s, ``pilot`` a stored benchmark)."""


def _plan(spec: Any, store: Any) -> Any:
    from hrbench.stats import power

    _forms.check_fields("stop.plan", spec, PLAN_FIELDS)
    kw = {k: v for k in PLAN_FIELDS if (v := _get(spec, k)) is not None}
    if "diff" not in kw:
        raise ConfigError(
            "stop.plan.diff", None, "a plan needs the difference worth finding, e.g. diff = 0.05"
        )
    pilot = kw.pop("pilot", None)
    if pilot is not None:
        found = None if store is None else store.benchmark_resolve(str(pilot))
        if found is None:
            raise ConfigError(
                "stop.plan.pilot", pilot, "no stored benchmark has this id or name (see `hrb ls`)"
            )
        kw["bench"] = store.rows_get(found)
    diff = kw.pop("diff")
    with field_under("stop.plan", head="plan"):
        return power(diff, **kw)


def store_history(store: Any, reference_hash: str, limit: int = 20) -> dict[str, float]:
    """The spread of the paired difference per cluster in the store's benchmarks of this reference.

    The newest ``limit`` stored benchmarks whose reference has this hash (reads SQLite:
    blocking), through :func:`hrbench.stats.cluster_spread`; ``{}`` when there are none.
    """
    from hrbench.stats import cluster_spread

    same = [b["id"] for b in store.benchmark_list() if b["reference_hash"] == reference_hash and b["rows"]]
    benches = [store.rows_get(i) for i in same[-limit:]]
    return cluster_spread([rows for rows in benches if rows])


def build_stop(
    spec: Any, store: Any = None, arms: Any = None, reference: Any = None, split: Any = "test"
) -> Any:
    """The :class:`~hrbench.StopWhenSure` a ``[stop]`` table describes, or ``None`` for no table.

    Args:
        spec: the table (a mapping, or the wire's ``StopSpec``), or ``None``.
        store: the store a ``plan.pilot`` benchmark is read from (reads SQLite: blocking).
        arms: with ``reference``, the benchmark's arms: the rule is checked against them and
            the reference's clusters on ``split`` (a pair naming an arm not there, too few
            clusters) before anything runs.
        reference: the benchmark's reference.
        split: the split or splits run.

    Returns:
        The rule, or ``None``.

    Raises:
        ConfigError: an unknown field, or a value out of range, named as ``stop.FIELD``.

    Example:
        >>> build_stop({"goal": "rank", "alpha": 0.01, "seed": 3}).alpha
        0.01
        >>> build_stop({"alpha": 2})
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: stop.alpha: must be a number strictly between 0 and 1 (got 2)
    """
    if spec is None:
        return None
    from hrbench.stats import StopWhenSure

    if not isinstance(spec, Mapping) and not hasattr(spec, "__struct_fields__"):
        raise ConfigError("stop", spec, "expected a table of settings (goal, alpha, ...)")
    _forms.check_fields("stop", spec, STOP_FIELDS)
    kw = {k: v for k in STOP_FIELDS if (v := _get(spec, k)) is not None}
    if "pairs" in kw:
        pairs = kw["pairs"]
        if not isinstance(pairs, list | tuple) or not all(
            isinstance(p, list | tuple) and len(p) == 2 for p in pairs
        ):
            raise ConfigError(
                "stop.pairs", pairs, 'expected a list of [arm, arm] pairs, e.g. [["new", "base"]]'
            )
        kw["pairs"] = tuple((str(a), str(b)) for a, b in pairs)
    if "plan" in kw:
        kw["plan"] = _plan(kw["plan"], store)
    if kw.get("order") == "informative" and store is not None and reference is not None:
        kw["history"] = store_history(store, reference.hash)
    with field_under("stop", head="stop"):
        try:
            rule = StopWhenSure(**kw)
        except TypeError as exc:  # a value of the wrong type reached a comparison
            raise ConfigError("stop", kw, f"a setting has the wrong type ({exc})") from None
        if arms is not None and reference is not None:
            splits = [split] if isinstance(split, str) else list(split)
            clusters = {reference.clusters[i] for i in reference.ids if reference.splits[i] in splits}
            rule.check([a.name for a in arms], len(clusters))
    return rule
