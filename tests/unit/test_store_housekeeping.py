"""Store.benchmark_resolve / benchmark_delete / gc on a real SQLite file."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hrbench.errors import ConfigError
from hrbench.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "db.sqlite3")
    for bid, name in [("abcd1234", "caps"), ("abcd9999", "caps"), ("a_c%0000", None), ("ffff0000", "other")]:
        s.benchmark_put(bid, {"params": {"name": name}, "arms": [{"name": "ask"}], "total": 1}, "h")
        time.sleep(0.002)  # distinct creation times: "newest" is well defined
    return s


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("abcd1234", "abcd1234"),  # an exact id
        ("abcd1", "abcd1234"),  # a unique prefix
        ("abcd9", "abcd9999"),
        ("caps", "abcd9999"),  # a name: the newest of that name
        ("other", "ffff0000"),
        ("a_c%", "a_c%0000"),  # LIKE wildcards in a prefix are literal
        ("a_c", None),  # prefixes need 4+ characters
        ("ab_d", None),
        ("zzzz", None),
        ("ffff00001", None),
    ],
)
def test_resolve(store: Store, ref: str, expected: str | None) -> None:
    assert store.benchmark_resolve(ref) == expected


def test_an_ambiguous_prefix_lists_the_candidates(store: Store) -> None:
    with pytest.raises(ConfigError, match=r"abcd1234, abcd9999"):
        store.benchmark_resolve("abcd")


def test_delete_and_gc_keep_running_benchmarks(store: Store) -> None:
    assert store.benchmark_delete(["abcd1234", "nope"])["benchmarks"] == 1
    out = store.gc(0, keep=["ffff0000"])
    assert out["benchmarks"] == 2 and out["vacuumed"] is True
    assert [h["id"] for h in store.benchmark_headers()] == ["ffff0000"]
    assert store.gc(3600)["benchmarks"] == 0
