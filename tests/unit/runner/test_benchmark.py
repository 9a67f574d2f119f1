"""Seed 002: the benchmark runner, its rows, its rules and its printed summary."""

from __future__ import annotations

import contextlib
import random
import threading
import warnings

import anyio
import anyio.lowlevel
import pytest

import hrbench as hb
from hrbench.records import ROW_COLUMNS

# these benchmarks run on unlabelled items on purpose (cache, draws, retries, threads)
pytestmark = pytest.mark.filterwarnings("ignore::hrbench.errors.NoLabelsWarning")

CAPITALS = {"France": "Paris", "Peru": "Lima", "Chad": "Ndjamena", "Fiji": "Suva"}


def seed_reference() -> hb.Reference:
    return hb.Reference(
        items={"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Fiji"},
        labels=["Paris", "Lima", "N'Djamena", "Suva"],
        cluster=["a", "a", "b", "b"],
        split="test",
    )


def capitals_client() -> hb.MockClient:
    return hb.MockClient(
        lambda messages, params: CAPITALS[messages[0]["content"].removeprefix("Capital of ")]
    )


def ask_arm() -> hb.Arm:
    return hb.Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}").text)


def test_seed002_example_print_and_head() -> None:
    bench = hb.benchmark(ask_arm(), seed_reference(), runs=5, client=capitals_client())
    assert str(bench) == (
        "<hr_bench> 1 arm(s) x 4 item(s) in 2 cluster(s) x 5 run(s); split test; scorer exact_normalised\n"
        " arm accuracy runs wrong failed budget_stop usd   \n"
        " ask 0.750    20   5     0      0           0.0000\n"
        "  Descriptive only: accuracy is the mean over runs within each item, then over labelled items, "
        "with no interval."
    )
    head = [(r.item, r.run, r.correct, r.failure_kind, r.draw_index) for r in bench.rows[:6]]
    assert head == [
        ("q1", 1, True, None, 1),
        ("q1", 2, True, None, 2),
        ("q1", 3, True, None, 3),
        ("q1", 4, True, None, 4),
        ("q1", 5, True, None, 5),
        ("q2", 1, True, None, 1),
    ]
    assert len(bench.rows) == 20
    assert [r.failure_kind for r in bench.rows if r.item == "q3"] == ["wrong"] * 5


def test_rows_have_exactly_the_seed_columns_and_pandas_too() -> None:
    bench = hb.benchmark(ask_arm(), seed_reference(), runs=5, client=capitals_client())
    assert ROW_COLUMNS == (
        "cluster",
        "item",
        "arm",
        "run",
        "split",
        "correct",
        "outcome",
        "failure_kind",
        "tokens_in",
        "tokens_out",
        "tokens_reasoning",
        "tokens_cached",
        "usd",
        "usd_provenance",
        "seconds",
        "draw_index",
        "ledger_id",
        "reportable",
    )
    df = bench.to_pandas()
    assert list(df.columns) == list(ROW_COLUMNS)
    assert df.attrs["scorer"] == "exact_normalised"
    assert df.attrs["reference_hash"] == bench.reference_hash
    assert bench.to_polars().shape == (20, len(ROW_COLUMNS))
    assert bench.arms[0]["name"] == "ask" and len(bench.arms[0]["hash"]) == 64


def test_order_is_cluster_item_arm_run_whatever_finishing_order() -> None:
    ref = hb.Reference(
        {"i1": 1, "i2": 2, "i3": 3, "i4": 4}, labels=["1", "2", "3", "4"], cluster=["b", "a", "b", "a"]
    )

    async def slow_first(item, ctx):
        await anyio.sleep(0.02 * (5 - item) * (6 - ctx.run) / 10)
        return str(item)

    arms = [hb.Arm("B", slow_first), hb.Arm("A", slow_first)]
    bench = hb.benchmark(arms, ref, runs=5, concurrency=40)
    got = [(r.cluster, r.item, r.arm, r.run) for r in bench.rows]
    want = [
        (c, i, a, r)
        for c, ids in (("b", ["i1", "i3"]), ("a", ["i2", "i4"]))
        for i in ids
        for a in ("B", "A")
        for r in range(1, 6)
    ]
    assert got == want


