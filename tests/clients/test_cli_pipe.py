"""A closed output (``hrb ... | head``): every command and format exits 141, quietly.

``hrb rows ID --format parquet | head`` prints no "Broken pipe" (nor jsonl/csv ``--output None:
Broken pipe``, exit 2; nor ``hrb score`` a traceback). The rule
(:func:`hrbench_client.cli.output_closed`): when standard output's reader is gone, nothing more
is written, nothing is printed on stderr but what says how to go on (``hrb bench`` streaming:
the resume command), and the exit code is 141 (128 + SIGPIPE). Real pipes: the reader is
closed before the command writes, or after it has read the first bytes (as ``head`` does).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrbench import Reference
from hrbench.store import Store
from tests._slow import slow
from tests.server._daemon import Daemon

HRB = [sys.executable, "-m", "hrbench_client.cli", "--no-autostart"]


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "HRBENCH_HOME": str(home)}


def _spec(folder: Path, items: int, runs: int, record: str | None = None) -> Path:
    spec = folder / f"pipe{items}x{runs}.toml"
    spec.write_text(
        (f"record = {json.dumps(record)}\n" if record else "")
        + textwrap.dedent(f"""
        runs = {runs}
        [reference]
        items = {json.dumps([f"item number {i}" for i in range(items)])}
        labels = {json.dumps(["x"] * items)}
        [client]
        kind = "mock"
        reply = "x"
        [[arms]]
        kind = "prompt"
        name = "ask"
        template = "{{item}}"
        [governor]
        max_calls = 100000
    """)
    )
    return spec


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, Path]]:
    """A daemon with a benchmark of 2,000 rows (over 4 KB, the smallest pipe buffer, in every format)."""
    base = tmp_path_factory.mktemp("pipe")
    home = base / "home"
    with Daemon(home):
        spec = _spec(base, 100, 20, record="pipe-rec")
        done = subprocess.run(
            [*HRB, "bench", str(spec), "--no-rows"],
            capture_output=True,
            text=True,
            env=_env(home),
            timeout=slow(300),
        )
        assert done.returncode == 0, done.stderr
        store = Store(home / "hrbench.sqlite3")  # a recording export to import
        entries = store.recording_export("pipe-rec")
        store.close()
        (base / "rec-in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
        yield home, json.loads(done.stdout.splitlines()[-1])["id"], base


def _closed_early(home: Path, argv: list[str], read_first: int = 0) -> tuple[int, str]:
    """Run ``hrb argv`` into a pipe whose reader reads ``read_first`` bytes, then closes."""
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)  # the smallest pipe: every format's rows overflow it
    proc = subprocess.Popen([*HRB, *argv], stdout=w, stderr=subprocess.PIPE, env=_env(home))
    os.close(w)
    with os.fdopen(r, "rb") as reader:
        got = reader.read(read_first) if read_first else b""
    assert len(got) == read_first  # the command did write before the reader went
    _, err = proc.communicate(timeout=slow(120))
    return proc.returncode, err.decode()


FORMATS = ["jsonl", "csv", "parquet"]


@pytest.mark.parametrize("read_first", [0, 100], ids=["closed-before", "head-c-100"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_rows_into_a_closed_pipe_exit_141_quietly_in_every_format(
    stored: tuple[Path, str, Path], fmt: str, read_first: int
) -> None:
    home, bench_id, base = stored
    for traces in ([], ["--traces"]):
        whole = base / f"whole-{fmt}-{len(traces)}"  # written once: both readers' cases check it
        argv = ["rows", bench_id, "--format", fmt, *traces]
        if not whole.exists():
            subprocess.run(
                [*HRB, *argv, "-o", str(whole)],
                env=_env(home),
                timeout=slow(120),
                check=True,
                capture_output=True,
            )
        assert whole.stat().st_size > 2 * 4096  # more than the pipe holds: a write must fail
        rc, err = _closed_early(home, argv, read_first)
        assert (rc, err) == (141, ""), err


def _commands(bench_id: str, base: Path, small: str) -> dict[str, list[str]]:
    """Every command that writes to stdout; ``small`` is a spec file to bench, ``base`` a folder."""
    return {
        "score (fast path)": ["score", "--label", "a", "a"],
        "score --check": ["score", "--check", "--scorer", "answer_contains", "--label", "a", "a"],
        "bench --no-rows": ["bench", str(small), "--no-rows"],
        "ls": ["ls"],
        "ls --text": ["ls", "--text"],
        "report": ["report", bench_id],
        "report --text": ["report", bench_id, "--text"],
        "report --format markdown": ["report", bench_id, "--format", "markdown"],
        "report --html": ["report", bench_id, "--html", str(base / "page.html")],
        "ref put": ["ref", "put", "pipe-ref", str(base / "ref.jsonl")],
        "ref get": ["ref", "get", "pipe-ref"],
        "ref list": ["ref", "list"],
        "cache stats": ["cache", "stats"],
        "recording export": ["recording", "export", "pipe-rec", str(base / "rec.jsonl")],
        "recording import": ["recording", "import", str(base / "rec-in.jsonl"), "--name", "pipe-rec2"],
        "gc": ["gc", "--older-than", "3650d", "--no-vacuum"],
        "rm": ["rm", "ffff000000000001"],
        "status": ["status"],
        "daemon status": ["daemon", "status"],
        "daemon start (one runs)": ["daemon", "start"],
        "--help": ["--help"],
        "--version": ["--version"],
        "rows --help": ["rows", "--help"],
    }


COMMANDS = list(_commands("X", Path("BASE"), "SPEC"))  # the names only: no file is written at import


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_into_a_closed_pipe_exits_141_quietly(
    stored: tuple[Path, str, Path], command: str
) -> None:
    home, bench_id, base = stored
    (base / "ref.jsonl").write_text('{"id": "q1", "item": "x", "label": "y"}\n')
    store = Store(home / "hrbench.sqlite3")
    try:
        store.benchmark_put("ffff000000000001", {"params": {"name": "throwaway"}}, "none", "done")
        store.reference_put(Reference({"q1": "x"}, labels=["y"]), "pipe-ref")
    finally:
        store.close()
    rc, err = _closed_early(home, _commands(bench_id, base, str(_spec(base, 3, 5)))[command])
    assert (rc, err) == (141, ""), err


def test_a_streaming_bench_into_a_closed_pipe_exits_141_with_the_resume_command(
    stored: tuple[Path, str, Path],
) -> None:
    home, _, base = stored
    rc, err = _closed_early(home, ["bench", str(_spec(base, 50, 10))])
    assert rc == 141
    (line,) = err.splitlines()  # one line: what happened and how to go on; no "Broken pipe"
    assert "was cancelled; finished rows are kept. Resume with: hrb bench --resume " in line


def test_bench_detach_into_a_closed_pipe_exits_141_and_the_benchmark_runs_on(
    stored: tuple[Path, str, Path],
) -> None:
    home, _, base = stored
    rc, err = _closed_early(home, ["bench", str(_spec(base, 7, 3)), "--detach"])
    assert rc == 141
    (line,) = err.splitlines()
    bench_id = line.split("benchmark ")[1].split()[0]
    assert (
        line
        == f"hrb: the output closed; benchmark {bench_id} runs on (detached): `hrb rows {bench_id}`, `hrb ls`"
    )
    deadline = time.monotonic() + slow(60)
    listed: dict[str, object] = {}
    while listed.get("status") != "done" and time.monotonic() < deadline:
        got = subprocess.run([*HRB, "ls"], capture_output=True, text=True, env=_env(home), timeout=slow(60))
        listed = next(b for b in map(json.loads, got.stdout.splitlines()) if b["id"] == bench_id)
        time.sleep(0.05)
    assert (listed["status"], listed["rows"]) == ("done", 21)
