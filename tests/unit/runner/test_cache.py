"""The draw-keyed cache, recordings and replay, duplicate draws, cost and tokens."""

from __future__ import annotations

import itertools
import os

import msgspec
import pytest

import hrbench as hb
from tests._slow import slow
from tests.conftest import case

# these benchmarks run on unlabelled items on purpose (cache, draws, retries, threads)
pytestmark = pytest.mark.filterwarnings("ignore::hrbench.errors.NoLabelsWarning")


def sampling_client(counter: itertools.count | None = None) -> hb.MockClient:
    """A provider that returns a different reply on every call (case H12a)."""
    counter = counter or itertools.count(1)

    def fn(messages, params):
        n = next(counter)
        return hb.Result(
            text=f"reply-{n}", response_id=f"resp-{n}", model="m", usage=hb.Usage(tokens_in=10, tokens_out=5)
        )

    return hb.MockClient(fn, model="m")


def one_item() -> hb.Reference:
    return hb.Reference({"q1": "question"}, labels=None)


ASK = hb.Arm("A", lambda item, ctx: ctx.call(item).text)


def test_case_H12a_each_run_its_own_draw(tmp_path) -> None:
    lab = case("H12a")["label"]
    store = hb.Store(tmp_path / "s.db")
    client = sampling_client()
    bench = hb.benchmark(ASK, one_item(), runs=5, client=client, cache=hb.Cache(store))
    assert client.calls == lab["provider_calls"]
    # seed 002: run r is given draw index r (the case counts from 0; the seed's example from 1)
    assert [r.draw_index for r in bench.rows] == [1, 2, 3, 4, 5]
    assert len({r.draw_index for r in bench.rows}) == len(lab["draw_index"])
    assert store.cache_stats()["entries"] == lab["distinct_cache_entries"]
    assert len({r.outcome for r in bench.rows}) == 5
    assert sum(r.failure_kind == "error" for r in bench.rows) == lab["refused_runs"]


def test_case_H12b_rerun_replays_each_draw_from_cache(tmp_path) -> None:
    store = hb.Store(tmp_path / "s.db")
    first = hb.benchmark(ASK, one_item(), runs=5, client=sampling_client(), cache=hb.Cache(store))
    again_client = sampling_client(itertools.count(100))
    again = hb.benchmark(ASK, one_item(), runs=5, client=again_client, cache=hb.Cache(store))
    assert again_client.calls == case("H12b")["label"]["provider_calls"]
    assert [r.outcome for r in again.rows] == [r.outcome for r in first.rows]
    assert len({r.outcome for r in again.rows}) == 5  # five different replies, not one
    assert all(s.source == "cache" for lid in again.traces for s in again.traces[lid] if s.kind == "request")


def test_case_H12c_fixed_draw_index_is_refused_as_duplicate(tmp_path) -> None:
    store = hb.Store(tmp_path / "s.db")
    fixed = hb.Arm("A", lambda item, ctx: ctx.call(item, draw_index=0).text)
    with pytest.warns(hb.FewRunsWarning):
        hb.benchmark(
            fixed, one_item(), runs=1, client=sampling_client(), cache=hb.Cache(store)
        )  # fills the cache
    with pytest.warns(hb.FewRunsWarning), pytest.raises(hb.DuplicateDrawError) as err:
        hb.benchmark(fixed, one_item(), runs=3, client=sampling_client(), cache=hb.Cache(store))
    bench = err.value.bench
    # case H12c: run 1 served; runs 2 and 3 refused as duplicate draws, recorded as "error"
    assert [r.failure_kind for r in bench.rows] == [None, "error", "error"]
    assert "duplicate_draw" in bench.traces[bench.rows[1].ledger_id][-1].error
    assert err.value.arm == "A" and err.value.run == 2


