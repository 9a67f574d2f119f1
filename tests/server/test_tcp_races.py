"""Over TCP every file the daemon opens is inside its exchange folders, even while links are swapped.

A TCP client holding the token may not be the daemon's user: what the daemon reads or writes
for it must lie in ``<home>/imports`` or ``<home>/exports`` (writes: ``exports`` only), opened
race-free (:mod:`hrbench._util.files`: a folder descriptor, each component with
``O_NOFOLLOW``, a temporary file renamed over the name). A real daemon with a loopback TCP
listener and a real process that swaps symbolic links as fast as it can while a client asks for
2,000 recording exports and imports: not one byte is written or read outside. Reads and writes
that checked a folder's real path and then opened the file by its name let a swapped link
through (7 of 2,529 exports landed outside).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

import hrbench_client as hc
from hrbench_client import protocol as p
from tests._slow import slow
from tests.server.test_tcp_files import _recorded, tcp_client

pytestmark = pytest.mark.timeout(300)

ROUNDS = 1000  # exports and as many imports: 2,000 file operations

FLIPPER = r"""
import os, sys
links = [(sys.argv[i], sys.argv[i + 1], sys.argv[i + 2]) for i in range(2, len(sys.argv), 3)]
stop = sys.argv[1]
n = 0
while not os.path.exists(stop):
    for name, a, b in links:
        tmp = name + ".flip"
        # `name` becomes a symbolic link to `a`, then one to `b` (a regular file for "")
        for target in (a, b):
            try:
                if target:
                    os.symlink(target, tmp)
                else:  # a regular file by that name
                    open(tmp, "wb").close()
                os.replace(tmp, name)
            except OSError:
                pass
    n += 1
