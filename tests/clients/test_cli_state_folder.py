"""`hrb` on a state folder no daemon can use (read-only): advice naming the folder, not an OSError."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._fs import made_read_only, tiny_fs
from tests._slow import slow


@pytest.mark.parametrize("where", ["the folder", "a folder inside it"])
def test_hrb_ls_on_a_read_only_state_folder_says_what_to_do(tmp_path: Path, where: str) -> None:
    folder = tmp_path / "state"
    with tiny_fs(folder, 256) as mounted:
        if not mounted and os.geteuid() == 0:
            pytest.skip("root without CAP_SYS_ADMIN cannot make a folder read-only")
        home = folder if where == "the folder" else folder / "hrbench"
        with made_read_only(folder):
            out = subprocess.run(
                [sys.executable, "-m", "hrbench_client.cli", "ls"],
                capture_output=True,
                text=True,
                timeout=slow(60),
                env={**os.environ, "HRBENCH_HOME": str(home)},
            )
    assert out.returncode == 3, out.stderr
    assert "OSError" not in out.stderr and "Errno" not in out.stderr and "Traceback" not in out.stderr
    assert f"no daemon runs for the state folder {home} and none can start there" in out.stderr
    assert "Read-only file system" in out.stderr or "Permission denied" in out.stderr
    assert "Make it writable" in out.stderr and "HRBENCH_HOME" in out.stderr
    assert out.stdout == ""
