"""Other tools' files that are bombs or malformed, through a real daemon: refused, exit 2, memory bounded.

The bombs (``hrbench.testing._bombs``) are ``.eval`` logs of 32-56 KB that inflate to 1 GiB:
zstd and deflated members, one huge member (its size declared, or a lie), many members, one
member listed many times, ``[[[...]]]`` nesting. Each is given to ``hrb ref put`` and as a
spec's outputs arm to ``hrb bench``; the daemon refuses it naming the limit (exit 2) and its
peak resident memory (``VmHWM`` in ``/proc/PID/status``) stays under 300 MB; it serves on
afterwards. How fast each is refused is measured by ``bench/import_bombs.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hrbench.testing import write_bombs
from tests._procs import daemon_of
from tests._slow import slow
from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401

DATA = Path(__file__).resolve().parents[1] / "unit" / "interop" / "data"
LIMIT_MB = 300


def _memory_mb(pid: int) -> dict[str, float]:
    """``VmRSS`` and ``VmHWM`` (the peak) of process ``pid``, in MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out


def _spec(tmp_path: Path, path: Path, fmt: str) -> Path:
    spec = tmp_path / f"{path.stem}.toml"
    spec.write_text(
        textwrap.dedent(f"""
        runs = 1
        [reference]
        items = {{ "q1" = "a" }}
        labels = {{ "q1" = "Paris" }}
        [[arms]]
        kind = "outputs"
        name = "imported"
        path = "{path}"
        format = "{fmt}"
    """)
    )
    return spec


def test_bombs_are_refused_by_a_daemon_whose_memory_stays_bounded(tmp_path: Path) -> None:
    bombs = write_bombs(tmp_path)
    good = lines(hrb("ref", "put", "good", str(DATA / "inspect_capitals.eval"), "--format", "inspect").stdout)
    pid = daemon_of(Path(os.environ["HRBENCH_HOME"]))
    assert pid is not None and good[0]["n_items"] == 3
    idle = _memory_mb(pid)
    for name, path in bombs.items():
        assert path.stat().st_size < 64_000, name
        err = hrb("ref", "put", name, str(path), "--format", "inspect", check_rc=2).stderr
        refused = ("over the import limit HRBENCH_IMPORT_", "twice", "the zip declares for it")
        assert str(path) in err and any(r in err for r in refused), err
        assert "internal error" not in err
        mem = _memory_mb(pid)
        assert mem["VmHWM"] < LIMIT_MB, (name, idle, mem)
    for name in ("zstd-one-member", "zstd-many-members", "nested-100k"):  # as an outputs arm
        err = hrb("bench", str(_spec(tmp_path, bombs[name], "inspect")), "--no-rows", check_rc=2).stderr
        assert "arms[0].path: " in err and "over the import limit HRBENCH_IMPORT_" in err, err
    mem = _memory_mb(pid)
    assert mem["VmHWM"] < LIMIT_MB and mem["VmRSS"] < LIMIT_MB, (idle, mem)
    # it serves on: the real log again, and a benchmark
    again = lines(
        hrb("ref", "put", "good2", str(DATA / "inspect_capitals.eval"), "--format", "inspect").stdout
    )
    assert again[0]["hash"] == good[0]["hash"]
    assert daemon_of(Path(os.environ["HRBENCH_HOME"])) == pid


def test_a_limit_raised_in_the_daemons_environment_reads_the_file(tmp_path: Path) -> None:
    """The refusal says how to raise the limit; raised where the daemon starts, the file reads."""
    path = tmp_path / "log.json"
    path.write_bytes((DATA / "inspect_capitals.json").read_bytes())  # over 60,000 bytes
    env = {**os.environ, "HRBENCH_IMPORT_MAX_BYTES": "60000"}

    def put(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        cmd = [
            sys.executable,
            "-m",
            "hrbench_client.cli",
            "ref",
            "put",
            "x",
            str(path),
            "--format",
            "inspect",
        ]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=slow(120))

    refused = put(env)  # this hrb starts the daemon: the daemon has the variable
    assert refused.returncode == 2, refused.stderr
    assert (
        f"the file is {path.stat().st_size:,} bytes: over the import limit HRBENCH_IMPORT_MAX_BYTES=60000"
        in refused.stderr
    )
    assert "raise it (e.g. HRBENCH_IMPORT_MAX_BYTES=240000)" in refused.stderr
    hrb("daemon", "stop")
    raised = put({**env, "HRBENCH_IMPORT_MAX_BYTES": "240000"})
    assert raised.returncode == 0 and lines(raised.stdout)[0]["n_items"] == 3, raised.stderr


INSPECT = json.loads((DATA / "inspect_capitals.json").read_text())


def _broken(tmp_path: Path) -> list[tuple[Path, str, str]]:
    """One malformed file per format, as ``(path, format, what the refusal says)``."""
    log = json.loads(json.dumps(INSPECT))
    log["samples"][3]["output"] = [1, 2]
    promptfoo = json.loads((DATA / "promptfoo_capitals.json").read_text())
    promptfoo["results"]["results"][2]["provider"] = 5
    real = (DATA / "lmeval_real_samples_arith.jsonl").read_text().splitlines()
    out = []
    for name, data, fmt, want in (
        ("log.json", json.dumps(log), "inspect", "samples[3].output: expected an object, found a list [1, 2]"),
        ("results.json", json.dumps(promptfoo), "promptfoo", "results.results[2].provider: expected an object, found a number 5"),
        ("samples_x.jsonl", "\n".join([real[0], real[1][:40]]), "lm-eval", "line 2: not JSON (Unterminated string"),
    ):  # fmt: skip
        path = tmp_path / name
        path.write_text(data)
        out.append((path, fmt, want))
    return out


@pytest.mark.usefixtures("shared_home")  # nothing is stored: every command is refused
def test_malformed_files_exit_2_naming_the_file_and_the_place(tmp_path: Path) -> None:
    for path, fmt, want in _broken(tmp_path):
        err = hrb("ref", "put", "broken", str(path), "--format", fmt, check_rc=2).stderr
        assert f"{path}: {want}" in err and "reference.path" not in err, err  # no spec: the file, not a field
        err = hrb("bench", str(_spec(tmp_path, path, fmt)), "--no-rows", check_rc=2).stderr
        assert f"arms[0].path: {want}" in err and str(path) in err, err
