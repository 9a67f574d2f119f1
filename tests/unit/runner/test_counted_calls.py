"""The runtime's fast path: under a governor with no cap, a free in-process mock's call holds nothing.

With no cap there is no room to hold, and with no price nothing to bound: the call is counted
(``Governor.count_call``) and its reply's use booked (``Governor.book``), with no reservation or
gate. Everything else must be as on the held path (``Runtime._held``): the rows, the traces, the
governor's use, the ledger kept per call, a halted governor's refusal, a reply billed as a priced
model, and a cancel's calls in flight counted as cancelled.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

import hrbench as hb
from hrbench.models import Pricing
from hrbench.records import Result, Usage
from hrbench.runner import Governor, benchmark_async, kept_ledger
from hrbench.runner.runtime import Drain, Runtime
from hrbench.store import Store

PRICING = Pricing(overrides={"priced-1": {"input": 2.0, "output": 8.0}})
REF = hb.Reference({f"q{i}": f"question {i}" for i in range(6)}, labels="Paris")


def _held(monkeypatch: pytest.MonkeyPatch) -> None:
    """Send every request the held way (a reservation and a gate), as a capped governor does."""
    monkeypatch.setattr(Runtime, "_counted", Runtime._held)


def _replies(kind: str) -> Any:
    def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> Any:
        if kind == "raises":
            raise RuntimeError("the mock broke")
        if kind == "halts" and "question 2" in messages[0]["content"]:
            return Result(ok=False, error="quota exhausted", halts="quota")
        if kind == "priced":  # billed as another model, which has a price
            return Result(text="Paris", model="priced-1", usage=Usage(tokens_in=1000, tokens_out=500))
        return "Paris"

    return reply


def _run(kind: str, store: Store, sync: bool = False) -> tuple[hb.Bench, Governor, dict[str, Any] | None]:
    gov = Governor()

    async def ask(item: str, ctx: Any) -> Result:  # a failed call's result: an error run
        return await ctx.acall(item)  # type: ignore[no-any-return]

    def ask_sync(item: str, ctx: Any) -> Result:
        return ctx.call(item)  # type: ignore[no-any-return]

    arm = hb.Arm("ask", ask_sync if sync else ask)
    with warnings.catch_warnings(), kept_ledger(gov, store, "b"):
        warnings.simplefilter("ignore")
        bench = hb.benchmark(
            arm,
            REF,
            runs=2,
            client=hb.MockClient(_replies(kind)),
            governor=gov,
            pricing=PRICING,
            concurrency=1,  # the order a halt is seen in is the seed's
            benchmark_id="b",
        )
    return bench, gov, store.ledger_get("b")


def _seen(bench: hb.Bench, gov: Governor, ledger: dict[str, Any] | None) -> Any:
    rows = [msgspec.structs.replace(r, seconds=0.0) for r in bench.rows]
    traces = {k: [msgspec.structs.replace(s, seconds=0.0) for s in t] for k, t in bench.traces.items()}
    use = {k: gov.snapshot()[k] for k in ("calls", "usd", "tokens", "refused", "halted", "unknown")}
    # USD totals are float sums whose order follows how settlements fell into commits (timing):
    # the same amounts, compared to 1e-12 USD
    use["usd"] = round(use["usd"], 12)
    if ledger is not None:
        ledger = {k: round(v, 12) if isinstance(v, float) else v for k, v in ledger.items()}
    return rows, traces, use, ledger


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
@pytest.mark.parametrize("kind", ["plain", "priced", "halts", "raises"])
def test_a_counted_call_ends_as_a_held_one(
    kind: str, sync: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _seen(*_run(kind, Store(tmp_path / "fast.sqlite3"), sync))
    _held(monkeypatch)
    held = _seen(*_run(kind, Store(tmp_path / "held.sqlite3"), sync))
    assert fast == held
    rows, _, use, ledger = fast
    assert ledger is not None and ledger["calls"] == use["calls"] and ledger["tokens"] == use["tokens"]
    if kind == "plain":
        assert use["calls"] == 12 and all(r.correct for r in rows)
    elif kind == "priced":  # 1000 x 2 + 500 x 8 USD per million tokens, a call
        assert use["usd"] == pytest.approx(12 * 0.006) and rows[0].usd == pytest.approx(0.006)
        assert ledger["usd"] == pytest.approx(12 * 0.006)
    elif kind == "halts":  # the quota refusal's later requests are not sent
        assert use["calls"] < 12 and {r.failure_kind for r in rows} == {None, "error"}


def test_no_reservation_is_made_for_a_free_mock_under_no_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a free mock's call under no cap reserved room")

    monkeypatch.setattr(Governor, "reserve", refuse)
    bench, gov, ledger = _run("plain", Store(tmp_path / "s.sqlite3"))
    assert [r.correct for r in bench.rows] == [True] * 12
    assert gov.calls == 12 and ledger is not None and ledger["calls"] == 12
    assert gov.tokens == sum(r.tokens_in + r.tokens_out for r in bench.rows) > 0


@pytest.mark.parametrize("path", ["counted", "held"])
def test_a_halted_governor_refuses_a_counted_call_as_a_held_one(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if path == "held":
        _held(monkeypatch)
    gov = Governor()
    gov.halt("the ledger could not be written", limit="ledger_unwritable")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(
            hb.Arm("ask", lambda item, ctx: ctx.call(item).text),
            REF,
            runs=1,
            client=hb.MockClient(lambda m, p: "Paris"),
            governor=gov,
        )
    assert {r.failure_kind for r in bench.rows} == {"budget_stop"}
    assert gov.calls == 0 and gov.refused == 6
    step = bench.traces[bench.rows[0].ledger_id][0]
    assert step.source == "refused" and "ledger_unwritable" in (step.error or "")


@pytest.mark.parametrize("path", ["counted", "held"])
def test_calls_in_flight_at_a_cancel_are_counted_cancelled(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if path == "held":
        _held(monkeypatch)
    started = 0
    all_started = anyio.Event()

    async def never(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        nonlocal started
        started += 1
        if started == 3:
            all_started.set()
        await anyio.sleep_forever()
        return "unreached"

    async def ask(item: str, ctx: Any) -> str:
        return (await ctx.acall(item)).text or ""

    async def main() -> None:
        async with anyio.create_task_group() as tg:

            async def run() -> None:
                await benchmark_async(
                    hb.Arm("ask", ask), REF, 1, hb.MockClient(never), governor=gov, concurrency=3
                )

            tg.start_soon(run)
            with anyio.fail_after(30):
                await all_started.wait()
            tg.cancel_scope.cancel()

    gov, store = Governor(), Store(tmp_path / "s.sqlite3")
    with warnings.catch_warnings(), kept_ledger(gov, store, "b"):
        warnings.simplefilter("ignore")
        anyio.run(main)
    ledger = store.ledger_get("b")
    assert gov.calls == 3 and ledger is not None
    assert (ledger["calls"], ledger["cancelled_calls"], ledger["open_calls"]) == (3, 3, 0)
    assert gov.snapshot()["unknown"]["cancelled_calls"] == 3


@pytest.mark.parametrize("path", ["counted", "held"])
def test_a_drain_sends_and_counts_nothing_new(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if path == "held":
        _held(monkeypatch)
    drain = Drain()
    drain.begin()
    gov = Governor()

    async def ask(item: str, ctx: Any) -> str:
        return (await ctx.acall(item)).text or ""

    async def main() -> None:
        with anyio.move_on_after(0.5):  # held at the drain until the benchmark is cancelled
            await benchmark_async(
                hb.Arm("ask", ask),
                REF,
                1,
                hb.MockClient(lambda m, p: "Paris"),
                governor=gov,
                concurrency=2,
                drain=drain,
            )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        anyio.run(main)
    assert gov.calls == 0 and drain.live == 0