def test_leaving_the_index_out_refused_under_cache_not_under_mock() -> None:
    no_index = hb.Arm("A", lambda item, ctx: ctx.call(item, draw_index=None).text)
    bench = hb.benchmark(no_index, one_item(), runs=5, client=sampling_client())
    assert all(r.failure_kind is None for r in bench.rows)
    with pytest.raises(hb.DuplicateDrawError, match="served the reply of run 1"):
        hb.benchmark(no_index, one_item(), runs=5, client=sampling_client(), cache=hb.Cache())


def test_repeated_response_id_is_a_duplicate_draw() -> None:
    same_id = hb.MockClient(lambda m, p: hb.Result(text=f"r{p['draw_index']}", response_id="chatcmpl-1"))
    with pytest.raises(hb.DuplicateDrawError, match="response id 'chatcmpl-1'") as err:
        hb.benchmark(ASK, one_item(), runs=5, client=same_id)
    assert [r.failure_kind for r in err.value.bench.rows] == [None, "error", "error", "error", "error"]


def test_case_H12e_arm_name_is_part_of_the_key(tmp_path) -> None:
    store = hb.Store(tmp_path / "s.db")
    hb.benchmark(ASK, one_item(), runs=5, client=sampling_client(), cache=hb.Cache(store))
    copy = hb.Arm("A-copy", lambda item, ctx: ctx.call(item).text)
    client = sampling_client(itertools.count(100))
    bench = hb.benchmark(copy, one_item(), runs=5, client=client, cache=hb.Cache(store))
    assert case("H12e")["label"]["A-copy_served_from_A_entries"] is False
    assert client.calls == 5
    assert all(s.source == "live" for t in bench.traces.values() for s in t if s.kind == "request")


def test_case_H14a_cache_hit_adds_no_spend_and_keeps_nominal_cost(tmp_path) -> None:
    c = case("H14a")
    store = hb.Store(tmp_path / "s.db")
    cost = c["output"]["original_cost_usd"]
    client = hb.MockClient(lambda m, p: hb.Result(text="x", usd=cost, model="m"), model="m")
    hb.benchmark(ASK, one_item(), runs=5, client=client, cache=hb.Cache(store))
    gov = hb.Governor(max_usd=1.0)
    client.calls = 0
    bench = hb.benchmark(ASK, one_item(), runs=5, client=client, cache=hb.Cache(store), governor=gov)
    assert gov.usd == c["label"]["spend_added_usd"]
    assert gov.calls == c["label"]["provider_calls_added"] == client.calls
    assert [r.usd for r in bench.rows] == [0.0] * 5
    step = bench.traces[bench.rows[0].ledger_id][0]
    assert step.source == "cache" and step.usd == 0.0 and step.usd_nominal == cost
    assert c["label"]["original_cost_kept_as_metadata"] is True


def test_case_H14b_reasoning_tokens_counted_once() -> None:
    c = case("H14b")
    u = c["output"]["usage"]
    usage = hb.Usage(
        tokens_in=u["prompt_tokens"],
        tokens_out=u["completion_tokens"],
        tokens_reasoning=u["reasoning_tokens"],
    )
    assert usage.total == c["label"]["tokens_charged"] == u["total_tokens"]


def test_case_H14d_provider_prompt_cache_billed_at_discount() -> None:
    c = case("H14d")
    u = c["output"]["usage"]
    usage = hb.Usage(
        tokens_in=u["prompt_tokens"], tokens_cached=u["cached_tokens"], tokens_out=u["completion_tokens"]
    )
    pricing = hb.Pricing(overrides={"m": {"input": 2.0, "cached_input": 0.5, "output": 8.0}})
    assert usage.total == c["label"]["tokens_charged"]
    assert pricing.cost(usage, "m") == pytest.approx((1500 * 0.5 + 500 * 2.0 + 50 * 8.0) / 1e6)
    gov = hb.Governor()
    client = hb.MockClient(lambda m, p: hb.Result(text="x", usage=usage, model="m"), model="m")
    with pytest.warns(hb.FewRunsWarning):
        bench = hb.benchmark(ASK, one_item(), runs=1, client=client, governor=gov, pricing=pricing)
    assert gov.calls == c["label"]["provider_calls_added"]
    assert bench.rows[0].tokens_cached == 1500 and bench.rows[0].tokens_in == 2000


