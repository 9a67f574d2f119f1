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


@pytest.mark.parametrize("ids", [("0000aaaa", "ffffbbbb"), ("ffffbbbb", "0000aaaa"), ("m1", "m0", "m2")])
def test_a_name_made_twice_at_one_instant_resolves_to_the_last_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ids: tuple[str, ...]
) -> None:
    # newcomer's finding: benchmarks of one name made in the same second; decided: newest wins,
    # and of equal creation times the one stored last; hrb ls (benchmark_headers) lists it first
    s = Store(tmp_path / "db.sqlite3")
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.0)  # one clock reading for all
    for bid in ids:
        s.benchmark_put(bid, {"params": {"name": "same"}, "arms": [], "total": 1}, "h")
    assert s.benchmark_resolve("same") == ids[-1]
    assert [h["id"] for h in s.benchmark_headers()] == list(reversed(ids))
