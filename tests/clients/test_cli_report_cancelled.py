"""`hrb report ID` on a benchmark cancelled part way (`hrb cancel`, as Ctrl-C does), through a real daemon.

Rule (docs/guides/shell.md, "A benchmark that ended early"): a cancelled benchmark is reported as
a running one is, descriptive of the runs finished (its cells have unequal runs; never a
refusal asking for --descriptive), with a banner under the header saying it was cancelled and
the command that resumes it, the one `hrb bench` prints on Ctrl-C; `hrb ls` and the JSON say the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.clients.test_cli import _stop_daemon  # noqa: F401 - the autouse fixture that stops each test's daemon

HRB = [sys.executable, "-m", "hrbench_client.cli"]


def hrb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HRB, *args], capture_output=True, text=True, timeout=slow(180), env=os.environ)


def test_a_cancelled_benchmark_is_reported_descriptive_with_its_resume_command(tmp_path: Path) -> None:
    with LoopbackServer(latency_s=0.2) as srv:
        spec = tmp_path / "s.toml"
        items = ", ".join(f'q{i} = "Say x {i}. [[reply:x]]"' for i in range(8))
        labels = ", ".join(f'q{i} = "x"' for i in range(8))
        spec.write_text(
            f"runs = 5\nconcurrency = 1\n[reference]\nitems = {{{items}}}\nlabels = {{{labels}}}\n"
            f'[client]\nkind = "openai"\nmodel = "loop"\nbase_url = "{srv.base_url}"\napi_key_env = false\n'
            '[[arms]]\nkind = "prompt"\nname = "plain"\ntemplate = "{item}"\n'
        )
        sent = hrb("bench", str(spec), "--detach")
        assert sent.returncode == 0, sent.stderr
        bid = json.loads(sent.stdout.splitlines()[-1])["id"]
        deadline = time.monotonic() + slow(60)
        while time.monotonic() < deadline:  # until 7 runs are in: item q0's 5 and 2 of q1's
            if len(hrb("rows", bid, "--limit", "7").stdout.splitlines()) >= 7:
                break
            time.sleep(0.1)
        cancelled = hrb("cancel", bid)
        assert cancelled.returncode == 0, cancelled.stderr
    done = len(hrb("rows", bid).stdout.splitlines())
    assert 7 <= done < 40
    text = hrb("report", bid, "--text")
    assert text.returncode == 0, text.stderr
    assert "TooFewRunsError" not in text.stderr
    lines = text.stdout.splitlines()
    banner = (
        f"benchmark {bid} was cancelled with {done} of 40 runs finished: its report is descriptive of those "
        f"runs; resume it with `hrb bench --resume {bid}`"
    )
    out = json.loads(hrb("report", bid).stdout)
    # descriptive while any item reported has fewer than 5 runs (the finished runs may be whole cells)
    arm = out["arms"][0]
    partial = arm["n_runs"] < 5 * arm["n_items"]
    assert lines[0] == "Status: cancelled"
    assert lines[1].startswith("<hrbench report> 1 arm(s) x ") and ("DESCRIPTIVE" in lines[1]) is partial, (
        lines[1]
    )
    assert lines[2] == f"Cancelled: {banner}"
    assert (out["status"], out["stop_note"], out["descriptive"]) == ("cancelled", banner, partial)
    listed = hrb("ls", "--text").stdout.splitlines()
    assert f"{'':<16}  Cancelled: {banner}" in listed, listed
