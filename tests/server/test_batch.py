"""Batch mode through a real daemon and the loopback's batch APIs: the bill, progress, listing, cancel, disconnects."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hrbench.store import Store
from hrbench.testing import LoopbackServer
from hrbench.testing._loopback import Script
from tests._slow import slow
from tests.server._daemon import Daemon

pytestmark = pytest.mark.timeout(180)

PRICE = (1.0, 2.0)  # the list price, USD per million input and output tokens; a batch bills half
ITEMS = 6
RUNS = 5


@pytest.fixture
def srv() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        server.set(price=PRICE)
        yield server


@pytest.fixture
def daemon(home: Path, tmp_path: Path) -> Iterator[Daemon]:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"loopback-1": {"input": PRICE[0], "output": PRICE[1]}}}))
    with Daemon(home, env={"HRBENCH_PRICES": str(prices)}) as d:
        yield d


def batch_spec(srv: LoopbackServer, provider: str = "openai", **batch: Any) -> dict[str, Any]:
    """A prompt arm on ``ITEMS`` items, ``RUNS`` runs, in batch mode against the loopback."""
    return {
        "arms": [{"kind": "prompt", "name": "ask", "template": "{item}"}],
        "reference": {
            "items": {f"q{i}": f"item{i}" for i in range(ITEMS)},
            "labels": {f"q{i}": "x" for i in range(ITEMS)},
        },
        "client": {"kind": provider, "model": "loopback-1", "base_url": srv.base_url, "api_key_env": None},
        "runs": RUNS,
        "governor": {"max_usd": 1.0},
        "batch": {"poll_s": 0.02, **batch},
    }


def _stored(home: Path, bench_id: str) -> tuple[str, list[Any]]:
    store = Store(home / "hrbench.sqlite3")
    try:
        rec = store.benchmark_get(bench_id) or {}
        return str(rec.get("status")), store.rows_get(bench_id)
    finally:
        store.close()


def _wait(what: Any, timeout_s: float = 60.0) -> Any:
    deadline = time.monotonic() + slow(timeout_s)
    while not (got := what()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
    return got


def test_rows_are_the_batch_bill_and_progress_and_the_listing_show_the_batch(
    daemon: Daemon, srv: LoopbackServer
) -> None:
    srv.batches.script(default=Script(steps=(("validating", 0.1), ("in_progress", 0.3), ("finalizing", 0.1))))
    seen: list[str] = []
    with daemon.client() as c:
        stream = c.benchmark(batch_spec(srv))

        def progress(done: int, total: int) -> None:
            seen.extend(b.state for b in (stream.progress.batches if stream.progress else []))

        stream.on_progress = progress
        rows = list(stream)
        assert stream.result is not None and stream.result.status == "done"
        listed = c.batches(all=True).batches
        live = c.batches().batches
    assert len(rows) == ITEMS * RUNS and len(srv.bills) == ITEMS * RUNS
    billed = sum(b.usd for b in srv.bills)
    assert sum(r.usd or 0.0 for r in rows) == pytest.approx(billed, rel=1e-3)
    # every state the provider answered a status check with reaches the caller's progress; a state
    # the provider held briefly (in_progress, 0.3 s) is skipped when no check fell inside it (a
    # loaded machine), so the states asked for are the ones the provider was seen in
    answered = {state for _, state in srv.batches.states_seen}
    assert {"validating", "completed"} | answered <= set(seen)
    (batch,) = listed
    assert (batch.state, batch.lines, batch.done, batch.live) == (
        "completed",
        ITEMS * RUNS,
        ITEMS * RUNS,
        False,
    )
    assert batch.usd_billed == pytest.approx(billed) and batch.id == srv.batches.created[0] and live == []


def test_a_batch_benchmark_runs_on_when_its_client_disconnects(
    daemon: Daemon, srv: LoopbackServer, home: Path
) -> None:
    srv.batches.script(Script(steps=(("validating", 0.05), ("in_progress", 1.0), ("finalizing", 0.05))))
    with daemon.client() as c:
        stream = c.benchmark(batch_spec(srv))
        _wait(lambda: srv.batches.created)
        bench_id = _wait(lambda: c.batches().batches)[0].benchmark
        del stream  # the connection closes with the batch in progress
    status, rows = _wait(lambda: (got := _stored(home, bench_id))[0] == "done" and got)
    assert len(rows) == ITEMS * RUNS and set(srv.batches.uploaded.values()) == {1}


def test_a_batch_cancelled_on_request_fails_its_lines_and_is_not_sent_again(
    daemon: Daemon, srv: LoopbackServer, home: Path
) -> None:
    srv.batches.script(Script(steps=(("validating", 0.0), ("in_progress", 600.0)), cancel_done=0.5))
    with daemon.client() as c:
        stream = c.benchmark(batch_spec(srv))
        batch_id = _wait(lambda: srv.batches.created)[0]
        _wait(lambda: [b for b in c.batches().batches if b.id == batch_id])
        cancelled = c.cancel_batch(batch_id).batch
        rows = list(stream)
        assert stream.result is not None and stream.result.status == "errors"
    assert cancelled.id == batch_id and cancelled.state in ("cancelling", "cancelled")
    assert srv.batches.state_of(batch_id) == "cancelled" and len(srv.batches.created) == 1
    failed = [r for r in rows if r.failure_kind == "error"]
    assert len(failed) == ITEMS * RUNS // 2 and len(srv.bills) == ITEMS * RUNS // 2
    assert sum(r.usd or 0.0 for r in rows) == pytest.approx(sum(b.usd for b in srv.bills), rel=1e-3)


def test_an_unknown_batch_is_refused_by_name_and_the_daemon_lives_on(daemon: Daemon) -> None:
    from hrbench_client.errors import NotFound

    with daemon.client() as c:
        with pytest.raises(NotFound, match="batch_nope"):
            c.cancel_batch("batch_nope")
        assert c.batches(all=True).batches == [] and c.status() is not None
