"""The SQLite store: rows are paged in SQL, in the order they were scored."""

from __future__ import annotations

import pytest

from hrbench.errors import ConfigError
from hrbench.records import Row, Step
from hrbench.store import Store

N = 12


def row(i: int, arm: str = "a") -> Row:
    return Row(
        cluster="c",
        item=f"q{i:02d}",
        arm=arm,
        run=1,
        split="test",
        correct=True,
        outcome=None,
        failure_kind=None,
        ledger_id=f"{arm}-{i}",
    )


@pytest.fixture
def store() -> Store:
    s = Store(":memory:")
    # written out of order, in two batches, beside another benchmark's rows: the page must
    # still follow `seq`, and hold only this benchmark's rows
    order = [7, 2, 11, 0, 5, 9, 1, 10, 3, 8, 6, 4]
    s.rows_put("b", [(i, row(i)) for i in order[:6]])
    s.rows_put("other", [(i, row(i, arm="x")) for i in range(N)])
    s.rows_put(
        "b",
        [(i, row(i)) for i in order[6:]],
        traces={f"a-{i}": [Step(ledger_id=f"a-{i}", key=f"k{i}")] for i in range(N)},
    )
    return s


@pytest.mark.parametrize(
    ("offset", "limit"),
    [(0, None), (0, 5), (3, None), (3, 4), (10, 5), (11, 1), (12, None), (12, 3), (50, 2), (0, 0), (0, 100)],
)
def test_rows_get_pages_in_seq_order(store: Store, offset: int, limit: int | None) -> None:
    everything = [row(i) for i in range(N)]
    end = None if limit is None else offset + limit
    assert store.rows_get("b", offset, limit) == everything[offset:end]
    assert store.rows_get("b", offset=offset, limit=limit) == everything[offset:end]


def test_rows_get_default_is_every_row_and_count_agrees(store: Store) -> None:
    assert [r.item for r in store.rows_get("b")] == [f"q{i:02d}" for i in range(N)]
    assert store.rows_count("b") == N and store.rows_count("other") == N and store.rows_count("none") == 0
    assert store.rows_get("none") == []


@pytest.mark.parametrize(("offset", "limit", "field"), [(-1, None, "offset"), (0, -2, "limit")])
def test_rows_get_rejects_negative_bounds(store: Store, offset: int, limit: int | None, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        store.rows_get("b", offset, limit)
    assert info.value.field == field


def test_traces_get_only_for_the_ledger_ids_asked(store: Store) -> None:
    page = store.rows_get("b", 2, 3)
    traces = store.traces_get("b", [r.ledger_id for r in page])
    assert sorted(traces) == ["a-2", "a-3", "a-4"]
    assert traces["a-3"][0].key == "k3"
    assert store.traces_get("b", []) == {}
    assert len(store.traces_get("b")) == N
    many = [f"a-{i % N}" for i in range(1200)]  # more ids than one IN (...) chunk, repeated
    assert len(store.traces_get("b", many)) == N
