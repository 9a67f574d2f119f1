"""Batch mode against the loopback's batch APIs: bills, rounds, the cache, replay, caps, expiry, faults."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest

import hrbench as hb
from hrbench.models import DEFAULT_MAX_OUTPUT_TOKENS, AnthropicClient, OpenAIClient, Pricing
from hrbench.runner import ReplayClient
from hrbench.runner._cache import cache_key
from hrbench.store import Store

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from hrbench.testing import LoopbackServer
from hrbench.testing._loopback import Script  # noqa: E402

pytestmark = pytest.mark.timeout(120)

PRICE = (1.0, 2.0)
"""The loopback's list price (USD per million input and output tokens); batches bill half."""
PRICING = Pricing(overrides={"loopback-1": {"input": PRICE[0], "cached_input": PRICE[0], "output": PRICE[1]}})
FAST = hb.Batch(poll_s=0.005, gather_s=0.2)
CLIENTS = {"openai": OpenAIClient, "anthropic": AnthropicClient}


@pytest.fixture
def srv() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        server.set(price=PRICE)
        yield server


def _client(srv: LoopbackServer, provider: str = "openai") -> Any:
    return CLIENTS[provider]("loopback-1", base_url=srv.base_url, api_key_env=None, trust_env=False)


def _reference(n: int = 8, per: int = 2) -> hb.Reference:
    ids = [f"q{i}" for i in range(n)]
    return hb.Reference(
        {i: f"question {i}" for i in ids},
        labels={i: f"L{i}" for i in ids},
        cluster={i: f"c{int(i[1:]) // per}" for i in ids},
    )


def _one(item: str, ctx: Any) -> Any:
    return ctx.call(f"{item} #{ctx.draw_index}").text


async def _two(item: str, ctx: Any) -> Any:
    first = await ctx.acall(f"{item} first")
    return (await ctx.acall(f"{item} then {first.text}")).text


ARMS = [hb.Arm("one", _one), hb.Arm("two", _two)]


