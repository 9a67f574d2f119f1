"""Batch mode survives a SIGKILL at every batch state: no row lost, no line uploaded or paid twice.

A real daemon subprocess runs a benchmark in batch mode against the loopback's batch API (in
this process, so it outlives the daemon). The batch is scripted to stay in one state long
enough, and the daemon is SIGKILLed at a random moment in it: while the batch's upload reply
is held (the provider made it, the daemon never heard), while it validates, is in progress,
finalizes, and just after its results were read (completed, or expired). A new daemon resumes
the benchmark: it finds the batch again (by its tag), reattaches to it or reads the results
that came while it was down, and uploads no ``custom_id`` again. Then every row is there, each
line was billed once, and the rows' USD is the bill.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections import Counter
from pathlib import Path

import pytest

from hrbench.store import Store
from hrbench.testing import LoopbackServer
from hrbench.testing._loopback import Script
from tests._slow import slow
from tests.server._daemon import Daemon
from tests.server.test_batch import ITEMS, PRICE, RUNS, batch_spec

# a fault simulation (a real daemon SIGKILLed): `make test-slow`
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SEED = int(os.environ.get("HRBENCH_TEST_SEED") or time.time_ns() % 1_000_000)
"""The seed of the kill moments (printed by a failing test; ``HRBENCH_TEST_SEED`` repeats it)."""

HELD = 1.5  # seconds the batch stays in the state the daemon is killed in
STATES = {
    "validating": (("validating", HELD), ("in_progress", 0.05), ("finalizing", 0.05)),
    "in_progress": (("validating", 0.05), ("in_progress", HELD), ("finalizing", 0.05)),
    "finalizing": (("validating", 0.05), ("in_progress", 0.05), ("finalizing", HELD)),
}


def _kill_when(srv: LoopbackServer, state: str, rng: random.Random) -> None:
    """Wait until the loopback's batch is in ``state`` (or its results were read), then a random moment more."""
    deadline = time.monotonic() + slow(60)

    def reached() -> bool:
        made = srv.batches.created
        if state == "preparing":
            return bool(made)  # made by the provider, its reply held
        if not made:
            return False
        if state in ("completed", "expired"):
            return srv.batches.results_read[made[0]] > 0
        return srv.batches.state_of(made[0]) == state

    while not reached():
        assert time.monotonic() < deadline, f"the batch never reached {state} (seed {SEED})"
        time.sleep(0.005)
    time.sleep(rng.uniform(0.0, 0.05 if state in ("completed", "expired") else HELD / 2))


def _bench_id(home: Path) -> str:
    store = Store(home / "hrbench.sqlite3")
    try:
        return str(store.benchmark_list()[0]["id"])
    finally:
        store.close()


@pytest.mark.parametrize(
    ("provider", "state"),
    [
        ("openai", "preparing"),
        ("anthropic", "preparing"),
        ("openai", "validating"),
        ("openai", "in_progress"),
        ("anthropic", "in_progress"),
        ("openai", "finalizing"),
        ("openai", "completed"),
        ("anthropic", "completed"),
        ("openai", "expired"),
        ("anthropic", "expired"),
    ],
)
def test_a_sigkill_at_each_batch_state_loses_no_row_and_pays_no_line_twice(
    home: Path, tmp_path: Path, provider: str, state: str
) -> None:
    rng = random.Random(f"{SEED}-{provider}-{state}")
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"loopback-1": {"input": PRICE[0], "output": PRICE[1]}}}))
    env = {"HRBENCH_PRICES": str(prices)}
    with LoopbackServer() as srv:
        srv.set(price=PRICE)
        if state == "preparing":
            srv.batches.lose_create(hold_s=600)
        elif state == "expired":
            srv.batches.script(Script(end="expired", processed=0.5))
        elif state in STATES:
            srv.batches.script(Script(steps=STATES[state]))
        spec = batch_spec(srv, provider, expired="fail")
        d = Daemon(home, env=env).start()
        try:
            with d.client() as c:
                stream = c.benchmark(spec)
                _kill_when(srv, state, rng)
                d.kill()
                del stream
        finally:
            d.kill()
        bench_id = _bench_id(home)
        d = Daemon(home, env=env).start()
        try:
            with d.client() as c:
                resumed = c.resume(bench_id)
                list(resumed)
                assert resumed.result is not None, f"seed {SEED}: {d.read_log()[-3000:]}"
        finally:
            d.stop()
        bills, uploaded, made = list(srv.bills), Counter(srv.batches.uploaded), list(srv.batches.created)
    store = Store(home / "hrbench.sqlite3")
    try:
        rows = store.rows_get(bench_id)
        paid = Counter(s.key for steps in store.ledger_paid(bench_id).values() for s in steps)
        in_rows = Counter(
            s.response_id
            for steps in store.traces_get(bench_id).values()
            for s in steps
            if s.source == "live" and s.response_id
        )
        live = store.batch_list(bench_id, live=True)
    finally:
        store.close()
    lines = ITEMS * RUNS
    where = f"seed {SEED}, batches {made}"
    assert len(rows) == lines, where  # no row lost
    assert set(uploaded.values()) == {1} and len(uploaded) == lines and len(made) == 1, (
        where
    )  # none uploaded twice
    answered = lines // 2 if state == "expired" else lines
    assert len(bills) == answered and len({b.response_id for b in bills}) == answered, (
        where
    )  # none billed twice
    # none paid twice in the governor's ledger; a row stored before its reply's ledger entry was
    # committed carries that bill itself, so the ledger may keep fewer
    assert all(n == 1 for n in paid.values()) and len(paid) <= answered, where
    # every bill is served live to exactly one stored run (the rows' USD is each bill once)
    assert in_rows == Counter({b.response_id: 1 for b in bills}), where
    assert sum(r.usd or 0.0 for r in rows) == pytest.approx(sum(b.usd for b in bills), rel=1e-3), where
    failed = [r for r in rows if r.failure_kind == "error"]
    assert len(failed) == lines - answered and live == [], where
