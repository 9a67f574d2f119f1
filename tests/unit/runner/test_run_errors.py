"""Runs that ended in errors: the `errors` status, its note, and running them again."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrbench as hb
from hrbench.results.browse import benchmark_status, budget_note
from hrbench.runner import error_causes, error_note
from hrbench_client import protocol as p
from hrbench_client.cli.bench import shell_limits_note
from hrbench_client.cli.housekeeping import limits_text
from tests._examples import examples


def _ref(n: int) -> hb.Reference:
    return hb.Reference({f"q{i}": f"item{i}" for i in range(n)}, labels=[f"item{i}" for i in range(n)])


def _flaky(broken: set[str], kind: type[Exception] = RuntimeError) -> hb.Arm:
    def fn(item: str, ctx: Any) -> str:
        if item in broken:
            raise kind(f"cannot reach the model for {item}")
        return item

    return hb.Arm("a", fn)


def _run(arm: hb.Arm, ref: hb.Reference, **kw: Any) -> hb.Bench:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hb.benchmark(arm, ref, runs=5, **kw)


@settings(max_examples=examples(25), deadline=None)
@given(n=st.integers(1, 6), data=st.data(), keep_rows=st.booleans())
def test_any_run_that_ended_in_an_error_makes_the_status_errors(n: int, data: Any, keep_rows: bool) -> None:
    """All or some runs failed: `errors`, with how many and the commonest cause; none: `done`."""
    broken = set(data.draw(st.sets(st.sampled_from([f"item{i}" for i in range(n)]))))
    bench = _run(_flaky(broken), _ref(n), keep_rows=keep_rows)
    assert bench.errors == 5 * len(broken)
    assert bench.status == ("errors" if broken else "done")
    if broken:
        note = (
            f"{5 * len(broken)} of {5 * n} runs ended in errors and count as wrong; "
            f"commonest cause: RuntimeError ({5 * len(broken)} runs, arm 'a')"
        )
        assert bench.error_note() == note
        assert f"Runs failed: {note}; fix it, then run them again with `hrbench.benchmark(" in str(bench)
        assert bench.summary()[0]["error_causes"] == {"RuntimeError": 5 * len(broken)}
    else:
        assert bench.error_note() is None and "Runs failed" not in str(bench)


def test_a_budget_stop_wins_over_errors_and_both_are_said() -> None:
    arm = hb.Arm("a", lambda item, ctx: ctx.call(item).text if item != "item0" else 1 / 0)
    bench = _run(arm, _ref(3), client=hb.MockClient(lambda m, p: "x"), governor=hb.Governor(max_calls=4))
    assert (bench.status, bench.stopped, bench.errors) == ("budget_stopped", 6, 5)
    text = str(bench)
    assert "Budget stopped: 6 of 15 runs" in text
    assert (
        "Runs failed: 5 of 15 runs ended in errors and count as wrong; commonest cause: ZeroDivisionError"
        in text
    )


@pytest.mark.parametrize("keep_rows", [True, False])
def test_retry_errors_runs_only_the_failed_runs_again(keep_rows: bool) -> None:
    """A resume with ``retry_errors`` runs the done runs that ended in errors; without it, none."""
    ref = _ref(4)
    first = _run(_flaky({"item1", "item3"}), ref)
    done = {(r.arm, r.item, r.run): r for r in first.rows}
    calls: list[str] = []

    def fixed(item: str, ctx: Any) -> str:
        calls.append(item)
        return item

    kept = _run(hb.Arm("a", fixed), ref, done=done, keep_rows=keep_rows)
    assert calls == [] and kept.status == "errors" and kept.errors == 10
    again = _run(hb.Arm("a", fixed), ref, done=done, retry_errors=True, keep_rows=keep_rows)
    assert sorted(calls) == ["item1"] * 5 + ["item3"] * 5
    assert again.status == "done" and again.errors == 0
    assert again.summary()[0]["accuracy"] == 1.0
    if keep_rows:
        assert [r.failure_kind for r in again.rows] == [None] * 20


def test_kept_errors_keep_their_cause_from_done_traces() -> None:
    ref = _ref(2)
    first = _run(_flaky({"item0"}, ValueError), ref)
    done = {(r.arm, r.item, r.run): r for r in first.rows}
    with_traces = _run(_flaky(set()), ref, done=done, done_traces=first.traces, keep_rows=False)
    without = _run(_flaky(set()), ref, done=done, keep_rows=False)
    assert with_traces.summary()[0]["error_causes"] == {"ValueError": 5}
    assert without.summary()[0]["error_causes"] == {"unknown": 5}


@pytest.mark.parametrize(
    ("causes", "runs", "want"),
    [
        (
            {"a": 1},
            10,
            "1 of 10 runs ended in errors and count as wrong; commonest cause: a (1 run)",
        ),
        (
            {"a": 2, "b": 3},
            5,
            "5 of 5 runs ended in errors and count as wrong; commonest cause: b (3 runs)",
        ),
        ({}, 5, None),
    ],
)
def test_error_note(causes: dict[str, int], runs: int, want: str | None) -> None:
    assert error_note(causes, runs) == want


@pytest.mark.parametrize(
    ("summary", "named"),
    [
        ([{"arm": "a", "error_causes": {"x": 2}}], "(2 runs, arm 'a')"),
        (
            [{"arm": "a", "error_causes": {"x": 1}}, {"arm": "b", "error_causes": {"x": 1, "y": 1}}],
            "(2 runs, arms 'a', 'b')",
        ),
        (
            [{"arm": "a", "error_causes": {"y": 1}}, {"arm": "b", "error_causes": {"x": 2}}],
            "(2 runs, arm 'b')",
        ),
        (
            [{"arm": f"a{i}", "error_causes": {"x": 1}} for i in range(7)],
            "(7 runs, arms 'a0', 'a1', 'a2', 'a3', 'a4' and 2 more)",
        ),
        ([{"arm": "a", "errors": 3}], "(3 runs, arm 'a')"),  # stored before causes were kept: "unknown"
    ],
)
def test_the_note_names_the_arms_whose_runs_had_the_commonest_cause(
    summary: list[dict[str, Any]], named: str
) -> None:
    """The commonest cause (as the TAT-QA demo's missing answer) comes with the arms that had it."""
    causes, arms = error_causes(summary)
    note = error_note(causes, 10, arms=arms)
    assert note is not None and note.endswith(named)
    assert (
        budget_note("b1", summary, 10)
        == f"{note}; fix it, then run them again with `hrb bench --resume b1 --retry-errors`"
    )


def test_a_stored_benchmark_with_errors_is_shown_errors_even_if_stored_done() -> None:
    old = [{"arm": "a", "errors": 3}]  # stored before causes were kept
    got = benchmark_status({"id": "b1", "status": "done", "summary": old}, 10)
    assert got == {
        "status": "errors",
        "stop_note": "3 of 10 runs ended in errors and count as wrong; commonest cause: unknown "
        "(3 runs, arm 'a'); fix it, then run them again with `hrb bench --resume b1 --retry-errors`",
    }
    both = budget_note(
        "b1", [{"arm": "a", "budget_stop": 4, "error_causes": {"x": 1}}], 10, {"max_calls": 5}, {"calls": 5}
    )
    assert both == (
        "4 of 10 runs were stopped by the budget and count as wrong; 1 of 10 runs ended in errors "
        "and count as wrong; commonest cause: x (1 run, arm 'a'); resume with `hrb bench --resume b1 --max-calls N --retry-errors`"
    )


@pytest.mark.parametrize(
    ("spec", "env", "want"),
    [
        (p.BenchmarkParams(), {}, None),
        (
            p.BenchmarkParams(),
            {"HRBENCH_MAX_TOKENS": "9"},
            "HRBENCH_MAX_TOKENS=9 from this shell is a default limit",
        ),
        (
            p.BenchmarkParams(governor=p.GovernorSpec()),
            {"HRBENCH_MAX_USD": "1"},
            "HRBENCH_MAX_USD=1 from this shell is not used: the spec's [governor] sets the limits",
        ),
        (
            p.BenchmarkParams(governor=p.GovernorSpec(defaults=True, max_usd=2.0)),
            {"HRBENCH_MAX_USD": "1", "HRBENCH_MAX_CALLS": "3"},
            "HRBENCH_MAX_CALLS=3 from this shell is a default limit of this benchmark (the spec has no "
            "[governor]); HRBENCH_MAX_USD from this shell is replaced by the flag given",
        ),
        (
            p.BenchmarkParams(resume="b1"),
            {"HRBENCH_MAX_CALLS": "3"},
            "HRBENCH_MAX_CALLS=3 from this shell is not used: a resume keeps the limits in force",
        ),
    ],
)
def test_shell_limits_note_says_which_variables_apply(
    spec: Any, env: dict[str, str], want: str | None
) -> None:
    got = shell_limits_note(spec, env)
    assert got == want if want is None else (got is not None and got.startswith(want))


def test_limits_text_marks_the_defaults_and_shows_every_cap() -> None:
    b = p.BenchmarkListing(
        id="b", status="done", arms=["a"], rows=1, max_tokens=900, tokens=120, default_limits=False
    )
    assert limits_text(b) == "limits: calls - of no cap, usd - of no cap, tokens 120 of 900"
    assert limits_text(p.BenchmarkListing(id="b", status="done", arms=[], rows=0)) is None


@pytest.mark.parametrize("keep_rows", [True, False])
@pytest.mark.parametrize("broken", [{"item0"}, {"item0", "item2"}, {"item0", "item1", "item2"}])
def test_the_printout_says_how_to_run_only_the_failed_runs_again_and_that_way_works(
    keep_rows: bool, broken: set[str]
) -> None:
    """As `hrb` prints `hrb bench --resume ID --retry-errors`, the library's printout names its way.

    The way it names runs only the failed runs again, and with the kept runs' traces the runs made
    again are checked for distinct draws (no DrawsUncheckedWarning, which is an error here).
    """
    ref = _ref(3)
    client = hb.MockClient(lambda messages, params: messages[0]["content"])

    def ask(fail: set[str]) -> hb.Arm:
        def fn(item: str, ctx: Any) -> str:
            if item in fail:
                raise RuntimeError(f"cannot reach the model for {item}")
            return str(ctx.call(item).text)

        return hb.Arm("a", fn)

    first = _run(ask(broken), ref, keep_rows=keep_rows, client=client)
    text = str(first)
    if keep_rows:
        advice = (
            "fix it, then run them again with "
            "`hrbench.benchmark(..., done=bench.as_done(), done_traces=bench.traces, retry_errors=True)`."
        )
        assert f"Runs failed: {first.error_note()}; {advice}" in text
        with warnings.catch_warnings():
            warnings.simplefilter("error", hb.DrawsUncheckedWarning)
            warnings.simplefilter("ignore", hb.FewRunsWarning)
            again = hb.benchmark(
                ask(set()),
                ref,
                runs=5,
                client=client,
                done=first.as_done(),
                done_traces=first.traces,
                retry_errors=True,
            )
        made_again = [r for r in again.rows if r.ledger_id not in first.traces]
        ids = sorted(f"q{b.removeprefix('item')}" for b in broken for _ in range(5))  # payload itemN is qN
        assert sorted(r.item for r in made_again) == ids  # only the failed runs were made again
        assert again.status == "done" and "Runs failed" not in str(again)
    else:  # no rows kept: bench.as_done() would be empty, so the rows kept elsewhere are named
        assert (
            "`hrbench.benchmark(..., done={(arm, item, run): row}, done_traces={ledger_id: trace}, "
            "retry_errors=True)` with the rows and traces on_row or the store kept." in text
        )
        assert first.as_done() == {}
    assert "run them again" not in str(
        _run(ask(set()), ref, keep_rows=keep_rows, client=client)
    )  # none failed


def test_a_retried_run_served_from_the_cache_keeps_its_time_and_its_tokens_once() -> None:
    """A re-score (`retry_errors`, every reply from the cache) is the same run scored again.

    Its row counts its calls' tokens once and keeps the seconds of the row it replaces, not
    the time the re-score took; a run made again that sends a request keeps its own time.
    """
    import time

    def slow_model(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        time.sleep(0.02)
        return "item0 and more"

    broken = {"yes": True}

    def own(item: Any, output: Any, label: Any) -> bool:
        if broken["yes"]:
            raise RuntimeError("not written yet")
        return output.startswith(label)

    store = hb.Store(":memory:")
    arm = hb.Arm("a", lambda item, ctx: ctx.call(item).text)
    kw: dict[str, Any] = {"client": hb.MockClient(slow_model), "cache": hb.Cache(store), "scorer": own}
    first = _run(arm, _ref(2), **kw)
    assert first.status == "errors" and first.errors == 10
    broken["yes"] = False
    again = _run(arm, _ref(2), done=first.as_done(), done_traces=first.traces, retry_errors=True, **kw)
    assert again.status == "done" and {r.item: r.correct for r in again.rows} == {"q0": True, "q1": False}
    assert [r.seconds for r in again.rows] == [r.seconds for r in first.rows]
    assert min(r.seconds for r in again.rows) >= 0.02
    assert [(r.tokens_in, r.tokens_out) for r in again.rows] == [
        (r.tokens_in, r.tokens_out) for r in first.rows
    ]
    # without the cache the retried runs are sent again: their own time
    broken["yes"] = True
    third = _run(arm, _ref(2), **{**kw, "cache": None})
    broken["yes"] = False
    fourth = _run(arm, _ref(2), done=third.as_done(), done_traces=third.traces, retry_errors=True,
                  **{**kw, "cache": None})  # fmt: skip
    assert [r.seconds for r in fourth.rows] != [r.seconds for r in third.rows]