def _bench(client: Any, ref: hb.Reference | None = None, arms: Any = ARMS, **kw: Any) -> hb.Bench:
    kw.setdefault("batch", FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hb.benchmark(arms, ref or _reference(), runs=5, client=client, pricing=PRICING, **kw)


def _billed(srv: LoopbackServer) -> float:
    return sum(b.usd for b in srv.bills)


def _rows_usd(bench: hb.Bench) -> float:
    return sum(r.usd or 0.0 for r in bench.rows)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_rows_usd_is_the_batch_bill_and_a_two_call_arm_takes_two_batches(
    srv: LoopbackServer, provider: str
) -> None:
    bench = _bench(_client(srv, provider), governor=hb.Governor(max_usd=1.0))
    assert len(bench.rows) == 8 * 2 * 5 and all(r.failure_kind in (None, "wrong") for r in bench.rows)
    assert len(srv.batches.created) == 2  # the first calls of both arms, then the second calls
    assert len(srv.bills) == 8 * 5 * 3 and not [c for c, n in srv.batches.uploaded.items() if n > 1]
    assert _rows_usd(bench) == pytest.approx(_billed(srv), rel=1e-3)
    full = sum(b.tokens_in * PRICE[0] + b.tokens_out * PRICE[1] for b in srv.bills) / 1e6
    assert _billed(srv) == pytest.approx(full / 2)  # the batch rate: half the list price
    assert bench.governor["usd"] == pytest.approx(_billed(srv), rel=1e-3)
    assert not srv.requests or all("batches" in r.path or "files" in r.path for r in srv.requests)


def test_a_line_custom_id_is_its_draw_keyed_request_key(srv: LoopbackServer) -> None:
    bench = _bench(_client(srv), arms=[ARMS[0]], ref=_reference(2, 2))
    keys = {s.key for steps in bench.traces.values() for s in steps if s.kind == "request"}
    assert keys == set(srv.batches.uploaded) and len(keys) == 2 * 5  # one per item and draw
    step = next(s for steps in bench.traces.values() for s in steps if s.kind == "request")
    request = hb.Request(
        messages=step.messages or [],
        model="loopback-1",
        provider="openai",
        base_url=srv.base_url,
        draw_index=step.draw_index,
        params={"max_tokens": DEFAULT_MAX_OUTPUT_TOKENS},  # sent under the default USD cap
    )
    request.wire = _client(srv).wire(request)
    assert step.key == cache_key(request, "one")


def test_a_cache_hit_never_enters_a_batch(srv: LoopbackServer) -> None:
    store = Store(":memory:")
    first = _bench(_client(srv), cache=hb.Cache(store))
    made = list(srv.batches.created)
    again = _bench(_client(srv), cache=hb.Cache(store))
    assert srv.batches.created == made and _rows_usd(again) == 0.0
    assert [r.correct for r in again.rows] == [r.correct for r in first.rows]


def test_a_replay_reproduces_a_batch_run_with_the_provider_down(srv: LoopbackServer) -> None:
    store = Store(":memory:")
    live = _bench(_client(srv), store=store, record="rec")
    srv.stop()
    replayed = _bench(ReplayClient(store, recording="rec"))
    assert [(r.arm, r.item, r.run, r.correct) for r in replayed.rows] == [
        (r.arm, r.item, r.run, r.correct) for r in live.rows
    ]

    def texts(bench: hb.Bench) -> dict[str, list[str | None]]:
        return {
            lid.split("/", 1)[1]: [s.text for s in t if s.kind == "request"]
            for lid, t in bench.traces.items()
        }

    assert texts(replayed) == texts(live) and len(texts(live)) == 80


def test_a_usd_cap_holds_with_100_lines_a_batch(srv: LoopbackServer) -> None:
    srv.set(reply_words=1000)  # every reply bills 1000 output tokens: the cap is reached
    cap = 0.15  # room for about 145 lines' worst case at the batch rate; 200 lines would cost 0.2
    batch = hb.Batch(poll_s=0.005, gather_s=0.2, max_lines=100)
    bench = _bench(
        _client(srv), ref=_reference(40, 4), arms=[ARMS[0]], batch=batch, governor=hb.Governor(max_usd=cap)
    )
    assert len(bench.rows) == 200 and any(r.failure_kind == "budget_stop" for r in bench.rows)
    assert max(srv.batches.sizes.values()) == 100
    assert _billed(srv) <= cap and _rows_usd(bench) == pytest.approx(_billed(srv), rel=1e-3)
    assert bench.governor["usd"] <= cap + 1e-12


def test_the_governor_reserves_at_the_batch_rate(srv: LoopbackServer) -> None:
    client = _client(srv)
    ref = _reference(4, 2)
    probe = hb.Request(
        messages=[{"role": "user", "content": "question 0 #1"}],
        model="loopback-1",
        provider="openai",
        base_url=srv.base_url,
        params={"max_tokens": 1024},
    )
    worst_list, _ = PRICING.reservation(probe)
    assert worst_list is not None
    cap = 20 * worst_list * 0.75  # room for the 20 lines at the batch rate, 15 at the list price
    bench = _bench(client, ref=ref, arms=[ARMS[0]], governor=hb.Governor(max_usd=cap))
    assert not [r for r in bench.rows if r.failure_kind == "budget_stop"]
    assert len(srv.batches.created) == 1  # every line reserved at once, at half the list price


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_expired_lines_are_resubmitted_and_billed_once(srv: LoopbackServer, provider: str) -> None:
    srv.batches.script(Script(end="expired", processed=0.5))
    bench = _bench(_client(srv, provider), arms=[ARMS[0]], ref=_reference(4, 2))
    assert all(r.failure_kind in (None, "wrong") for r in bench.rows)
    assert len(srv.batches.created) == 2 and max(srv.batches.uploaded.values()) == 2
    assert len(srv.bills) == 20 and _rows_usd(bench) == pytest.approx(_billed(srv), rel=1e-3)


def test_expired_lines_sent_synchronously_are_billed_at_the_list_price(srv: LoopbackServer) -> None:
    srv.batches.script(Script(end="expired", processed=0.5))
    bench = _bench(
        _client(srv),
        arms=[ARMS[0]],
        ref=_reference(4, 2),
        batch=hb.Batch(poll_s=0.005, expired="sync"),
        governor=hb.Governor(max_usd=1.0),
    )
    sync = [r for r in srv.requests if r.path.endswith("/chat/completions")]
    assert len(sync) == 10 and len(srv.batches.created) == 1
    assert all(r.failure_kind in (None, "wrong") for r in bench.rows)
    assert _rows_usd(bench) == pytest.approx(_billed(srv), rel=1e-3)
    assert bench.governor["usd"] == pytest.approx(_billed(srv), rel=1e-3)


def test_expired_lines_fail_as_errors_that_release_their_reservation(srv: LoopbackServer) -> None:
    srv.batches.script(Script(end="expired", processed=0.5))
    bench = _bench(
        _client(srv),
        arms=[ARMS[0]],
        ref=_reference(4, 2),
        batch=hb.Batch(poll_s=0.005, expired="fail"),
        governor=hb.Governor(max_usd=1.0),
    )
    failed = [r for r in bench.rows if r.failure_kind == "error"]
    assert len(failed) == 10 and all(r.usd == 0.0 for r in failed)
    assert bench.summary()[0]["error_causes"] == {"openai: batch line expired": 10}
    assert bench.governor["usd"] == pytest.approx(_billed(srv), rel=1e-3)


def test_a_line_the_provider_refuses_is_an_error_row_that_costs_nothing(srv: LoopbackServer) -> None:
    def arm(item: str, ctx: Any) -> Any:
        marker = " [[batch:error]]" if item == "question q0" else ""
        return ctx.call(f"{item}{marker}").text

    bench = _bench(
        _client(srv), arms=[hb.Arm("a", arm)], ref=_reference(2, 2), governor=hb.Governor(max_usd=1.0)
    )
    bad = [r for r in bench.rows if r.item == "q0"]
    assert {r.failure_kind for r in bad} == {"error"} and {r.usd for r in bad} == {0.0}
    assert bench.governor["usd"] == pytest.approx(_billed(srv), rel=1e-3) and len(srv.bills) == 5


def test_a_500_on_a_status_check_and_results_out_of_order_change_nothing(srv: LoopbackServer) -> None:
    srv.batches.fail_status(500, 500)
    bench = _bench(_client(srv), arms=[ARMS[0]], ref=_reference(4, 2))
    assert all(r.failure_kind in (None, "wrong") for r in bench.rows)
    texts = {
        (r.item, r.run): s.text for r in bench.rows for s in bench.traces[r.ledger_id] if s.kind == "request"
    }
    assert all(t and t.startswith("reply-") for t in texts.values()) and len(set(texts.values())) == 20


def test_a_batch_that_fails_validation_fails_its_runs_with_its_cause(srv: LoopbackServer) -> None:
    srv.batches.script(Script(end="failed", error="the input file is not valid"))
    bench = _bench(
        _client(srv), arms=[ARMS[0]], ref=_reference(2, 2), batch=hb.Batch(poll_s=0.005, expired="fail")
    )
    assert {r.failure_kind for r in bench.rows} == {"error"} and _billed(srv) == 0.0


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_lost_upload_reply_is_found_again_not_uploaded_twice(srv: LoopbackServer, provider: str) -> None:
    srv.batches.lose_create()
    bench = _bench(_client(srv, provider), arms=[ARMS[0]], ref=_reference(2, 2))
    assert len(srv.batches.created) == 1 and set(srv.batches.uploaded.values()) == {1}
    assert all(r.failure_kind in (None, "wrong") for r in bench.rows)


def test_batch_mode_is_refused_without_a_client_it_can_batch() -> None:
    with pytest.raises(hb.ConfigError, match="batch"):
        _bench(hb.MockClient(lambda m, p: "x"))


def _stop_reference(n: int = 40) -> hb.Reference:
    ids = [f"q{i}" for i in range(n * 2)]
    return hb.Reference(
        {i: i for i in ids},
        labels={i: f"L{i}" for i in ids},
        cluster={i: f"c{int(i[1:]) // 2:02d}" for i in ids},
    )


async def _right(item: str, ctx: Any) -> Any:
    return (await ctx.acall(f"[[reply:L{item}]] {item} #{ctx.draw_index}")).text


async def _wrong(item: str, ctx: Any) -> Any:
    return (await ctx.acall(f"[[reply:nope]] {item} #{ctx.draw_index}")).text


STOP_ARMS = [hb.Arm("good", _right), hb.Arm("bad", _wrong)]


@pytest.mark.parametrize("wave", [2, 4])
def test_a_wave_run_uploads_nothing_after_its_decision(srv: LoopbackServer, wave: int) -> None:
    batch = hb.Batch(wave=wave, poll_s=0.005)
    bench = _bench(_client(srv), _stop_reference(), STOP_ARMS, stop=hb.StopWhenSure(seed=7), batch=batch)
    rec = bench.stop
    assert rec is not None and rec.reason == "decided" and rec.winner == "good" and rec.clusters < 40
    waves = -(-rec.clusters // wave)  # the wave of the deciding cluster is the last one uploaded
    assert len(srv.batches.created) == waves
    assert sum(srv.batches.sizes.values()) == waves * wave * 2 * 2 * 5
    assert rec.unreported_rows == (waves * wave - rec.clusters) * 2 * 2 * 5
    assert _rows_usd(bench) == pytest.approx(_billed(srv), rel=1e-3)


def test_a_decision_cancels_the_batches_still_queued_and_counts_what_they_bill(srv: LoopbackServer) -> None:
    per_cluster = 2 * 2 * 5
    # a wave of 8 clusters in two batches: the first 6 clusters' lines answered at once, the last
    # 2 clusters' held; the test decides on the 6th cluster, so the held batch is cancelled, a
    # quarter of its lines done (and billed) by then
    srv.batches.script(
        Script(), Script(steps=(("validating", 0.0), ("in_progress", 600.0)), cancel_done=0.25)
    )
    batch = hb.Batch(wave=8, poll_s=0.005, max_lines=6 * per_cluster)
    bench = _bench(_client(srv), _stop_reference(), STOP_ARMS, stop=hb.StopWhenSure(seed=7), batch=batch)
    rec = bench.stop
    assert rec is not None and rec.reason == "decided" and rec.clusters == 6
    first, held = srv.batches.created
    assert srv.batches.state_of(held) == "cancelled" and srv.batches.sizes[held] == 2 * per_cluster
    assert rec.unreported_rows == 2 * per_cluster and len(bench.rows) == 8 * per_cluster
    late = [r for r in bench.rows if not r.reportable]
    assert sum(1 for r in late if r.usd) == per_cluster // 2  # what the cancelled batch billed
    assert _rows_usd(bench) == pytest.approx(_billed(srv), rel=1e-3)
    assert rec.unreported_usd == pytest.approx(sum(r.usd or 0.0 for r in late))


def test_a_resume_reattaches_to_the_batch_left_live_and_uploads_nothing_again(
    srv: LoopbackServer, tmp_path: Any
) -> None:
    import anyio

    from hrbench.runner import kept_ledger

    store = Store(tmp_path / "hrbench.sqlite3")
    srv.batches.script(Script(steps=(("validating", 0.01), ("in_progress", 1.0), ("finalizing", 0.01))))
    rows: dict[tuple[str, str, int], hb.Row] = {}
    kw: dict[str, Any] = {
        "client": _client(srv),
        "pricing": PRICING,
        "store": store,
        "benchmark_id": "b1",
        "batch": FAST,
    }

    async def first() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                lambda: hb.benchmark_async(
                    [ARMS[0]],
                    _reference(4, 2),
                    5,
                    governor=gov,
                    on_row=lambda s, r, t: rows.update({(r.arm, r.item, r.run): r}),
                    **kw,
                )
            )
            while not store.batch_list("b1") or store.batch_list("b1")[0]["state"] != "in_progress":  # noqa: ASYNC110
                await anyio.sleep(0.01)
            tg.cancel_scope.cancel()  # cancelled while its batch is in progress

    gov = hb.Governor(max_usd=1.0)
    with warnings.catch_warnings(), kept_ledger(gov, store, "b1"):
        warnings.simplefilter("ignore")
        anyio.run(first)
    assert not rows and [b["state"] for b in store.batch_list("b1", live=True)] == ["in_progress"]
    gov = hb.Governor(max_usd=1.0)
    with warnings.catch_warnings(), kept_ledger(gov, store, "b1"):
        warnings.simplefilter("ignore")
        bench = hb.benchmark([ARMS[0]], _reference(4, 2), 5, governor=gov, **kw)
    assert len(srv.batches.created) == 1 and set(srv.batches.uploaded.values()) == {1}
    assert len(bench.rows) == 20 and all(r.failure_kind in (None, "wrong") for r in bench.rows)
    assert _rows_usd(bench) == pytest.approx(_billed(srv), rel=1e-3) and len(srv.bills) == 20
    assert store.batch_list("b1", live=True) == []


def _named_run(srv: LoopbackServer, store: Store, batch: hb.Batch, **kw: Any) -> hb.Bench:
    """One run of benchmark ``b1`` kept in ``store`` (its governor's ledger there too)."""
    from hrbench.runner import kept_ledger

    gov = hb.Governor(max_usd=1.0)
    with warnings.catch_warnings(), kept_ledger(gov, store, "b1"):
        warnings.simplefilter("ignore")
        return hb.benchmark(
            [ARMS[0]],
            _reference(4, 2),
            5,
            client=_client(srv),
            pricing=PRICING,
            store=store,
            benchmark_id="b1",
            batch=batch,
            governor=gov,
            **kw,
        )


def _crash_lost_the_paid_steps(store: Store) -> None:
    """What a SIGKILL leaves when it comes after the batch ledger kept the results and the cache the
    replies, before the governor's ledger committed the bills and the rows were stored."""
    import sqlite3

    with sqlite3.connect(store.path) as conn:
        conn.execute("DELETE FROM ledger_paid WHERE benchmark_id='b1'")


def test_a_reply_whose_bill_a_crash_left_unkept_is_billed_in_its_run_made_again(
    srv: LoopbackServer, tmp_path: Any
) -> None:
    store = Store(tmp_path / "hrbench.sqlite3")
    first = _named_run(srv, store, FAST, cache=hb.Cache(store))
    assert _rows_usd(first) == pytest.approx(_billed(srv), rel=1e-3) and len(srv.bills) == 20
    _crash_lost_the_paid_steps(store)
    again = _named_run(srv, store, FAST, cache=hb.Cache(store))  # no row kept: every run made again
    assert len(srv.batches.created) == 1 and len(srv.bills) == 20  # nothing uploaded or billed again
    assert _rows_usd(again) == pytest.approx(_billed(srv), rel=1e-3)  # each row carries its bill
    live = sorted(
        s.response_id for t in again.traces.values() for s in t if s.source == "live" and s.response_id
    )
    assert live == sorted(b.response_id for b in srv.bills)


def test_a_run_made_again_fails_a_line_its_batch_expired_under_fail_without_uploading_it(
    srv: LoopbackServer, tmp_path: Any
) -> None:
    srv.batches.script(Script(end="expired", processed=0.5))
    store = Store(tmp_path / "hrbench.sqlite3")
    batch = hb.Batch(poll_s=0.005, expired="fail")
    first = _named_run(srv, store, batch)
    assert sum(r.failure_kind == "error" for r in first.rows) == 10
    again = _named_run(srv, store, batch)  # no row kept: every run made again
    assert len(srv.batches.created) == 1 and set(srv.batches.uploaded.values()) == {1}
    assert sum(r.failure_kind == "error" for r in again.rows) == 10
    assert again.summary()[0]["error_causes"] == {"openai: batch line expired": 10}
    assert _rows_usd(again) == pytest.approx(_billed(srv), rel=1e-3) and len(srv.bills) == 10


def test_a_run_made_again_sends_a_line_its_batch_expired_under_sync_synchronously(
    srv: LoopbackServer, tmp_path: Any
) -> None:
    srv.batches.script(Script(end="expired", processed=0.5))
    store = Store(tmp_path / "hrbench.sqlite3")
    _named_run(srv, store, hb.Batch(poll_s=0.005, expired="fail"))
    again = _named_run(srv, store, hb.Batch(poll_s=0.005, expired="sync"))
    sync = [r for r in srv.requests if r.path.endswith("/chat/completions")]
    assert len(sync) == 10 and len(srv.batches.created) == 1
    assert all(r.failure_kind in (None, "wrong") for r in again.rows)
    assert _rows_usd(again) == pytest.approx(_billed(srv), rel=1e-3)
