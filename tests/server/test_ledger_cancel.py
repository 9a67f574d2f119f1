"""Cancel, resume, cancel, resume must count each cancelled call once.

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
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hrbench.records import usd_text
from hrbench.testing import LoopbackServer
from hrbench_client.errors import BenchmarkCancelled
from tests._slow import slow
from tests.server._daemon import Daemon, spec, stored_ledger

# a fault simulation (real daemons killed, cancelled or left idle): `make test-slow`, run by .ci/run
pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

PRICE = (2000.0, 4000.0)  # USD per million input and output tokens
CONCURRENCY = 4


def test_cancel_resume_cancel_resume_counts_each_cancelled_call_once(home: Path, tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"loopback-1": {"input": PRICE[0], "output": PRICE[1]}}}))
    # a grace of 0: the replies on their way are not waited for (Ctrl-C follows `hrb cancel`'s
    # grace, tests/server/test_cancel_grace.py), so each cancel leaves calls in flight to count
    d = Daemon(home, env={"HRBENCH_PRICES": str(prices), "HRBENCH_CANCEL_GRACE_S": "0"}).start()
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
                    deadline = time.monotonic() + slow(60)
                    while len(srv.requests) < before + CONCURRENCY + 2:  # a reply in, requests in flight
                        assert time.monotonic() < deadline, d.read_log()[-2000:]
                        time.sleep(0.002)
                    stream.close()  # $/cancelRequest, then read until the daemon answers
                    bench_id = bench_id or stream.id
                    assert bench_id is not None
                    led = stored_ledger(home, bench_id)
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
    led = stored_ledger(home, bench_id)
    assert len(rows) + final.result.n_resumed == 24
    assert led["open_calls"] == 0
    # each cancelled call counted once: the ledger's cancelled part is the two cancels' sum
    assert led["cancelled_calls"] == led["unknown_calls"] == sum(n for n, _ in cancelled)
    assert led["cancelled_usd"] == pytest.approx(sum(u for _, u in cancelled))
    # calls counted are requests sent: every received request was counted, and every call not
    # cancelled in flight was received. A call cancelled in flight was written whole (it stays a
    # call) but its connection closed with the cancel, so the server may not have read
    # it: one CI run counted 32 calls for 31 received.
    assert led["calls"] - led["cancelled_calls"] <= received <= led["calls"]
    settled_usd = led["usd"] - led["unknown_usd"]
    assert settled_usd - 1e-9 <= billed <= led["usd"] + 1e-9  # the bill lies between settled and at most
    text = final.result.text
    n, usd = int(led["cancelled_calls"]), float(led["cancelled_usd"])
    assert f"cancelled in flight: unknown, at most {usd_text(usd)} USD / {n} calls" in text, text
    assert "at a crash" not in text


def _cancel_while_sending(home: Path, tmp_path: Path, grace_s: float, latency_s: float) -> tuple[Any, ...]:
    """Start a benchmark on a real daemon, `hrb cancel` it from another connection with requests in flight."""
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"loopback-1": {"input": PRICE[0], "output": PRICE[1]}}}))
    d = Daemon(home, env={"HRBENCH_PRICES": str(prices)}).start()
    srv = LoopbackServer(latency_s=latency_s).__enter__()
    srv.set(reply_words=4, price=PRICE)
    client = {"kind": "openai", "model": "loopback-1", "base_url": srv.base_url, "api_key_env": None}
    params = spec(
        n=24,
        runs=1,
        concurrency=CONCURRENCY,
        cache=False,  # the replies must be kept as rows
        client=client,
        arms=[{"kind": "prompt", "name": "ask", "template": "{item}", "params": {"max_tokens": 8}}],
        governor={"max_calls": 200, "max_usd": 50.0},
    )
    with d.client() as c, d.client() as other:
        stream = c.benchmark(params)
        deadline = time.monotonic() + slow(60)
        while len(srv.requests) < CONCURRENCY + 2:  # replies in, requests in flight
            assert time.monotonic() < deadline, d.read_log()[-2000:]
            time.sleep(0.002)
        (running,) = [b for b in other.benchmarks() if b.status == "running"]
        sent_at_cancel = len(srv.requests)
        done = other.cancel_benchmark(running.id, grace_s=grace_s)
        with pytest.raises(BenchmarkCancelled) as raised:
            list(stream)
        led = stored_ledger(home, running.id)
        (listed,) = [b for b in other.benchmarks() if b.id == running.id]
        rows = other.rows(running.id).rows
    return d, srv, running.id, sent_at_cancel, done, raised.value, led, listed, rows


def test_hrb_cancel_lets_the_requests_sent_finish_and_a_resume_pays_for_none_again(
    home: Path, tmp_path: Path
) -> None:
    """The replies in flight at `hrb cancel` are neither booked at worst case nor paid again.

    Within the grace the requests already sent finish; their replies are settled at
    their real cost and saved as rows; nothing is left unknown; the resume sends each item once.
    """
    d, srv, bench_id, sent_at_cancel, done, exc, led, listed, rows = _cancel_while_sending(
        home, tmp_path, grace_s=30.0, latency_s=0.3
    )
    try:
        assert done.status == "cancelled" and done.in_flight == 0 and done.unknown_note is None
        received = len(srv.requests)
        assert received >= sent_at_cancel and received <= sent_at_cancel + CONCURRENCY  # nothing new
        assert len(rows) == received == done.rows  # every request sent is a saved run
        assert led["unknown_calls"] == 0 and led["open_calls"] == 0 and led["calls"] == received
        billed = sum(b.usd for b in srv.bills)
        assert sum(r.usd or 0.0 for r in rows) == pytest.approx(billed)
        assert led["usd"] == pytest.approx(billed)  # settled at the real cost, not the worst case
        assert listed.unknown_note is None and listed.status == "cancelled"
        # the streaming caller is told who cancelled it, the runs saved, how on
        assert exc.context["benchmark"] == bench_id and exc.context["done"] == received
        assert f"cancelled by `hrb cancel`; {received} of 24 runs" in exc.message
        assert f"hrb bench --resume {bench_id}" in exc.message
        with d.client() as c:
            final = c.benchmark({"resume": bench_id, "concurrency": CONCURRENCY})
            list(final)
        assert final.result is not None and final.result.status == "done"
        assert len(srv.requests) == 24  # the resume sent only what was never sent
        assert len({r.prompt for r in srv.requests}) == 24  # each item sent once, across the cancel
        assert stored_ledger(home, bench_id)["usd"] == pytest.approx(sum(b.usd for b in srv.bills))
    finally:
        srv.__exit__(None, None, None)
        d.stop()


def test_hrb_cancel_counts_what_outlasts_the_grace_as_cancelled_in_flight_never_a_crash(
    home: Path, tmp_path: Path
) -> None:
    """What is still unanswered after the grace is "cancelled in flight" in ls, ls --text and the result."""
    d, srv, bench_id, _, done, exc, led, listed, _ = _cancel_while_sending(
        home, tmp_path, grace_s=0.0, latency_s=1.0
    )
    try:
        assert 1 <= done.in_flight <= CONCURRENCY
        assert led["unknown_calls"] == led["cancelled_calls"] == done.in_flight
        note = f"cancelled in flight: unknown, at most {usd_text(led['cancelled_usd'])} USD / {done.in_flight} calls"
        assert done.unknown_note is not None and done.unknown_note.startswith(note)
        assert listed.unknown_note == done.unknown_note
        assert "cancelled by `hrb cancel`" in exc.message
        for command in (["ls", "--text"], ["report", bench_id, "--descriptive", "--text"]):
            text = subprocess.run(
                [sys.executable, "-m", "hrbench_client.cli", *command],
                env={**os.environ, "HRBENCH_HOME": str(home)},
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            assert note in text and "at a crash" not in text, text
        with d.client() as c:
            final = c.benchmark({"resume": bench_id, "concurrency": CONCURRENCY})
            list(final)
        assert final.result is not None
        assert note in final.result.text and "at a crash" not in final.result.text
    finally:
        srv.__exit__(None, None, None)
        d.stop()


def test_retries_are_in_the_runs_trace_and_not_in_the_daemon_log(home: Path) -> None:
    """Retries are in the run's trace, not bare 'WARNING stamina: stamina.retry_scheduled' lines in daemon.log."""
    d = Daemon(home).start()
    try:
        with LoopbackServer() as srv:
            srv.push("500", "500")
            client = {
                "kind": "openai",
                "model": "loopback-1",
                "base_url": srv.base_url,
                "api_key_env": None,
                "max_attempts": 3,
            }
            with d.client() as c:
                stream = c.benchmark(spec(n=1, runs=1, client=client, governor={"max_calls": 10}))
                (row,) = list(stream)
                got = c.rows(row.ledger_id.split("/", 1)[0], traces=True)
            received = len(srv.requests)
    finally:
        d.stop()
    assert received == 3 and row.failure_kind in (None, "wrong")  # the third attempt answered
    steps = (got.traces or {})[row.ledger_id]
    attempts = [s for s in steps if s.kind == "attempt"]
    assert [s.source for s in attempts] == ["live", "live"] and all(
        "HTTP 500" in (s.error or "") for s in attempts
    )
    assert "stamina" not in d.read_log()
    assert stored_ledger(home, row.ledger_id.split("/", 1)[0])["calls"] == 3  # each attempt sent is a call
