"""Files written whole or not at all, and a confined caller's files inside the exchange folders.

The writers of the library (``Bench.to_jsonl|to_csv|to_parquet|to_inspect``, ``Report.plot``,
``write_inspect_logs``) run in a subprocess whose file-size limit (``RLIMIT_FSIZE``, with
``SIGXFSZ`` ignored so a write past it fails with ``EFBIG``) is below what they write: a real
"no room" that needs no privilege. Each must raise ``ConfigError`` naming the file and leave
the old file as it was and no temporary file. Then the rules of :mod:`hrbench._util.files` for
a confined caller (a TCP client of the daemon), on a real folder tree with links and a FIFO.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrbench._util.atomic import atomic_file
from hrbench._util.files import Confinement, confinement, make_folder, open_input, output_file, read_text
from hrbench.errors import ConfigError
from tests._slow import slow

LIMITED = r"""
import json, os, resource, signal, sys, warnings
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
warnings.simplefilter("ignore")
import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.interop import inspect_logs, write_inspect_logs
from hrbench.stats import report

folder = sys.argv[1]
ref = hb.Reference({f"q{i}": "x" * 200 + str(i) for i in range(300)}, labels="x" * 200)
bench = hb.benchmark(hb.Arm("a", lambda item, ctx: item), ref, runs=5)
rep = report(bench.rows)
two = hb.benchmark([hb.Arm("a", lambda item, ctx: item), hb.Arm("b", lambda item, ctx: "no")], ref, runs=5)
made = dict(task="t", created="2026-12-07T05:18:02+00:00", bench_id="b1")
small = inspect_logs([r for r in two.rows if r.arm == "b" and r.item == "q0"], **made)
big = inspect_logs([r for r in two.rows if r.arm == "a"], items=ref.items, **made)
logs = {**small, **big}  # the small log is written first, then the big one meets the limit
writers = {
    "rows.jsonl": lambda p: bench.to_jsonl(p),
    "rows.csv": lambda p: bench.to_csv(p),
    "rows.parquet": lambda p: bench.to_parquet(p),
    "plot.png": lambda p: rep.plot(p),
    "inspect": lambda p: bench.to_inspect(p, name="t"),
    "logs": lambda p: write_inspect_logs(p, logs),
}
limit = int(sys.argv[2])
# under the limit CPython would write a module's bytecode cut at the limit (its write is not
# retried) into the shared cache, where every later import of it fails: write none
sys.dont_write_bytecode = True
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
out = {}
for name, write in writers.items():
    try:
        write(os.path.join(folder, name))
        out[name] = "written"
    except ConfigError as exc:
        out[name] = f"ConfigError: {exc}"
    except Exception as exc:
        out[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def _whole_bytecode(path: Path) -> bool:
    try:
        marshal.loads(path.read_bytes()[16:])  # the code object after the 16-byte header
    except (EOFError, ValueError, TypeError):
        return False
    return True


def test_the_library_writers_leave_the_old_file_whole_when_there_is_no_room(tmp_path: Path) -> None:
    old = b"the old file\n"
    for name in ("rows.jsonl", "rows.csv", "rows.parquet", "plot.png"):
        (tmp_path / name).write_bytes(old)
    for folder in ("inspect", "logs"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "old.json").write_bytes(old)
    with tempfile.TemporaryDirectory() as cache:  # a bytecode cache of its own, checked below
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        proc = subprocess.run(
            [sys.executable, "-c", LIMITED, str(tmp_path), str(16 * 1024)],
            capture_output=True,
            text=True,
            timeout=slow(300),
            env={**env, "PYTHONPYCACHEPREFIX": cache},
        )
        # no module's bytecode was left cut at the limit, where every later import of it fails
        cut = [p for p in Path(cache).rglob("*.pyc") if not _whole_bytecode(p)]
        assert cut == [], cut[:5]
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    assert set(got) == {"rows.jsonl", "rows.csv", "rows.parquet", "plot.png", "inspect", "logs"}
    for name, what in got.items():
        assert what.startswith("ConfigError: "), (name, what)
        assert "the file would be larger than this process may write (File too large)" in what, what
        assert str(tmp_path / name) in what, what  # names the file (a log inside the folder)
    for name in ("rows.jsonl", "rows.csv", "rows.parquet", "plot.png"):
        assert (tmp_path / name).read_bytes() == old
    # the logs are renamed together or not at all: the small one was not written alone
    for folder in ("inspect", "logs"):
        assert os.listdir(tmp_path / folder) == ["old.json"]
        assert (tmp_path / folder / "old.json").read_bytes() == old
    left = sorted(p.name for p in tmp_path.rglob("*") if p.is_file())
    assert left == sorted(["plot.png", "rows.csv", "rows.jsonl", "rows.parquet", "old.json", "old.json"])


def test_a_whole_file_replaces_the_old_one_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_bytes(b"old")
    target.chmod(0o640)
    with atomic_file(target) as f:
        f.write(b"new")
    assert target.read_bytes() == b"new" and oct(target.stat().st_mode & 0o777) == "0o640"
    with pytest.raises(RuntimeError), atomic_file(target) as f:
        f.write(b"half")
        raise RuntimeError("the writer failed")
    assert target.read_bytes() == b"new" and os.listdir(tmp_path) == ["out.txt"]


def test_a_link_is_written_through_and_a_device_in_place(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_bytes(b"old")
    (tmp_path / "link.txt").symlink_to(real)
    with atomic_file(tmp_path / "link.txt") as f:
        f.write(b"through")
    assert (tmp_path / "link.txt").is_symlink() and real.read_bytes() == b"through"
    with atomic_file("/dev/null") as f:  # nothing can be renamed over a device
        f.write(b"gone")
    assert os.path.exists("/dev/null") and not Path("/dev/null").is_file()


@pytest.fixture
def confined(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    token = confinement.set(Confinement(str(home)))
    try:
        yield home
    finally:
        confinement.reset(token)


def test_a_confined_caller_reads_and_writes_only_inside_the_exchange_folders(
    confined: Path, tmp_path: Path
) -> None:
    home = confined
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    with output_file(home / "exports" / "a.txt", "dest") as f:
        f.write(b"ok")
    assert read_text(home / "exports" / "a.txt") == "ok"
    assert oct((home / "exports").stat().st_mode & 0o777) == "0o700"
    (home / "imports").mkdir(exist_ok=True)
    (home / "imports" / "in.txt").write_text("in")
    assert read_text(home / "imports" / "in.txt", "source") == "in"
    make_folder(home / "exports" / "made" / "deep")
    assert (home / "exports" / "made" / "deep").is_dir()

    refusals = {
        "outside": (lambda: read_text(outside, "source"), "over TCP the daemon reads files only inside"),
        "the store": (lambda: read_text(home / "hrbench.sqlite3", "source"), "reads files only inside"),
        "dot-dot": (lambda: read_text(home / "exports" / ".." / "x", "source"), "`..` is not allowed"),
        "relative": (lambda: read_text("exports/a.txt", "source"), "needs an absolute path"),
        "write to imports": (lambda: output_file(home / "imports" / "w.txt", "source").__enter__(), "writes"),
        "a folder outside": (lambda: make_folder(tmp_path / "made", "source"), "writes files only inside"),
    }
    for what, (call, message) in refusals.items():
        with pytest.raises(ConfigError) as err:
            call()
        assert err.value.field == "source" and message in str(err.value), (what, str(err.value))
    assert outside.read_text() == "secret" and not (tmp_path / "made").exists()


def test_a_confined_caller_never_goes_through_a_link_nor_waits_on_a_fifo(
    confined: Path, tmp_path: Path
) -> None:
    home = confined
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (home / "imports").mkdir()
    (home / "imports" / "dir").symlink_to(outside)
    (home / "imports" / "file.txt").symlink_to(outside / "secret.txt")
    (home / "exports").mkdir()
    (home / "exports" / "dir").symlink_to(outside)
    (home / "exports" / "file.txt").symlink_to(outside / "secret.txt")
    os.mkfifo(home / "imports" / "fifo")
    cases = {
        "a folder link": (lambda: read_text(home / "imports" / "dir" / "secret.txt"), "symbolic link"),
        "a file link": (lambda: read_text(home / "imports" / "file.txt"), "symbolic link"),
        "a FIFO": (lambda: read_text(home / "imports" / "fifo"), "not a regular file"),
        "a folder": (lambda: read_text(home / "imports"), "is a folder"),
        "write through a folder link": (
            lambda: output_file(home / "exports" / "dir" / "new.txt").__enter__(),
            "symbolic link",
        ),
        "write over a file link": (
            lambda: output_file(home / "exports" / "file.txt").__enter__(),
            "it is a symbolic link",
        ),
        "make through a link": (lambda: make_folder(home / "exports" / "dir" / "sub"), "symbolic link"),
    }
    for what, (call, message) in cases.items():
        with pytest.raises(ConfigError) as err:
            call()
        assert err.value.field == "path" and message in str(err.value), (what, str(err.value))
    assert sorted(os.listdir(outside)) == ["secret.txt"] and (outside / "secret.txt").read_text() == "secret"


def test_unconfined_the_library_opens_paths_as_given(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "x.txt").write_text("x")
    assert read_text(tmp_path / "a" / ".." / "x.txt") == "x"
    with open_input(tmp_path / "x.txt") as f:
        assert f.read() == b"x"
    with pytest.raises(FileNotFoundError):
        open_input(tmp_path / "missing.txt")
    with pytest.raises(ConfigError, match="cannot write the file: No such file or directory"):
        with output_file(tmp_path / "no" / "such" / "folder.txt"):
            pass
