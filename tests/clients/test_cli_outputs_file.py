"""Outputs files through `hrb bench` and a real daemon: `id` for `item`, and errors that say what the line holds.

Rules (docs/concepts.md, outputs arms): a JSON lines record names its item by ``item``, or by
``id`` as a reference's records do; a line with neither is refused naming the keys it has and
the line itself (never the file's path as the value "got"); an item with fewer outputs than
runs is refused saying how many it has.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests._slow import slow

HRB = [sys.executable, "-m", "hrbench_client.cli"]

SPEC = (
    'runs = 3\n[reference]\nitems = {g1 = "France", g2 = "Peru"}\nlabels = {g1 = "Paris", g2 = "Lima"}\n'
    '[[arms]]\nkind = "outputs"\nname = "o"\npath = "outs.jsonl"\n'
)


def _bench(tmp_path: Path, lines: list[dict]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "s.toml").write_text(SPEC)
    (tmp_path / "outs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return subprocess.run(
        [*HRB, "bench", "s.toml", "--no-rows"],
        capture_output=True,
        text=True,
        timeout=slow(180),
        cwd=tmp_path,
        env=os.environ,
    )


def test_an_outputs_line_may_name_its_item_by_id(tmp_path: Path, shared_home: Path) -> None:
    proc = _bench(
        tmp_path, [{"id": "g1", "output": ["Paris", "Paris", "Lyon"]}, {"id": "g2", "output": ["Lima"] * 3}]
    )
    assert proc.returncode == 0, proc.stderr
    (arm,) = json.loads(proc.stdout.splitlines()[-1])["summary"]
    assert (arm["runs"], arm["wrong"]) == (6, 1)


def test_an_outputs_line_with_no_item_names_its_keys_and_shows_the_line(
    tmp_path: Path, shared_home: Path
) -> None:
    proc = _bench(tmp_path, [{"key": "g1", "output": ["Paris"] * 3}])
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr
    assert "arms[0].path" in err and "outs.jsonl line 1" in err, err
    assert "found keys key, output" in err and '{"key": "g1"' in err, err
    assert f"(got {str(tmp_path / 'outs.jsonl')!r})" not in err, err


def test_an_item_with_fewer_outputs_than_runs_says_how_many_it_has(tmp_path: Path, shared_home: Path) -> None:
    proc = _bench(
        tmp_path, [{"item": "g1", "output": ["Paris", "Paris"]}, {"item": "g2", "output": ["Lima"] * 3}]
    )
    assert proc.returncode == 2, proc.stderr
    assert "'g1' has 2 (missing run 3)" in proc.stderr, proc.stderr
