"""Benchmark metrics: graded scores reported beside the scorer's accuracy."""

from __future__ import annotations

from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.records import Score


def reference() -> hb.Reference:
    return hb.Reference(
        items={"q1": "a", "q2": "b", "q3": "c", "q4": "d"},
        labels=["x", "y", "z", None],
        cluster=["k", "k", "m", "m"],
    )


# run r of each item answers this (5 runs); q1 right 5/5, q2 right on runs 1-2, q3 never
ANSWERS = {"a": ["x"] * 5, "b": ["y", "y", "n", "n", "n"], "c": ["n"] * 5, "d": ["w"] * 5}


def arm() -> hb.Arm:
    return hb.Arm("fixed", lambda item, ctx: ANSWERS[item][ctx.run - 1])


def length(item: Any, output: Any, label: Any) -> float:
    """The output's length over 10 (a graded score)."""
    return len(output or "") / 10


def both(item: Any, output: Any, label: Any) -> dict[str, float]:
    return {"same": float(output == label), "half": 0.5}


def test_a_metric_is_averaged_over_runs_within_items_then_over_labelled_items() -> None:
    bench = hb.benchmark(arm(), reference(), runs=5, metrics=[both, length])
    (s,) = bench.summary()
    # same: q1 1.0, q2 0.4, q3 0.0 (q4 has no label and is left out, as for accuracy)
    assert s["accuracy"] == pytest.approx((1 + 0.4 + 0) / 3)
    assert s["metrics"] == pytest.approx({"same": (1 + 0.4 + 0) / 3, "half": 0.5, "length": 0.1})
    assert list(s["metrics"]) == ["same", "half", "length"]
    text = str(bench)
    assert " arm   accuracy same  half  length runs wrong failed budget_stop usd" in text
    assert " fixed 0.467    0.467 0.500 0.100  20" in text
    assert "the benchmark metrics same, half, length, averaged the same way" in text


def test_without_metrics_the_summary_holds_an_empty_mapping_and_the_print_is_unchanged() -> None:
    bench = hb.benchmark(arm(), reference(), runs=5)
    assert bench.summary()[0]["metrics"] == {}
    assert "benchmark metrics" not in str(bench)


def test_metrics_with_and_without_kept_rows_agree() -> None:
    kept = hb.benchmark(arm(), reference(), runs=5, metrics=[both])
    streamed = hb.benchmark(arm(), reference(), runs=5, metrics=[both], keep_rows=False)
    assert len(kept.rows) == 20 and streamed.rows == []
    assert kept.summary() == streamed.summary()


def test_a_failed_run_is_scored_on_none_and_a_raising_metric_is_in_the_trace() -> None:
    def flaky(item: Any, ctx: Any) -> str:
        if item == "b":
            raise RuntimeError("boom")
        return ANSWERS[item][ctx.run - 1]

    seen: list[Any] = []

    def record(item: Any, output: Any, label: Any) -> float:
        seen.append(output)
        if item == "c":
            raise ValueError("cannot score c")
        return 1.0

    with pytest.warns(hb.ArmErrorWarning):
        bench = hb.benchmark(hb.Arm("flaky", flaky), reference(), runs=5, metrics=[record])
    assert seen.count(None) == 5  # the five runs of q2 that raised
    # q1 1.0, q2 1.0 (scored on None), q3 no value: the mean is over q1 and q2
    assert bench.summary()[0]["metrics"] == {"record": 1.0}
    q3 = [r for r in bench.rows if r.item == "q3"]
    errors = [s.error for r in q3 for s in bench.traces[r.ledger_id] if s.kind == "error"]
    assert errors == ["metric 'record' raised ValueError: cannot score c"] * 5
    assert all(r.failure_kind == "wrong" for r in q3)  # the row itself is unchanged


def test_a_score_counts_as_one_or_zero_and_none_gives_no_value() -> None:
    scorer = hb.exact_scorer()

    def exact(item: Any, output: Any, label: Any) -> Score:
        return scorer(item, output, label)

    def nothing(item: Any, output: Any, label: Any) -> None:
        return None

    bench = hb.benchmark(arm(), reference(), runs=5, metrics=[exact, nothing])
    (s,) = bench.summary()
    assert s["metrics"] == {"exact": pytest.approx(s["accuracy"])}


def test_resumed_rows_have_no_metric_values_so_the_arm_shows_na() -> None:
    ref = reference()
    first = hb.benchmark(arm(), ref, runs=5)
    done = {(r.arm, r.item, r.run): r for r in first.rows if r.item == "q1"}
    again = hb.benchmark(arm(), ref, runs=5, done=done, metrics=[both], benchmark_id=first.id)
    assert again.summary()[0]["metrics"] == {"same": None, "half": None}
    assert " fixed 0.467    NA   NA   20" in str(again)


@pytest.mark.parametrize("bad", [["tatqa"], [42], "tatqa"])
def test_a_metric_must_be_a_function(bad: Any) -> None:
    with pytest.raises(ConfigError, match="metrics"):
        hb.benchmark(arm(), reference(), runs=5, metrics=bad)


def test_specs_build_metrics_by_name() -> None:
    from hrbench import reading, specs

    assert specs.build_metrics(["tatqa", "squad"]) == [reading.tatqa_scores, reading.squad_scores]
    assert specs.build_metrics(["hrbench.reading:squad_scores"]) == [reading.squad_scores]
    with pytest.raises(ConfigError, match=r"metrics\[0\]"):
        specs.build_metrics(["bleu"])
    with pytest.raises(ConfigError, match=r"metrics\[1\]"):
        specs.build_metrics(["tatqa", "hrbench.reading:NOT_IN_DOCUMENT"])
    assert specs.build_scorer("tatqa").name == "tatqa"
