"""Signatures, modules, run() and run_dataset() (seed 003)."""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from hrbench.errors import ConfigError, ModelError, SignatureError
from hrbench.evaluation.modules import (
    Field,
    Prediction,
    RowResult,
    Signature,
    module,
    module_fn,
    parse_outputs,
    rows_of,
    run,
    run_async,
    run_dataset,
    signature,
)
from hrbench.models import MockClient
from hrbench.records import Result
from hrbench.runner import Cache, Governor
from hrbench.store import Store

SENTIMENT = "text -> sentiment: enum('positive', 'negative')"

# --------------------------------------------------------------------------------------------
# Signatures
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "inputs", "outputs"),
    [
        ("text -> sentiment", [Field(name="text")], [Field(name="sentiment")]),
        (
            SENTIMENT,
            [Field(name="text")],
            [Field(name="sentiment", type="enum", choices=("positive", "negative"))],
        ),
        (
            'question: str "the question", context -> answer: str "a short span", confidence: float',
            [Field(name="question", description="the question"), Field(name="context")],
            [Field(name="answer", description="a short span"), Field(name="confidence", type="float")],
        ),
        (
            "doc->n:int,ok:bool,tags:list[str],scores : list[ float ]",
            [Field(name="doc")],
            [
                Field(name="n", type="int"),
                Field(name="ok", type="bool"),
                Field(name="tags", type="list[str]"),
                Field(name="scores", type="list[float]"),
            ],
        ),
        (
            "q -> a: enum(\"it's\", 'say \"hi\"', 'x\\'y') 'with \\'quotes\\''",
            [Field(name="q")],
            [Field(name="a", type="enum", choices=("it's", 'say "hi"', "x'y"), description="with 'quotes'")],
        ),
        ("\n  a,\n  b\n  ->\n  c\n", [Field(name="a"), Field(name="b")], [Field(name="c")]),
        ("fr\u00e9d -> r\u00e9ponse", [Field(name="fr\u00e9d")], [Field(name="r\u00e9ponse")]),
    ],
)
def test_signature_parses(spec: str, inputs: list[Field], outputs: list[Field]) -> None:
    sig = signature(spec)
    assert list(sig.inputs) == inputs
    assert list(sig.outputs) == outputs
    assert signature(sig.spec) == sig  # the spec round-trips


def test_signature_instructions_and_passthrough() -> None:
    sig = signature(SENTIMENT, instructions="Classify the review.")
    assert sig.instructions == "Classify the review."
    assert signature(sig) is sig
    assert signature(sig, instructions="Other").instructions == "Other"
    assert isinstance(sig, Signature) and sig.input_names == ["text"] and sig.output_names == ["sentiment"]


@pytest.mark.parametrize(
    ("spec", "column", "fragment", "why"),
    [
        ("text sentiment", 6, "sentiment", "expected ',' or '->'"),
        ("text -> ", 9, "<end>", "expected an output field name"),
        ("text -> sentiment: strr", 20, "strr", "unknown type 'strr'"),
        ("-> sentiment", 1, "-> sentiment", "expected an input field name"),
        ("text -> sentiment: enum()", 25, ")", "at least one quoted choice"),
        ("text -> sentiment: enum('a', b)", 30, "b)", "expected an enum choice in quotes"),
        ("text -> sentiment: enum('a' 'b')", 29, "'b')", "expected ',' or ')'"),
        ("text -> sentiment: enum('a', 'a')", 30, "'a')", "duplicate enum choice"),
        ("text -> a: list[dict]", 17, "dict]", "unknown list element type"),
        ("text -> a: list str", 17, "str", "expected '['"),
        ("text -> a: list[str", 20, "<end>", "expected ']'"),
        ("text -> a 'unterminated", 11, "'unterminate", "unterminated string"),
        ("text -> a -> b", 11, "-> b", "expected ',' or the end"),
        ("text -> text", 9, "text", "duplicate field 'text'"),
        ("class -> a", 1, "class -> a", "'class' cannot be a field name"),
        ("_x -> a", 1, "_x -> a", "'_x' cannot be a field name"),
        ("1x -> a", 1, "1x -> a", "expected an input field name"),
        ("a, -> b", 4, "-> b", "expected an input field name"),
    ],
)
def test_malformed_signature_points_at_the_part(spec: str, column: int, fragment: str, why: str) -> None:
    with pytest.raises(SignatureError) as info:
        signature(spec)
    err = info.value
    assert isinstance(err, ValueError)
    assert why in str(err)
    assert f"column {column} " in str(err)
    assert err.column == column  # type: ignore[attr-defined]
    assert err.fragment.startswith(fragment)  # type: ignore[attr-defined]
    assert err.field == "signature"


