"""The docs' judge snippet runs as written, the shell examples leave no file, the demo names DATA."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hrbench.testing import LoopbackServer
from tests._slow import slow

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "docs" / "rules" / "scoring.md").read_text(encoding="utf-8")  # was the README's


def _judge_block() -> str:
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", README, re.S) if "judge_scorer" in b]
    return block


def _reply(prompt: str, seed: Any, call: int) -> str:
    if "CORRECT or INCORRECT" in prompt:
        return "CORRECT"  # a lenient judge: it accepts "Ndjamena"
    return {"France": "Paris", "Chad": "Ndjamena"}[prompt.split("Capital of ")[1].split("?")[0]]


def test_the_docs_judge_snippet_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Self-contained but for the model: the test points its client at a loopback server."""
    monkeypatch.setenv("HRBENCH_HOME", str(tmp_path / "home"))
    block = re.sub(r"^  ", "", _judge_block(), flags=re.M)
    assert "import hrbench as hb" in block  # it defines what it uses
    with LoopbackServer(reply_fn=_reply) as srv:
        code = block.replace(
            'hb.OpenAIClient("gpt-4o-mini")',
            f'hb.OpenAIClient("gpt-4o-mini", base_url={srv.base_url!r}, api_key_env=None)',
        )
        assert code != block
        scope: dict[str, Any] = {}
        exec(compile(code, "docs/rules/scoring.md", "exec"), scope)  # noqa: S102 - the docs' own code
    assert scope["agree"] == 0.5  # France agrees; Chad: the judge says correct, exact says wrong
    assert [r.correct for r in scope["by_label"].rows].count(True) == 5


def test_the_shell_examples_leave_no_file_behind(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HRBENCH_HOME": str(tmp_path / "home"),
        "TMPDIR": str(tmp_path / "tmp"),
    }
    (tmp_path / "tmp").mkdir()
    proc = subprocess.run(
        ["bash", str(REPO / "clients" / "shell" / "examples.sh")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=slow(300),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert '"plot"' in proc.stdout and "report.png" in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["examples", "home", "tmp"]
    assert list((tmp_path / "tmp").iterdir()) == []


@pytest.mark.parametrize("bad", ["/nonexistent/hrbench-data", "relative/missing"])
def test_make_demo_with_a_bad_data_folder_names_data_and_the_path(tmp_path: Path, bad: str) -> None:
    env = {**os.environ, "HRBENCH_DATA": str(tmp_path / "exported")}  # DATA= must win over it
    proc = subprocess.run(
        ["make", "-s", "demo", f"DATA={bad}", f"PY={sys.executable}", "STAMP="],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=slow(120),
    )
    want = os.path.normpath(os.path.join(REPO, bad))
    assert proc.returncode != 0 and f"data folder {want} not found" in proc.stderr, proc.stderr
    assert "DATA=" in proc.stderr and "HRBENCH_DATA" in proc.stderr


def test_the_shell_examples_list_the_exit_codes_of_hrb_help() -> None:
    """The exit codes in ``clients/shell/examples.sh`` are those of ``hrb --help``, each once.

    NotFound is listed under 2 (not 3), and 4 and 141 are listed too.
    """
    from hrbench_client.cli.exit_codes import EXIT_CODES_HELP

    text = (REPO / "clients" / "shell" / "examples.sh").read_text(encoding="utf-8")
    block = text[text.index("# Exit codes") : text.index("set -euo pipefail")]
    codes = re.findall(r"^#\s{3}(\d+)\s", block, re.M)
    assert (
        codes
        == re.findall(r"^\s{2}(\d+)\s", EXIT_CODES_HELP, re.M)
        == ["0", "1", "2", "3", "4", "130", "141"]
    )
    by_code = dict(re.findall(r"^#\s{3}(\d+)\s+(.*(?:\n#\s{6,}.*)*)", block, re.M))
    assert "NotFound" in by_code["2"] and "NotFound" not in by_code["3"]
    assert "budget" in by_code["4"] and "| head" in by_code["141"]
