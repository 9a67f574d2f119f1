"""Each shell block of the README runs as written (bash, `set -euo pipefail`), from the repo's layout."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._slow import slow

REPO = Path(__file__).resolve().parents[2]
BLOCKS = re.findall(r"```sh\n(.*?)```", (REPO / "README.md").read_text(encoding="utf-8"), re.S)
# `make test` is this suite and `make demo` builds .venv and runs the demo on the full data: both
# are run by CI itself (.ci/run, and the demo's specs in tests/clients/test_examples.py).
RUN_ELSEWHERE = {"make demo", "make test"}


def _commands(block: str) -> set[str]:
    return {line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()}


def test_the_readme_has_shell_blocks() -> None:
    assert len(BLOCKS) >= 2
    assert any(_commands(b) <= RUN_ELSEWHERE for b in BLOCKS)


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if not _commands(b) <= RUN_ELSEWHERE], ids=lambda b: b.split()[0:3].__str__()
)
def test_readme_shell_block_runs(tmp_path: Path, block: str) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HRBENCH_HOME": str(tmp_path / "home"),
    }
    try:
        proc = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + block],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=slow(180),
        )
    finally:
        subprocess.run(
            [sys.executable, "-m", "hrbench_client.cli", "daemon", "stop"], env=env, capture_output=True
        )
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    if "echo right" in block:
        assert "right" in proc.stdout.splitlines()
    if "echo up" in block:
        assert "up" in proc.stdout.splitlines()
    if "--plot out.png" in block:
        assert (tmp_path / "out.png").stat().st_size > 0
