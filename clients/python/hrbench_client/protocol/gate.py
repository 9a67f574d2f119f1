"""The CI gate (``hrb gate``): is a candidate benchmark worse than a baseline by more than a drop?"""

from __future__ import annotations

from typing import Annotated, Literal

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


class GateResult(Struct, kw_only=True):
    """What the gate concluded: ``fail`` (exit 1), ``pass`` (exit 0) or ``cannot`` (exit 3), and why.

    ``diff`` is the candidate's accuracy minus the baseline's on the items both ran, ``ci_low``
    and ``ci_high`` its two-sided ``1 - 2 * alpha`` interval (``ci_high`` the one-sided
    ``1 - alpha`` upper bound the decision reads: below ``-max_drop`` fails).
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
    descriptive: bool = False
    note: str | None = None
    exit_code: int = 0