print(n)
"""


def test_swapped_links_never_lead_a_tcp_client_outside_the_exchange_folders(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    with _recorded(tmp_path / "home") as d:
        home = d.home
        with d.client() as c:  # over the Unix socket: a real export, 4 entries, to import from
            c.recording_export("rec", tmp_path / "rec.jsonl")
        good = (tmp_path / "rec.jsonl").read_bytes()
        assert good.count(b"\n") == 4
        secret = outside / "dir" / "secret.jsonl"  # read through a link: 7 entries instead of 4
        secret.write_bytes(good + good.splitlines(keepends=True)[0] * 3)
        victim = outside / "victim.jsonl"
        victim.write_bytes(b"keep me\n")
        exports, imports = home / "exports", home / "imports"
        (exports / "real").mkdir(parents=True)
        (imports / "real").mkdir(parents=True)
        (imports / "real" / "secret.jsonl").write_bytes(good)
        stop = tmp_path / "stop"
        flipper = subprocess.Popen(
            [
                sys.executable,
                "-c",
                FLIPPER,
                str(stop),
                # folders on the way: a link to a folder inside, then to one outside
                *(str(exports / "sub"), str(exports / "real"), str(outside / "dir")),
                *(str(imports / "sub"), str(imports / "real"), str(outside / "dir")),
                # the file itself: a regular file, then a link to a file outside
                *(str(exports / "flip.jsonl"), "", str(victim)),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        before = {f: f.read_bytes() for f in (secret, victim)}
        written = refused = imported = read_outside = 0
        try:
            with tcp_client(home) as c:
                for i in range(ROUNDS):
                    target = [
                        exports / "sub" / f"r{i}.jsonl",
                        exports / "flip.jsonl",
                        exports / f"p{i}.jsonl",
                    ][i % 3]
                    try:
                        c.call(
                            "recording/export", {"name": "rec", "path": str(target)}, p.RecordingExportResult
                        )
                        written += 1
                    except hc.ConfigError as exc:
                        assert exc.field == "path"
                        refused += 1
                    try:
                        got = c.call(
                            "recording/import",
                            {
                                "path": str(imports / ("sub", "real")[i % 2] / "secret.jsonl"),
                                "name": f"imp{i}",
                            },
                            p.RecordingImportResult,
                        )
                        imported += 1
                        read_outside += got.n != 4
                    except hc.ConfigError as exc:
                        assert exc.field == "path"
        finally:
            stop.touch()
            out, _ = flipper.communicate(timeout=slow(30))
        flips = int(out)
        assert flips > 100, f"the links were swapped only {flips} times"
        assert sorted(p.name for p in (outside / "dir").iterdir()) == ["secret.jsonl"]
        assert {f: f.read_bytes() for f in before} == before
        assert read_outside == 0, f"{read_outside} of {imported} imports read the file outside"
        assert imported >= ROUNDS // 2  # the plain path, every time
        # the plain names were written every time, whole (the links were refused, never followed)
        assert written >= ROUNDS // 3 and refused >= ROUNDS // 3
        plain = [exports / f"p{i}.jsonl" for i in range(2, ROUNDS, 3)]
        assert all(f.read_bytes() == good for f in plain)
        assert not [f for f in exports.rglob("*.tmp")]  # no temporary file left behind


@pytest.mark.parametrize("where", ["outside", "dot-dot", "inside imports", "inside exports"])
def test_over_tcp_the_files_opened_for_a_client_are_inside_the_exchange_folders(
    tmp_path: Path, where: str
) -> None:
    """recording/import, the gate's rows file and a spec's reference file read; a report's plot written."""
    with _recorded(tmp_path / "home") as d:
        home = d.home
        with d.client() as c:
            bid = c.benchmarks()[0].id
            rows = c.rows(bid).rows
            c.recording_export("rec", tmp_path / "rec.jsonl")
        folder = {
            "outside": tmp_path / "elsewhere",
            "dot-dot": home / "imports" / ".." / "elsewhere",
            "inside imports": home / "imports",
            "inside exports": home / "exports",
        }[where]
        real = Path(os.path.normpath(folder))
        real.mkdir(parents=True, exist_ok=True)
        (home / "imports").mkdir(exist_ok=True)  # `imports/..` names a folder that is there
        (real / "rec.jsonl").write_bytes((tmp_path / "rec.jsonl").read_bytes())
        (real / "rows.jsonl").write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in rows))
        (real / "ref.jsonl").write_text('{"id": "a", "item": "A", "label": "x"}\n')
        spec = {
            "name": "tcp-ref",
            "arms": [{"kind": "prompt", "name": "ask", "template": "{item}"}],
            "reference": {"path": str(folder / "ref.jsonl")},
            "client": {"kind": "mock", "reply": "x"},
            "runs": 5,
        }
        reads = {
            "path": lambda c: c.call(
                "recording/import", {"path": str(folder / "rec.jsonl")}, p.RecordingImportResult
            ),
            "candidate": lambda c: c.call(
                "benchmark/gate", {"candidate": str(folder / "rows.jsonl"), "baseline": bid}, p.GateResult
            ),
            "reference.path": lambda c: list(c.benchmark(spec)),
        }
        writes = {"plot": lambda c: c.report(bid, plot=str(folder / "plot.png"), descriptive=True)}
        with tcp_client(home) as c:
            for field, call in [*reads.items(), *writes.items()]:
                if where == "inside exports" or (where == "inside imports" and field in reads):
                    call(c)
                    continue
                with pytest.raises(hc.ConfigError) as err:
                    call(c)
                assert field in (err.value.field or ""), (field, str(err.value))
                if where == "dot-dot":
                    assert "`..` is not allowed in a path over TCP the daemon opens" in str(err.value)
                else:
                    verb = "writes" if field in writes else "reads"
                    assert f"over TCP the daemon {verb} files only inside {home}/" in str(err.value)
        assert (real / "plot.png").exists() == (where == "inside exports")
        if where == "inside exports":
            assert (real / "plot.png").read_bytes()[:4] == b"\x89PNG"


def test_the_unix_socket_still_opens_files_where_its_user_asks(tmp_path: Path, home: Path) -> None:
    (tmp_path / "a").mkdir()
    with _recorded(home) as d, d.client() as c:
        assert c.recording_export("rec", tmp_path / "a" / ".." / "rec.jsonl").n == 4
        assert c.recording_import(tmp_path / "rec.jsonl", name="again").n == 4
