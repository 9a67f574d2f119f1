"""`hrb report ID` on a benchmark still running (`hrb bench --detach`), through a real daemon.

Rule (docs/guides/shell.md): while it runs, `hrb report ID` shows it running: the state under
the header, and a descriptive report of the runs finished so far whose header says how many
runs its table holds (never a Python-worded refusal for its unequal runs).
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


def test_a_running_benchmark_is_reported_as_running_with_what_is_there(tmp_path: Path) -> None:
    with LoopbackServer(latency_s=0.2) as srv:
        spec = tmp_path / "s.toml"
        n = 40  # 200 runs at 0.2 s, one at a time: 40 s, so that a loaded machine's slow hrb calls still see it run
        items = ", ".join(f'q{i} = "Say x {i}. [[reply:x]]"' for i in range(n))
        labels = ", ".join(f'q{i} = "x"' for i in range(n))
        spec.write_text(
            f"runs = 5\nconcurrency = 1\n[reference]\nitems = {{{items}}}\nlabels = {{{labels}}}\n"
            f'[client]\nkind = "openai"\nmodel = "loop"\nbase_url = "{srv.base_url}"\napi_key_env = false\n'
            '[[arms]]\nkind = "prompt"\nname = "plain"\ntemplate = "{item}"\n'
        )
        sent = hrb("bench", str(spec), "--detach")
        assert sent.returncode == 0, sent.stderr
        bid = json.loads(sent.stdout.splitlines()[-1])["id"]
        deadline = time.monotonic() + slow(60)
        while time.monotonic() < deadline:  # until a few runs are in
            rows = hrb("rows", bid, "--limit", "3")
            if len(rows.stdout.splitlines()) >= 3:
                break
            time.sleep(0.1)
        try:
            text = hrb("report", bid, "--text")
            js = hrb("report", bid)
        finally:
            hrb("cancel", bid)
    assert text.returncode == 0, text.stderr
    assert "TooFewRunsError" not in text.stderr and "descriptive=True" not in text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == "Status: running", lines[:3]
    assert lines[2].startswith("Still running: ") and "still running" in lines[2], lines[:3]
    row = next(ln for ln in lines if ln.startswith(" plain")).split()
    items, shown = int(row[-4]), int(row[-2])  # the table's items and runs columns
    head = lines[1]  # it says how many runs the table holds: per item, and in all when cells differ
    assert (
        f"({shown} runs)" in head or f"x {items} item(s)" in head and f"x {shown // items} run(s);" in head
    ), (
        head,
        shown,
    )
    assert shown % items == 0 or f"({shown} runs)" in head, (head, shown)
    out = json.loads(js.stdout)
    assert out["status"] == "running" and "still running" in out["stop_note"]
    # descriptive while any item reported has fewer than 5 runs (the finished runs may be whole cells)
    arm = out["arms"][0]
    assert out["descriptive"] is (arm["n_runs"] < 5 * arm["n_items"]), arm
