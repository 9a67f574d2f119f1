"""The governor's ledger across SIGKILLs, checked against a provider's bill.

A real daemon subprocess sends to a real loopback model server (in this process) that bills
every reply it makes (usage tokens x price, :class:`~hrbench.testing._loopback.Bill`). The
daemon is SIGKILLed once or twice right after the server has received N requests (so requests
are in flight), then resumed to the end. What is comparable, precisely:

- a reply received and recorded in a finished run (a row's ``live`` trace step) was billed
  once, and the rows' USD is exactly what the bill says for those replies;
- the ledger's settled spend (``usd - unknown_usd``) is only money the server billed, and the
  ledger's whole spend (settled plus the reservations the kills left open, "unknown, at most")
  is at least what it billed: replies the server made that the killed daemon never recorded
  (in flight at the kill, or received but not yet in a row) lie between the two;
- over every kill and resume, the server received at most ``max_calls`` requests and billed at
  most ``max_usd``.
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

PRICE = (2000.0, 4000.0)  # USD per million input and output tokens: 0.002 and 0.004 a token
MAX_CALLS = 40
MAX_USD = 2.0


def _spec(srv: LoopbackServer) -> dict[str, Any]:
    client = {"kind": "openai", "model": "loopback-1", "base_url": srv.base_url, "api_key_env": None}
    return spec(
        n=30,
        runs=2,
        concurrency=8,
        client=client,
        arms=[{"kind": "prompt", "name": "ask", "template": "{item}", "params": {"max_tokens": 8}}],
        governor={"max_calls": MAX_CALLS, "max_usd": MAX_USD},
    )


def _wait_for_requests(srv: LoopbackServer, n: int, d: Daemon) -> None:
    deadline = time.monotonic() + slow(60)
    while len(srv.requests) < n:
        assert time.monotonic() < deadline, f"only {len(srv.requests)} requests: {d.read_log()[-2000:]}"
        time.sleep(0.002)


@pytest.mark.parametrize("kills", [[1], [9], [4, 16]], ids=lambda k: "kill-after-" + "-".join(map(str, k)))
def test_row_usd_after_sigkills_matches_the_providers_bill(
    home: Path, tmp_path: Path, kills: list[int]
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"loopback-1": {"input": PRICE[0], "output": PRICE[1]}}}))
    env = {"HRBENCH_PRICES": str(prices)}
    bench_id: str | None = None
    with LoopbackServer(latency_s=0.5, vary=True) as srv:
        srv.set(reply_words=4, price=PRICE)
        for k in kills:
            d = Daemon(home, env=env).start()
            try:
                with d.client() as c:
                    stream = c.benchmark(_spec(srv)) if bench_id is None else c.resume(bench_id)
                    _wait_for_requests(srv, k, d)
                    d.kill()  # requests are in flight: sent, not yet answered
                    del stream
            finally:
                d.kill()
            store = Store(home / "hrbench.sqlite3")
            bench_id = bench_id or store.benchmark_list()[0]["id"]
            kept = store.ledger_get(bench_id)
            store.close()
            assert kept is not None and kept["open_calls"] >= 1  # in the file before they were answered
        assert bench_id is not None
        d = Daemon(home, env=env).start()
        try:
            with d.client() as c:
                final = c.resume(bench_id)
                finished = list(final)
                assert final.result is not None
                # runs the caps stopped (in-flight spend counted at its worst case) show
                stopped = any(r.failure_kind == "budget_stop" for r in finished)
                assert final.result.status == ("budget_stopped" if stopped else "done")
                (listed,) = [b for b in c.benchmarks() if b.id == bench_id]  # what `hrb ls` prints
        finally:
            d.stop()
        received, bills = len(srv.requests), list(srv.bills)
    store = Store(home / "hrbench.sqlite3")
    ledger = store.ledger_get(bench_id)
    rows = store.rows_get(bench_id)
    traces = store.traces_get(bench_id)
    assert ledger is not None and len(rows) == 60

    billed = {b.response_id: b.usd for b in bills}
    assert len(billed) == len(bills) == received  # every request answered, each billed once
    # the caps hold over every kill and resume, for what the provider saw
    assert received <= MAX_CALLS
    assert sum(billed.values()) <= MAX_USD + 1e-9
    # rows: what finished calls cost, exactly as billed, and the replies paid before a kill for runs
    # made again after it (carried by their new rows as `attempt` steps, once)
    live = [
        s
        for r in rows
        for s in traces[r.ledger_id]
        if s.source == "live" and (s.kind == "request" or (s.kind == "attempt" and s.usd))
    ]
    assert live and all(s.response_id in billed for s in live), (
        ledger,
        received,
        sum(billed.values()),
        [r.failure_kind for r in rows],
    )
    assert len({s.response_id for s in live}) == len(live)  # no reply in two rows
    assert sum(r.usd or 0.0 for r in rows) == pytest.approx(
        sum(billed[s.response_id] for s in live), abs=1e-9
    )
    assert sum(s.usd or 0.0 for s in live) == pytest.approx(sum(r.usd or 0.0 for r in rows), abs=1e-9)
    # what the rows miss is only what replies never read (in flight at a kill) cost: at most their bound
    rows_usd = sum(r.usd or 0.0 for r in rows)
    assert rows_usd - 1e-9 <= sum(billed.values()) <= rows_usd + ledger["unknown_usd"] + 1e-9
    # the ledger: settled spend was billed; settled plus the unknown part covers the whole bill
    settled_usd = ledger["usd"] - ledger["unknown_usd"]
    assert settled_usd - 1e-9 <= sum(billed.values()) <= ledger["usd"] + 1e-9
    assert ledger["calls"] - ledger["unknown_calls"] <= received <= ledger["calls"]
    assert ledger["open_calls"] == 0 and ledger["unknown_calls"] >= len(kills)  # one in flight per kill
    # and the resumed benchmark and the listing say so
    assert (listed.unknown_calls, listed.unknown_usd) == (
        ledger["unknown_calls"],
        pytest.approx(ledger["unknown_usd"]),
    )
    assert listed.calls == ledger["calls"] and listed.usd == pytest.approx(ledger["usd"])
    text = final.result.text
    assert (
        f"unknown, at most {usd_text(ledger['unknown_usd'])} USD / {ledger['unknown_calls']} calls" in text
    ), text
