"""Human grading of a stored benchmark: the rows to grade next (item, label, the arm's output), grades put and got.

The daemon's ``grades/next``, ``grades/put`` and ``grades/get`` and the grading page of
``hrb view`` read these; the statistics are :mod:`hrbench.stats._ppi` and
:mod:`hrbench.stats._grading`.
"""

from __future__ import annotations

from typing import Any

from hrbench.errors import ConfigError
from hrbench.records import Row, Step
from hrbench.results._grades import Grade, as_grades, read_grades
from hrbench.results.browse._cells import _item_parts
from hrbench.results.browse._listing import _record
from hrbench.store import Store

__all__ = ["grades_get", "grades_next", "grades_put", "output_of"]

MAX_NEXT = 10_000
"""The most rows one ``grades/next`` draws."""


def output_of(row: Row, trace: list[Step]) -> tuple[str | None, str | None]:
    """What a person grades for one row: the arm's output, and where it was read.

    A judged row's trace ends with the judge's requests, one per draw (its ``outcome`` holds
    their grades); the arm's output is the reply of the request before them. An arm that made
    no request (fixed outputs) shows what the judge was shown (its prompt holds the output). A
    row not judged shows its ``outcome``.

    Returns:
        ``(text, source)``: ``source`` is ``"reply"``, ``"judge prompt"`` or ``"outcome"``;
        ``(None, None)`` when nothing was kept.

    Example:
        >>> r = Row(cluster="c", item="q1", arm="a", run=1, split="test", correct=True,
        ...         outcome="correct", failure_kind=None, ledger_id="b/a/q1/1")
        >>> output_of(r, [Step(ledger_id="b/a/q1/1", text="Paris"), Step(ledger_id="b/a/q1/1", text="CORRECT")])
        ('Paris', 'reply')
    """
    words = (row.outcome or "").split()
    judged = bool(words) and all(w in ("correct", "incorrect") or w.isdigit() for w in words)
    asked = [s for s in trace if s.kind == "request"]
    k = len(words) if judged else 0
    if k and len(asked) > k and asked[-k - 1].text is not None:
        return asked[-k - 1].text, "reply"
    shown = asked[-k].messages if k and len(asked) >= k else None
    if shown:
        content = shown[-1].get("content")
        return (content if isinstance(content, str) else str(content)), "judge prompt"
    if not judged and row.outcome is not None:
        return row.outcome, "outcome"
    if asked and asked[-1].text is not None and not judged:
        return asked[-1].text, "reply"
    return None, None


def grades_next(store: Store, benchmark_id: str, k: int, seed: int = 0) -> dict[str, Any]:
    """The ``k`` rows to grade next (:func:`hrbench.next_grades`), each with its item, label and output.

    Returns:
        A ``GradesNextResult`` dict: ``benchmark``, ``n_graded`` (grades kept for its rows),
        ``rows`` (``arm``, ``item``, ``run``, ``cluster``, ``judge``, ``pi``, ``payload``,
        ``label``, ``output``, ``output_source``).

    Raises:
        NotFound: no benchmark has that id.
        ConfigError: ``k`` not in 1 to 10,000, or a benchmark with no row to grade.
    """
    from hrbench.stats import next_grades

    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_NEXT:
        raise ConfigError("k", k, f"must be a whole number of rows from 1 to {MAX_NEXT}")
    rec = _record(store, benchmark_id)
    rows = store.rows_get(benchmark_id)
    if not rows:
        raise ConfigError("id", benchmark_id, "has no rows to grade yet")
    grades = store.grades_get(benchmark_id)
    picked = next_grades(rows, k, grades, seed=seed)
    by_key = {(r.arm, r.item, r.run): r for r in rows}
    chosen = [by_key[(p["arm"], p["item"], p["run"])] for p in picked]
    traces = store.traces_get(benchmark_id, [r.ledger_id for r in chosen])
    out = []
    for p, r in zip(picked, chosen, strict=True):
        parts = _item_parts(store, rec["reference_hash"], r.item) if rec.get("reference_hash") else None
        payload, label = parts if parts is not None else (None, None)
        text, source = output_of(r, traces.get(r.ledger_id, []))
        out.append({**p, "payload": payload, "label": label, "output": text, "output_source": source})
    return {"benchmark": benchmark_id, "n_graded": len(grades), "rows": out}


def grades_put(
    store: Store, benchmark_id: str, grades: Any = None, path: str | None = None, grader: str | None = None
) -> dict[str, Any]:
    """Keep human grades of a stored benchmark's rows, given as records or as a file the daemon reads.

    Returns:
        ``{"benchmark", "stored", "replaced", "n_graded"}``.

    Raises:
        NotFound: no benchmark has that id.
        ConfigError: neither or both of ``grades`` and ``path``; a grade that is not one or
            names a row the benchmark does not have; a file that cannot be read as grades.
    """
    if (grades is None) == (path is None):
        raise ConfigError("grades", None, "give the grades or the path of a grades file (one of them)")
    _record(store, benchmark_id)
    got: list[Grade] = (
        read_grades(path, grader=grader, field="path")
        if path is not None
        else as_grades(grades, grader=grader)
    )
    done = store.grades_put(benchmark_id, got)
    return {"benchmark": benchmark_id, **done, "n_graded": store.grades_count(benchmark_id)}


def grades_get(store: Store, benchmark_id: str) -> dict[str, Any]:
    """The human grades kept for a stored benchmark's rows: ``{"benchmark", "grades"}``."""
    _record(store, benchmark_id)
    return {"benchmark": benchmark_id, "grades": store.grades_get(benchmark_id)}
