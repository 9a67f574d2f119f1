"""Rows' USD equals the provider's bill after a SIGKILL and a resume, retried replies included.

A real daemon subprocess sends to a real loopback model server (in this process) that bills
every reply it makes. Each run makes two requests: the first gets a billed reply with no text
once (retried), the second hangs once, unanswered and unbilled. The daemon is SIGKILLed when
every reply the server made is settled in the store and only the hanging requests are in flight
(so what the provider billed is known exactly), then resumed to the end. The runs made again
were paid for before the kill (their first request); their rows must carry that bill once,
whether the cache serves the reply again or it is sent again, so that the rows' USD is the
server's bill to 1e-9.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from hrbench.runner._remade import PREPAID_NOTE
from hrbench.store import Store
from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.server._daemon import Daemon, spec

# a fault simulation (a real daemon SIGKILLed): `make test-slow`
pytestmark = pytest.mark.slow

PRICE = (2000.0, 4000.0)  # USD per million input and output tokens
ITEMS = 6

ARM = '''
def two_calls(item, ctx):
    """Two requests: the first has no text once (billed, retried), the second hangs once."""
    first = ctx.call(f"[[fault:null_content:n=1]] first {item}", max_tokens=8).text
    second = ctx.call(f"[[fault:hang:hang=600:n=1]] second {item}", max_tokens=8).text
    return first + " " + second
'''


def _spec(srv: LoopbackServer, tmp_path: Path, cache: bool) -> dict[str, Any]:
    client = {"kind": "openai", "model": "loopback-1", "base_url": srv.base_url, "api_key_env": None}
    return spec(
        n=ITEMS,
        runs=3,
        concurrency=8,
        client=client,
        arms=[{"kind": "import", "path": "bill_arm:two_calls", "name": "two"}],
        governor={"max_usd": 10.0},
        python_path=[str(tmp_path)],
        cache=cache,
    )


def _ledger(home: Path, bench_id: str | None) -> dict[str, Any] | None:
    store = Store(home / "hrbench.sqlite3")
    try:
        if bench_id is None:
            listed = store.benchmark_list()
            if not listed:
                return None
            bench_id = listed[0]["id"]
        led = store.ledger_get(bench_id)
        return None if led is None else {**led, "id": bench_id}
    finally:
        store.close()


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
def test_rows_usd_after_a_kill_and_a_resume_is_the_providers_bill(
    home: Path, tmp_path: Path, cache: bool
) -> None:
    (tmp_path / "bill_arm.py").write_text(ARM)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"loopback-1": {"input": PRICE[0], "output": PRICE[1]}}}))
    env = {"HRBENCH_PRICES": str(prices)}
    with LoopbackServer() as srv:
        srv.set(reply_words=4, price=PRICE)
        d = Daemon(home, env=env).start()
        try:
            with d.client() as c:
                stream = c.benchmark(_spec(srv, tmp_path, cache))
                deadline = time.monotonic() + slow(60)
                while True:  # every billed reply settled in the store; only the hanging calls open
                    led = _ledger(home, None)
                    hung = sum(1 for r in srv.requests if r.fault == "hang")
                    if led is not None and hung == ITEMS and led["open_calls"] == ITEMS:
                        if led["calls"] - led["open_calls"] == len(srv.bills):
                            break
                    assert time.monotonic() < deadline, (led, hung, len(srv.bills), d.read_log()[-2000:])
                    time.sleep(0.01)
                d.kill()  # the six hanging calls are in flight; every billed reply is in the ledger
                del stream
        finally:
            d.kill()
        bench_id = led["id"]
        billed_at_kill, n_at_kill = sum(b.usd for b in srv.bills), len(srv.bills)
        d = Daemon(home, env=env).start()
        try:
            with d.client() as c:
                resumed = c.resume(bench_id)
                list(resumed)
                assert resumed.result is not None and resumed.result.status == "done", resumed.result
        finally:
            d.stop()
        bills = list(srv.bills)
    store = Store(home / "hrbench.sqlite3")
    rows, traces = store.rows_get(bench_id), store.traces_get(bench_id)
    store.close()
    assert len(rows) == ITEMS * 3 and {r.failure_kind for r in rows} == {
        "wrong"
    }  # answered (no labels match)
    billed = sum(b.usd for b in bills)
    assert billed > billed_at_kill > 0  # paid before the kill and after the resume
    assert sum(r.usd or 0.0 for r in rows) == pytest.approx(billed, abs=1e-9)
    # the runs made again carry what was paid for them before the kill, once
    carried = [s for r in rows for s in traces[r.ledger_id] if s.error == PREPAID_NOTE]
    assert len(carried) >= ITEMS and all(s.source == "live" and s.usd for s in carried)
    # with a cache the resume paid only the second requests; without, the first ones again too
    assert len(bills) - n_at_kill >= ITEMS * (1 if cache else 2)
