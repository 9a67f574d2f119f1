"""A benchmark the budget stopped, reported through `hrb` and a real daemon.

Rule (docs/guides/budgets.md, "What a report says of a stopped benchmark"): runs the budget
stopped count wrong in each arm's accuracy (seed 002), so every interval resting on them is
flagged where it is printed; a paired difference is computed only over the items on which both
arms have as many runs scored, and says so; the budget note comes right under the header in the
text and the Markdown, and first in the JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.clients.test_cli import _stop_daemon  # noqa: F401 - the autouse fixture that stops each test's daemon

HRB = [sys.executable, "-m", "hrbench_client.cli"]


def hrb(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HRB, *args], capture_output=True, text=True, timeout=slow(180), cwd=cwd, env=os.environ
    )


def _stopped_bench(tmp_path: Path, srv: LoopbackServer) -> str:
    """Two model arms and one outputs arm on 8 items in 4 clusters, 5 runs each, stopped after 30 calls."""
    items = {f"q{i}": f"Say x{i}. [[reply:x{i}]]" for i in range(8)}
    ref = tmp_path / "ref.jsonl"
    ref.write_text(
        "".join(
            json.dumps({"id": k, "item": v, "label": f"x{k[1:]}", "cluster": f"c{int(k[1:]) // 2}"}) + "\n"
            for k, v in items.items()
        )
    )
    outs = tmp_path / "outs.jsonl"
    outs.write_text("".join(json.dumps({"item": k, "output": f"x{k[1:]}"}) + "\n" for k in items))
    spec = tmp_path / "s.toml"
    spec.write_text(
        'name = "stopped"\nruns = 5\nscorer = "exact"\n[reference]\npath = "ref.jsonl"\n'
        f'[client]\nkind = "openai"\nmodel = "loop"\nbase_url = "{srv.base_url}"\napi_key_env = false\n'
        '[[arms]]\nkind = "prompt"\nname = "plain"\ntemplate = "{item}"\n'
        '[[arms]]\nkind = "prompt"\nname = "hedge"\ntemplate = "Briefly. {item}"\n'
        '[[arms]]\nkind = "outputs"\nname = "offline"\npath = "outs.jsonl"\n'
        "[governor]\nmax_calls = 30\n"
    )
    proc = hrb("bench", str(spec), "--no-rows", cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr  # a budget stop
    return str(json.loads(proc.stdout.splitlines()[-1])["id"])


def test_a_budget_stopped_report_flags_what_rests_on_stopped_runs_in_every_format(tmp_path: Path) -> None:
    with LoopbackServer() as srv:
        bid = _stopped_bench(tmp_path, srv)
    text = hrb("report", bid, "--text")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == "Status: budget_stopped" and lines[1].startswith("<hrbench report>")
    assert lines[2].startswith("Budget stopped: "), lines[:3]  # right under the header
    arms = {ln.split()[0]: ln for ln in lines[3:7]}
    assert "]*" in arms["plain"] and "]*" in arms["hedge"] and "]*" not in arms["offline"], lines[3:7]
    assert "accuracy and interval count runs never scored as wrong" in text.stdout

    full = json.loads(hrb("report", bid).stdout)
    assert list(full)[:2] == ["status", "stop_note"]  # first in the JSON too
    by_arm = {a["arm"]: a for a in full["arms"]}
    assert by_arm["plain"]["unscored_note"] and by_arm["offline"]["unscored_note"] is None
    for c in full["comparisons"]:  # never a difference over runs the budget stopped on one side only
        assert c["unscored_note"], c
        if c["n_items"] == 0:
            assert c["p_value"] is None and c["diff"] is None, c
    with_offline = [c for c in full["comparisons"] if c["arm_b"] == "offline"]
    assert all(c["n_items"] < 8 for c in with_offline), with_offline
    assert all("where both arms have as many runs scored" in c["unscored_note"] for c in with_offline)

    md = hrb("report", bid, "--format", "markdown").stdout.splitlines()
    assert md[0].startswith("**hrbench report**") and md[2].startswith("> **Budget stopped**"), md[:3]
    assert any(ln.startswith("| `plain` |") and "]\\*" in ln for ln in md), md

    one = json.loads(hrb("report", bid, "--compare", "plain", "offline").stdout)
    assert one["unscored_note"] and one["n_items"] < 8, one
