"""Newcomer finding: cancel, resume, cancel, resume must count each cancelled call once.

A real daemon subprocess sends to a real loopback model server (in this process) that waits
before each reply and bills every request it answers. The benchmark is cancelled twice while
requests are in flight (the client's ``$/cancelRequest``, as ``hrb`` sends on Ctrl-C), resumed
after each, then run to the end. Right after each cancel the ledger (what ``hrb ls`` lists)
already counts what was in flight, as *cancelled in flight: unknown, at most*, and at the end:

- calls counted are at most the requests the server received (each cancelled call once);
- the ledger's USD is its settled part (at most what the server billed) plus the cancelled
  part, which is exactly the reservations open at the two cancels, once each;
- the result's text says "cancelled in flight", never "at a crash".
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from hrbench.store import Store
from hrbench.testing.loopback import LoopbackServer
from tests.server._daemon import Daemon, spec

pytestmark = pytest.mark.timeout(120)

PRICE = (2000.0, 4000.0)  # USD per million input and output tokens
CONCURRENCY = 4


def _ledger(home: Path, bench_id: str) -> dict[str, float]:
    store = Store(home / "hrbench.sqlite3")
    try:
        led = store.ledger_get(bench_id)
    finally:
        store.close()
    assert led is not None
    return led


def test_cancel_resume_cancel_resume_counts_each_cancelled_call_once(home: Path, tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"loopback-1": {"input": PRICE[0], "output": PRICE[1]}}}))
    d = Daemon(home, env={"HRBENCH_PRICES": str(prices)}).start()
    cancelled: list[tuple[int, float]] = []  # what each cancel left in flight, as the ledger says
    bench_id: str | None = None
    try:
        with LoopbackServer(latency_s=0.4, vary=True) as srv:
            srv.set(reply_words=4, price=PRICE)
            client = {"kind": "openai", "model": "loopback-1", "base_url": srv.base_url, "api_key_env": None}
            first = spec(
                n=24,
                runs=1,
                concurrency=CONCURRENCY,
                client=client,
                arms=[{"kind": "prompt", "name": "ask", "template": "{item}", "params": {"max_tokens": 8}}],
                governor={"max_calls": 200, "max_usd": 50.0},
            )
            for _ in range(2):
                with d.client() as c:
                    params = first if bench_id is None else {"resume": bench_id, "concurrency": CONCURRENCY}
                    stream = c.benchmark(params)
                    before = len(srv.requests)
                    deadline = time.monotonic() + 60
                    while len(srv.requests) < before + CONCURRENCY + 2:  # a reply in, requests in flight
                        assert time.monotonic() < deadline, d.read_log()[-2000:]
                        time.sleep(0.002)
                    stream.close()  # $/cancelRequest, then read until the daemon answers
                    bench_id = bench_id or stream.id
                    assert bench_id is not None
                    led = _ledger(home, bench_id)
                    (listed,) = [b for b in c.benchmarks() if b.id == bench_id]  # what `hrb ls` prints
                assert led["open_calls"] == 0  # folded at the cancel, not left for the resume
                now = int(led["cancelled_calls"]) - sum(n for n, _ in cancelled)
                assert 1 <= now <= CONCURRENCY  # at most what one run had in flight: none twice
                cancelled.append((now, float(led["cancelled_usd"]) - sum(u for _, u in cancelled)))
                assert led["unknown_calls"] == led["cancelled_calls"]  # a cancel is no crash
                assert (listed.unknown_calls, listed.calls) == (led["unknown_calls"], led["calls"])
                assert listed.unknown_usd == pytest.approx(led["unknown_usd"])
            with d.client() as c:
                final = c.benchmark({"resume": bench_id, "concurrency": CONCURRENCY})
                rows = list(final)
                assert final.result is not None and final.result.status == "done"
            received, billed = len(srv.requests), sum(b.usd for b in srv.bills)
    finally:
        d.stop()
    assert bench_id is not None
    led = _ledger(home, bench_id)
    assert len(rows) + final.result.n_resumed == 24
    assert led["open_calls"] == 0
    # each cancelled call counted once: the ledger's cancelled part is the two cancels' sum
    assert led["cancelled_calls"] == led["unknown_calls"] == sum(n for n, _ in cancelled)
    assert led["cancelled_usd"] == pytest.approx(sum(u for _, u in cancelled))
    # calls counted are requests the server received (none counted that was not sent)
    assert led["calls"] <= received
    settled_usd = led["usd"] - led["unknown_usd"]
    assert settled_usd - 1e-9 <= billed <= led["usd"] + 1e-9  # the bill lies between settled and at most
    text = final.result.text
    n, usd = int(led["cancelled_calls"]), float(led["cancelled_usd"])
    assert f"cancelled in flight: unknown, at most {usd:.4f} USD / {n} calls" in text, text
    assert "at a crash" not in text
