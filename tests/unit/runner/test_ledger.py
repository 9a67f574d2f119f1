"""The governor's ledger kept per call (hrbench/runner/_ledger.py), on real files.

A reservation is in the file before its request is sent, its settlement right after the reply;
many requests in flight share a few commits; a ledger that cannot be written stops the sending;
a resumed governor starts from what was spent and reports the crash's in-flight spend as
"unknown, at most". The end-to-end check against a provider's bill after real SIGKILLs is
tests/server/test_ledger_crash.py.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrbench as hb
from hrbench.errors import BudgetRefused
from hrbench.records import Request, Result, Usage
from hrbench.runner import Governor, Journal, kept_ledger, unknown_sentence
from hrbench.store import SCHEMA_VERSION, Store
from tests._examples import examples


class _Peeking:
    """A client that, when it would send, reads the ledger through another connection."""

    provider, base_url, model, bills = "openai", "", "m", True

    def __init__(self, path: Path, bench_id: str) -> None:
        self.other = Store(path)
        self.bench_id = bench_id
        self.open_at_send: list[int] = []

    async def send(self, request: Request, before_attempt: Any = None) -> Result:
        pending = before_attempt()
        if pending is not None:
            await pending
        led = await anyio.to_thread.run_sync(self.other.ledger_get, self.bench_id)
        self.open_at_send.append(0 if led is None else led["open_calls"])
        await asyncio.sleep(0.01)
        return Result(text="Paris", usage=Usage(tokens_in=3, tokens_out=2, provenance="reported"), usd=0.001)


@contextmanager
def _crashing(gov: Governor, store: Store, bench_id: str = "b") -> Iterator[Journal]:
    """Like ``kept_ledger``, but the run ends as a kill would: nothing is folded at the stop."""
    gov.restore(store.ledger_resume(bench_id))
    journal = Journal(store, bench_id)
    journal.attach(gov)
    try:
        yield journal
    finally:
        journal.close(cancelled=False)


def _bench(client: Any, gov: Governor, n: int, concurrency: int = 100) -> hb.Bench:
    ref = hb.Reference({f"q{i}": f"Capital of France? ({i})" for i in range(n)}, labels="Paris")
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)
    return hb.benchmark(arm, ref, runs=1, client=client, governor=gov, concurrency=concurrency)


def test_a_reservation_is_in_the_file_before_its_request_is_sent(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store, gov = Store(path), Governor(max_calls=500)
    client = _Peeking(path, "b")
    with kept_ledger(gov, store, "b"), pytest.warns(hb.FewRunsWarning):
        _bench(client, gov, 100)
    assert len(client.open_at_send) == 100 and min(client.open_at_send) >= 1
    led = store.ledger_get("b")
    assert led is not None
    assert (led["calls"], led["open_calls"], led["tokens"]) == (100, 0, 500)
    assert led["usd"] == pytest.approx(0.1)


@pytest.mark.parametrize("n", [10, 100, 400])
def test_requests_in_flight_share_a_few_commits(tmp_path: Path, n: int) -> None:
    store, gov = Store(tmp_path / "s.sqlite3"), Governor()
    sent: list[int] = []

    async def one(i: int) -> None:
        pending = gov.gate(0.01, 5).attempt()
        if pending is not None:  # None: the writer committed it already (a loaded machine, CI)
            await pending
        sent.append(i)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(n):
                tg.start_soon(one, i)

    with _crashing(gov, store) as journal:
        anyio.run(main)
        commits = journal.commits
    assert sorted(sent) == list(range(n))
    assert commits <= max(3, n // 5)  # one writer coalesces what was queued while it committed
    led = store.ledger_get("b")
    assert led is not None and led["open_calls"] == n


def test_a_settlement_is_written_right_after_the_reply_not_at_row_flush(tmp_path: Path) -> None:
    store, gov = Store(tmp_path / "s.sqlite3"), Governor(max_usd=1.0)
    with kept_ledger(gov, store, "b") as journal:
        r = gov.reserve(0.4, 100)
        assert journal.durable(r.kept) is None  # no event loop: waited here
        gov.settle(r, 0.05, 30)
        other = Store(tmp_path / "s.sqlite3")
        for _ in range(1000):  # the writer commits within a moment; no row was ever flushed
            led = other.ledger_get("b")
            if led is not None and led["open_calls"] == 0:
                break
            anyio.run(anyio.sleep, 0.005)
        assert led is not None and (led["calls"], led["open_calls"], led["tokens"]) == (1, 0, 30)
        assert led["usd"] == pytest.approx(0.05)


def test_a_ledger_that_cannot_be_written_sends_nothing_more(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store, gov = Store(path), Governor(max_calls=10)
    with kept_ledger(gov, store, "b") as journal:
        os.remove(path)  # the database deleted under the run: StoreGone at the next commit
        r = gov.reserve(0.0, 0)
        with pytest.raises(BudgetRefused, match="ledger_unwritable") as err:
            journal.durable(r.kept)
        assert err.value.limit == "ledger_unwritable"
        with pytest.raises(BudgetRefused) as later:
            gov.reserve(0.0, 0)
        assert later.value.limit == "ledger_unwritable" and "deleted" in str(gov.halted)


@settings(max_examples=examples(25), deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 1000), st.one_of(st.none(), st.floats(0, 1))),
        min_size=1,
        max_size=30,
    )
)
def test_resume_counts_open_reservations_as_spent_and_unknown(calls: list[tuple[float, int, Any]]) -> None:
    # a run "crashes" with some reservations settled (real cost) and the rest open
    store, gov = Store(":memory:"), Governor()
    with _crashing(gov, store):
        for usd, tokens, real in calls:
            r = gov.reserve(usd, tokens)
            if real is not None:
                gov.settle(r, min(real, usd), tokens // 2)
    settled = [(min(real, usd), tokens // 2) for usd, tokens, real in calls if real is not None]
    left = [(usd, tokens) for usd, tokens, real in calls if real is None]
    resumed = Governor(max_calls=1000)
    with kept_ledger(resumed, store, "b"):
        snap = resumed.snapshot()
    assert resumed.calls == len(calls)
    assert resumed.usd == pytest.approx(sum(u for u, _ in settled) + sum(u for u, _ in left))
    assert resumed.tokens == sum(t for _, t in settled) + sum(t for _, t in left)
    if left:
        assert snap["unknown"] == {
            "calls": len(left),
            "usd": pytest.approx(sum(u for u, _ in left)),
            "tokens": sum(t for _, t in left),
        }
    else:
        assert snap["unknown"] is None
    led = store.ledger_get("b")
    assert led is not None and led["open_calls"] == 0 and led["unknown_calls"] == len(left)


def test_a_second_crash_adds_to_the_unknown_spend_and_the_cap_holds(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    for _ in range(2):  # two runs, each left with 3 reservations open
        gov = Governor(max_calls=8)
        with _crashing(gov, store):
            for _ in range(3):
                gov.reserve(0.1, 10)
    gov = Governor(max_calls=8)
    with kept_ledger(gov, store, "b"):
        assert gov.snapshot()["unknown"] == {"calls": 6, "usd": pytest.approx(0.6), "tokens": 60}
        assert [gov.try_reserve() is not None for _ in range(3)] == [True, True, False]


def test_a_resumed_library_benchmark_says_the_crash_spend_is_unknown(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    with _crashing(Governor(), store) as journal:
        journal._governor.reserve(0.25, 40)  # type: ignore[union-attr]  # sent, then the crash
    gov = Governor(max_calls=100)
    client = hb.MockClient(lambda messages, params: "Paris")
    with kept_ledger(gov, store, "b"), pytest.warns(hb.FewRunsWarning):
        bench = _bench(client, gov, 3, concurrency=2)
    assert bench.governor["unknown"] == {"calls": 1, "usd": 0.25, "tokens": 40}
    assert "Governor: in flight at a crash: unknown, at most 0.2500 USD / 1 calls" in str(bench)
    assert bench.governor["calls"] == 4  # the crash's call counted, then 3 more
    led = store.ledger_get("b")
    assert led is not None and led["calls"] == 4  # a mock's calls are counted durably too


def test_no_unknown_spend_no_sentence() -> None:
    assert unknown_sentence(None) is None and unknown_sentence({"calls": 0, "usd": 0.0}) is None


def test_a_schema_2_file_keeps_its_ledger_and_gains_the_unknown_columns(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    Store(path).close()
    con = sqlite3.connect(path)  # make it a schema-2 file, as an older hrbench left it
    con.executescript(
        "DROP TABLE ledger; DROP TABLE ledger_open;"
        "CREATE TABLE ledger (benchmark_id TEXT PRIMARY KEY, calls INTEGER, usd REAL, tokens INTEGER, updated REAL);"
        "INSERT INTO ledger VALUES ('b', 7, 0.5, 300, 1.0);"
        "UPDATE meta SET value='2' WHERE key='schema_version';"
    )
    con.commit()
    con.close()
    store = Store(path)
    assert store._one("SELECT value FROM meta WHERE key='schema_version'")[0] == str(SCHEMA_VERSION) == "7"
    led = store.ledger_get("b")
    assert led is not None and (led["calls"], led["usd"], led["tokens"], led["unknown_calls"]) == (
        7,
        0.5,
        300,
        0,
    )
    assert (led["lost_calls"], led["lost_usd"]) == (0, 0.0)  # schema 6's columns, added empty
    gov = Governor(max_calls=8)
    with kept_ledger(gov, store, "b"):
        assert gov.calls == 7 and gov.snapshot()["unknown"] is None
        assert gov.try_reserve() is not None and gov.try_reserve() is None


def test_a_journal_closes_with_everything_written(tmp_path: Path) -> None:
    store, gov = Store(tmp_path / "s.sqlite3"), Governor()
    journal = Journal(store, "b")
    journal.attach(gov)
    rs = [gov.reserve(0.01, 1) for _ in range(50)]
    for r in rs[:20]:
        gov.settle(r, 0.002, 1)
    journal.close(cancelled=False)  # as a kill leaves it
    assert gov.journal is None
    led = Store(tmp_path / "s.sqlite3").ledger_get("b")
    assert led is not None and (led["calls"], led["open_calls"]) == (50, 30)
    assert led["usd"] == pytest.approx(20 * 0.002 + 30 * 0.01)


# cancel (or a crash) then resume, repeated, must count each reservation once
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("reserve"), st.floats(0.001, 1)),
        st.tuples(st.just("settle"), st.integers(0, 50), st.floats(0, 1)),
        st.tuples(st.just("unsent"), st.integers(0, 50)),
        st.tuples(st.sampled_from(["cancel", "crash"])),
    ),
    max_size=40,
)


@settings(max_examples=examples(60), deadline=None)
@given(_STEPS)
def test_each_reservation_is_counted_once_across_cancels_crashes_and_resumes(
    steps: list[tuple[Any, ...]],
) -> None:
    store = Store(":memory:")
    settled_calls, settled_usd = 0, 0.0
    crash_calls, crash_usd, cancel_calls, cancel_usd = 0, 0.0, 0, 0.0
    gov = Governor()
    journal = Journal(store, "b")
    gov.restore(store.ledger_resume("b"))
    journal.attach(gov)
    open_: list[Any] = []

    def stop(how: str) -> None:
        nonlocal crash_calls, crash_usd, cancel_calls, cancel_usd
        journal.close(cancelled=how == "cancel")
        left_calls, left_usd = len(open_), sum(r.usd for r in open_)
        if how == "cancel":  # folded now, as cancelled in flight, and shown at once
            cancel_calls, cancel_usd = cancel_calls + left_calls, cancel_usd + left_usd
            led = store.ledger_get("b")
            assert led is None or (led["open_calls"], led["cancelled_calls"]) == (0, cancel_calls)
        else:  # a kill: left open until the next resume
            crash_calls, crash_usd = crash_calls + left_calls, crash_usd + left_usd
        open_.clear()

    for step in steps:
        if step[0] == "reserve":
            open_.append(gov.reserve(step[1], 10))
        elif step[0] in ("settle", "unsent") and open_:
            r = open_.pop(step[1] % len(open_))
            if step[0] == "settle":
                real = min(step[2], r.usd)
                gov.settle(r, real, 5)
                settled_calls, settled_usd = settled_calls + 1, settled_usd + real
            else:
                gov.settle(r, 0.0, 0, sent=False)
        elif step[0] in ("cancel", "crash"):
            stop(step[0])
            gov = Governor()  # the resume: a new run, its governor from the store
            gov.restore(store.ledger_resume("b"))
            journal = Journal(store, "b")
            journal.attach(gov)
            assert gov.calls == settled_calls + crash_calls + cancel_calls
            assert gov.usd == pytest.approx(settled_usd + crash_usd + cancel_usd)
    stop("crash")  # the last run is killed: its open reservations are folded by the next resume
    led = store.ledger_resume("b")
    total_calls = settled_calls + crash_calls + cancel_calls
    if led is None:
        assert total_calls == 0
        return
    assert led["open_calls"] == 0
    assert led["calls"] == total_calls  # settled plus every reservation open at a stop, once
    assert led["usd"] == pytest.approx(settled_usd + crash_usd + cancel_usd)
    assert (led["unknown_calls"], led["cancelled_calls"]) == (crash_calls + cancel_calls, cancel_calls)
    assert led["unknown_usd"] == pytest.approx(crash_usd + cancel_usd)
    assert led["cancelled_usd"] == pytest.approx(cancel_usd)
    gov = Governor()
    gov.restore(led)
    sentence = unknown_sentence(gov.snapshot()["unknown"]) or ""
    assert ("in flight at a crash" in sentence) == (crash_calls > 0)
    assert ("cancelled in flight" in sentence) == (cancel_calls > 0)


def test_a_cancel_says_cancelled_in_flight_at_once_and_a_resume_does_not_count_it_again(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "s.sqlite3")
    gov = Governor(max_calls=20)
    with kept_ledger(gov, store, "b"):
        held = [gov.reserve(0.1, 10) for _ in range(8)]
        gov.settle(held[0], 0.01, 3)
    led = store.ledger_get("b")  # what `hrb ls` reads, right after the cancel
    assert led is not None and (led["calls"], led["open_calls"], led["unknown_calls"]) == (8, 0, 7)
    assert led["cancelled_usd"] == pytest.approx(0.7) and led["usd"] == pytest.approx(0.71)
    assert unknown_sentence(gov.snapshot()["unknown"]) == (
        "cancelled in flight: unknown, at most 0.7000 USD / 7 calls (counted as spent)"
    )
    for _ in range(2):  # resume, cancel with nothing in flight: nothing more is counted
        again = Governor(max_calls=20)
        with kept_ledger(again, store, "b"):
            assert again.calls == 8 and again.usd == pytest.approx(0.71)
    led = store.ledger_get("b")
    assert led is not None and (led["calls"], led["unknown_calls"], led["cancelled_calls"]) == (8, 7, 7)


class _Stuck:
    """A client whose requests never end: it waits ``before`` (a slot) or sends and hangs ``after``."""

    provider, base_url, model, bills = "openai", "", "m", True

    def __init__(self, sends: bool) -> None:
        self.sends, self.sent = sends, 0

    async def send(self, request: Request, before_attempt: Any = None) -> Result:
        if self.sends:
            pending = before_attempt()
            if pending is not None:
                await pending
            self.sent += 1
        await asyncio.sleep(3600)  # cancelled here: in flight (sent) or waiting for a slot (not)
        raise AssertionError("unreachable")


@pytest.mark.parametrize("sends", [False, True], ids=["waiting-not-sent", "sent"])
def test_a_cancelled_request_counts_a_call_only_if_it_may_have_been_sent(tmp_path: Path, sends: bool) -> None:
    store, gov = Store(tmp_path / "s.sqlite3"), Governor(max_usd=10.0)
    gov.bill_seen(("openai", "m"), confirmed=True)  # the bill is known: no slow start, three in flight
    client = _Stuck(sends)
    ref = hb.Reference({f"q{i}": f"item {i}" for i in range(6)}, labels="x")
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item, max_tokens=8).text)
    prices = hb.Pricing(overrides={"m": {"input": 1.0, "output": 1.0}})  # reserved: a worst case > 0

    async def main() -> None:
        with anyio.move_on_after(0.5):
            await hb.benchmark_async(arm, ref, 1, client, governor=gov, concurrency=3, pricing=prices)

    with kept_ledger(gov, store, "b"), pytest.warns(hb.FewRunsWarning):
        anyio.run(main)
    led = store.ledger_get("b")
    assert led is not None and led["open_calls"] == 0
    assert led["calls"] == gov.calls == client.sent == (3 if sends else 0)
    assert led["cancelled_calls"] == client.sent  # sent, no reply: unknown, at most its reservation
    assert (led["usd"] > 0) == sends


def test_a_bound_below_a_cent_is_printed_to_three_significant_digits_never_as_zero() -> None:
    # four decimals printed "at most 0.0000 USD" for calls that could cost up to $0.00004 each
    assert unknown_sentence({"calls": 4, "usd": 4 * 1.05e-05}) == (
        "in flight at a crash: unknown, at most 4.2e-05 USD / 4 calls (counted as spent)"
    )
    assert unknown_sentence(
        {
            "calls": 3,
            "usd": 0.0021,
            "unpriced_calls": 1,
            "lost_calls": 3,
            "lost_usd": 0.0021,
            "lost_unpriced": 1,
        }
    ) == (
        "reply lost after sending: unknown, at most 0.0021 USD for 2 and unknown USD for 1"
        " (no price or no output limit to bound it) / 3 calls (counted as spent)"
    )
