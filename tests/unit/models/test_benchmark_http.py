"""hb.benchmark through the HTTP clients against the loopback server: faults, rows, governor."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from hrbench.arm import Arm
from hrbench.errors import ArmErrorWarning, BudgetStoppedWarning
from hrbench.models import AnthropicClient, OpenAIClient, Pricing
from hrbench.reference import Reference
from hrbench.runner import Governor
from hrbench.runner._benchmark import benchmark
from hrbench.testing import LoopbackServer
from tests.unit.models.conftest import FAST

pytestmark = pytest.mark.timeout(90)

RUNS = 5

# item id -> (prompt, label, expected failure kind, attempts sent per run; 0: bounded by time, not attempts)
FAULT_ITEMS: dict[str, tuple[str, str, str | None, int]] = {
    "ok": ("[[reply:A]] plain", "A", None, 1),
    "wrong": ("[[reply:X]] plain", "Y", "wrong", 1),
    "r429": ("[[fault:429:retry_after=0.1:n=1]] [[reply:B]]", "B", None, 2),
    "r500": ("[[fault:500:n=2]] [[reply:C]]", "C", None, 3),
    "e503": ("[[fault:503]] always", "C", "error", 3),
    "e429": ("[[fault:429:retry_after=0]] always", "C", "error", 0),  # case H15b
    "drop1": ("[[fault:drop:n=1]] [[reply:D]]", "D", None, 2),
    "dropall": ("[[fault:drop]] always", "D", "error", 3),
    "hang": ("[[fault:hang:hang=20]] x", "E", "error", 3),
    "malformed": ("[[fault:malformed]] x", "F", "error", 3),
    "filter": ("[[fault:content_filter]] x", "H", "refusal", 1),
    "refusal": ("[[fault:refusal]] x", "H", "refusal", 1),
}

CLIENTS = {"openai": OpenAIClient, "anthropic": AnthropicClient}


async def ask(item: str, ctx: Any) -> Any:
    # the run in the prompt: the Messages API sends no seed, and "n=1" faults count per prompt
    return await ctx.acall(f"{item} #run{ctx.draw_index}", seed=ctx.draw_index, max_tokens=16)


SLOW_OK_S = 30.0
"""The timeout of the items that are answered: a loaded machine never holds a reply that long."""

HANG_TIMEOUT_S = 0.6
"""The timeout of the ``hang`` item's benchmark: every attempt times out, whatever the load."""


@pytest.fixture(scope="module", params=sorted(CLIENTS))
def fault_bench(request: pytest.FixtureRequest, _server: LoopbackServer) -> dict[str, Any]:
    """Every fault item through each client kind; the server's requests kept.

    The ``hang`` item runs in a benchmark of its own with a short timeout; the others with
    a timeout no reply reaches. Once, all shared one benchmark at a 0.6 s timeout: on a loaded
    machine an answered item's reply took longer now and then and was retried (one attempt
    too many), a timing assumption, not a fault of the client.
    """
    srv = _server
    srv.reset()
    gov = Governor(max_calls=10_000)

    def run(items: list[str], timeout_s: float, **settings: Any) -> tuple[Any, str]:
        ref = Reference(
            {k: FAULT_ITEMS[k][0] for k in items}, labels=[FAULT_ITEMS[k][1] for k in items], split="test"
        )
        client = CLIENTS[request.param](
            "loopback-1",
            base_url=srv.base_url,
            api_key_env=None,
            **{**FAST, "timeout_s": timeout_s, **settings},
        )
        # a quota refusal stops every other cell of its client: tested apart (test_retries.py)
        with pytest.warns(ArmErrorWarning) as said:
            bench = benchmark(Arm("ask", ask), ref, runs=RUNS, client=client, governor=gov, concurrency=100)
        (text,) = [str(w.message) for w in said if issubclass(w.category, ArmErrorWarning)]
        return bench, text

    answered, text = run([k for k in FAULT_ITEMS if k not in ("hang", "e429")], SLOW_OK_S)
    hung, hang_text = run(["hang"], HANG_TIMEOUT_S)
    # a 429 is retried for as long as max_total_s allows (and holds the key's pace): apart, briefly
    limited, limited_text = run(["e429"], SLOW_OK_S, max_total_s=1.0)
    text += limited_text
    # one warning names every cause of the failed runs
    for cause in ("HTTP 503", "HTTP 429", "transport error", "malformed reply"):
        assert cause in text, (cause, text)
    assert f"no reply within {HANG_TIMEOUT_S:g} s" in hang_text, hang_text
    return {
        "rows": [*answered.rows, *hung.rows, *limited.rows],
        "traces": {**answered.traces, **hung.traces, **limited.traces},
        "gov": gov,
        "requests": list(srv.requests),
    }


