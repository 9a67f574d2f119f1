"""Budget stops and resumes a user can trust, through a real daemon and a real loopback server.

Each test runs a benchmark against :class:`~hrbench.testing.LoopbackServer` (which keeps
every request body it received) through a daemon subprocess, and checks what the store, ``hrb
ls``, the report and the HTML page say, and what a resume sends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hrbench.testing import LoopbackServer
from hrbench_client.errors import HrbenchError
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
        f"{stopped} of {total} runs were stopped by the budget and count as wrong; "
        f"resume with `hrb bench --resume {bid} --max-calls N`"
    )
    assert stream.result.status == "budget_stopped"
    assert f"{stopped} of {total} runs were stopped by the budget" in stream.result.text
    assert (listing.status, listing.stop_note) == ("budget_stopped", note)
    assert (rep["status"], rep["stop_note"]) == ("budget_stopped", note)
    assert "the budget stopped included" in rep["text"] and "the budget stopped included" in rep["markdown"]
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


def _half_right(prompt: str, seed: Any, call: int) -> str:
    """Items with an even number are answered right, the others wrong."""
    return f"answer {prompt}" if int(prompt.strip()[-1]) % 2 == 0 else "something else"


@pytest.mark.parametrize("first_calls", [0, 3, 11])
def test_a_resume_keeps_the_specs_metrics(home: Path, first_calls: int) -> None:
    """metrics=["squad"] survives a budget stop and a resume, over every run."""
    with LoopbackServer(reply_fn=_half_right) as srv:
        bench = spec(
            n=4, runs=5, client=_client_spec(srv), metrics=["squad"], governor={"max_calls": first_calls}
        )
        d = Daemon(home).start()
        try:
            with d.client() as c:
                first = c.benchmark(bench)
                list(first)
                assert first.result is not None
                bid = first.result.id
                second = c.benchmark({"resume": bid, "governor": {"max_calls": 100}})
                list(second)
                assert second.result is not None
        finally:
            d.stop()
    assert len(srv.requests) == 20
    assert second.result.status == "done" and second.result.n_resumed == first_calls
    (arm,) = second.result.summary
    assert arm.metrics == {"squad_em": 0.5, "squad_f1": 0.5}
    assert arm.accuracy == 0.5
    (before,) = first.result.summary
    if first_calls:
        assert before.metrics["squad_em"] is not None


@pytest.mark.parametrize("given", [{"max_calls": 100}, {"max_calls": 100, "max_tokens": 10**9}])
def test_a_resume_sends_the_same_requests_under_the_same_default_limits(home: Path, given: dict) -> None:
    """No [governor] in the spec: the defaults (and the output limit a cap sends) stay.

    The daemon's default call cap is made small (HRBENCH_MAX_CALLS=7) so that the first part
    stops; the resume raises the call cap only, and every default it does not set stays in force.
    """
    with LoopbackServer() as srv:
        bench = spec(n=4, runs=5, client=_client_spec(srv), governor=None)
        d = Daemon(home, env={"HRBENCH_MAX_CALLS": "7"}).start()
        try:
            with d.client() as c:
                first = c.benchmark(bench)
                list(first)
                assert first.result is not None and first.result.status == "budget_stopped"
                bid = first.result.id
                before = {b.id: b for b in c.benchmarks()}[bid]
                sent_first = len(srv.requests)
                second = c.benchmark({"resume": bid, "governor": given})
                list(second)
                assert second.result is not None
                after = {b.id: b for b in c.benchmarks()}[bid]
        finally:
            d.stop()
    assert sent_first == 7 and len(srv.requests) == 20
    fields = [frozenset(k for k in r.body if k not in ("messages", "seed")) for r in srv.requests]
    assert len(set(fields)) == 1, fields  # every request carries the same body fields
    limits = {r.body.get("max_tokens") for r in srv.requests}
    assert len(limits) == 1 and None not in limits  # the output limit the default USD cap sends
    assert (before.max_calls, before.max_usd) == (7, 5.0)  # the limits in force, not "no cap"
    assert (after.max_calls, after.max_usd) == (100, 5.0)  # raised, and the default $5 kept
    assert second.result.status == "done"


def test_an_explicit_usd_cap_on_an_unpriced_model_gets_spec_advice(shared_daemon: Daemon) -> None:
    """The daemon's refusal names the spec's price field and the flags, not Python."""
    with LoopbackServer() as srv, shared_daemon.client() as c:  # a refusal: the module's daemon
        with pytest.raises(HrbenchError) as err:
            list(c.benchmark(spec(n=2, client=_client_spec(srv), governor={"max_usd": 1.0})))
    message = str(err.value)
    assert "unpriced_model: model 'loopback-1' has no price" in message
    assert "price = {input = USD_PER_M, output = USD_PER_M}" in message and "--max-usd" in message
    assert "HRBENCH_PRICES" in message
    assert "hrbench.Pricing" not in message and "Governor(" not in message
    assert srv.requests == []  # refused before the first call


@pytest.mark.parametrize(
    ("price", "cap"), [({"input": 1.0, "output": 2.0}, 1.0), ({"input": 0.0, "output": 0.0}, 0.5)]
)
def test_a_client_spec_price_prices_its_model(home: Path, price: dict[str, float], cap: float) -> None:
    with LoopbackServer() as srv:
        d = Daemon(home).start()
        try:
            with d.client() as c:
                stream = c.benchmark(
                    spec(n=2, client={**_client_spec(srv), "price": price}, governor={"max_usd": cap})
                )
                rows = list(stream)
        finally:
            d.stop()
    assert stream.result is not None and stream.result.status == "done"
    assert len(srv.requests) == 10
    for row in rows:
        want = (row.tokens_in * price["input"] + row.tokens_out * price["output"]) / 1e6
        assert row.usd == pytest.approx(want)


def test_the_default_limits_are_named_with_spec_advice(home: Path) -> None:
    """A stop under the defaults names them, their source, and the spec's fields and flags."""
    with LoopbackServer() as srv:
        d = Daemon(home, env={"HRBENCH_MAX_CALLS": "3"}).start()
        try:
            with d.client() as c:
                stream = c.benchmark(spec(n=2, client=_client_spec(srv), governor=None))
                list(stream)
        finally:
            d.stop()
    assert stream.result is not None and len(srv.requests) == 3  # the default USD cap did not refuse
    (warning,) = [w for w in stream.result.warnings if w.startswith("BudgetStoppedWarning")]
    assert "limits from the defaults (hrbench.options, HRBENCH_MAX_CALLS" in warning
    assert "max_calls=3, max_usd=5.0, max_tokens=None" in warning
    assert "the default max_usd is not enforced on a model with no price" in warning
    assert "[governor] max_calls/max_usd/max_tokens in the spec, or --max-calls" in warning
    assert "hrbench.Governor" not in warning


def test_evaluate_refuses_a_client_price_it_would_ignore(shared_daemon: Daemon) -> None:
    params = {
        "module": {"signature": "text -> label"},
        "client": {"kind": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None,
                   "price": {"input": 1.0, "output": 1.0}},
        "data": [{"text": "a", "label": "b"}],
        "metric": "exact_match",
    }  # fmt: skip
    with shared_daemon.client() as c, pytest.raises(HrbenchError, match="client.price"):
        c.evaluate(params)
