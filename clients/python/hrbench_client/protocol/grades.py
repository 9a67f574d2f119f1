"""Human grades (``hrb grades``, the grading page of ``hrb view``): ``grades/put``, ``grades/next``, ``grades/get``."""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import Meta, Struct

from hrbench_client.protocol._base import _Spec

__all__ = [
    "GradeSpec",
    "GradesGetParams",
    "GradesGetResult",
    "GradesNextParams",
    "GradesNextResult",
    "GradesPutParams",
    "GradesPutResult",
    "NextGrade",
]

_Text = Annotated[str, Meta(min_length=1, max_length=10_000)]


class GradeSpec(_Spec):
    """One human grade: did a person judge the arm's output on the item right?"""

    item: _Text
    arm: _Text
    run: Annotated[int, Meta(ge=0, description="the row's run")]
    correct: bool
    grader: Annotated[str, Meta(min_length=1, max_length=200, description="who graded")] | None = None
    pi: (
        Annotated[
            float,
            Meta(
                gt=0, le=1, description="the probability the row had of being drawn (grades/next writes it)"
            ),
        ]
        | None
    ) = None


class GradesPutParams(_Spec):
    """Params of ``grades/put``: human grades of a stored benchmark's rows, as records or a file.

    Give ``grades`` or ``path``: the absolute path of a CSV or JSON-lines grades file the
    daemon reads (``item``, ``arm``, ``run``, ``correct``; ``grader`` and ``pi`` optional). A
    grade is kept by its row's key (reference, arm hash, item, run) and grader, so a rerun of
    the same spec finds it; a row graded again by the same grader is replaced.
    """

    id: Annotated[str, Meta(description="a stored benchmark's id, unique id prefix or name")]
    grades: Annotated[list[GradeSpec], Meta(max_length=1_000_000)] | None = None
    path: Annotated[str, Meta(min_length=1, max_length=4096)] | None = None
    grader: (
        Annotated[str, Meta(min_length=1, max_length=200, description="the grader of grades naming none")]
        | None
    ) = None


class GradesPutResult(Struct, kw_only=True):
    """What ``grades/put`` kept: grades written, of those replacing an earlier one, and now kept in all."""

    benchmark: str
    stored: int
    replaced: int
    n_graded: int


class GradesNextParams(_Spec):
    """Params of ``grades/next``: the rows whose human grades would narrow the PPI++ intervals most."""

    id: Annotated[str, Meta(description="a stored benchmark's id, unique id prefix or name")]
    k: Annotated[int, Meta(ge=1, le=10_000, description="rows to draw")] = 20
    seed: Annotated[int, Meta(ge=0, le=2**63 - 1, description="the draw's seed")] = 0


class NextGrade(Struct, kw_only=True):
    """A row to grade: its key, the judge's verdict, its drawing probability, the item, label and output."""

    arm: str
    item: str
    run: int
    cluster: str
    judge: bool
    pi: float
    payload: Any = None
    label: Any = None
    output: str | None = None
    output_source: str | None = None


class GradesNextResult(Struct, kw_only=True):
    """The rows to grade next, in arm, cluster, item and run order, and the grades kept so far."""

    benchmark: str
    n_graded: int
    rows: list[NextGrade]


class GradesGetParams(_Spec):
    """Params of ``grades/get``: the human grades kept for a stored benchmark's rows."""

    id: Annotated[str, Meta(description="a stored benchmark's id, unique id prefix or name")]


class GradesGetResult(Struct, kw_only=True):
    """The human grades kept for the benchmark's rows (those of any benchmark of the same rows)."""

    benchmark: str
    grades: list[GradeSpec]
