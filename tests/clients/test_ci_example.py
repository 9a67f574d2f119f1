"""examples/ci/github-actions.yml: its shell steps run as written, in order, as GitHub runs them.

The provider is a loopback server (the example spec's ``base_url`` is pointed at it in a copy of
the folder), the state folder a temporary one; ``pip install hrbench`` is the one step not run
(the package is installed here already). A planted regression makes the gate step exit 1, and
the summary step, ``if: always()``, still runs; an unchanged model passes; a baseline that is not
a rows file is exit 2 and the summary and the JUnit file still say why.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from junitparser import JUnitXml

from hrbench.testing import LoopbackServer
from tests._slow import slow

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / "examples" / "ci"
SKIPPED = {"Install hrbench"}  # needs the network; this test runs the installed hrb


def _steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load((CI / "github-actions.yml").read_text())
    (job,) = workflow["jobs"].values()
    return list(job["steps"])


def _reply(wrong: set[str]) -> Any:
    ref = tomllib.loads((CI / "eval.toml").read_text())["reference"]
    answer = dict(zip(ref["items"].values(), ref["labels"], strict=True))

    def reply(prompt: str, seed: Any, call: int) -> str:
        m = re.search(r"capital of (.+?)\?", prompt)
        assert m is not None, prompt
        return "I do not know" if m.group(1) in wrong else answer[m.group(1)]

    return reply


def _run_workflow(
    tmp_path: Path, wrong: set[str], baseline: bytes | None = None
) -> tuple[list[tuple[str, int]], Path]:
    """Run every `run:` step in a copy of the repository (its baseline replaced by ``baseline``);
    (step name, exit code) for each run."""
    repo = tmp_path / "repo"
    shutil.copytree(CI, repo / "examples" / "ci")
    if baseline is not None:
        (repo / "examples" / "ci" / "baseline.jsonl").write_bytes(baseline)
    summary = tmp_path / "summary.md"
    env = {
        **os.environ,
        "HRBENCH_HOME": str(tmp_path / "home"),
        "GITHUB_STEP_SUMMARY": str(summary),
        "OPENAI_API_KEY": "sk-loopback",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    ran: list[tuple[str, int]] = []
    failed = False
    with LoopbackServer(reply_fn=_reply(wrong)) as srv:
        spec = repo / "examples" / "ci" / "eval.toml"
        text = spec.read_text()
        assert 'base_url = "https://api.openai.com/v1"' in text
        spec.write_text(text.replace("https://api.openai.com/v1", srv.base_url))
        try:
            for step in _steps():
                if "run" not in step or step.get("name") in SKIPPED:
                    continue
                if failed and step.get("if") != "always()":
                    continue
                proc = subprocess.run(  # GitHub's default shell for `run` on Linux
                    ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                    cwd=repo,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=slow(180),
                )
                ran.append((step["name"], proc.returncode))
                failed = failed or proc.returncode != 0
        finally:
            subprocess.run(
                [sys.executable, "-m", "hrbench_client.cli", "daemon", "stop"],
                env=env,
                capture_output=True,
                timeout=slow(60),
            )
    return ran, summary


def test_the_workflow_names_its_steps_and_skips_only_the_install() -> None:
    steps = _steps()
    runs = [s["name"] for s in steps if "run" in s]
    assert runs == ["Install hrbench", "Run the benchmark", "Gate against the baseline", "Summary"]
    assert steps[-1]["uses"].startswith("actions/upload-artifact@") and steps[-1]["if"] == "always()"


@pytest.mark.parametrize(
    ("wrong", "gate_rc", "heading"),
    [
        ({"Chad"}, 0, "## hrbench gate: PASS"),  # the baseline's one miss: no drop
        ({"Chad", "Peru", "Japan", "Kenya", "Chile", "Egypt", "Fiji"}, 1, "## hrbench gate: FAIL"),
    ],
)
def test_the_workflow_runs_as_written(tmp_path: Path, wrong: set[str], gate_rc: int, heading: str) -> None:
    ran, summary = _run_workflow(tmp_path, wrong)
    assert ran == [("Run the benchmark", 0), ("Gate against the baseline", gate_rc), ("Summary", 0)]
    assert summary.read_text().startswith(heading)
    junit = (tmp_path / "repo" / "gate-junit.xml").read_text()
    assert ('failures="1"' in junit) == (gate_rc == 1)


def test_a_broken_baseline_is_exit_2_and_the_summary_and_junit_file_say_why(tmp_path: Path) -> None:
    ran, summary = _run_workflow(tmp_path, {"Chad"}, baseline=b"<<<<<<< HEAD\n{merge conflict}\n")
    assert ran == [("Run the benchmark", 0), ("Gate against the baseline", 2), ("Summary", 0)]
    assert summary.read_text().startswith(
        "## hrbench gate: BAD INPUT\n\nExit 2 (bad input): ConfigError: baseline: "
    )
    xml = JUnitXml.fromfile(str(tmp_path / "repo" / "gate-junit.xml"))
    assert (xml.tests, xml.failures, xml.errors) == (1, 0, 1)
    ((case,),) = [list(suite) for suite in xml]
    assert "examples/ci/baseline.jsonl" in case.result[0].message