def test_refusals_and_failures_are_not_cached() -> None:
    cache = hb.Cache()
    r = hb.Request(messages=[{"role": "user", "content": "x"}], draw_index=1)
    assert cache.put(r, hb.Result(text="no", refused=True, finish_reason="refusal")) is False
    assert cache.put(r, hb.Result(text=None, finish_reason="content_filter")) is False
    assert cache.put(r, hb.Result(ok=False, error="HTTP 500")) is False
    assert cache.get(r) is None


def test_key_covers_everything_that_changes_a_reply_and_never_the_api_key(monkeypatch) -> None:
    base = hb.Request(
        messages=[{"role": "user", "content": "x"}],
        params={"temperature": 0.7},
        model="m",
        provider="openai",
        base_url="http://127.0.0.1:1/v1",
        draw_index=1,
    )
    key = hb.cache_key(base, "A")
    for change in (
        {"model": "m2"},
        {"provider": "anthropic"},
        {"base_url": "http://127.0.0.1:2/v1"},
        {"params": {"temperature": 0.8}},
        {"tools": [{"name": "t"}]},
        {"draw_index": 2},
        {"messages": [{"role": "user", "content": "y"}]},
    ):
        assert hb.cache_key(msgspec.structs.replace(base, **change), "A") != key, change
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-1")
    k1 = hb.cache_key(base, "A")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-2")
    assert hb.cache_key(base, "A") == k1 == key


def test_recording_and_replay_any_arm_order_and_subset(tmp_path) -> None:
    store = hb.Store(tmp_path / "s.db")
    counter = itertools.count(1)
    live = sampling_client(counter)
    a = hb.Arm("A", lambda item, ctx: ctx.call(item).text)
    b = hb.Arm("B", lambda item, ctx: ctx.call(item).text)  # the same request as A
    ref = hb.Reference({"q1": "question", "q2": "other"}, labels=None)
    first = hb.benchmark([a, b], ref, runs=5, client=live, record="r1", store=store)
    got = {(r.arm, r.item, r.run): r.outcome for r in first.rows}
    replay = hb.ReplayClient(store, recording="r1")
    assert (replay.model, replay.provider) == ("m", "mock")
    again = hb.benchmark([b], ref, runs=5, client=replay)
    assert {(r.arm, r.item, r.run): r.outcome for r in again.rows} == {
        k: v for k, v in got.items() if k[0] == "B"
    }
    both = hb.benchmark([b, a], ref, runs=5, client=replay)
    assert {(r.arm, r.item, r.run): r.outcome for r in both.rows} == got
    assert all(
        s.source == "recording" and s.usd == 0.0
        for t in both.traces.values()
        for s in t
        if s.kind == "request"
    )


def test_strict_replay_miss_names_arm_item_run_and_key(tmp_path) -> None:
    store = hb.Store(tmp_path / "s.db")
    hb.benchmark(ASK, one_item(), runs=5, client=sampling_client(), record="r1", store=store)
    replay = hb.ReplayClient(store, recording="r1")
    with pytest.warns(hb.ArmErrorWarning, match="1 of 6 .* ReplayMiss"):
        bench = hb.benchmark(ASK, one_item(), runs=6, client=replay)
    last = bench.rows[-1]
    assert last.run == 6 and last.failure_kind == "error"
    err = bench.traces[last.ledger_id][-1].error
    assert "ReplayMiss" in err and "arm 'A', item 'q1', run 6" in err and "key " in err