def test_arm_error_recorded_with_message_in_trace() -> None:
    def boom(item, ctx):
        if ctx.run == 2:
            raise RuntimeError("kaput on run 2")
        return item

    with pytest.warns(
        hb.ArmErrorWarning,
        match="arm 'boom': 1 of 5 run\\(s\\) raised .* run 2: RuntimeError: kaput on run 2",
    ):
        bench = hb.benchmark(hb.Arm("boom", boom), hb.Reference({"a": "x"}, labels=["x"]), runs=5)
    row = bench.rows[1]
    assert (row.run, row.correct, row.failure_kind) == (2, False, "error")
    assert any("kaput on run 2" in (s.error or "") for s in bench.traces[row.ledger_id])
    assert [r.correct for r in bench.rows] == [True, False, True, True, True]


def test_item_with_no_label_is_na_whatever_the_failure_kind() -> None:
    ref = hb.Reference({"a": "x", "b": "y"}, labels=["x", None])

    def fn(item, ctx):
        if item == "y" and ctx.run == 1:
            raise ValueError("no")
        return item

    with pytest.warns(hb.ArmErrorWarning, match="1 of 10"):
        bench = hb.benchmark(hb.Arm("f", fn), ref, runs=5)
    b_rows = [r for r in bench.rows if r.item == "b"]
    assert [r.correct for r in b_rows] == [None] * 5
    assert b_rows[0].failure_kind == "error"
    assert bench.summary()[0]["accuracy"] == 1.0  # the unlabelled item is left out


def test_dev_rows_not_reportable_and_shown_apart() -> None:
    ref = hb.Reference({"a": "x", "b": "y"}, labels=["x", "nope"], split=["test", "dev"])
    bench = hb.benchmark(hb.Arm("echo", lambda item, ctx: item), ref, runs=5, split=["test", "dev"])
    assert [r.reportable for r in bench.rows] == [True] * 5 + [False] * 5
    s = bench.summary()[0]
    assert s["accuracy"] == 1.0 and s["dev_accuracy"] == 0.0 and s["runs"] == 5
    assert " dev " in str(bench).splitlines()[1]


def test_split_filters_items() -> None:
    ref = hb.Reference({"a": "x", "b": "y"}, labels=["x", "y"], split=["test", "dev"])
    bench = hb.benchmark(hb.Arm("echo", lambda item, ctx: item), ref, runs=5)
    assert {r.item for r in bench.rows} == {"a"}


def test_few_runs_warns() -> None:
    with pytest.warns(hb.FewRunsWarning, match="fewer than 5"):
        hb.benchmark(hb.Arm("echo", lambda item, ctx: item), hb.Reference({"a": "x"}, labels=["x"]), runs=3)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"runs": 0}, "runs"),
        ({"runs": 2.5}, "runs"),
        ({"split": "holdout"}, "split"),
        ({"seed": "x"}, "seed"),
        ({"concurrency": 0}, "concurrency"),
        ({"governor": {"max_calls": 3}}, "governor"),
        ({"cache": 5}, "cache"),
        ({"cache": {"path": "c.db"}}, "cache"),
        ({"store": 3}, "store"),
        ({"store": True, "record": "r"}, "store"),
    ],
)
def test_bad_arguments_name_the_field(kwargs, field) -> None:
    with pytest.raises(hb.ConfigError) as err:
        hb.benchmark(hb.Arm("echo", lambda item, ctx: item), hb.Reference({"a": "x"}, labels=["x"]), **kwargs)
    assert str(err.value).startswith(f"{field}:")


