"""Reading recipes direct / chunked / retrieve, with the mock client and the loopback server."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import BudgetStoppedWarning, ConfigError
from hrbench.reading import (
    INSTRUCTIONS,
    answer_scorer,
    chunk_document,
    chunked,
    direct,
    example_document,
    example_questions,
    qa_reference,
    retrieve,
)
from tests.unit.reading._helpers import oracle, prompt_of


def example_ref() -> hb.Reference:
    doc = example_document()
    return qa_reference([{**q, "context": doc} for q in example_questions()], columns={"answers": "label"})


class Recorder:
    """A mock model that answers like the oracle and keeps every request."""

    def __init__(self) -> None:
        self.requests: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []

    def __call__(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        self.requests.append((messages, params))
        return oracle(prompt_of(messages))


def run(arm: hb.Arm, client: Any, **kwargs: Any) -> hb.Bench:
    return hb.benchmark(arm, example_ref(), runs=5, client=client, scorer=answer_scorer(), **kwargs)


SMALL = {"chunk_chars": 220, "overlap_chars": 0}


@pytest.mark.parametrize(
    "factory",
    [lambda: direct(), lambda: chunked(**SMALL), lambda: retrieve(k=1, **SMALL)],
    ids=["direct", "chunked", "retrieve"],
)
def test_recipes_answer_every_example_question(factory: Any) -> None:
    rec = Recorder()
    bench = run(factory(), hb.MockClient(rec))
    assert all(r.correct for r in bench.rows), [(r.item, r.outcome) for r in bench.rows if not r.correct]
    messages, _ = rec.requests[0]
    assert messages[0] == {"role": "system", "content": INSTRUCTIONS}
    assert "NOT_IN_DOCUMENT" in INSTRUCTIONS and "only the document" in INSTRUCTIONS
    assert messages[1]["content"].startswith("Document:\n") and "\n\nQuestion: " in messages[1]["content"]


def test_direct_sends_the_whole_document_once_per_run() -> None:
    rec = Recorder()
    bench = run(direct(temperature=0, max_tokens=32), hb.MockClient(rec))
    assert len(rec.requests) == len(bench.rows) == 50
    messages, params = rec.requests[0]
    assert example_document() in messages[1]["content"]
    assert params["temperature"] == 0 and params["max_tokens"] == 32
    assert sorted({p["draw_index"] for _, p in rec.requests}) == [1, 2, 3, 4, 5]


def test_model_names_and_specs() -> None:
    rec = Recorder()
    run(direct("reader-7b"), hb.MockClient(rec))
    arm = direct({"provider": "openai", "model": "gpt-x", "base_url": "http://h", "api_key": "SECRET"})
    assert arm.settings["model"] == {"provider": "openai", "model": "gpt-x", "base_url": "http://h"}
    assert "SECRET" not in repr(arm.settings)
    assert direct(hb.MockClient(rec, model="m2")).settings["model"]["model"] == "m2"
    assert direct().hash != direct("reader-7b").hash != direct("reader-7b", temperature=1).hash
    with pytest.raises(ConfigError):
        direct(42)


def test_chunked_asks_each_chunk_then_combines() -> None:
    chunks = chunk_document(example_document(), 220, 0)
    assert len(chunks) >= 3
    rec = Recorder()
    bench = hb.benchmark(
        chunked(**SMALL), example_ref(), runs=5, client=hb.MockClient(rec), scorer=answer_scorer()
    )
    per_run = len(rec.requests) / len(bench.rows)
    assert per_run == len(chunks)  # one answer found at most per question: no combine request
    # unanswerable: every chunk says NOT_IN_DOCUMENT, the recipe says so without another call
    ceo = [r for r in bench.rows if r.item == "ceo"]
    assert all(r.correct and r.outcome == "not_in_document" for r in ceo)


def test_chunked_combines_several_answers() -> None:
    doc = "The answer is Alpha.\nThe answer is Beta."

    def model(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        p = prompt_of(messages)
        if "Answers:\n" in p:
            return "Answer: Beta"
        return "Alpha" if "Alpha" in p else "Beta"

    ref = qa_reference([{"id": "q", "context": doc, "question": "Which?", "answers": ["Beta"]}])
    bench = hb.benchmark(
        chunked(chunk_chars=25, overlap_chars=0),
        ref,
        runs=5,
        client=hb.MockClient(model),
        scorer=answer_scorer(),
    )
    assert all(r.correct for r in bench.rows)
    assert all(
        len([s for s in t if s.kind == "request"]) == 3 for t in bench.traces.values()
    )  # two chunks, the combine


def test_retrieve_reads_the_best_chunk() -> None:
    rec = Recorder()
    bench = hb.benchmark(
        retrieve(k=1, **SMALL), example_ref(), runs=5, client=hb.MockClient(rec), scorer=answer_scorer()
    )
    assert all(r.correct for r in bench.rows)
    sent = {m[1]["content"].rsplit("Question: ", 1)[1]: m[1]["content"] for m, _ in rec.requests}
    assert "Priya Raman" in sent["Who approved the report?"]
    assert "12,400" not in sent["Who approved the report?"]
    assert "12,400" in sent["How many units did the Sheffield plant produce in 2023?"]


def test_retrieve_is_deterministic_and_handles_stop_word_questions() -> None:
    from hrbench.reading._recipes import _top_passages

    doc = example_document()
    a = _top_passages(doc, "Who approved the report?", k=2, chunk_chars=220, overlap_chars=0)
    assert a == _top_passages(doc, "Who approved the report?", k=2, chunk_chars=220, overlap_chars=0)
    assert _top_passages(doc, "the of and", k=2, chunk_chars=220, overlap_chars=0) == list(
        chunk_document(doc, 220, 0)[:2]
    )
    assert _top_passages("short", "x?", k=3, chunk_chars=220, overlap_chars=0) == ["short"]


@pytest.mark.parametrize(
    ("factory", "limit", "kind"),
    [
        (lambda: direct(), hb.Governor(max_calls=0), "call_cap_reached"),
        (lambda: chunked(**SMALL), hb.Governor(max_calls=2), "call_cap_reached"),
        (lambda: retrieve(k=1, **SMALL), hb.Governor(max_tokens=1), "token_cap_reached"),
    ],
    ids=["direct", "chunked", "retrieve"],
)
def test_budget_refusal_gives_a_partial_answer(factory: Any, limit: hb.Governor, kind: str) -> None:
    arm = factory()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetStoppedWarning)
        bench = run(arm, hb.MockClient(Recorder()), governor=limit, concurrency=1)
    stopped = [r for r in bench.rows if bench.traces[r.ledger_id][-1].source == "refused"]
    assert stopped
    for r in stopped:
        assert kind in (bench.traces[r.ledger_id][-1].error or "")
        # refused before any answer text: parse_failure (seed 001's order, case H13e); a stopped
        # run that had found the answer is right
        assert r.failure_kind in ("parse_failure", None)
        assert (r.failure_kind is None) == (r.outcome is not None)


def call_chunked(model: Any, governor: hb.Governor, question: str) -> hb.Answer:
    import anyio

    from hrbench.arm import Context
    from hrbench.models import Pricing
    from hrbench.runner.runtime import Runtime

    arm = chunked(**SMALL)
    rt = Runtime(hb.MockClient(model), governor, None, None, None, Pricing())
    ctx = Context(
        arm="chunked",
        item_id="q",
        run=1,
        draw_index=1,
        seed=1,
        client=rt.client,
        ledger_id="b/chunked/q/1",
        runtime=rt,
    )
    out = anyio.run(arm.fn, {"document": example_document(), "question": question}, ctx)
    assert isinstance(out, hb.Answer)
    return out


def test_chunked_stopped_after_finding_the_answer_is_right() -> None:
    answer = call_chunked(
        Recorder(), hb.Governor(max_calls=2), "How many units did the Sheffield plant produce in 2023?"
    )
    assert answer.partial and answer.notes == ["call_cap_reached"] and answer.text == "12,400"
    assert answer.trace and answer.trace[-1].source == "refused" and len(answer.trace) == 3
    assert answer_scorer()(None, answer, 12400).correct is True
    assert answer_scorer()(None, answer, "NOT_IN_DOCUMENT").failure_kind == "budget_stop"


def test_chunked_stopped_with_a_wrong_answer_is_a_budget_stop() -> None:
    answer = call_chunked(lambda m, p: "Leeds", hb.Governor(max_calls=1), "How many units?")
    assert answer.partial and answer.notes == ["call_cap_reached"] and answer.text == "Leeds"
    assert answer_scorer()(None, answer, 12400).failure_kind == "budget_stop"


def test_refused_before_any_text() -> None:
    answer = call_chunked(Recorder(), hb.Governor(max_calls=0), "How many units?")
    assert answer.partial and answer.text is None and answer.notes == ["call_cap_reached"]
    assert answer_scorer()(None, answer, 12400).failure_kind == "parse_failure"  # case H13e


def test_failed_request_is_an_error() -> None:
    def broken(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        raise RuntimeError("boom")

    with pytest.warns(hb.ArmErrorWarning, match="RuntimeError: boom"):
        bench = run(direct(), hb.MockClient(broken))
    assert {r.failure_kind for r in bench.rows} == {"error"}


def test_refused_reply_is_a_refusal() -> None:
    def refuse(messages: list[dict[str, Any]], params: dict[str, Any]) -> hb.Result:
        return hb.Result(text="I can't help with that.", refused=True, finish_reason="refusal")

    for arm in (direct(), chunked(**SMALL)):
        bench = run(arm, hb.MockClient(refuse))
        assert {r.failure_kind for r in bench.rows} == {"refusal"}


def test_bad_items_and_settings() -> None:
    ref = hb.Reference({"q": "not a dict"}, labels=["x"])
    with pytest.warns(hb.ArmErrorWarning, match="5 of 5"):
        bench = hb.benchmark(direct(), ref, runs=5, client=hb.MockClient(Recorder()), scorer=answer_scorer())
    assert {r.failure_kind for r in bench.rows} == {"error"}
    with pytest.raises(ConfigError):
        chunked(chunk_chars=10, overlap_chars=10)
    with pytest.raises(ConfigError):
        retrieve(k=0)
    with pytest.raises(ConfigError, match="not a setting of the 'direct' recipe"):
        direct(k=2)
    with pytest.raises(ConfigError):
        chunked(k=2)


def test_reading_arm_specs() -> None:
    from hrbench.specs import build_arm, build_scorer

    arm = build_arm(
        {"kind": "reading", "recipe": "retrieve", "name": "bm25", "model": "m", "settings": {"k": 2}}
    )
    assert arm.name == "bm25" and arm.settings["k"] == 2 and arm.settings["model"] == {"model": "m"}
    assert build_scorer("answer_contains").name == "answer_contains"
    with pytest.raises(ConfigError):
        build_arm({"kind": "reading", "recipe": "direct", "settings": {"chunk_chars": 5}})


def test_chunk_document() -> None:
    doc = "One two three. Four five six.\n\nSeven eight nine ten eleven twelve thirteen."
    assert chunk_document(doc, 1000) == (
        "One two three. Four five six.\nSeven eight nine ten eleven twelve thirteen.",
    )
    parts = chunk_document(doc, 20)
    assert all(len(p) <= 20 for p in parts)
    assert " ".join(parts).split() == doc.split()
    overlapped = chunk_document(doc, 30, 10)
    assert len(overlapped) > 1 and "\u2026" in overlapped[1]
    assert chunk_document("", 10) == ()


# -- against the loopback OpenAI-compatible server ---------------------------------------------
@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    pytest.importorskip("uvicorn")
    from hrbench.testing import LoopbackServer

    with LoopbackServer(reply_fn=lambda prompt, seed, call: oracle(prompt)) as srv:
        yield srv


def openai_client(server: Any) -> Any:
    from hrbench.models import OpenAIClient

    return OpenAIClient(
        "loopback-1", base_url=server.base_url, api_key_env=None, max_attempts=1, timeout_s=5.0
    )


@pytest.mark.parametrize(
    "factory",
    [lambda: direct(), lambda: chunked(**SMALL), lambda: retrieve(k=1, **SMALL)],
    ids=["direct", "chunked", "retrieve"],
)
def test_recipes_against_the_loopback_server(server: Any, factory: Any) -> None:
    bench = run(factory(), openai_client(server))
    assert all(r.correct for r in bench.rows), [(r.item, r.outcome) for r in bench.rows if not r.correct]
    assert all(r.tokens_in > 0 and r.tokens_out > 0 for r in bench.rows)
    body = server.requests[-1].body
    assert body["model"] == "loopback-1" and body["messages"][0]["content"] == INSTRUCTIONS


@pytest.mark.parametrize(
    ("marker", "kind"),
    [
        ("[[fault:quota]]", "error"),  # the provider's error, not a budget stop
        ("[[fault:refusal]]", "refusal"),
        ("[[fault:500]]", "error"),
        ("[[fault:content_filter]]", "parse_failure"),
    ],
)
def test_loopback_faults(server: Any, marker: str, kind: str) -> None:
    ref = qa_reference(
        [
            {
                "id": "q",
                "context": f"{example_document()}\n{marker}",
                "question": "Who approved the report?",
                "answers": ["Priya Raman"],
            }
        ]
    )
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        bench = hb.benchmark(direct(), ref, runs=5, client=openai_client(server), scorer=answer_scorer())
    assert {r.failure_kind for r in bench.rows} == {kind}
    said = [str(w.message) for w in got if issubclass(w.category, hb.ArmErrorWarning)]
    if kind == "error":  # one warning, with the cause
        cause = "openai: quota exhausted" if marker == "[[fault:quota]]" else "openai: HTTP 500"
        assert len(said) == 1 and f"5 x {cause}" in said[0]
    else:
        assert said == []
