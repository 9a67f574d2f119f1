"""Human grades in the store: kept by row key (reference, arm hash, item, run) and grader.

A rerun of the same spec (same reference, same arm hashes) finds the grades; an arm changed
(another hash) does not; a grade of a row the benchmark lacks is refused by name; a schema-6
file gains the table on open.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hrbench.errors import ConfigError, NotFound
from hrbench.records import Row
from hrbench.results._grades import Grade
from hrbench.store import Store


def _bench(s: Store, bid: str, arm_hash: str = "h-a", runs: int = 2) -> None:
    s.benchmark_put(bid, {"arms": [{"name": "a", "hash": arm_hash}, {"name": "b", "hash": "h-b"}]}, "ref1")
    rows = [
        Row(
            cluster="c",
            item=f"q{i}",
            arm=a,
            run=r,
            split="test",
            correct=True,
            outcome="correct",
            failure_kind=None,
        )
        for i in range(3)
        for a in ("a", "b")
        for r in range(1, runs + 1)
    ]
    s.rows_put(bid, list(enumerate(rows)))


def test_grades_are_kept_by_row_key_and_found_by_a_rerun() -> None:
    s = Store(":memory:")
    _bench(s, "b1")
    got = s.grades_put(
        "b1",
        [
            Grade(item="q0", arm="a", run=1, correct=False, grader="ann", pi=0.25),
            Grade(item="q1", arm="b", run=2, correct=True),
        ],
    )
    assert got == {"stored": 2, "replaced": 0}
    assert s.grades_put("b1", [Grade(item="q0", arm="a", run=1, correct=True, grader="ann")]) == {
        "stored": 1,
        "replaced": 1,
    }
    s.grades_put("b1", [Grade(item="q0", arm="a", run=1, correct=False, grader="bob")])  # a second grader
    _bench(s, "b2")  # the same spec run again: same reference, same arm hashes
    kept = [(g.arm, g.item, g.run, g.correct, g.grader, g.pi) for g in s.grades_get("b2")]
    assert sorted(kept) == [
        ("a", "q0", 1, False, "bob", None),
        ("a", "q0", 1, True, "ann", None),
        ("b", "q1", 2, True, "human", None),
    ]
    _bench(s, "b3", arm_hash="h-a2")  # arm a changed: its outputs are not the graded ones
    assert [(g.arm, g.item) for g in s.grades_get("b3")] == [("b", "q1")]


def test_a_grade_of_a_row_the_benchmark_lacks_is_refused_by_name() -> None:
    s = Store(":memory:")
    _bench(s, "b1")
    for g, said in (
        (Grade(item="q0", arm="zz", run=1, correct=True), "arm 'zz' is not an arm of benchmark b1"),
        (Grade(item="q9", arm="a", run=1, correct=True), "item 'q9'"),
        (Grade(item="q0", arm="a", run=3, correct=True), "run 3"),
    ):
        with pytest.raises(ConfigError, match=said):
            s.grades_put("b1", [Grade(item="q0", arm="a", run=1, correct=True), g])
    assert s.grades_get("b1") == []  # nothing of a refused put is kept
    with pytest.raises(NotFound):
        s.grades_put("nope", [])
    with pytest.raises(NotFound):
        s.grades_get("nope")


def test_a_schema_6_file_gains_the_grades_table(tmp_path: Path) -> None:
    path = tmp_path / "six.sqlite3"
    s = Store(path)
    _bench(s, "b1")
    s.close()
    conn = sqlite3.connect(path)
    conn.executescript("DROP TABLE grades; UPDATE meta SET value='6' WHERE key='schema_version';")
    conn.commit()
    conn.close()
    s = Store(path)
    assert s._one("SELECT value FROM meta WHERE key='schema_version'")[0] == "7"
    s.grades_put("b1", [Grade(item="q2", arm="b", run=1, correct=False)])
    assert [g.item for g in s.grades_get("b1")] == ["q2"]
