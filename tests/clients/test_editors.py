"""The editor setups in clients/editors/ work with a real editor (Neovim) when one is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EDITORS = Path(__file__).resolve().parents[2] / "clients" / "editors"


@pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim (an optional editor) is not installed")
def test_headless_neovim_attaches_scores_and_stops_cleanly(tmp_path: Path) -> None:
    server = [sys.executable, "-m", "hrbench_server", "--home", str(tmp_path / "home"), "serve", "--stdio"]
    proc = subprocess.run(
        [str(EDITORS / "nvim" / "smoke.sh")],
        env={**os.environ, "HRBENCH_LSP_CMD": json.dumps(server), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    scored = json.loads(proc.stdout.splitlines()[0])
    assert scored["correct"] is True and scored["outcome"] == "paris"
    assert "stopped cleanly (exit code 0)" in proc.stdout


def test_the_editor_readme_names_the_files_it_describes() -> None:
    text = (EDITORS / "README.md").read_text()
    for rel in ("nvim/lua/hrbench.lua", "nvim/smoke.sh"):
        assert rel in text and (EDITORS / rel).exists()