@pytest.mark.parametrize("as_path", [str, lambda p: p], ids=["str", "Path"])
def test_a_cache_or_store_given_as_a_path_opens_the_sqlite_file_there(tmp_path, as_path) -> None:
    # a path where a Cache or Store was expected once reached the runs, and every run ended as an
    # 'error' (AttributeError: 'str' object has no attribute 'recording_put'), counted wrong
    ref = hb.Reference({"a": "France", "b": "Peru"}, labels=["Paris", "Lima"])
    calls = []
    client = hb.MockClient(lambda messages, params: calls.append(1) or "Paris")
    arm = ask_arm()
    first = hb.benchmark(arm, ref, runs=5, client=client, cache=as_path(tmp_path / "c.db"))
    again = hb.benchmark(arm, ref, runs=5, client=client, cache=as_path(tmp_path / "c.db"))
    assert [r.failure_kind for r in first.rows] == [None] * 5 + ["wrong"] * 5
    assert len(calls) == 10  # the second benchmark was served from the file's cache
    assert [r.outcome for r in again.rows] == [r.outcome for r in first.rows]
    assert hb.Cache(as_path(tmp_path / "c.db")).store.cache_stats()["entries"] == 10
    recorded = hb.benchmark(arm, ref, runs=5, client=client, store=as_path(tmp_path / "s.db"), record="take1")
    assert [r.failure_kind for r in recorded.rows] == [None] * 5 + ["wrong"] * 5
    assert len(calls) == 20  # a recording is not a cache
    assert hb.benchmark(arm, ref, runs=5, client=client, cache=False).rows[0].failure_kind is None
    assert len(calls) == 30


def test_whole_numbers_from_numpy_are_whole_numbers() -> None:
    # a number of runs read from a pandas frame or a numpy array is a numpy integer
    import numpy as np

    ref = hb.Reference({"a": "x", "b": "y"}, labels=["x", "y"])
    bench = hb.benchmark(
        hb.Arm("echo", lambda item, ctx: item),
        ref,
        runs=np.int64(5),
        seed=np.int32(3),
        concurrency=np.uint8(2),
    )
    assert len(bench.rows) == 10 and {type(r.run) for r in bench.rows} == {int}
    for bad in (np.float64(5.0), np.bool_(True)):
        with pytest.raises(hb.ConfigError, match="^runs:"):
            hb.benchmark(hb.Arm("echo", lambda item, ctx: item), ref, runs=bad)


def test_arm_names_must_be_unique() -> None:
    a = hb.Arm("same", lambda item, ctx: item)
    with pytest.raises(hb.ConfigError, match="unique"):
        hb.benchmark([a, hb.Arm("same", lambda item, ctx: item)], hb.Reference({"a": "x"}))


def test_rng_is_private_reproducible_and_leaves_global_state() -> None:
    ref = hb.Reference({"a": 1, "b": 2}, labels=None)

    def sample(item, ctx):
        return str(ctx.rng.random())

    random.seed(123)
    before = random.getstate()
    one = hb.benchmark(hb.Arm("s", sample), ref, runs=5, seed=7, concurrency=1)
    assert random.getstate() == before
    two = hb.benchmark(hb.Arm("s", sample), ref, runs=5, seed=7, concurrency=16)
    three = hb.benchmark(hb.Arm("s", sample), ref, runs=5, seed=8)
    assert [r.outcome for r in one.rows] == [r.outcome for r in two.rows]
    assert [r.outcome for r in one.rows] != [r.outcome for r in three.rows]
    assert len({r.outcome for r in one.rows}) == 10


def test_async_arm_and_sync_arm_give_the_same_rows() -> None:
    async def ask_async(item, ctx):
        return (await ctx.acall(f"Capital of {item}")).text

    a = hb.benchmark(hb.Arm("ask", ask_async), seed_reference(), runs=5, client=capitals_client())
    b = hb.benchmark(ask_arm(), seed_reference(), runs=5, client=capitals_client())
    assert [(r.item, r.correct) for r in a.rows] == [(r.item, r.correct) for r in b.rows]


