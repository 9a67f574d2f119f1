"""One cell of a stored benchmark (``hrb view``'s trace page) is read through its own batches.

A cell must show what a full read of the benchmark shows for it (rows of schema 4 and of every
batch, the last written of each run, their traces, the item's payload and label), while its
cost does not grow with the benchmark: the work is counted in Python line events (no clock).
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from hrbench.records import Row, Step
from hrbench.reference import Reference
from hrbench.results.browse import benchmark_cell
from hrbench.store import Store


def _row(i: int, arm: str, run: int, outcome: str = "x") -> Row:
    return Row(
        cluster=f"c{i % 3}",
        item=f"q{i}",
        arm=arm,
        run=run,
        split="test",
        correct=run % 2 == 0,
        outcome=outcome,
        failure_kind=None if run % 2 == 0 else "wrong",
        ledger_id=f"b/{arm}/q{i}/{run}",
    )


def _put(s: Store, rows: list[Row], start: int, size: int, tag: str = "") -> None:
    """``rows`` in batches of ``size``, each row with a one-step trace naming ``tag``."""
    for k in range(0, len(rows), size):
        part = rows[k : k + size]
        s.rows_put(
            "b",
            [(start + k + j, r) for j, r in enumerate(part)],
            {
                r.ledger_id: [Step(ledger_id=r.ledger_id, key=f"{tag}{r.ledger_id}", text=r.outcome)]
                for r in part
            },
        )


def _full(s: Store, item: str, arm: str) -> list[tuple[Row, list[Step]]]:
    """The cell as a full read of the benchmark gives it."""
    mine = sorted((r for r in s.rows_get("b") if r.item == item and r.arm == arm), key=lambda r: r.run)
    traces = s.traces_get("b", [r.ledger_id for r in mine])
    return [(r, traces.get(r.ledger_id, [])) for r in mine]


def _shown(s: Store, item: str, arm: str) -> list[tuple[Row, list[Step]]]:
    return [(x["row"], x["trace"]) for x in benchmark_cell(s, "b", item, arm)["runs"]]


def test_a_cell_shows_what_a_full_read_shows_as_batches_come_and_go(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    Store(path).close()
    con = sqlite3.connect(path)  # two rows kept one per SQLite row, as a schema-4 file has them
    for seq, r in enumerate([_row(0, "a", 1, "old"), _row(1, "b", 2, "old")]):
        con.execute(
            "INSERT INTO rows VALUES (?,?,?,?,?,?)", ["b", seq, r.arm, r.item, r.run, msgspec.json.encode(r)]
        )
        con.execute(
            "INSERT INTO traces VALUES (?,?,?)",
            ["b", r.ledger_id, msgspec.json.encode([Step(ledger_id=r.ledger_id, key="old")]).decode()],
        )
    con.commit()
    con.close()
    s = Store(path)
    ref = Reference({f"q{i}": {"question": f"question {i}"} for i in range(6)}, labels={"q1": ["yes", "y"]})
    s.benchmark_put(
        "b", {"arms": [{"name": "a"}, {"name": "b"}], "params": {"runs": 3}}, s.reference_put(ref)
    )
    first = [
        _row(i, arm, run) for i in range(6) for arm in ("a", "b") for run in (1, 2, 3) if (i, run) != (0, 1)
    ]
    _put(s, first, 10, 7)
    cells = [(f"q{i}", arm) for i in range(6) for arm in ("a", "b")]
    for item, arm in cells:
        assert _shown(s, item, arm) == _full(s, item, arm), (item, arm)
    assert [(r.outcome, t[0].key) for r, t in _shown(s, "q0", "a")] == [
        ("old", "old"),
        ("x", "b/a/q0/2"),
        ("x", "b/a/q0/3"),
    ]
    cell = benchmark_cell(s, "b", "q1", "a")
    assert (cell["payload"], cell["label"], cell["benchmark"]["rows"]) == (
        {"question": "question 1"},
        ["yes", "y"],
        35,  # 34 in batches and 2 of schema 4, one of them written again in a batch
    )
    assert len(s.rows_get("b")) == 35
    assert benchmark_cell(s, "b", "q2", "a")["label"] is None

    # batches written after the index was made: runs written again (the last counts), a new run
    again = [_row(2, "a", 1, "again"), _row(1, "b", 2, "again"), _row(5, "b", 4, "new")]
    _put(s, again, 100, 2, tag="again:")
    for item, arm in cells:
        assert _shown(s, item, arm) == _full(s, item, arm), (item, arm)
    assert [(r.run, r.outcome, t[0].key) for r, t in _shown(s, "q2", "a")][0] == (
        1,
        "again",
        "again:b/a/q2/1",
    )
    assert [r.run for r, _ in _shown(s, "q5", "b")] == [1, 2, 3, 4]

    # the batches it indexed are gone (the benchmark deleted and written anew): read afresh
    s.benchmark_delete(["b"])
    s.benchmark_put("b", {"arms": [{"name": "a"}], "params": {"runs": 1}}, s.reference_put(ref))
    _put(s, [_row(3, "a", 1, "fresh")], 0, 1)
    assert [r.outcome for r, _ in _shown(s, "q3", "a")] == ["fresh"]
    assert _shown(s, "q3", "a") == _full(s, "q3", "a")


def _lines(fn: Callable[[], Any]) -> int:
    """How many Python lines ``fn()`` runs (a count of work, not of time)."""
    n = 0

    def trace(frame: Any, event: str, arg: Any) -> Any:
        nonlocal n
        if event == "line":
            n += 1
        return trace

    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(None)
    return n


def _bench(items: int) -> Store:
    s = Store(":memory:")
    ref = Reference({f"q{i}": f"item {i}" for i in range(items)}, labels={f"q{i}": "x" for i in range(items)})
    s.benchmark_put("b", {"arms": [{"name": "a"}], "params": {"runs": 2}}, s.reference_put(ref))
    _put(s, [_row(i, "a", run) for i in range(items) for run in (1, 2)], 0, 100)
    return s


def test_reading_a_cell_costs_the_same_in_a_benchmark_twice_as_big() -> None:
    """A full read of the rows and the reference (what a cell cost: 11-18 s at 100,000 rows) grows
    with the benchmark; a cell read after the first reads only its own batch."""
    small, big = _bench(400), _bench(800)
    for s in (small, big):
        benchmark_cell(s, "b", "q1", "a")  # the first read indexes the batches
    cost = {n: _lines(lambda s=s: benchmark_cell(s, "b", "q7", "a")) for n, s in ((400, small), (800, big))}
    assert cost[800] < 1.2 * cost[400], cost


def test_a_labelled_reference_is_built_in_linear_work() -> None:
    """Reading a stored reference checked every label against a set of all ids made anew per id."""

    def build(n: int) -> Callable[[], Any]:
        data = Reference({f"q{i}": i for i in range(n)}, labels={f"q{i}": "x" for i in range(n)}).to_dict()
        return lambda: Reference.from_dict(data)

    cost = {n: _lines(build(n)) for n in (300, 600)}
    assert cost[600] < 2.5 * cost[300], cost
