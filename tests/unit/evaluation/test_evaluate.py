"""evaluate() (seed 003): the seed's example, errors, epochs and their cache partitions, formats."""

from __future__ import annotations

import itertools
import json
import math
import statistics
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
import pytest

from hrbench import metrics
from hrbench.errors import BudgetStoppedWarning, ConfigError, MetricErrorWarning
from hrbench.evaluation.evaluate import (
    EmptyDataWarning,
    EvalError,
    Evaluation,
    evaluate,
    evaluate_async,
    evaluate_spec,
)
from hrbench.evaluation.modules import Prediction, RowResult, Trace, module, module_fn
from hrbench.models import MockClient
from hrbench.records import Result, Usage
from hrbench.runner import Cache, Governor
from hrbench.store import Store

SENTIMENT = "text -> sentiment: enum('positive', 'negative')"
TEXTS = ["I love it!", "Awful.", "Great value", "Not great"]
LABELS = ["positive", "negative", "positive", "negative"]


def rule_fn(text: str) -> str:
    """The seed's keyword rule: grepl("love|great", text, ignore.case = TRUE)."""
    return "positive" if "love" in text.lower() or "great" in text.lower() else "negative"


def rule() -> Any:
    return module_fn("text -> sentiment", rule_fn)


def same_label(prediction: Any, expected: Any) -> bool:
    return prediction.sentiment == expected.sentiment


def seed_data(kind: str) -> Any:
    rows = [{"text": t, "sentiment": s} for t, s in zip(TEXTS, LABELS, strict=True)]
    if kind == "pandas":
        return pytest.importorskip("pandas").DataFrame(rows)
    if kind == "polars":
        return pytest.importorskip("polars").DataFrame(rows)
    if kind == "columns":
        return {"text": TEXTS, "sentiment": LABELS}
    return rows


# --------------------------------------------------------------------------------------------
# The seed's example
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["pandas", "polars", "rows", "columns"])
def test_seed003_example(kind: str) -> None:
    data = seed_data(kind)
    result = evaluate(rule(), data, metric=metrics.exact_match(field="sentiment"))
    assert isinstance(result, Evaluation)
    assert result.mean_score == 0.75
    assert result.scores == [1, 1, 1, 0]
    assert str(result).splitlines() == [
        "",
        "── hrbench Evaluation Results",
        "✔ Mean Score: 0.75",
        "Evaluated: 4",
        "Scores: 1, 1, 1, 0",
    ]
    assert evaluate(rule(), data, metric=same_label).mean_score == 0.75


def test_seed003_fields() -> None:
    result = evaluate(rule(), seed_data("rows"), metric=metrics.exact_match(field="sentiment"))
    assert result.predictions == [
        Prediction(sentiment=s) for s in ["positive", "negative", "positive", "positive"]
    ]
    assert (result.n_evaluated, result.n_errors, result.errors) == (4, 0, [])
    assert (result.n_run_errors, result.run_errors, result.n_metric_errors, result.metric_errors) == (
        0,
        [],
        0,
        [],
    )
    assert result.total_cost == 0.0  # a plain function makes no calls
    assert result.feedbacks == [None] * 4
    assert result.program_artifact_id.startswith("rule_fn-")
    assert result.trace_context is None
    assert [m["ledger_id"] for m in result.metadata] == [
        f"{result.program_artifact_id}/{i}/1" for i in range(4)
    ]
    assert all(isinstance(t, Trace) and t.inputs == {"text": TEXTS[i]} for i, t in enumerate(result.traces))
    assert (
        all(isinstance(r, RowResult) for r in result.data)
        and result.data[3].prediction.sentiment == "positive"
    )
    assert (result.epochs, result.epoch_scores, result.score_std, result.ci_95, result.epoch_traces) == (
        1, None, None, None, None,
    )  # fmt: skip
    assert result.metric == "exact_match" and result.module == "rule_fn"


def test_metric_by_name_scores_the_only_output() -> None:
    assert evaluate(rule(), seed_data("rows"), "exact_match").mean_score == 0.75
    assert evaluate(rule(), seed_data("rows"), metrics.f1()).scores == [1, 1, 1, 0]