@pytest.mark.slow  # every fault of a loopback server, through a whole benchmark: `make test-slow`
def test_benchmark_completes_under_every_fault(fault_bench: dict[str, Any]) -> None:
    rows, traces = fault_bench["rows"], fault_bench["traces"]
    gov, requests = fault_bench["gov"], fault_bench["requests"]
    expected = {k: v[2] for k, v in FAULT_ITEMS.items()}

    # every row exists exactly once, in order
    keys = [(r.item, r.run) for r in rows]
    assert len(keys) == len(set(keys)) == len(FAULT_ITEMS) * RUNS
    assert set(keys) == {(i, r) for i in FAULT_ITEMS for r in range(1, RUNS + 1)}
    assert len({r.ledger_id for r in rows}) == len(rows)

    # the right rows carry the right failure kind (refusals: see the next test)
    for row in rows:
        want = expected[row.item]
        if want == "refusal":
            continue
        assert row.failure_kind == want, (row.item, row.run, row.failure_kind, traces[row.ledger_id])
        assert row.correct is (want is None)

    # a retry never makes a second row or a second trace step; every attempt was charged
    sent = Counter(q.prompt.rsplit(" #run", 1)[0] for q in requests)
    for item, (prompt, _, _, attempts) in FAULT_ITEMS.items():
        assert sent[prompt] == attempts * RUNS if attempts else sent[prompt] >= RUNS, item
    assert gov.calls == len(requests)
    for row in rows:
        steps = [s for s in traces[row.ledger_id] if s.kind == "request"]
        assert len(steps) == 1, (row.item, steps)
        if expected[row.item] == "budget_stop":
            assert steps[0].source == "refused" and "limit_refused" in (steps[0].error or "")
        if row.item in ("r429", "r500", "drop1"):
            assert steps[0].response_id and steps[0].error is None

    # usage reached the rows
    ok_rows = [r for r in rows if r.item == "ok"]
    assert all(r.tokens_in > 0 and r.tokens_out > 0 for r in ok_rows)


@pytest.mark.slow  # (the same benchmark as the test above)
def test_benchmark_refusals_are_refusal(fault_bench: dict[str, Any]) -> None:
    rows = fault_bench["rows"]
    got = {(r.item, r.failure_kind) for r in rows if r.item in ("filter", "refusal")}
    assert got == {("filter", "refusal"), ("refusal", "refusal")}
    assert all(r.correct is False for r in rows if r.item in ("filter", "refusal"))


def test_governor_spend_cap_never_passed_with_100_in_flight(_server: LoopbackServer) -> None:
    srv = _server
    srv.reset()
    reply = " ".join(["w"] * 40)
    # replies are held until 50 requests are in flight at once: how many the client really keeps
    # in flight, not how fast this machine sends them, decides the assertion on max_in_flight
    # (the first request goes alone, a slow start until its reply shows the billed model)
    srv.set(latency_s=0.05, reply_fn=lambda prompt, seed, call: reply, gather=50, gather_skip=1)
    try:
        n_items = 200
        ref = Reference({f"q{i}": f"q{i}" for i in range(n_items)}, labels=reply, split="test")
        pricing = Pricing(
            overrides={"loopback-1": {"input": 1000.0, "cached_input": 1000.0, "output": 1000.0}}
        )
        cap = 8.0  # USD: admits ~126 estimated requests at once, ~195 real ones in all
        gov = Governor(max_usd=cap)
        client = OpenAIClient(
            "loopback-1",
            base_url=srv.base_url,
            api_key_env=None,
            max_connections=100,
            **{k: v for k, v in FAST.items() if k != "timeout_s"},
        )

        async def ask48(item: str, ctx: Any) -> Any:
            return await ctx.acall(item, seed=ctx.draw_index, max_tokens=48)

        with pytest.warns(BudgetStoppedWarning, match="cost_cap_reached"):
            bench = benchmark(
                Arm("ask", ask48),
                ref,
                runs=RUNS,
                client=client,
                governor=gov,
                concurrency=100,
                pricing=pricing,
            )
    finally:
        srv.set(latency_s=0.0, reply_fn=None, gather=0, gather_skip=0)

    assert srv.max_in_flight >= 50  # really many in flight against one running total
    spent = sum(r.usd or 0.0 for r in bench.rows)
    assert gov.usd <= cap + 1e-9 and spent <= cap + 1e-9
    assert abs(spent - gov.usd) < 1e-9
    assert gov.snapshot()["usd"] <= cap + 1e-9  # nothing left reserved past the cap
    assert gov.calls == len(srv.requests)
    kinds = Counter(r.failure_kind for r in bench.rows)
    assert set(kinds) <= {None, "budget_stop"}
    assert kinds[None] > 0 and kinds["budget_stop"] > 0
    assert len(bench.rows) == n_items * RUNS
    assert len({(r.item, r.run) for r in bench.rows}) == n_items * RUNS