def test_replay_fallback_records_what_it_fetches(tmp_path) -> None:
    store = hb.Store(tmp_path / "s.db")
    live = sampling_client()
    replay = hb.ReplayClient(store, recording="r2", strict=False, fallback=live)
    hb.benchmark(ASK, one_item(), runs=5, client=replay)
    assert live.calls == 5
    assert len(store.recording_export("r2")) == 5
    hb.benchmark(ASK, one_item(), runs=5, client=replay)
    assert live.calls == 5


def test_recording_without_draw_keys_is_a_duplicate(tmp_path) -> None:
    store = hb.Store(tmp_path / "s.db")
    undrawn = hb.Arm("A", lambda item, ctx: ctx.call(item, draw_index=None).text)
    with pytest.warns(hb.FewRunsWarning):
        hb.benchmark(undrawn, one_item(), runs=1, client=sampling_client(), record="old", store=store)
    replay = hb.ReplayClient(store, recording="old")
    with pytest.raises(hb.DuplicateDrawError, match="without its own draw key|served the reply of run 1"):
        hb.benchmark(ASK, one_item(), runs=5, client=replay)


def test_recording_export_import_round_trip(tmp_path) -> None:
    s1 = hb.Store(tmp_path / "a.db")
    hb.benchmark(ASK, one_item(), runs=5, client=sampling_client(), record="r", store=s1)
    entries = s1.recording_export("r")
    s2 = hb.Store(tmp_path / "b.db")
    assert s2.recording_import("r", msgspec.json.decode(msgspec.json.encode(entries))) == 5
    bench = hb.benchmark(ASK, one_item(), runs=5, client=hb.ReplayClient(s2, recording="r"))
    assert [r.outcome for r in bench.rows] == [f"reply-{i}" for i in range(1, 6)]


def test_store_is_wal_and_versioned_and_default_path_under_hrbench_home(tmp_path) -> None:
    store = hb.Store()
    assert store.path == os.path.join(os.environ["HRBENCH_HOME"], "hrbench.sqlite3")
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(
        hb.store.SCHEMA_VERSION
    )


