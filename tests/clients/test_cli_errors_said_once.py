"""Runs that ended in errors for one cause in every arm, said once (the TAT-QA demo's shape), through `hrb`.

Rules: `hrb bench`'s summary of failed runs groups the arms that failed alike (the same counts,
cause and first run) into one entry; the demo prints the benchmark's printout and then its
report, and the "Runs failed" note once (the report's, under its header).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from tests._slow import slow

HRB = [sys.executable, "-m", "hrbench_client.cli"]
ROOT = Path(__file__).resolve().parents[2]


def hrb(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HRB, *args], capture_output=True, text=True, timeout=slow(180), cwd=cwd, env=os.environ
    )


def _spec(tmp_path: Path) -> Path:
    """Four outputs arms on 6 items, each leaving out item q5 (`missing = "error"`)."""
    items = ", ".join(f'q{i} = "x {i}"' for i in range(6))
    labels = ", ".join(f'q{i} = "x"' for i in range(6))
    outs = ", ".join(f'q{i} = "x"' for i in range(5))
    arms = "".join(
        f'[[arms]]\nkind = "outputs"\nname = "arm_{a}"\nmissing = "error"\noutputs = {{{outs}}}\n'
        for a in "abcd"
    )
    spec = tmp_path / "s.toml"
    spec.write_text(f"runs = 1\n[reference]\nitems = {{{items}}}\nlabels = {{{labels}}}\n{arms}")
    return spec


def test_one_cause_in_every_arm_is_said_once(tmp_path: Path, shared_home: Path) -> None:
    proc = hrb("bench", str(_spec(tmp_path)), "--no-rows", cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    line = next(ln for ln in proc.stderr.splitlines() if "runs ended in errors and are counted wrong" in ln)
    assert line.count("no output for item 'q5'") <= 3, line  # the cause, its count, the first message: once
    assert "arms 'arm_a', 'arm_b', 'arm_c', 'arm_d': 1 of 6 run(s) each" in line, line
    result = json.loads(proc.stdout.splitlines()[-1])
    spec = importlib.util.spec_from_file_location("demo", ROOT / "examples" / "demo.py")
    assert spec is not None and spec.loader is not None
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    report = hrb("report", result["id"], "--descriptive", "--text", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    shown = demo.printout(result) + "\n" + report.stdout  # what the demo prints, in its order
    assert shown.count("Runs failed:") == 1, shown
