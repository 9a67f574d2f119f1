"""The store notices its file vanish or be replaced, and names each fault.

Real files and, where the machine allows, real small file systems (tests/_fs.py).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from hrbench.errors import StoreCorrupt, StoreError, StoreFull, StoreGone, StoreReadOnly
from hrbench.records import Row
from hrbench.store import Store
from tests._fs import made_read_only, tiny_fs


def row(i: int) -> Row:
    return Row(
        cluster="c", item=f"q{i}", arm="a", run=1, split="test", correct=True, outcome="x" * 200,
        failure_kind=None, ledger_id=f"a-{i}",
    )  # fmt: skip


def test_a_deleted_database_is_refused_not_written(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    s = Store(path)
    s.rows_put("b", [(0, row(0))])
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"s.sqlite3{suffix}").unlink(missing_ok=True)
    for call in (lambda: s.rows_put("b", [(1, row(1))]), lambda: s.rows_count("b"), lambda: s.cache_stats()):
        with pytest.raises(StoreGone, match=f"the database {path} was deleted") as err:
            call()
        assert err.value.path == str(path) and err.value.code == -32022
    assert not path.exists()  # nothing was written to a file nobody reads


def test_a_replaced_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    s = Store(path)
    s.rows_put("b", [(0, row(0))])
    other = Store(tmp_path / "other.sqlite3")
    other.close()
    os.replace(tmp_path / "other.sqlite3", path)
    with pytest.raises(StoreGone, match="replaced by another file"):
        s.rows_put("b", [(1, row(1))])
    assert "q1" not in {r.item for r in Store(path).rows_get("b")}  # nothing written after the swap


@pytest.mark.parametrize("where", ["header", "pages"])
def test_a_corrupt_database_says_so_and_what_to_do(tmp_path: Path, where: str) -> None:
    path = tmp_path / "s.sqlite3"
    s = Store(path)
    for i in range(300):  # a batch per row, as a slow stream commits them: 300 rows of row_batches
        s.rows_put("b", [(i, row(i))], fresh=1)  # (one 300-row batch is one SQLite row: scribbling
    s.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # its one index page may go unnoticed by SQLite)
    s.close()
    data = bytearray(path.read_bytes())
    if where == "header":
        data[:100] = b"this is not sqlite" * 5 + b"\0" * 10
    else:
        for off in range(4096, len(data), 4096):  # keep page 1, scribble over every other page
            data[off + 8 : off + 64] = os.urandom(56)
    path.write_bytes(bytes(data))
    with pytest.raises(StoreCorrupt, match=f"the database {path} is corrupt") as err:
        Store(path).rows_get("b")
    assert ".recover" in str(err.value) and "move the file aside" in str(err.value)


def test_a_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "fs"
    with tiny_fs(folder, 1024) as mounted:
        if not mounted and os.geteuid() == 0:
            pytest.skip("root without CAP_SYS_ADMIN cannot make a folder read-only")
        Store(folder / "old.sqlite3").close()
        with made_read_only(folder):
            with pytest.raises(StoreReadOnly, match=f"cannot write the database {folder / 'new.sqlite3'}"):
                Store(folder / "new.sqlite3")
            with pytest.raises(StoreReadOnly, match=f"Make {folder} writable"):
                Store(folder / "old.sqlite3").rows_put("b", [(0, row(0))])


def test_disk_full_keeps_what_was_committed(tmp_path: Path) -> None:
    folder = tmp_path / "fs"
    with tiny_fs(folder, 256) as mounted:
        s = Store(folder / "s.sqlite3")
        if not mounted:  # the same SQLITE_FULL, from SQLite's page limit
            s.db.execute("PRAGMA max_page_count=64")
        saved = 0
        with pytest.raises(StoreFull, match="is full") as err:
            for i in range(100_000):
                s.rows_put("b", [(i, row(i))])
                saved += 1
        assert err.value.path == str(folder / "s.sqlite3") and "Free some space" in str(err.value)
        assert s.rows_count("b") == saved  # the failed batch rolled back; every earlier one is kept
        assert isinstance(err.value, StoreError)
        s.close()


def test_sqlite_errors_that_need_no_user_action_stay_as_they_are() -> None:
    s = Store(":memory:")
    with pytest.raises(sqlite3.OperationalError):
        s._one("SELECT nope FROM nowhere")


def test_gc_checks_the_file_and_types_its_errors_like_every_write(tmp_path: Path) -> None:
    # gc's cache/recording deletes and VACUUM ran without the identity check and untyped
    path = tmp_path / "s.sqlite3"
    s = Store(path)
    s.rows_put("b", [(0, row(0))])
    s.db.execute("PRAGMA query_only=1")  # every write now fails in SQLite
    with pytest.raises(StoreReadOnly) as err:
        s.gc(0)
    assert err.value.path == str(path)
    s.db.execute("PRAGMA query_only=0")
    other = Store(tmp_path / "other.sqlite3")
    other.close()
    os.replace(tmp_path / "other.sqlite3", path)
    with pytest.raises(StoreGone, match="replaced by another file"):
        s.gc(0)