def test_ctx_call_inside_async_arm_is_a_clear_error() -> None:
    async def wrong(item, ctx):
        return ctx.call("x").text

    with pytest.warns(hb.ArmErrorWarning, match="use `await ctx.acall"):
        bench = hb.benchmark(
            hb.Arm("w", wrong), hb.Reference({"a": "x"}, labels=["x"]), runs=5, client=capitals_client()
        )
    steps = bench.traces[bench.rows[0].ledger_id]
    assert bench.rows[0].failure_kind == "error"
    assert "use `await ctx.acall" in steps[-1].error


def test_sync_arms_run_off_the_event_loop_thread() -> None:
    seen = set()

    def fn(item, ctx):
        seen.add(threading.current_thread() is threading.main_thread())
        return item

    hb.benchmark(hb.Arm("t", fn), hb.Reference({"a": "x"}), runs=5)
    assert seen == {False}


def test_tokens_and_usd_sum_over_the_runs_requests() -> None:
    def fn(messages, params):
        return hb.Result(
            text="Paris",
            usage=hb.Usage(tokens_in=2000, tokens_out=266, tokens_reasoning=261, tokens_cached=1500),
            model="m",
        )

    pricing = hb.Pricing(overrides={"m": {"input": 1.0, "cached_input": 0.5, "output": 2.0}})

    def twice(item, ctx):
        ctx.call("a")
        return ctx.call("b").text

    bench = hb.benchmark(
        hb.Arm("two", twice),
        hb.Reference({"a": "x"}, labels=["Paris"]),
        runs=5,
        client=hb.MockClient(fn, model="m"),
        pricing=pricing,
    )
    r = bench.rows[0]
    assert (r.tokens_in, r.tokens_out, r.tokens_reasoning, r.tokens_cached) == (4000, 532, 522, 3000)
    # per request: 500 input + 1500 cached at half + 266 output at 2 = 500 + 750 + 532 = 1782 per million
    assert r.usd == pytest.approx(2 * 1782 / 1e6)
    assert r.usd_provenance == "reported"


def test_usd_is_na_when_a_model_has_no_price_and_provenance_estimated_for_mock() -> None:
    bench = hb.benchmark(
        ask_arm(),
        seed_reference(),
        runs=5,
        client=hb.MockClient(lambda m, p: "Paris", model="unpriced-model"),
    )
    assert bench.rows[0].usd is None
    assert bench.summary()[0]["usd"] is None
    assert "NA" in str(bench).splitlines()[2]
    mock = hb.benchmark(ask_arm(), seed_reference(), runs=5, client=capitals_client())
    assert mock.rows[0].usd == 0.0 and mock.rows[0].usd_provenance == "estimated"


def test_an_arm_without_calls_has_provenance_none() -> None:
    bench = hb.benchmark(hb.Arm("echo", lambda item, ctx: item), hb.Reference({"a": "x"}), runs=5)
    assert bench.rows[0].usd_provenance == "none" and bench.rows[0].usd == 0.0


def test_stream_yields_every_row() -> None:
    async def main():
        return [
            r
            async for r in hb.benchmark_stream(ask_arm(), seed_reference(), runs=5, client=capitals_client())
        ]

    rows = anyio.run(main)
    assert sorted((r.item, r.run) for r in rows) == sorted(
        (f"q{i}", r) for i in range(1, 5) for r in range(1, 6)
    )


def test_on_row_and_resume_with_done_rows() -> None:
    calls = []
    client = hb.MockClient(lambda m, p: calls.append(p["draw_index"]) or "x")
    ref = hb.Reference({"a": "x", "b": "y"}, labels=["x", "y"])
    arm = hb.Arm("c", lambda item, ctx: ctx.call(item).text)
    seen = []
    first = hb.benchmark(arm, ref, runs=5, client=client, on_row=lambda seq, row, trace: seen.append(seq))
    assert sorted(seen) == list(range(10))
    done = {(r.arm, r.item, r.run): r for r in first.rows[:7]}
    calls.clear()
    again = hb.benchmark(
        arm, ref, runs=5, client=client, done=done, done_traces=first.traces, benchmark_id=first.id
    )
    assert len(calls) == 3
    assert [(r.item, r.run) for r in again.rows] == [(r.item, r.run) for r in first.rows]


