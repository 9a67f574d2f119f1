"""The Ray executor keeps the governor's ledger per call, as the local runner does.

A lost Ray driver lost its in-flight accounting: the ledger was a snapshot written with the
rows, so after a driver kill the store had no open reservation, the resume said nothing of the
calls in flight, and a capped benchmark made more calls than its cap. Here a real daemon drives
a real local Ray cluster and is SIGKILLed while calls are in flight on the workers; its store
must hold those reservations, the resume must count them as spent and say so, and the calls
made over both starts must stay within ``max_calls``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests._slow import slow
from tests.server._daemon import Daemon, stored_ledger

# a fault simulation (a real daemon SIGKILLed)
pytestmark = pytest.mark.slow

COUNTED = '''
import asyncio, os

GATE, CALLS = {gate!r}, {calls!r}


async def answer(messages, params):
    """Answer 'answer itemN' (each call logged); items 10 and up wait until the gate file exists."""
    content = messages[-1]["content"]
    with open(CALLS, "a") as f:
        f.write(content + "\\n")
    while int(content.removeprefix("item")) >= 10 and not os.path.exists(GATE):
        await asyncio.sleep(0.02)
    return "answer " + content
'''

MAX_CALLS = 50


def _spec(tmp_path: Path, cluster: str) -> dict[str, Any]:
    items = {f"q{i}": f"item{i}" for i in range(20)}
    return {
        "arms": [{"kind": "prompt", "name": "ask", "template": "{item}"}],
        "reference": {"items": items, "labels": {k: f"answer {v}" for k, v in items.items()}},
        "client": {"kind": "mock", "function": "counted_model:answer"},
        "runs": 3,
        "governor": {"max_calls": MAX_CALLS},
        "concurrency": 4,
        "python_path": [str(tmp_path)],
        "executor": {"kind": "ray", "address": cluster},
    }


def test_a_killed_ray_driver_leaves_its_calls_in_flight_in_the_ledger_and_the_cap_holds(
    cluster: str, tmp_path: Path
) -> None:
    gate, calls = tmp_path / "open", tmp_path / "calls.log"
    (tmp_path / "counted_model.py").write_text(COUNTED.format(gate=str(gate), calls=str(calls)))
    home = tmp_path / "home"
    daemon = Daemon(home).start()
    try:
        with daemon.client() as c, daemon.client() as c2:
            stream = c.benchmark(_spec(tmp_path, cluster))
            first = [row for _, row in zip(range(30), stream, strict=False)]
            bench_id = stream.id
            assert bench_id is not None and len(first) == 30
            deadline = time.monotonic() + slow(120)
            while len(c2.rows(bench_id).rows) < 30:  # wait for the store, not for a clock
                assert time.monotonic() < deadline, "the daemon never stored its rows"
                time.sleep(0.05)
            deadline = time.monotonic() + slow(10)
            while stored_ledger(home, bench_id)["open_calls"] < 2:  # the gated calls, reserved before sent
                assert time.monotonic() < deadline, (
                    f"no call in flight is in the ledger: {stored_ledger(home, bench_id)}"
                )
                time.sleep(0.05)
            daemon.kill()  # the driver dies: calls of items 10-19 are in flight on the workers
    finally:
        daemon.kill()
    at_kill = stored_ledger(home, bench_id)
    # every call made so far was reserved in the store before it was sent; those in flight are open
    made_before = len(calls.read_text().splitlines())
    assert at_kill["open_calls"] >= 2 and at_kill["calls"] >= made_before >= 32
    gate.touch()
    daemon = Daemon(home).start()
    try:
        with daemon.client() as c:
            resumed = c.resume(bench_id)
            new = list(resumed)
            assert resumed.result is not None and resumed.result.n_resumed == 30
            text = resumed.result.text
            final = c.rows(bench_id).rows
    finally:
        daemon.stop()
        daemon.kill()
    led = stored_ledger(home, bench_id)
    made = len(calls.read_text().splitlines())
    # the calls in flight at the kill are counted as spent, and said so
    assert led["unknown_calls"] == at_kill["open_calls"] and led["open_calls"] == 0
    assert f"in flight at a crash: unknown, at most 0.0000 USD / {led['unknown_calls']} calls" in text, text
    # the cap holds over both starts, for what the model saw, and the books cover it
    assert made <= led["calls"] <= MAX_CALLS
    assert resumed.result.status == "budget_stopped"  # the calls lost in flight left too little for all 60
    assert len(final) == 60 and {r.failure_kind for r in new} <= {None, "budget_stop"}
    answered = sum(1 for r in final if r.failure_kind is None)
    assert answered <= MAX_CALLS - led["unknown_calls"]
