"""After a SIGKILL and a resume with no USD cap, the crash note is honest.

It never says "in flight at a crash: unknown, at most 0.0000 USD / 4 calls" for calls that could
cost money: a request that may be billed is reserved at its worst case even with no
cap when its model's price is known, so the note gives a true bound (at least what the
provider billed for the replies the kill lost); with no price it says the USD is unknown.
A real daemon subprocess, SIGKILLed with requests in flight to a billing loopback server.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from hrbench.records import usd_text
from hrbench.store import Store
from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.server._daemon import Daemon, spec

# a fault simulation (real daemons killed, cancelled or left idle): `make test-slow`, run by .ci/run
pytestmark = pytest.mark.slow

PRICE = (2000.0, 4000.0)  # USD per million input and output tokens


def _spec(srv: LoopbackServer) -> dict[str, Any]:
    client = {"kind": "openai", "model": "loopback-1", "base_url": srv.base_url, "api_key_env": None}
    return spec(
        n=12,
        runs=2,
        concurrency=8,
        client=client,
        arms=[{"kind": "prompt", "name": "ask", "template": "{item}", "params": {"max_tokens": 8}}],
        governor={"max_calls": 1000},  # no USD cap
    )


@pytest.mark.parametrize("priced", [True, False], ids=["priced", "unpriced"])
def test_the_crash_note_without_a_usd_cap_bounds_what_could_be_billed(
    home: Path, tmp_path: Path, priced: bool
) -> None:
    prices = tmp_path / "prices.json"
    model = "loopback-1" if priced else "other-model"
    prices.write_text(json.dumps({"models": {model: {"input": PRICE[0], "output": PRICE[1]}}}))
    env = {"HRBENCH_PRICES": str(prices)}
    with LoopbackServer(latency_s=1.0, vary=True) as srv:
        srv.set(reply_words=4, price=PRICE)
        d = Daemon(home, env=env).start()
        try:
            with d.client() as c:
                stream = c.benchmark(_spec(srv))
                deadline = time.monotonic() + slow(60)
                while len(srv.requests) < 4:
                    assert time.monotonic() < deadline, d.read_log()[-2000:]
                    time.sleep(0.002)
                d.kill()  # requests are in flight: sent, not yet answered
                del stream
        finally:
            d.kill()
        store = Store(home / "hrbench.sqlite3")
        bench_id = store.benchmark_list()[0]["id"]
        store.close()
        d = Daemon(home, env=env).start()
        try:
            with d.client() as c:
                final = c.resume(bench_id)
                list(final)
                (listed,) = [b for b in c.benchmarks() if b.id == bench_id]
        finally:
            d.stop()
        bills = list(srv.bills)
    store = Store(home / "hrbench.sqlite3")
    ledger = store.ledger_get(bench_id)
    store.close()
    assert ledger is not None and ledger["unknown_calls"] >= 1
    note = listed.unknown_note or ""
    n = ledger["unknown_calls"]
    if priced:
        assert ledger["unknown_usd"] > 0 and ledger["unpriced_calls"] == 0
        assert ledger["usd"] >= sum(b.usd for b in bills) - 1e-9  # never under the provider's bill
        assert (
            f"in flight at a crash: unknown, at most {usd_text(ledger['unknown_usd'])} USD / {n} calls"
            in note
        )
        assert "at most 0.0000 USD" not in note
    else:
        assert ledger["unpriced_calls"] == n
        assert (
            f"in flight at a crash: unknown USD (no price or no output limit to bound it) / {n} calls" in note
        )
    assert final.result is not None and note in (final.result.text or "")