@pytest.mark.parametrize("sync", [True, False])
def test_an_on_row_that_returns_an_awaitable_is_awaited_before_the_next_row(sync: bool) -> None:
    # the row is given on without a coroutine of its own when nothing waits (Loop.finished); an
    # on_row that returns an awaitable is still awaited in full before the cell's next run
    events: list[tuple[str, int]] = []

    async def on_row(seq, row, trace):
        events.append(("start", seq))
        await anyio.lowlevel.checkpoint()
        events.append(("end", seq))

    async def ask_async(item, ctx):
        return (await ctx.acall(item)).text

    ref = hb.Reference({"a": "x", "b": "y"}, labels=["x", "y"])
    arm = hb.Arm("c", (lambda item, ctx: ctx.call(item).text) if sync else ask_async)
    client = hb.MockClient(lambda m, p: m[0]["content"])
    bench = hb.benchmark(arm, ref, runs=5, client=client, on_row=on_row, concurrency=1)
    assert [r.correct for r in bench.rows] == [True] * 10
    assert events == [(e, seq) for seq in range(10) for e in ("start", "end")]


def test_scorer_crash_on_one_output_is_an_error_row() -> None:
    def picky(item, output, label):
        if output == "boom":
            raise KeyError("x")
        return {"correct": output == label}

    ref = hb.Reference({"a": "boom", "b": "y"}, labels=["boom", "y"])
    with pytest.warns(hb.ArmErrorWarning, match="5 of 10 .* scorer 'picky' raised KeyError"):
        bench = hb.benchmark(hb.Arm("e", lambda i, c: i), ref, runs=5, scorer=hb.scorer(picky, "picky"))
    assert {r.failure_kind for r in bench.rows if r.item == "a"} == {"error"}
    assert bench.scorer_name == "picky"


def test_to_arrow_and_to_jsonl(tmp_path) -> None:
    import msgspec

    bench = hb.benchmark(ask_arm(), seed_reference(), runs=5, client=capitals_client())
    table = bench.to_arrow()
    assert table.num_rows == 20 and table.column_names == list(ROW_COLUMNS)
    path = tmp_path / "rows.jsonl"
    assert bench.to_jsonl(path) == 20
    back = msgspec.json.Decoder(hb.Row).decode_lines(path.read_bytes())
    assert back == bench.rows
    assert {d["scorer"] for d in msgspec.json.Decoder().decode_lines(path.read_bytes())} == {
        "exact_normalised"
    }


def test_options_are_the_default_limits(monkeypatch) -> None:
    assert (hb.options.max_calls, hb.options.max_tokens) == (400, None)
    monkeypatch.setattr(hb.options, "max_calls", 2)
    with pytest.warns(hb.BudgetStoppedWarning, match="max_calls=2"):
        bench = hb.benchmark(ask_arm(), seed_reference(), runs=5, client=capitals_client())
    assert sum(r.failure_kind == "budget_stop" for r in bench.rows) == 18


def test_keep_rows_false_streams_with_the_same_summary() -> None:
    seen = []
    kept = hb.benchmark(ask_arm(), seed_reference(), runs=5, client=capitals_client())
    streamed = hb.benchmark(
        ask_arm(),
        seed_reference(),
        runs=5,
        client=capitals_client(),
        keep_rows=False,
        on_row=lambda seq, row, trace: seen.append((seq, row)),
    )
    assert streamed.rows == [] and streamed.traces == {}
    assert [r for _, r in sorted(seen, key=lambda x: x[0])] == [
        hb.Row(**{**msgspec_dict(r), "seconds": s.seconds, "ledger_id": s.ledger_id})
        for r, s in zip(kept.rows, [r for _, r in sorted(seen, key=lambda x: x[0])], strict=True)
    ]
    assert streamed.summary() == kept.summary()
    assert str(streamed).split("\n")[1:] == str(kept).split("\n")[1:]


def msgspec_dict(row):
    import msgspec

    return msgspec.structs.asdict(row)


