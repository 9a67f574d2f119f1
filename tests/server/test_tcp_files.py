"""Over TCP the daemon writes files only inside its state folder's exports folder, or answers
the data on the wire: a TCP client holding the token cannot overwrite the store, the token or
any other file the daemon's user may write. A real daemon with a loopback TCP listener.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import hrbench_client as hc
from hrbench_client import _paths
from hrbench_client import protocol as p
from hrbench_client.client import Client
from tests._slow import slow
from tests.server._daemon import Daemon, spec

pytestmark = pytest.mark.timeout(180)

# every method whose params name a file the daemon would write (the others' `path` fields are
# read: recording/import, a reference's or an outputs arm's file)
WRITES = {"recording/export": "path", "benchmark/export": "path"}


def tcp_client(home: Path) -> Client:
    host, port = json.loads(_paths.pid_path(home).read_text())["tcp"].rsplit(":", 1)
    return Client.connect_tcp(host, int(port), _paths.token_path(home).read_text().strip(), slow(60))


@contextlib.contextmanager
def _recorded(home: Path) -> Iterator[Daemon]:
    """A daemon with a TCP listener on ``home``, one benchmark stored and recorded in it."""
    with Daemon(home, tcp="127.0.0.1:0") as d:
        with d.client() as c:  # over the Unix socket: a recording of 4 replies
            assert len(list(c.benchmark(spec(n=2, runs=2, record="rec", cache=False)))) == 4
        yield d


@pytest.fixture
def tcp_daemon(home: Path) -> Iterator[Daemon]:
    """A fresh one, for a test that checks what the daemon makes in its state folder."""
    with _recorded(home) as d:
        yield d


@pytest.fixture(scope="module")
def refusing_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One for the module's tests of refused writes and the benchmark export: none changes what
    another reads (the export adds a file to the exports folder only)."""
    with _recorded(tmp_path_factory.mktemp("tcp-files") / "home") as d:
        yield d


def test_the_file_writing_methods_are_the_ones_this_module_covers() -> None:
    with_path = {m for m, (params, _) in p.METHODS.items() if "path" in params.__struct_fields__}
    assert with_path == {
        "recording/import",
        "recording/export",
        "benchmark/export",
        "grades/put",  # read: over TCP only in the exchange folders (tests/server/test_grades.py)
    }  # a new one must be sorted here
    assert set(WRITES) <= with_path


@pytest.mark.parametrize(
    "target",
    ["outside", "the store", "the token", "dot-dot out of exports", "a link in exports", "exports itself"],
)
def test_export_over_tcp_outside_the_exports_folder_is_refused(
    refusing_daemon: Daemon, tmp_path: Path, target: str
) -> None:
    tcp_daemon = refusing_daemon
    home = tcp_daemon.home
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (home / "exports").mkdir(exist_ok=True)
    (home / "exports" / "link.jsonl").unlink(missing_ok=True)
    (home / "exports" / "link.jsonl").symlink_to(victim)
    path = {
        "outside": victim,
        "the store": home / "hrbench.sqlite3",
        "the token": _paths.token_path(home),
        "dot-dot out of exports": home / "exports" / ".." / "hrbench.sqlite3",
        "a link in exports": home / "exports" / "link.jsonl",
        "exports itself": home / "exports",
    }[target]
    before = {f: f.read_bytes() for f in (victim, home / "hrbench.sqlite3", _paths.token_path(home))}
    with tcp_client(home) as c:
        with pytest.raises(hc.ConfigError) as err:
            c.call("recording/export", {"name": "rec", "path": str(path)}, p.RecordingExportResult)
        assert err.value.field == "path"
        if target == "a link in exports":
            assert "cannot write the file: it is a symbolic link" in str(err.value)
        elif target == "dot-dot out of exports":
            assert "path: `..` is not allowed in a path over TCP the daemon opens" in str(err.value)
        elif target == "exports itself":
            assert "path: is a folder: name the file to write in it" in str(err.value)
        else:
            assert f"over TCP the daemon writes files only inside {home / 'exports'}" in str(err.value)
            assert "leave `path` out to get the data in the reply" in str(err.value)
        assert c.status().pid == tcp_daemon.proc.pid  # type: ignore[union-attr]
    assert {f: f.read_bytes() for f in before} == before
    with tcp_daemon.client() as c:  # the store is whole
        assert c.cache_stats()["entries"] >= 0 and "rec" in {
            r["recording"] for r in c.cache_stats()["recordings"]
        }


def test_export_over_tcp_inside_exports_on_the_wire_and_by_the_client(
    tcp_daemon: Daemon, tmp_path: Path
) -> None:
    home = tcp_daemon.home
    with tcp_daemon.client() as c:  # the Unix socket writes where its user asks, as before
        assert c.recording_export("rec", tmp_path / "by-socket.jsonl").n == 4
    expected = (tmp_path / "by-socket.jsonl").read_bytes()
    inside = home / "exports" / "rec.jsonl"
    with tcp_client(home) as c:
        out = c.call("recording/export", {"name": "rec", "path": str(inside)}, p.RecordingExportResult)
        assert (out.n, out.path, out.entries) == (4, str(inside), None)
        wire = c.recording_export("rec")  # no path: the entries in the reply
        assert wire.n == 4 and wire.path is None and wire.entries is not None
        assert [json.loads(line) for line in expected.splitlines()] == wire.entries
        mine = c.recording_export("rec", tmp_path / "by-tcp.jsonl")  # the client writes it
        assert (mine.n, mine.path) == (4, str(tmp_path / "by-tcp.jsonl"))
    assert inside.read_bytes() == expected
    assert (tmp_path / "by-tcp.jsonl").read_bytes() == expected
    assert oct(os.stat(inside).st_mode & 0o777) == "0o600"
    assert oct(os.stat(home / "exports").st_mode & 0o777) == "0o700"


def test_benchmark_export_over_tcp_writes_inside_exports_only(
    refusing_daemon: Daemon, tmp_path: Path
) -> None:
    """`hrb export` over TCP: Inspect logs only into the exports folder, none elsewhere."""
    tcp_daemon = refusing_daemon
    home = tcp_daemon.home
    with tcp_daemon.client() as c:
        [bench] = c.benchmarks()
    outside = tmp_path / "logs"
    outside.mkdir()
    with tcp_client(home) as c:
        with pytest.raises(hc.ConfigError) as err:
            c.call("benchmark/export", {"id": bench.id, "path": str(outside)}, p.BenchmarkExportResult)
        assert err.value.field == "path" and "over TCP the daemon writes files only inside" in str(err.value)
        with pytest.raises(hc.ConfigError):  # no folder is made outside either
            c.call(
                "benchmark/export", {"id": bench.id, "path": str(tmp_path / "new")}, p.BenchmarkExportResult
            )
        (home / "exports").mkdir(exist_ok=True)
        out = c.call(
            "benchmark/export", {"id": bench.id, "path": str(home / "exports")}, p.BenchmarkExportResult
        )
    assert not list(outside.iterdir()) and not (tmp_path / "new").exists()
    [written] = [Path(x) for x in out.paths]
    assert written.parent == home / "exports" and json.loads(written.read_text())["version"] == 2
    assert oct(os.stat(written).st_mode & 0o777) == "0o600"
    with tcp_daemon.client() as c:  # over the Unix socket, a folder is made where its user asks
        mine = c.call(
            "benchmark/export", {"id": bench.id, "path": str(tmp_path / "made")}, p.BenchmarkExportResult
        )
    assert [Path(x).parent for x in mine.paths] == [tmp_path / "made"]