def test_signature_rejects_non_strings() -> None:
    with pytest.raises(SignatureError):
        signature(42)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# parse_outputs
# --------------------------------------------------------------------------------------------

TYPED = signature("q -> n: int, x: float, ok: bool, tags: list[str], label: enum('Yes', 'No'), s: str")


@pytest.mark.parametrize(
    ("reply", "want"),
    [
        (
            '{"n": 3, "x": 0.5, "ok": true, "tags": ["a"], "label": "Yes", "s": "hi"}',
            {"n": 3, "x": 0.5, "ok": True, "tags": ["a"], "label": "Yes", "s": "hi"},
        ),
        (
            '```json\n{"n": "3", "x": "2", "ok": "false", "tags": [], "label": " no ", "s": 1867}\n```',
            {"n": 3, "x": 2.0, "ok": False, "tags": [], "label": "No", "s": "1867"},
        ),
        (
            'Sure! {"n": 1, "x": 1, "ok": 1, "tags": ["t"], "label": "YES", "s": "", "extra": 9} Done.',
            {"n": 1, "x": 1.0, "ok": True, "tags": ["t"], "label": "Yes", "s": ""},
        ),
    ],
)
def test_parse_outputs_typed(reply: str, want: dict[str, Any]) -> None:
    assert parse_outputs(TYPED, reply) == want


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("", "empty"),
        ("positive", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"n": "three", "x": 1, "ok": true, "tags": [], "label": "Yes", "s": ""}', "`$.n`"),
        ('{"n": 1, "x": 1, "ok": true, "tags": [], "label": "Maybe", "s": ""}', "`$.label`"),
        ('{"n": 1, "x": 1, "ok": true, "tags": [], "label": "Yes"}', "missing required field `s`"),
    ],
)
def test_parse_outputs_errors(reply: str, why: str) -> None:
    with pytest.raises(ValueError, match=f".*{__import__('re').escape(why)}"):
        parse_outputs(TYPED, reply)


# --------------------------------------------------------------------------------------------
# module_fn
# --------------------------------------------------------------------------------------------


def keyword_rule(text: str) -> str:
    return "positive" if "love" in text.lower() or "great" in text.lower() else "negative"


def test_module_fn_bare_value_and_dict() -> None:
    rule = module_fn("text -> sentiment", keyword_rule)
    assert rule.name == "keyword_rule"
    assert run(rule, text="I love it!") == Prediction(sentiment="positive")
    assert run(rule, {"text": "Awful."}).sentiment == "negative"
    two = module_fn("a, b -> total: int, diff: int", lambda a, b: {"total": a + b, "diff": a - b})
    assert run(two, a=5, b=3) == {"total": 8, "diff": 2}


def test_module_fn_failures() -> None:
    two = module_fn("a -> x, y", lambda a: {"x": 1})
    rows = run_dataset(two, [{"a": 1}], return_format="structured")
    assert rows[0].prediction is None and "lacks output field(s) ['y']" in rows[0].error
    boom = module_fn("a -> x", lambda a: 1 / a)
    with pytest.raises(ZeroDivisionError):
        run(boom, a=0)
    out = run_dataset(boom, [{"a": 1}, {"a": 0}], return_format="structured")
    assert out[0].prediction == {"x": 1.0}
    assert out[1].error == "ZeroDivisionError: division by zero" and out[1].failure_kind == "error"
    with pytest.raises(ConfigError):
        module_fn("a -> x", "not callable")  # type: ignore[arg-type]


def test_module_fn_async_and_thread() -> None:
    async def slow(text: str) -> str:
        await anyio.lowlevel.checkpoint()
        return text.upper()

    assert run(module_fn("text -> up", slow), text="a").up == "A"
    threads = set()

    def blocking(text: str) -> str:
        threads.add(threading.get_ident())
        return text

    mod = module_fn("text -> same", blocking, thread=True)
    assert run_dataset(mod, [{"text": "x"}] * 4) == [Prediction(same="x")] * 4
    assert threading.get_ident() not in threads


