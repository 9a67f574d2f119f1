"""No room to write: every file ``hrb`` and the daemon write for a caller is whole or absent.

Two real ways to run out of room. The ``hrb`` process under a file-size limit
(``RLIMIT_FSIZE``, ``SIGXFSZ`` ignored: a write past it fails with ``EFBIG``), which needs no
privilege: ``hrb rows -o``, ``hrb report --html`` and ``hrb gate --markdown/--junit``. And a
full disk: a 256 KiB tmpfs, mounted in a private mount namespace (``unshare -m`` as root,
``unshare -Urm`` through a user namespace otherwise), where a daemon started inside it writes
``hrb export --format inspect``, ``hrb recording export`` and ``hrb report --plot`` and ``hrb``
writes ``hrb rows -o``. Each must exit 2 with an error naming the file and saying why, leave
the file that was there as it was (or no file), and no temporary file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._slow import slow
from tests.clients.test_cli import HRB, _bench_file, _stop_daemon, hrb  # noqa: F401

LIMIT = r"""
import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # kept across exec: a write past the limit is EFBIG
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
# no bytecode written under the limit: CPython would leave a module's cache cut at the limit
# (its write is not retried) in the shared cache, where every later import of it fails
os.execve(sys.executable, [sys.executable, *sys.argv[2:]], {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
"""

OLD = b"the file that was there\n"


def _limited(limit: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LIMIT, str(limit), *HRB[1:], *args],
        capture_output=True,
        text=True,
        timeout=slow(120),
    )


def test_hrb_writes_whole_files_or_none_under_a_file_size_limit(tmp_path: Path) -> None:
    bench_id = json.loads(hrb("bench", str(_bench_file(tmp_path)), "--no-rows").stdout.splitlines()[-1])["id"]
    out = tmp_path / "out"
    out.mkdir()
    cases = {
        "rows.jsonl": (["rows", bench_id, "-o"], "--output"),
        "rows.parquet": (["rows", bench_id, "--format", "parquet", "-o"], "--output"),
        "page.html": (["report", bench_id, "--html"], "--html"),
        "gate.md": (["gate", bench_id, "--baseline", bench_id, "--arm", "ask", "--markdown"], "--markdown"),
        "gate.xml": (["gate", bench_id, "--baseline", bench_id, "--arm", "ask", "--junit"], "--junit"),
    }
    for name, (args, option) in cases.items():
        target = out / name
        target.write_bytes(OLD)
        proc = _limited(64, *args, str(target))
        assert proc.returncode == 2, (name, proc.returncode, proc.stderr)
        assert f"{option} " in proc.stderr and str(target) in proc.stderr, proc.stderr
        assert "the file would be larger than this process may write (File too large)" in proc.stderr
        assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
        assert target.read_bytes() == OLD, name
    assert sorted(os.listdir(out)) == sorted(cases)  # no temporary file left
    fine = _limited(10_000_000, "rows", bench_id, "-o", str(out / "rows.jsonl"))  # with room: written
    assert fine.returncode == 0 and len((out / "rows.jsonl").read_text().splitlines()) == 30


DRIVER = r"""
import json, os, subprocess, sys
disk, home, spec = sys.argv[1:4]
hrb = [sys.executable, "-m", "hrbench_client.cli"]
env = {**os.environ, "HRBENCH_HOME": home}
def run(*args):
    p = subprocess.run([*hrb, *args], capture_output=True, text=True, env=env, timeout=float(sys.argv[4]))
    return {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr}
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", disk], check=True)
out = {}
try:
    bench = run("bench", spec, "--no-rows")
    bid = json.loads(bench["stdout"].splitlines()[-1])["id"]
    old = b"the file that was there\n"
    os.makedirs(os.path.join(disk, "logs"))
    task = "full"
    for name in ("logs/full_ask.json", "rec.jsonl", "plot.png", "rows.jsonl"):
        with open(os.path.join(disk, name), "wb") as f:
            f.write(old)
    with open(os.path.join(disk, "filler"), "wb", buffering=0) as f:  # full but for a few KiB
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    os.truncate(os.path.join(disk, "filler"), os.path.getsize(os.path.join(disk, "filler")) - 8192)
    out["export"] = run("export", bid, "--format", "inspect", "--name", task, "-o", os.path.join(disk, "logs"))
    out["recording"] = run("recording", "export", "rec", os.path.join(disk, "rec.jsonl"))
    out["plot"] = run("report", bid, "--descriptive", "--plot", os.path.join(disk, "plot.png"))
    out["rows"] = run("rows", bid, "--traces", "-o", os.path.join(disk, "rows.jsonl"))
    out["files"] = {
        os.path.relpath(os.path.join(d, f), disk): open(os.path.join(d, f), "rb").read() == old
        for d, _, fs in os.walk(disk) for f in fs if f != "filler"
    }
finally:
    run("daemon", "stop")
print(json.dumps(out))
"""


def _namespace() -> list[str]:
    """How to get a private mount namespace here (root: ``unshare -m``; else a user namespace)."""
    if os.geteuid() == 0:
        return ["unshare", "-m"]
    probe = subprocess.run(["unshare", "-Urm", "true"], capture_output=True, timeout=slow(30))
    if probe.returncode != 0:
        pytest.skip(
            "cannot mount a tmpfs here (not root, and user namespaces are off); "
            "test_hrb_writes_whole_files_or_none_under_a_file_size_limit covers the same writers"
        )
    return ["unshare", "-Urm"]


def test_a_full_disk_leaves_the_old_files_whole_and_says_so(tmp_path: Path) -> None:
    spec = tmp_path / "bench.toml"
    items = ", ".join(f'"question number {i} ' + "with words " * 20 + '"' for i in range(20))
    labels = ", ".join(['"x"'] * 20)
    spec.write_text(
        f'name = "full"\nruns = 5\nrecord = "rec"\n[reference]\nitems = [{items}]\nlabels = [{labels}]\n'
        '[client]\nkind = "mock"\nreply = "x"\n[[arms]]\nkind = "prompt"\nname = "ask"\ntemplate = "{item}"\n'
    )
    disk = tmp_path / "disk"
    disk.mkdir()
    proc = subprocess.run(
        [
            *_namespace(),
            sys.executable,
            "-c",
            DRIVER,
            str(disk),
            str(tmp_path / "home"),
            str(spec),
            str(slow(120)),
        ],
        capture_output=True,
        text=True,
        timeout=slow(600),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    for what, field in (("export", "path"), ("recording", "path"), ("plot", "plot"), ("rows", "--output")):
        r = got[what]
        assert r["rc"] == 2, (what, r)
        assert "the disk is full (No space left on device); nothing was written" in r["stderr"], (what, r)
        assert str(disk) in r["stderr"] and field in r["stderr"], (what, r["stderr"])
        assert "internal error" not in r["stderr"] and "Traceback" not in r["stderr"]
    # every file that was there is whole; nothing else was left (no temporary, no partial log)
    assert got["files"] == {
        "logs/full_ask.json": True,
        "rec.jsonl": True,
        "plot.png": True,
        "rows.jsonl": True,
    }
