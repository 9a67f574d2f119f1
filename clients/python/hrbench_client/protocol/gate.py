"""The CI gate (``hrb gate``): is a candidate benchmark worse than a baseline by more than a drop?"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, Struct

from hrbench_client.protocol._base import _Spec

__all__ = ["GateParams", "GateResult"]


class GateParams(_Spec):
    """Params of ``benchmark/gate``: a candidate held to a baseline on the items both ran.

    ``candidate`` and ``baseline`` each name a stored benchmark (an id, a unique id prefix of 4+
    characters, or a name: the newest of that name) or a rows file by its absolute path (what
    ``hrb rows ID --format jsonl|csv|parquet -o FILE`` wrote).
    """

    candidate: Annotated[str, Meta(description="the benchmark under test: an id, prefix, name or rows file")]
    baseline: Annotated[
        str, Meta(description="the benchmark to hold it to: an id, prefix, name or rows file")
    ]
    arm: Annotated[str | None, Meta(description="the arm to compare (in both); none: the only one")] = None
    max_drop: Annotated[float, Meta(ge=0, lt=1, description="the accuracy drop tolerated, a fraction")] = 0.02
    alpha: Annotated[float, Meta(gt=0, lt=0.5, description="1 - the confidence of a failure")] = 0.05
    metric: Annotated[
        Literal["accuracy", "pass^k", "flip_rate"],
        Meta(
            description="what is gated: accuracy, pass^k (k runs of an item all right) or flip_rate "
            "(two runs of an item disagree; a rise fails)"
        ),
    ] = "accuracy"
    pass_k: Annotated[int, Meta(ge=1, description="the k of pass^k (none: the runs per item)")] | None = None


class GateResult(Struct, kw_only=True):
    """What the gate concluded: ``fail`` (exit 1), ``pass`` (exit 0) or ``cannot`` (exit 3), and why.

    With human grades of the compared arm's rows (``hrb grades put``), ``human`` is the
    difference as humans would grade it by PPI++, and ``diff`` and its interval are that
    estimate's.

    ``diff`` is the candidate's accuracy minus the baseline's on the items both ran, ``ci_low``
    and ``ci_high`` its two-sided ``1 - 2 * alpha`` interval (``ci_high`` the one-sided
    ``1 - alpha`` upper bound the decision reads: below ``-max_drop`` fails). With ``metric``
    ``pass^k`` or ``flip_rate`` these are that metric's (``pass_k_runs`` the ``k``; for the flip
    rate a rise fails: ``ci_low`` above ``max_drop``).

    Items are matched by id: ``n_items`` of the candidate's ``n_items_candidate`` were compared,
    and ``coverage`` says what was left out of either side (``None``: nothing). A baseline that
    holds fewer than half of the candidate's items is refused as bad input.
    """

    decision: Literal["pass", "fail", "cannot"]
    reason: str
    candidate: str
    baseline: str
    arm_candidate: str | None = None
    arm_baseline: str | None = None
    diff: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float
    max_drop: float
    alpha: float
    n_items: int = 0
    n_clusters: int = 0
    accuracy_candidate: float | None = None
    accuracy_baseline: float | None = None
    human: dict[str, Any] | None = None
    descriptive: bool = False
    note: str | None = None
    exit_code: int = 0
    metric: str = "accuracy"
    pass_k_runs: int | None = None
    n_items_candidate: Annotated[int, Meta(description="the items the candidate's arm ran")] = 0
    n_items_baseline: Annotated[int, Meta(description="the items the baseline's arm ran")] = 0
    n_items_not_in_baseline: Annotated[
        int, Meta(description="the candidate's items the baseline did not run")
    ] = 0
    n_items_not_in_candidate: Annotated[
        int, Meta(description="the baseline's items the candidate did not run")
    ] = 0
    coverage: Annotated[
        str | None,
        Meta(description="what the decision left out of either side, in one clause; none: nothing"),
    ] = None