def test_trace_context_is_returned() -> None:
    ctx = {"request_id": "abc"}
    assert evaluate(rule(), seed_data("rows"), same_label, trace_context=ctx).trace_context is ctx


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def test_a_metric_that_raises_warns_and_counts_zero() -> None:
    def picky(prediction: Any, expected: Any) -> bool:
        if expected.text == "Awful.":
            raise ValueError("cannot judge")
        return prediction.sentiment == expected.sentiment

    with pytest.warns(MetricErrorWarning, match=r"failed on 1 row\(s\).*row 1 \(epoch 1\).*cannot judge"):
        result = evaluate(rule(), seed_data("rows"), picky)
    assert result.scores == [1, None, 1, 0]
    assert result.mean_score == 0.5  # the failed row counts 0
    assert (result.n_evaluated, result.n_errors, result.n_metric_errors, result.n_run_errors) == (3, 1, 1, 0)
    assert result.metric_errors == [
        EvalError(row=1, epoch=1, kind="metric", message="picky: ValueError: cannot judge")
    ]
    assert result.errors == result.metric_errors
    assert result.predictions[1] == Prediction(sentiment="negative")  # the run itself succeeded
    assert "Errors: 1 (run: 0, metric: 1)" in str(result) and "! Mean Score: 0.5" in str(result)


@pytest.mark.parametrize("bad", [None, "yes", float("nan"), {"feedback": "no score"}])
def test_a_metric_that_returns_no_score_is_a_metric_error(bad: Any) -> None:
    with pytest.warns(MetricErrorWarning):
        result = evaluate(rule(), seed_data("rows"), lambda p, e: bad)
    assert result.n_metric_errors == 4 and result.mean_score == 0.0 and result.scores == [None] * 4


def test_malformed_json_module_repairs_then_run_error() -> None:
    client = MockClient(lambda messages, params: "positive, I think")
    classifier = module(SENTIMENT, model=client)
    result = evaluate(classifier, seed_data("rows"), metrics.exact_match(field="sentiment"))
    assert client.calls == 8  # one call and one repair attempt per row
    assert result.mean_score == 0.0 and result.scores == [None] * 4
    assert (result.n_run_errors, result.n_metric_errors, result.n_errors, result.n_evaluated) == (4, 0, 4, 0)
    assert all(e.kind == "run" and e.failure_kind == "parse_failure" for e in result.run_errors)
    assert "after one repair attempt" in result.run_errors[0].message
    assert [len(t.steps) for t in result.traces] == [2] * 4
    assert result.predictions == [None] * 4


def test_some_rows_fail_to_run() -> None:
    def flaky(text: str) -> str:
        if text == "Great value":
            raise RuntimeError("rule crashed")
        return rule_fn(text)

    result = evaluate(module_fn("text -> sentiment", flaky), seed_data("rows"), same_label)
    assert result.scores == [1, 1, None, 0] and result.mean_score == 0.5
    assert result.run_errors == [
        EvalError(row=2, epoch=1, kind="run", message="RuntimeError: rule crashed", failure_kind="error")
    ]
    assert result.data[2].error == "RuntimeError: rule crashed"


def test_empty_data_warns_and_gives_no_mean() -> None:
    with pytest.warns(EmptyDataWarning):
        result = evaluate(rule(), [], same_label)
    assert result.mean_score is None and result.scores == [] and result.n_evaluated == 0
    assert "Mean Score: NA" in str(result)
    with pytest.warns(EmptyDataWarning):
        three = evaluate(rule(), [], same_label, epochs=3)
    assert three.mean_score is None and three.ci_95 is None and three.epoch_scores == [[], [], []]