def test_module_spec_and_hash_are_stable() -> None:
    a = module_fn("text -> sentiment", keyword_rule)
    b = module_fn("text -> sentiment", keyword_rule)
    assert a.hash == b.hash and a.artifact_id.startswith("keyword_rule-")
    assert module_fn("text -> label", keyword_rule).hash != a.hash


# --------------------------------------------------------------------------------------------
# module (a model call)
# --------------------------------------------------------------------------------------------


class Recorder:
    """A mock model: replies from a list in turn, and records what it was sent."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.seen: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []
        self.client = MockClient(self, model="mock-model")

    def __call__(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> Any:
        self.seen.append((messages, params))
        return self.replies[min(len(self.seen), len(self.replies)) - 1]


def test_module_prompt_and_reply() -> None:
    rec = Recorder('{"sentiment": "positive"}')
    classifier = module(
        SENTIMENT, model=rec.client, instructions="Classify the review.", params={"temperature": 1}
    )
    assert run(classifier, text="I love it!") == Prediction(sentiment="positive")
    ((messages, params),) = rec.seen
    assert params == {"temperature": 1, "draw_index": 1}
    system, user = messages
    assert system["role"] == "system" and system["content"].startswith("Classify the review.")
    assert '"sentiment"' in system["content"] and 'one of "positive", "negative"' in system["content"]
    assert user == {"role": "user", "content": "text: I love it!"}


def test_module_repairs_once_then_succeeds() -> None:
    rec = Recorder("positive", '{"sentiment": "Positive"}')
    classifier = module(SENTIMENT, model=rec.client)
    rows = run_dataset(classifier, [{"text": "I love it!"}], return_format="structured")
    row = rows[0]
    assert isinstance(row, RowResult)
    assert row.prediction == {"sentiment": "positive"} and row.error is None
    assert row.metadata["n_calls"] == 2 and row.metadata["repaired"] is True
    assert len(row.trace.steps) == 2
    repair = rec.seen[1][0]
    assert repair[-2] == {"role": "assistant", "content": "positive"}
    assert "could not be parsed" in repair[-1]["content"] and "not valid JSON" in repair[-1]["content"]
    assert rec.seen[1][1]["draw_index"] == 1


def test_module_parse_failure_is_a_run_error_not_a_crash() -> None:
    rec = Recorder("not json", "still {not json")
    classifier = module(SENTIMENT, model=rec.client)
    out = run_dataset(classifier, [{"text": "a"}, {"text": "b"}], return_format="structured")
    assert [r.prediction for r in out] == [None, None]
    assert all(r.failure_kind == "parse_failure" for r in out)
    assert "after one repair attempt" in out[0].error
    assert len(rec.seen) == 4  # one call and one repair per row
    with pytest.raises(ModelError) as info:
        run(classifier, text="c")
    assert info.value.context["failure_kind"] == "parse_failure"


@pytest.mark.parametrize(
    ("reply", "kind", "text"),
    [
        (Result(text=None, ok=False, error="HTTP 500"), "error", "model error: HTTP 500"),
        (Result(text="no", refused=True, finish_reason="refusal"), "refusal", "refusal"),
        (Result(text="", finish_reason="content_filter"), "refusal", "content_filter"),
    ],
)
def test_module_failed_or_refused_reply(reply: Result, kind: str, text: str) -> None:
    classifier = module(SENTIMENT, model=MockClient(lambda m, p: reply))
    (row,) = run_dataset(classifier, [{"text": "a"}], return_format="structured")
    assert row.prediction is None and row.failure_kind == kind and text in row.error


def test_module_client_that_raises() -> None:
    def broken(messages: Any, params: Any) -> str:
        raise RuntimeError("socket closed")

    (row,) = run_dataset(module("a -> b", model=MockClient(broken)), [{"a": 1}], return_format="structured")
    assert row.failure_kind == "error" and "socket closed" in row.error


def test_module_needs_a_client() -> None:
    classifier = module(SENTIMENT)
    with pytest.raises(ConfigError, match="no model client"):
        run(classifier, text="x")
    rec = Recorder('{"sentiment": "negative"}')
    assert run(classifier, text="x", llm=rec.client).sentiment == "negative"
    with pytest.raises(ConfigError):
        module(SENTIMENT, model=42)


def test_module_model_name_and_llm_override() -> None:
    rec = Recorder('{"sentiment": "negative"}')
    classifier = module(SENTIMENT, model="gpt-x")
    run(classifier, text="x", llm=rec.client)
    assert rec.client.calls == 1
    assert run(classifier, text="x", llm=rec.client, draw_index=4)
    assert rec.seen[-1][1]["draw_index"] == 4


def test_module_requests_use_the_cache() -> None:
    rec = Recorder('{"sentiment": "negative"}')
    classifier = module(SENTIMENT, model=rec.client)
    cache = Cache(Store(":memory:"))
    first = run_dataset(classifier, [{"text": "a"}, {"text": "b"}], cache=cache, return_format="structured")
    again = run_dataset(classifier, [{"text": "a"}, {"text": "b"}], cache=cache, return_format="structured")
    assert rec.client.calls == 2
    assert [r.metadata["sources"] for r in first] == [["live"], ["live"]]
    assert [r.metadata["sources"] for r in again] == [["cache"], ["cache"]]
    assert [r.prediction for r in again] == [r.prediction for r in first]
    run_dataset(classifier, [{"text": "a"}], cache=cache, draw_index=2)  # another draw: a new call
    assert rec.client.calls == 3
    run_dataset(classifier, [{"text": "a"}], cache=False)
    assert rec.client.calls == 4


def test_module_requests_go_through_the_governor() -> None:
    rec = Recorder('{"sentiment": "negative"}')
    classifier = module(SENTIMENT, model=rec.client)
    gov = Governor(max_calls=2)
    out = run_dataset(classifier, [{"text": str(i)} for i in range(3)], governor=gov, concurrency=1,
                      return_format="structured")  # fmt: skip
    assert [r.failure_kind for r in out] == [None, None, "budget_stop"]
    assert "call_cap_reached" in out[2].error and out[2].trace.steps[0].source == "refused"
    assert rec.client.calls == 2


# --------------------------------------------------------------------------------------------
# run_dataset and data
# --------------------------------------------------------------------------------------------


def test_rows_of_accepts_frames_and_columns() -> None:
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    want = [{"text": "a", "n": 1}, {"text": "b", "n": 2}]
    assert rows_of(pd.DataFrame(want)) == want
    assert rows_of(pl.DataFrame(want)) == want
    assert rows_of({"text": ["a", "b"], "n": [1, 2]}) == want
    assert rows_of(iter(want)) == want
    for bad in ("text", 3, [1, 2], {"a": [1], "b": [1, 2]}, {"a": 1}):
        with pytest.raises(ConfigError):
            rows_of(bad)


def test_run_dataset_formats_and_order() -> None:
    async def later(n: int) -> int:
        await anyio.sleep(0.001 * (5 - n))
        return n * n

    mod = module_fn("n -> sq: int", later)
    data = [{"n": i} for i in range(5)]
    assert [p.sq for p in run_dataset(mod, data, concurrency=5)] == [0, 1, 4, 9, 16]
    rows = run_dataset(mod, data, return_format="structured")
    assert [r.row for r in rows] == list(range(5)) and rows[2].inputs == {"n": 2}
    assert rows[2].trace.ledger_id == f"{mod.artifact_id}/2/1"
    with pytest.raises(ConfigError, match="return_format"):
        run_dataset(mod, data, return_format="table")
    with pytest.raises(ConfigError, match="no column 'n'"):
        run_dataset(mod, [{"m": 1}])
    with pytest.raises(ConfigError, match="concurrency"):
        run_dataset(mod, data, concurrency=0)


def test_run_dataset_respects_concurrency() -> None:
    live = 0
    peak = 0

    async def reply(messages: Any, params: Any) -> str:
        nonlocal live, peak
        live += 1
        peak = max(peak, live)
        await anyio.sleep(0.005)
        live -= 1
        return json.dumps({"b": "x"})

    mod = module("a -> b", model=MockClient(reply))
    out = run_dataset(mod, [{"a": i} for i in range(20)], concurrency=3)
    assert len(out) == 20 and peak == 3


def test_run_async_inside_a_loop() -> None:
    async def main() -> Prediction:
        return await run_async(module_fn("text -> sentiment", keyword_rule), text="great")

    assert anyio.run(main).sentiment == "positive"
