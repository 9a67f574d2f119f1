"""`hrb bench` on the agents example: per-run caps from flags, reasoning_exhausted counted, the frontier reported.

A real loopback server stands in for the model server the example names.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from hrbench.testing import LoopbackServer
from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example(tmp_path: Path, srv: LoopbackServer) -> Path:
    shutil.copy(EXAMPLES / "agents.py", tmp_path / "agents.py")
    spec = tmp_path / "agents.toml"
    text = (EXAMPLES / "agents.toml").read_text()
    spec.write_text(text.replace("http://127.0.0.1:8000/v1", srv.base_url))
    return spec


def test_the_agents_example_runs_and_reports_its_frontier(tmp_path: Path) -> None:
    with LoopbackServer() as srv:
        proc = hrb("bench", str(_example(tmp_path, srv)), "--no-rows")
    result = lines(proc.stdout)[-1]
    summary = {s["arm"]: s for s in result["summary"]}
    assert result["status"] == "done" and summary["think-high"]["reasoning_exhausted"] == 15
    report = hrb("report", result["id"]).stdout
    assert "Cost-accuracy frontier" in report and "search -> lookup" in report
    assert "reasoning_exhausted 15" in report


def test_a_per_run_cap_flag_stops_each_runs_nth_call_and_exits_0(tmp_path: Path) -> None:
    with LoopbackServer() as srv:
        proc = hrb("bench", str(_example(tmp_path, srv)), "--no-rows", "--max-calls-per-run", "1")
        sent = len(srv.requests)
    assert proc.returncode == 0, proc.stderr  # each run stopped; the benchmark was not budget stopped
    result = lines(proc.stdout)[-1]
    assert sent == 4 * 8 * 5  # every run's first turn; the tool's answer turn was refused
    capped = {
        s["arm"]: (s["run_capped"], s["budget_stop"], s["reasoning_exhausted"]) for s in result["summary"]
    }
    # a hard item's high-effort run ends at its first turn (all reasoning): its cap is never reached
    assert capped == {
        "think-low": (40, 40, 0),
        "think-high": (25, 25, 15),
        "lookup": (40, 40, 0),
        "search": (40, 40, 0),
    }
    assert result["status"] == "done"
    assert "per-run cap" in proc.stderr and "max_calls_per_run=1" in proc.stderr
    listed = {b["id"]: b for b in lines(hrb("ls").stdout)}
    assert listed[result["id"]]["status"] == "done"