def test_budget_stops_are_run_errors_and_warn() -> None:
    classifier = module(SENTIMENT, model=MockClient(lambda m, p: '{"sentiment": "positive"}'))
    with pytest.warns(BudgetStoppedWarning):
        result = evaluate(
            classifier, seed_data("rows"), same_label, governor=Governor(max_calls=2), concurrency=1
        )
    assert [e.failure_kind for e in result.run_errors] == ["budget_stop", "budget_stop"]
    assert result.scores == [1, 0, None, None]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"epochs": 0}, "epochs"),
        ({"epochs": 1.5}, "epochs"),
        ({"concurrency": 0}, "concurrency"),
        ({"return_format": "full"}, "return_format"),
        ({"metric": metrics.exact_match("label")}, "data[0]"),  # no such column
        ({"metric": 3}, "metric"),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], field: str) -> None:
    args: dict[str, Any] = {"metric": same_label, **kwargs}
    with pytest.raises(ConfigError) as info:
        evaluate(rule(), seed_data("rows"), **args)
    assert info.value.field == field


def test_missing_input_column_and_missing_client() -> None:
    with pytest.raises(ConfigError, match="no column 'text'"):
        evaluate(rule(), [{"txt": "a", "sentiment": "positive"}], same_label)
    with pytest.raises(ConfigError, match="no model client"):
        evaluate(module(SENTIMENT), seed_data("rows"), same_label)
    with pytest.raises(ConfigError, match="not an output"):
        evaluate(
            module(SENTIMENT, model=MockClient(lambda m, p: "")),
            seed_data("rows"),
            metrics.exact_match("label"),
        )
    with pytest.raises(ConfigError):
        evaluate(rule_fn, seed_data("rows"), same_label)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Epochs: each its own cache partition
# --------------------------------------------------------------------------------------------


