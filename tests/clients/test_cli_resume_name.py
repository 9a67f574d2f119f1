"""``hrb bench --resume NAME`` with several benchmarks of that name says which one it resumed.

Rule (Store.benchmark_resolve: a name means its newest benchmark; hrbench.errors.ResumedNewestWarning):
the daemon's result carries a warning naming the id and start time of the benchmark resumed and
how many share the name; ``hrb`` prints it on stderr. A name only one benchmark has, and an id,
resume with no such warning.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._slow import slow

HRB = [sys.executable, "-m", "hrbench_client.cli"]
SPEC = (
    'name = "{name}"\nruns = 1\n[reference]\nitems = {{q1 = "France"}}\nlabels = {{q1 = "Paris"}}\n'
    '[[arms]]\nkind = "outputs"\nname = "o"\noutputs = {{q1 = "Paris"}}\n'
)


def hrb(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HRB, *args], capture_output=True, text=True, timeout=slow(180), cwd=cwd, env=os.environ
    )


def _run(tmp_path: Path, name: str) -> dict:
    (tmp_path / "s.toml").write_text(SPEC.format(name=name))
    proc = hrb("bench", "s.toml", "--no-rows", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.usefixtures("shared_home")
def test_a_resume_by_a_name_several_benchmarks_have_says_which_it_resumed(tmp_path: Path) -> None:
    _run(tmp_path, "dup-name")
    newest = _run(tmp_path, "dup-name")
    proc = hrb("bench", "--resume", "dup-name", "--no-rows", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["id"] == newest["id"]
    (said,) = [w for w in result["warnings"] if w.startswith("ResumedNewestWarning: ")]
    listed = {b["id"]: b for b in map(json.loads, hrb("ls", cwd=tmp_path).stdout.splitlines())}
    created = listed[newest["id"]]["created"]  # as `hrb ls` says it
    assert (
        f"2 benchmarks are named 'dup-name'; resumed the newest, {newest['id']} (started {created})" in said
    ), said
    assert f"hrb: warning: {said}" in proc.stderr, proc.stderr

    _run(tmp_path, "one-name")
    alone = hrb("bench", "--resume", "one-name", "--no-rows", cwd=tmp_path)
    assert alone.returncode == 0 and "ResumedNewestWarning" not in alone.stderr, alone.stderr
    by_id = hrb("bench", "--resume", newest["id"], "--no-rows", cwd=tmp_path)
    assert by_id.returncode == 0 and "ResumedNewestWarning" not in by_id.stderr, by_id.stderr