def test_api_key_never_reaches_sqlite(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-NEVER-STORE-ME")
    store = hb.Store(tmp_path / "s.db")
    hb.benchmark(
        ASK, one_item(), runs=5, client=sampling_client(), record="r", store=store, cache=hb.Cache(store)
    )
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"NEVER-STORE-ME" not in raw


def test_trace_cost_prices_live_steps_and_not_cache_hits(tmp_path) -> None:
    pricing = hb.Pricing(overrides={"m": {"input": 1.0, "cached_input": 1.0, "output": 1.0}})
    store = hb.Store(tmp_path / "s.db")
    first = hb.benchmark(
        ASK, one_item(), runs=5, client=sampling_client(), cache=hb.Cache(store), pricing=pricing
    )
    assert hb.trace_cost(first.trace) == pytest.approx(5 * 15 / 1e6)
    assert hb.trace_cost(first.traces[first.rows[0].ledger_id]) == pytest.approx(first.rows[0].usd)
    again = hb.benchmark(
        ASK, one_item(), runs=5, client=sampling_client(), cache=hb.Cache(store), pricing=pricing
    )
    assert hb.trace_cost(again.trace) == 0.0
    unpriced = hb.benchmark(ASK, one_item(), runs=5, client=hb.MockClient(lambda m, p: "x", model="no-price"))
    assert hb.trace_cost(unpriced.trace) is None


def test_warm_rerun_makes_zero_calls_and_identical_rows(tmp_path) -> None:
    store = hb.Store(tmp_path / "s.db")
    arms = [
        hb.Arm("A", lambda item, ctx: ctx.call(item, temperature=1.0).text),
        hb.Arm("B", lambda item, ctx: ctx.call(item, temperature=1.0).text),
    ]
    ref = hb.Reference({"q1": "one", "q2": "two"}, labels=None)
    cold_client = sampling_client()
    cold = hb.benchmark(arms, ref, runs=5, client=cold_client, cache=hb.Cache(store))
    warm_client = sampling_client(itertools.count(1000))
    warm = hb.benchmark(arms, ref, runs=5, client=warm_client, cache=hb.Cache(store))
    assert (cold_client.calls, warm_client.calls) == (20, 0)
    strip = lambda rows: [(r.arm, r.item, r.run, r.outcome, r.correct, r.tokens_in) for r in rows]  # noqa: E731
    assert strip(warm.rows) == strip(cold.rows)
    # the two arms sent identical requests and each replays its own replies
    a = [r.outcome for r in warm.rows if r.arm == "A"]
    b = [r.outcome for r in warm.rows if r.arm == "B"]
    assert set(a).isdisjoint(b)


KILL_CHILD = r"""
import sys, itertools, hrbench as hb
store = hb.Store(sys.argv[1])
counter = itertools.count(1)
client = hb.MockClient(lambda messages, params: f"reply-{next(counter)}")
ref = hb.Reference({f"q{i}": f"q{i}" for i in range(100000)}, labels=None)
arm = hb.Arm("A", lambda item, ctx: ctx.call(item).text)
def on_row(seq, row, trace):  # a row is scored only after its requests' cache entries are written
    sys.stdout.write(f"ROW {row.item} {row.run}\n")
    sys.stdout.flush()
hb.benchmark(arm, ref, runs=5, client=client, cache=hb.Cache(store), governor=hb.Governor(), concurrency=4,
             on_row=on_row, keep_rows=False)
"""


@pytest.mark.slow  # a fault simulation (a benchmarking process SIGKILLed): make test-slow
def test_sigkill_mid_benchmark_store_opens_cleanly_and_keeps_finished_entries(tmp_path) -> None:
    import signal
    import subprocess
    import sys

    db = tmp_path / "kill.db"
    proc = subprocess.Popen([sys.executable, "-c", KILL_CHILD, str(db)], stdout=subprocess.PIPE, text=True)
    acked = []
    assert proc.stdout is not None
    for line in proc.stdout:
        acked.append(line.split()[1:])
        if len(acked) >= 300:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=slow(30))
    proc.stdout.close()
    store = hb.Store(db)
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    entries = {
        (r[0], r[1])
        for r in store._all("SELECT json_extract(request, '$.messages[0].content'), draw_index FROM cache")
    }
    # every finished run's reply is kept
    finished = [(a[0], int(a[1])) for a in acked]
    assert finished and all(f in entries for f in finished)


def test_a_new_seed_served_wholly_from_the_cache_says_so() -> None:
    """Changing ``seed`` reruns entirely from the cache, and a note says so."""
    import warnings

    import hrbench as hb
    from hrbench.runner import Cache
    from hrbench.store import Store

    store = Store(":memory:")
    ref = hb.Reference({"q1": "France", "q2": "Peru"}, labels=["Paris", "Lima"])
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}?").text)
    client = hb.MockClient(lambda messages, params: "Paris")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hb.benchmark(arm, ref, runs=5, client=client, cache=Cache(store))  # pays: no note
        hb.benchmark(arm, ref, runs=5, client=client, cache=Cache(store))  # the default seed: no note
    with pytest.warns(hb.CachedDrawsWarning, match=r"all 10 replies came from the cache: the seed \(7\)"):
        again = hb.benchmark(arm, ref, runs=5, client=client, cache=Cache(store), seed=7)
    assert [r.correct for r in again.rows] == [True] * 5 + [False] * 5
    with warnings.catch_warnings():  # a new request is a new draw: no note
        warnings.simplefilter("error")
        other = hb.Arm("ask", lambda item, ctx: ctx.call(f"What is the capital of {item}?").text)
        hb.benchmark(other, ref, runs=5, client=client, cache=Cache(store), seed=8)
    store.close()