class Sampler:
    """A sampling mock model: every live call draws a fresh sample number and a random label."""

    def __init__(self) -> None:
        self.counter = itertools.count(1)
        self.draws: list[int] = []
        self.client = MockClient(self, model="mock")

    def __call__(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        sample = next(self.counter)
        self.draws.append(params["draw_index"])
        label = "positive" if (sample * 2654435761) % 7 < 4 else "negative"
        return json.dumps({"sentiment": label, "sample": sample})


def sampled_classifier(sampler: Sampler) -> Any:
    return module("text -> sentiment: enum('positive', 'negative'), sample: int", model=sampler.client)


def samples(result: Evaluation) -> list[list[int]]:
    return [[t.outputs["sample"] for t in epoch] for epoch in result.epoch_traces]


def test_epochs_draw_fresh_samples_and_replay_from_the_cache() -> None:
    sampler = Sampler()
    classifier = sampled_classifier(sampler)
    cache = Cache(Store(":memory:"))
    metric = metrics.exact_match(field="sentiment")
    first = evaluate(classifier, seed_data("rows"), metric, epochs=3, cache=cache)
    assert sorted(sampler.draws) == [1] * 4 + [2] * 4 + [3] * 4  # epoch e is draw e
    drawn = samples(first)
    assert len({s for epoch in drawn for s in epoch}) == 12  # every epoch sampled afresh
    assert [[s.draw_index for s in t.steps] for t in first.epoch_traces[1]] == [[2]] * 4

    again = evaluate(classifier, seed_data("rows"), metric, epochs=3, cache=cache)
    assert len(sampler.draws) == 12  # all epochs replayed from the cache: no new call
    assert samples(again) == drawn
    assert again.epoch_scores == first.epoch_scores and again.mean_score == first.mean_score
    assert again.ci_95 == first.ci_95
    assert all(m["sources"] == ["cache"] for m in again.metadata)
    assert again.total_cost == 0.0

    fresh = evaluate(classifier, seed_data("rows"), metric, epochs=3, cache=False)
    assert len(sampler.draws) == 24
    assert not {s for e in samples(fresh) for s in e} & {s for e in drawn for s in e}

    more = evaluate(classifier, seed_data("rows"), metric, epochs=4, cache=cache)
    assert samples(more)[:3] == drawn and len(sampler.draws) == 28  # only epoch 4 is new


def test_epoch_statistics() -> None:
    sampler = Sampler()
    result = evaluate(
        sampled_classifier(sampler), seed_data("rows"), metrics.exact_match(field="sentiment"), epochs=5
    )
    from scipy import stats

    assert len(result.epoch_scores) == 5 and all(len(e) == 4 for e in result.epoch_scores)
    means = [sum(e) / 4 for e in result.epoch_scores]
    assert result.mean_score == pytest.approx(statistics.mean(means))
    assert result.scores == [pytest.approx(sum(e[i] for e in result.epoch_scores) / 5) for i in range(4)]
    assert result.score_std == pytest.approx(statistics.stdev(means))
    # the interval report() gives, rows as items (clusters of one) and epochs as runs
    from hrbench.stats import report

    rows = [
        {
            "cluster": f"r{i}",
            "item": f"r{i}",
            "arm": "m",
            "run": e + 1,
            "correct": s,
            "failure_kind": None,
            "usd": 0.0,
            "reportable": True,
        }
        for e, col in enumerate(result.epoch_scores)
        for i, s in enumerate(col)
    ]
    arm = report(rows).arm("m")
    assert arm.accuracy == pytest.approx(result.mean_score)
    assert result.ci_95 == pytest.approx((arm.ci_low, arm.ci_high))
    assert 0.0 <= result.ci_95[0] <= result.mean_score <= result.ci_95[1] <= 1.0
    assert stats.t.ppf(0.975, 3) > 0  # t on rows - 1 = 3 df
    assert result.predictions == [Prediction(t.outputs) for t in result.epoch_traces[-1]]  # the last epoch
    assert [m["draw_index"] for m in result.metadata] == [5] * 4
    assert "Epochs: 5" in str(result)


def test_epochs_with_a_failing_epoch_give_no_row_score() -> None:
    def sometimes(messages: Any, params: Any) -> str:
        if params["draw_index"] == 2 and "Awful" in messages[1]["content"]:
            return "garbage"
        return json.dumps({"sentiment": "negative"})

    result = evaluate(module(SENTIMENT, model=MockClient(sometimes)), seed_data("rows"), same_label, epochs=2)
    assert result.epoch_scores == [[0, 1, 0, 1], [0, None, 0, 1]]
    assert result.scores == [0, None, 0, 1]
    assert result.mean_score == 0.375  # (2 + 1) / 8: the failure counts 0
    assert result.n_errors == 1 and result.run_errors[0].epoch == 2
    assert result.score_std == pytest.approx(statistics.stdev([0.5, 0.25]))


def test_constant_epochs_give_a_point_interval() -> None:
    result = evaluate(rule(), seed_data("rows"), same_label, epochs=3)
    assert result.epoch_scores == [[1, 1, 1, 0]] * 3
    assert result.score_std == 0.0
    # the rows are a sample too, so the interval has width: Wilson on 4 rows, t on 3 df
    lo, hi = result.ci_95
    assert 0.0 < lo < 0.75 < hi < 1.0


# --------------------------------------------------------------------------------------------
# Return formats, feedback, traces, cost, progress, async
# --------------------------------------------------------------------------------------------


def test_return_format_simple_leaves_out_the_heavy_fields() -> None:
    result = evaluate(rule(), seed_data("rows"), same_label, return_format="simple")
    assert (result.metadata, result.traces, result.epoch_traces, result.data) == (None, None, None, None)
    out = result.to_dict()
    assert not {"metadata", "traces", "epoch_traces", "data"} & set(out)
    assert out["mean_score"] == 0.75 and out["scores"] == [1, 1, 1, 0]
    two = evaluate(rule(), seed_data("rows"), same_label, epochs=2, return_format="simple").to_dict()
    assert "epoch_scores" in two and "ci_95" in two and "epoch_traces" not in two


def test_structured_to_dict_is_json_ready() -> None:
    sampler = Sampler()
    result = evaluate(sampled_classifier(sampler), seed_data("rows"), same_label, epochs=2)
    out = result.to_dict()
    seed_fields = """mean_score scores predictions n_evaluated n_errors errors n_run_errors run_errors
        n_metric_errors metric_errors total_cost feedbacks program_artifact_id trace_context metadata traces
        data epoch_scores score_std ci_95 epoch_traces""".split()
    for key in seed_fields:
        assert key in out, key
    decoded = json.loads(msgspec.json.encode(out))
    assert decoded["traces"][0]["steps"][0]["messages"][1]["content"] == "text: I love it!"
    assert "epoch_scores" not in evaluate(rule(), seed_data("rows"), same_label).to_dict()


def test_feedbacks_and_trace_metrics() -> None:
    explain = metrics.with_feedback(
        metrics.exact_match("sentiment"), lambda p, e, s: None if s else "wrong label"
    )
    result = evaluate(rule(), seed_data("rows"), explain)
    assert result.feedbacks == [None, None, None, "wrong label"] and result.mean_score == 0.75

    seen: list[Trace] = []

    def one_call(prediction: Any, expected: Any, trace: Trace) -> bool:
        seen.append(trace)
        return len(trace.steps) == 1

    client = MockClient(lambda m, p: '{"sentiment": "positive"}')
    traced = evaluate(module(SENTIMENT, model=client), seed_data("rows"), metrics.with_trace(one_call))
    assert traced.mean_score == 1.0 and [t.inputs["text"] for t in seen] == TEXTS


def test_total_cost_sums_priced_calls_and_is_none_when_unknown() -> None:
    def priced(messages: Any, params: Any) -> Result:
        return Result(text='{"sentiment": "positive"}', usage=Usage(tokens_in=10, tokens_out=2), usd=0.25)

    result = evaluate(module(SENTIMENT, model=MockClient(priced)), seed_data("rows"), same_label, epochs=2)
    assert result.total_cost == pytest.approx(2.0)
    assert "Cost: $2.0000" in str(result)
    unpriced = MockClient(lambda m, p: '{"sentiment": "positive"}', model="no-such-model-price")
    assert evaluate(module(SENTIMENT, model=unpriced), seed_data("rows"), same_label).total_cost is None


def test_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    evaluate(rule(), seed_data("rows"), same_label, progress=True)
    assert "4/4" in capsys.readouterr().err
    evaluate(rule(), seed_data("rows"), same_label)
    assert capsys.readouterr().err == ""


def test_evaluate_async_twin() -> None:
    async def main() -> Evaluation:
        return await evaluate_async(rule(), seed_data("rows"), metrics.exact_match(field="sentiment"))

    result = anyio.run(main)
    assert result.mean_score == 0.75 and result.scores == [1, 1, 1, 0]


def test_llm_overrides_the_module_client() -> None:
    own = MockClient(lambda m, p: '{"sentiment": "negative"}')
    other = MockClient(lambda m, p: '{"sentiment": "positive"}')
    result = evaluate(module(SENTIMENT, model=own), seed_data("rows"), same_label, llm=other)
    assert result.mean_score == 0.5 and own.calls == 0 and other.calls == 4


def test_many_rows_in_order_under_concurrency() -> None:
    async def echo(messages: Any, params: Any) -> str:
        await anyio.lowlevel.checkpoint()
        return json.dumps({"b": messages[-1]["content"].removeprefix("a: ")})

    data = [{"a": str(i), "b": str(i)} for i in range(200)]
    result = evaluate(
        module("a -> b", model=MockClient(echo)), data, metrics.exact_match("b"), concurrency=16
    )
    assert result.mean_score == 1.0 and [p.b for p in result.predictions] == [str(i) for i in range(200)]


# --------------------------------------------------------------------------------------------
# From plain data (the daemon's evaluate method, hrb eval)
# --------------------------------------------------------------------------------------------


def test_evaluate_spec_model_module_with_a_mock_client() -> None:
    out = evaluate_spec(
        {
            "module": {"signature": SENTIMENT, "instructions": "Classify."},
            "client": {"kind": "mock", "reply": '{"sentiment": "positive"}'},
            "data": seed_data("rows"),
            "metric": {"name": "exact_match", "field": "sentiment"},
            "epochs": 2,
        },
        cache=Cache(Store(":memory:")),
    )
    assert out["mean_score"] == 0.5 and out["scores"] == [1, 0, 1, 0]
    assert out["warnings"] == [] and len(out["epoch_scores"]) == 2
    json.dumps(out)


def test_evaluate_spec_function_module_and_errors() -> None:
    out = evaluate_spec(
        {
            "module": {"signature": "text -> sentiment", "fn": "tests.unit.evaluation.test_evaluate:rule_fn"},
            "data": seed_data("rows"),
            "metric": "exact_match",
            "return_format": "simple",
        }
    )
    assert out["mean_score"] == 0.75 and "traces" not in out
    out = evaluate_spec(
        {
            "module": {"signature": "text -> sentiment", "fn": "tests.unit.evaluation.test_evaluate:rule_fn"},
            "data": seed_data("rows"),
            "metric": {"name": "tests.unit.evaluation.test_evaluate:same_label", "threshold": 0.5},
        }
    )
    assert out["mean_score"] == 0.75
    with pytest.raises(msgspec.ValidationError, match=r"\$\.module"):
        evaluate_spec({"module": {"sig": "a -> b"}, "data": []})
    with pytest.raises(ConfigError, match="unknown type"):
        evaluate_spec({"module": {"signature": "a -> b: nope"}, "data": []})
    with pytest.raises(ConfigError, match="metric.name"):
        evaluate_spec({"module": {"signature": "text -> sentiment"}, "data": [], "metric": "bleu"})
    empty = evaluate_spec(
        {
            "module": {"signature": "text -> sentiment", "fn": "tests.unit.evaluation.test_evaluate:rule_fn"},
            "data": [],
        }
    )
    assert empty["mean_score"] is None and empty["warnings"][0].startswith("EmptyDataWarning")


def test_async_metric() -> None:
    async def judge(prediction: Any, expected: Any) -> dict[str, Any]:
        await anyio.lowlevel.checkpoint()
        if expected.text == "Awful.":
            raise RuntimeError("judge offline")
        return {"score": prediction.sentiment == expected.sentiment, "feedback": "judged"}

    with pytest.warns(MetricErrorWarning, match="judge offline"):
        result = evaluate(rule(), seed_data("rows"), judge)
    assert result.scores == [1, None, 1, 0] and result.feedbacks == ["judged", None, "judged", "judged"]


def test_identical_rows_share_a_cached_draw_but_epochs_must_differ() -> None:
    counter = itertools.count()

    def fresh(messages: Any, params: Any) -> Result:
        return Result(text=json.dumps({"b": "x"}), response_id=f"resp-{next(counter)}")

    data = [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}, {"a": 1, "b": "x"}]
    cache = Cache(Store(":memory:"))
    result = evaluate(
        module("a -> b", model=MockClient(fresh)), data, "exact_match", cache=cache, concurrency=1
    )
    assert result.n_errors == 0 and [m["sources"] for m in result.metadata] == [["live"], ["live"], ["cache"]]

    def stuck(messages: Any, params: Any) -> Result:  # a provider that repeats one reply whatever the draw
        return Result(text=json.dumps({"b": "x"}), response_id="same-every-time")

    repeated = evaluate(module("a -> b", model=MockClient(stuck)), data[:1], "exact_match", epochs=2)
    assert [(e.epoch, e.kind) for e in repeated.errors] == [(2, "run")]
    assert "DuplicateDrawError" in repeated.errors[0].message


