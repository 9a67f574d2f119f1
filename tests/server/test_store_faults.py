"""A daemon whose database vanishes, is replaced, is corrupt, read-only or
full refuses work with a typed error naming the file and the fix, and every row it streamed
was saved. Real daemon subprocesses; a real tiny tmpfs where the machine can mount one.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

import hrbench_client as hc
from tests._fs import can_mount, made_read_only, tiny_fs
from tests._slow import slow
from tests.server._daemon import Daemon, spec


def db_files(home: Path) -> list[Path]:
    return [home / f"hrbench.sqlite3{s}" for s in ("", "-wal", "-shm")]


def keys(rows: list[hc.Row]) -> set[tuple[str, str, int]]:
    return {(r.arm, r.item, r.run) for r in rows}


def test_deleting_the_database_under_a_running_daemon(daemon: Daemon) -> None:
    db = daemon.home / "hrbench.sqlite3"
    with daemon.client() as c:
        first = c.benchmark(spec(n=2, runs=1))
        assert len(list(first)) == 2
        for f in db_files(daemon.home):
            f.unlink(missing_ok=True)
        with pytest.raises(hc.StoreGone, match=f"the database {db} was deleted") as err:
            list(c.benchmark(spec(n=2, runs=1)))  # not "done" into a file nobody reads
        assert err.value.code == -32022 and err.value.path == str(db)
        assert "Restart the daemon" in str(err.value)
        for call in (c.cache_stats, lambda: c.rows(first.id or ""), c.references.list):  # type: ignore[union-attr]
            with pytest.raises(hc.StoreGone):
                call()
        assert c.score("a", label="a").correct  # work without the store goes on
    assert not db.exists()
    daemon.stop()
    daemon.start()  # a restart makes a new database
    with daemon.client() as c:
        assert len(list(c.benchmark(spec(n=2, runs=1)))) == 2


def test_deleting_the_database_mid_benchmark_stops_it_and_says_so(daemon: Daemon) -> None:
    daemon.stop()
    daemon.env["HRB_MOCK_DELAY_S"] = "0.002"
    daemon.start()
    with daemon.client() as c:
        stream = c.benchmark(spec(n=200, runs=5, concurrency=4))
        seen = []
        with pytest.raises(hc.StoreGone) as err:
            for row in stream:
                seen.append(row)
                if len(seen) == 20:
                    for f in db_files(daemon.home):
                        f.unlink(missing_ok=True)
        assert 20 <= len(seen) < 1000
        assert "were not saved" in str(err.value) and f'"resume": "{stream.id}"' in str(err.value)
        assert c.status().running == []


def test_replacing_the_database_under_a_running_daemon(daemon: Daemon, tmp_path: Path) -> None:
    with daemon.client() as c:
        assert len(list(c.benchmark(spec(n=1, runs=1)))) == 1
        other = tmp_path / "other.sqlite3"
        sqlite3.connect(other).close()
        os.replace(other, daemon.home / "hrbench.sqlite3")
        with pytest.raises(hc.StoreGone, match="replaced by another file"):
            list(c.benchmark(spec(n=1, runs=1)))


def test_a_corrupt_database(home: Path) -> None:
    home.mkdir(mode=0o700)
    (home / "hrbench.sqlite3").write_bytes(b"not a database at all " * 400)
    d = Daemon(home).start()
    try:
        with d.client() as c:
            with pytest.raises(hc.StoreCorrupt, match="is corrupt or not an hrbench database") as err:
                list(c.benchmark(spec(n=1, runs=1)))
            assert err.value.code == -32024 and ".recover" in str(err.value)
            with pytest.raises(hc.StoreCorrupt):
                c.cache_stats()
            assert c.status().pid == d.proc.pid  # type: ignore[union-attr]
    finally:
        d.stop()
    assert "Traceback" not in d.read_log()


def test_a_read_only_state_folder_at_start(tmp_path: Path) -> None:
    home = tmp_path / "ro"
    with tiny_fs(home, 1024) as mounted:
        if not mounted and os.geteuid() == 0:
            pytest.skip("root without CAP_SYS_ADMIN cannot make a folder read-only")
        d = Daemon(home).start()  # a first start leaves its files, as a real folder would have
        with d.client() as c:
            c.cache_stats()
        d.stop()
        with made_read_only(home):
            out = subprocess.run(d.command(), capture_output=True, text=True, timeout=slow(60), env=d.env)
    assert out.returncode == 5, out.stderr
    assert f"cannot use the state folder {home}" in out.stderr and "Make it writable" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_full_disk_stops_the_benchmark_and_every_streamed_row_is_saved(tmp_path: Path) -> None:
    if not can_mount(tmp_path):
        pytest.skip("no tmpfs here: tests/unit/store/test_store_faults.py simulates SQLITE_FULL instead")
    home = tmp_path / "full"
    with tiny_fs(home, 8192):
        with Daemon(home) as d:
            big = spec(n=600, runs=5, concurrency=4)
            big["reference"]["items"] = {k: v + " " + "x" * 400 for k, v in big["reference"]["items"].items()}
            with d.client() as c:
                stream = c.benchmark(big)
                seen = []
                with pytest.raises(
                    hc.StoreFull, match=f"the disk holding the database {home / 'hrbench.sqlite3'} is full"
                ) as err:
                    for row in stream:
                        seen.append(row)
                assert err.value.code == -32023 and "were not saved" in str(err.value)
                assert 0 < len(seen) < 3000
                stored = c.rows(stream.id or "").rows
                assert keys(seen) <= keys(stored)  # a row the client saw is a row saved
                assert len(stored) == len(seen)  # and nothing saved went unsent
                assert c.status().running == []
