"""The ``[stop]`` table of a benchmark spec: stop when sure (``BenchmarkParams.stop``)."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from hrbench_client.protocol._base import Name, _Spec

__all__ = ["StopPlanSpec", "StopSpec"]


class StopPlanSpec(_Spec):
    """``[stop.plan]``: the planned difference and what is known of the variance, as ``hrbench.power`` takes them.

    ``diff`` is the difference worth finding (proportion units, e.g. 0.05); ``pilot`` a stored
    benchmark (id or name) whose rows give the variance components and cluster sizes (as
    ``hb.power(diff, bench=pilot)``); the other fields state them instead.
    """

    diff: Annotated[float, Meta(gt=0, lt=1)]
    power: Annotated[float, Meta(gt=0, lt=1)] = 0.8
    pilot: str | None = None
    arm_a: Name | None = None
    arm_b: Name | None = None
    var_within: Annotated[float, Meta(ge=0)] | None = None
    var_between: Annotated[float, Meta(ge=0)] | None = None
    var_cluster: Annotated[float, Meta(ge=0)] | None = None
    runs: Annotated[int, Meta(ge=1)] | None = None
    items_per_cluster: Annotated[float, Meta(gt=0)] | None = None
    accuracy: Annotated[float, Meta(gt=0, lt=1)] | None = None


class StopSpec(_Spec):
    """``[stop]``: end the benchmark as soon as its comparison is sure (``hrbench.StopWhenSure``).

    The clusters run in a seeded random order, whole; after each one the sequential test looks,
    and the benchmark stops once every pair of interest is decided at ``alpha`` (``goal =
    "rank"``), or known within ``tolerance``, or after ``max_clusters``. The result holds
    however often it looked: the e-value, an anytime p and a confidence sequence valid at every
    look. ``pairs``: the pairs of arms of interest (default every pair, ``alpha`` split over
    them); ``best_arm``: stop once one arm beats every other. ``margin``: a pair whose
    confidence sequence lies within plus or minus it is settled as no different (default 1.75
    times the plan's ``diff``; 0: never). ``order = "informative"``: the clusters drawn with
    known probabilities from how the paired difference varied on each in the daemon's earlier
    benchmarks of the same reference, each weighted by the inverse of its probability (uniform
    without such benchmarks).
    """

    goal: Literal["rank", "tolerance", "rank_or_tolerance", "full_run"] = "rank"
    pairs: list[Annotated[list[Name], Meta(min_length=2, max_length=2)]] | None = None
    tolerance: Annotated[float, Meta(gt=0, lt=1)] | None = None
    alpha: Annotated[float, Meta(gt=0, lt=1)] = 0.05
    plan: StopPlanSpec | None = None
    max_clusters: Annotated[int, Meta(ge=1)] | None = None
    min_clusters: Annotated[int, Meta(ge=1)] = 2
    method: Literal["auto", "exact", "symmetric", "asymptotic", "strict"] = "auto"
    seed: int = 0
    best_arm: bool = False
    margin: Annotated[float, Meta(ge=0, lt=1)] | None = None
    order: Literal["uniform", "informative"] = "uniform"