@pytest.mark.parametrize(
    ("scores", "inside"),
    [
        ([1.0, 1.0, 1.0, 1.0], True),  # every row right: the interval still reaches below 1
        ([1.0, 1.0, 1.0, 0.0], True),
        ([0.5, 0.25, 1.0, 0.75], True),  # graded scores in [0, 1]
        ([0.0, 0.0, 0.0, 0.0], True),
        ([2.0, 3.0, 5.0, 4.0], False),  # another scale: the t interval of the row means
    ],
)
def test_ci_95_is_reports_interval_and_stays_in_range(scores: list[float], inside: bool) -> None:
    by_text = dict(zip(["I love it!", "Awful.", "Great value", "Not great"], scores, strict=True))
    result = evaluate(rule(), seed_data("rows"), lambda pred, row: by_text[row["text"]], epochs=2)
    lo, hi = result.ci_95
    assert lo <= result.mean_score <= hi and lo < hi
    if inside:
        assert 0.0 <= lo < hi <= 1.0
    else:
        n = 4
        half = stats_t_half(scores, n)
        assert (lo, hi) == pytest.approx((result.mean_score - half, result.mean_score + half))


def stats_t_half(scores: list[float], n: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.975, n - 1) * statistics.stdev(scores) / math.sqrt(n))