@pytest.mark.parametrize("concurrency", [1, 3])
def test_sync_arm_cells_grouped_per_thread_trip_keep_every_rule(concurrency: int) -> None:
    # 100 items x 2 arms: many more cells than slots, so a sync arm's cells share worker trips
    ref = hb.Reference({f"q{i:03d}": i for i in range(100)}, labels=[str(i) for i in range(100)])
    made: list[tuple[str, str, int]] = []

    def answer(item, ctx):
        made.append((ctx.item_id, ctx.arm, ctx.run))
        assert threading.current_thread() is not threading.main_thread()
        return ctx.call(str(item)).text if ctx.run != 3 else "wrong"

    client = hb.MockClient(lambda m, p: m[0]["content"])
    arms = [hb.Arm("a", answer), hb.Arm("b", answer)]
    done = {}
    first = hb.benchmark(arms, ref, runs=5, client=client, concurrency=concurrency, governor=hb.Governor())
    for r in first.rows[:37]:
        done[(r.arm, r.item, r.run)] = r
    made.clear()
    bench = hb.benchmark(
        arms,
        ref,
        runs=5,
        client=client,
        concurrency=concurrency,
        governor=hb.Governor(),
        done=done,
        done_traces=first.traces,
    )
    want = [(i, a, r) for i in ref.ids for a in ("a", "b") for r in range(1, 6)]
    assert [(r.item, r.arm, r.run) for r in bench.rows] == want
    assert len(made) == len(want) - 37
    if concurrency == 1:  # one slot: runs are made in row order, whatever the grouping
        assert made == want[37:]
    for key in set(made):  # each cell's runs in order
        cell = [m for m in made if m[:2] == key[:2]]
        assert [m[2] for m in cell] == sorted(m[2] for m in cell)
    assert bench.summary()[0]["accuracy"] == pytest.approx(0.8)


@pytest.mark.parametrize("kinds", [("wrong",), ("error",), ("wrong", "error"), ("wrong", "error", "error")])
def test_failed_and_failures_count_what_the_printout_says(kinds: tuple[str, ...]) -> None:
    # print(bench)'s `failed` and report()'s `failures` differ; the printout says what `failed`
    # counts when an arm has failed runs, and the counts keep to it
    items = {"ok": "right", **{f"{k}{i}": k for i, k in enumerate(kinds)}}

    def arm(item: str, ctx: object) -> str:
        if item == "error":
            raise RuntimeError("boom")
        return item

    ref = hb.Reference(items, labels=dict.fromkeys(items, "right"), split="test")
    with pytest.warns(hb.ArmErrorWarning) if "error" in kinds else contextlib.nullcontext():
        bench = hb.benchmark(hb.Arm("a", arm), ref, runs=5)
    (s,) = bench.summary()
    n_wrong, n_error = 5 * kinds.count("wrong"), 5 * kinds.count("error")
    assert (s["wrong"], s["failed"]) == (n_wrong, n_error)
    assert hb.report(bench).arms[0].failures == n_wrong + n_error
    legend = "report()'s failures counts every labelled run that was not right"
    assert (legend in str(bench)) is (
        n_error > 0
    )  # said where an arm has failed runs, as seed 002's example has none


@pytest.mark.parametrize(("max_calls", "keep_rows"), [(0, True), (2, True), (7, False), (20, True)])
def test_a_budget_stopped_bench_says_so(max_calls: int, keep_rows: bool) -> None:
    """Stopped runs count wrong (seed 002), and the Bench never reads as plainly done."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hb.BudgetStoppedWarning)
        bench = hb.benchmark(
            ask_arm(),
            seed_reference(),
            runs=5,
            client=capitals_client(),
            governor=hb.Governor(max_calls=max_calls),
            keep_rows=keep_rows,
        )
    stopped = max(0, 20 - max_calls)
    assert bench.stopped == stopped
    assert bench.status == ("budget_stopped" if stopped else "done")
    note = f"{stopped} of 20 runs were stopped by the budget and count as wrong"
    assert bench.stop_note() == (note if stopped else None)
    assert (note in str(bench)) == bool(stopped)
