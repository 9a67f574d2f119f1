"""Store.benchmark_resolve / benchmark_delete / gc on a real SQLite file."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from hrbench.errors import ConfigError
from hrbench.store import Store
from hrbench.store._leases import _lock_name
from tests._slow import slow


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
    # benchmarks of one name made in the same second: newest wins, and of equal creation
    # times the one stored last; hrb ls (benchmark_headers) lists it first
    s = Store(tmp_path / "db.sqlite3")
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.0)  # one clock reading for all
    for bid in ids:
        s.benchmark_put(bid, {"params": {"name": "same"}, "arms": [], "total": 1}, "h")
    assert s.benchmark_resolve("same") == ids[-1]
    assert [h["id"] for h in s.benchmark_headers()] == list(reversed(ids))


# -- lock files (the flock leases of Store.lease_acquire) go with their benchmarks ------------------


def _crashed_holder(db: Path, *ids: str) -> None:
    """A process takes the lease of each id and dies without releasing it: its lock files stay."""
    import subprocess
    import sys

    code = (
        "import os; from hrbench.store import Store; s = Store(os.environ['DB']); "
        f"assert all(s.lease_acquire(b, 'crashed') is None for b in {list(ids)!r}); os._exit(0)"
    )
    subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "DB": str(db)}, check=True, timeout=slow(60)
    )


def _locks(db: Path) -> set[str]:
    folder = Path(f"{db}.locks")
    return set(os.listdir(folder)) if folder.exists() else set()


@pytest.mark.parametrize("bid", ["abcd1234", "a_c%0000"])  # a plain id, and one named by its digest
def test_rm_removes_the_lock_file_a_crashed_holder_left_and_its_lease_row(tmp_path: Path, bid: str) -> None:
    db = tmp_path / "db.sqlite3"
    s = Store(db)
    s.benchmark_put(bid, {"params": {}, "arms": [], "total": 1}, "h")
    _crashed_holder(db, bid)
    assert _locks(db) == {_lock_name(bid)}
    assert s.benchmark_delete([bid]) == {"benchmarks": 1, "rows": 0, "traces": 0, "locks": 1}
    assert _locks(db) == set()
    assert s._one("SELECT count(*) FROM leases")[0] == 0
    assert s.lease_acquire(bid, "again") is None  # a new run of that id takes it as ever


def test_a_lock_file_a_live_holder_holds_is_never_removed(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    s, other = Store(db), Store(db)
    for bid in ("held0001", "free0001"):
        s.benchmark_put(bid, {"params": {}, "arms": [], "total": 1}, "h")
    _crashed_holder(db, "free0001")
    assert other.lease_acquire("held0001", "live-run") is None  # held through another connection
    assert s.benchmark_delete(["held0001", "free0001"])["locks"] == 1
    assert _locks(db) == {"held0001"}
    assert s.lease_acquire("held0001", "rival")["owner"] == "live-run"  # still held, row and all
    assert s.gc(0)["locks"] == 0 and _locks(db) == {"held0001"}  # an orphan now, but held
    other.lease_release("held0001", "live-run")
    assert _locks(db) == set()


def test_gc_removes_the_lock_files_of_old_and_of_already_deleted_benchmarks(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    s = Store(db)
    for bid in ("old00001", "old00002", "kept0001", "gone0001"):
        s.benchmark_put(bid, {"params": {}, "arms": [], "total": 1}, "h")
    s._write("DELETE FROM benchmarks WHERE id='gone0001'")  # deleted before lock files were pruned
    _crashed_holder(db, "old00001", "old00002", "kept0001", "gone0001", "a bench id/with ../ in it")
    assert len(_locks(db)) == 5
    out = s.gc(0, keep=["kept0001"])  # kept0001 runs: its benchmark and lock file stay
    assert (out["benchmarks"], out["locks"]) == (2, 4)
    assert _locks(db) == {"kept0001"}
    assert s.gc(3600)["locks"] == 0
