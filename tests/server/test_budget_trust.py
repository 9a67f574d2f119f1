"""Budget stops and resumes a user can trust, through a real daemon and a real loopback server (issue 19).

Each test runs a benchmark against :class:`~hrbench.testing.loopback.LoopbackServer` (which keeps
every request body it received) through a daemon subprocess, and checks what the store, ``hrb
ls``, the report and the HTML page say, and what a resume sends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hrbench.testing.loopback import LoopbackServer
from hrbench_client.view import benchmark_html
from tests.server._daemon import Daemon, spec

pytestmark = pytest.mark.timeout(120)


def _client_spec(srv: LoopbackServer) -> dict[str, Any]:
    return {"kind": "openai", "model": "loopback-1", "base_url": srv.base_url, "api_key_env": None}


@pytest.mark.parametrize(("items", "runs", "max_calls"), [(4, 5, 3), (3, 5, 0), (2, 5, 9)])
def test_a_budget_stopped_benchmark_is_never_shown_done(
    home: Path, items: int, runs: int, max_calls: int
) -> None:
    """Seed 002 counts stopped runs wrong; the status, listing, report and page say so."""
    total = items * runs
    stopped = total - max_calls
    with LoopbackServer() as srv:
        bench = spec(n=items, runs=runs, client=_client_spec(srv), governor={"max_calls": max_calls})
        d = Daemon(home).start()
        try:
            with d.client() as c:
                stream = c.benchmark(bench)
                rows = list(stream)
                assert stream.result is not None
                bid = stream.result.id
                listing = {b.id: b for b in c.benchmarks()}[bid]
                rep = c.report(bid, descriptive=True)
                page = benchmark_html(c, bid)
        finally:
            d.stop()
    assert len(srv.requests) == max_calls
    assert sum(r.failure_kind == "budget_stop" for r in rows) == stopped
    note = (
        f"{stopped} of {total} runs were stopped by the budget and count as wrong (seed 002); "
        f"resume with `hrb bench --resume {bid} --max-calls N`"
    )
    assert stream.result.status == "budget_stopped"
    assert f"{stopped} of {total} runs were stopped by the budget" in stream.result.text
    assert (listing.status, listing.stop_note) == ("budget_stopped", note)
    assert (rep["status"], rep["stop_note"]) == ("budget_stopped", note)
    assert "the budget stopped included" in rep["text"]  # usd/run is labelled
    assert note in page
    assert 'id: "budget-stopped"' in page  # the page script draws the banner from stop_note


def test_a_benchmark_no_budget_stopped_stays_done(home: Path) -> None:
    with LoopbackServer() as srv:
        d = Daemon(home).start()
        try:
            with d.client() as c:
                stream = c.benchmark(spec(n=2, runs=5, client=_client_spec(srv), governor={"max_calls": 10}))
                list(stream)
                assert stream.result is not None
                listing = c.benchmarks()[0]
                rep = c.report(stream.result.id)
        finally:
            d.stop()
    assert stream.result.status == listing.status == rep["status"] == "done"
    assert listing.stop_note is None and rep["stop_note"] is None
    assert "stopped by the budget" not in stream.result.text
