"""The judge's reply read without reasoning and invisible characters; ``{item}``.

Every ``judge`` case of ``../shared/cases/scoring-and-runner-3.jsonl`` runs through a real
:func:`hrbench.runner._benchmark` whose judge is a :class:`hrbench.MockClient` giving the case's reply
(``settings.judge_reply``, ``judge_reply_result`` or ``judge_fails``); the families around them
(every reasoning-tag spelling, every invisible character, before, after and inside the grade;
CORRECT, INCORRECT and rubric grades) are parametrised below.
"""

from __future__ import annotations

import itertools
import re
import warnings
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import hrbench as hb
from hrbench.errors import ConfigError, ScorerError
from hrbench.scoring._judge import INVISIBLE, PLACEHOLDERS, parse_grade, render_item
from tests._examples import examples
from tests.conftest import load_cases

JUDGE_CASES = {c["id"]: c for c in load_cases("judge")}
CASE_IDS = ["S09a", "S09b", "S09e", "S09f", "S09g", "S10a", "S10b", "S10c"]
"""The judge cases, by id (tests/test_shared_cases.py looks for each id in a test file)."""

RUNS = 5


def test_the_judge_cases_are_these() -> None:
    assert sorted(JUDGE_CASES) == sorted(CASE_IDS)


def _responder(settings_: dict[str, Any]) -> Any:
    """The judge's mock function for a case's settings."""
    if "judge_fails" in settings_:
        kind, _, message = settings_["judge_fails"].partition(": ")
        error = {"RuntimeError": RuntimeError, "TimeoutError": TimeoutError}[kind]

        def fails(messages: Any, params: Any) -> Any:
            raise error(message)

        return fails
    if "judge_reply_result" in settings_:
        result = dict(settings_["judge_reply_result"])
        return lambda messages, params: result
    reply = settings_["judge_reply"]
    return lambda messages, params: reply


def _bench(
    output: Any, label: Any, fn: Any, item: Any = "What is the capital of France?", **kw: Any
) -> hb.Bench:
    arm = hb.Arm("fixed", lambda item, ctx: output)
    ref = hb.Reference({"q1": item}, labels=[label])
    judge = hb.judge_scorer(hb.MockClient(fn, model="judge-1"), **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one item: few runs, and error rows warn
        return hb.benchmark(arm, ref, runs=RUNS, scorer=judge)


def _errors(bench: hb.Bench) -> list[str]:
    return [s.error or "" for t in bench.traces.values() for s in t if s.kind == "error"]


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_shared_judge_case(case_id: str) -> None:
    case = JUDGE_CASES[case_id]
    bench = _bench(case["output"], case["label"], _responder(case["settings"]))
    assert len(bench.rows) == RUNS
    for row in bench.rows:
        assert (row.correct, row.failure_kind) == (case["expected_correct"], case["expected_failure_kind"]), (
            case_id,
            _errors(bench),
        )
    if case["expected_failure_kind"] == "error":  # the trace says why
        causes = _errors(bench)
        assert len(causes) == RUNS, causes
        want = {
            "S09f": "not a grade",
            "S09g": "not a grade",
            "S10a": "failed: RuntimeError: HTTP 503",
            "S10b": "content_filter",
            "S10c": "not a grade",
        }[case_id]
        assert all(want in c for c in causes), causes
    else:
        assert _errors(bench) == []
        expected = "correct" if case["expected_correct"] else "incorrect"
        assert {r.outcome for r in bench.rows} == {expected}


def test_s09b_the_cause_of_an_unreadable_reply_shows_its_invisible_characters() -> None:
    # the reply shows "CORRECT" and a soft hyphen (not in the list): the cause escapes it
    bench = _bench("Paris", "Paris", lambda m, p: "CORRECT\u00ad")
    assert {r.failure_kind for r in bench.rows} == {"error"}
    assert all("'CORRECT\\xad'" in c for c in _errors(bench)), _errors(bench)


def test_s09a_an_unfinished_reasoning_reply_is_an_error_saying_so() -> None:
    reply = {"text": "<think>The answer matches, so CORRECT", "finish_reason": "length"}
    bench = _bench("Paris", "Paris", lambda m, p: reply)
    assert {(r.correct, r.failure_kind) for r in bench.rows} == {(False, "error")}
    causes = _errors(bench)
    assert all("all reasoning" in c and "finish reason 'length'" in c for c in causes), causes


# -- the family: reasoning tags x invisible characters x grades ------------------------------

OPENS = ["<think>", "<thinking>", "<THINK>", "<Thinking>", "<think >", ""]  # "" = the API left it out
CLOSES = ["</think>", "</thinking>", "</THINK>", "</Thinking>", "</think >"]
GRADES = [
    ("correct", "CORRECT", "correct"),
    ("correct", "INCORRECT", "incorrect"),
    ("correct", "**Incorrect**.", "incorrect"),
    ("rubric", "7", "7"),
    ("rubric", "3/10", "3"),
    ("rubric", "10", "10"),
]
REASONING = "The reference is Paris; the answer says Paris.\nSo it looks CORRECT, not INCORRECT: 9/10."
GAPS = ["", "\n", "\n\n", " "]


@pytest.mark.parametrize(("open_", "close"), list(itertools.product(OPENS, CLOSES)))
@pytest.mark.parametrize(("kind", "grade", "want"), GRADES)
def test_a_reasoning_block_is_not_part_of_the_reply(
    open_: str, close: str, kind: str, grade: str, want: str
) -> None:
    for gap in GAPS:
        assert parse_grade(kind, f"{open_}{REASONING}{close}{gap}{grade}") == want
        if open_:  # a closed block after the grade is set aside too
            assert parse_grade(kind, f"{grade}{gap}{open_}{REASONING}{close}") == want


@pytest.mark.parametrize("char", list(INVISIBLE), ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
@pytest.mark.parametrize(("kind", "grade", "want"), GRADES)
def test_an_invisible_character_is_not_part_of_the_reply(char: str, kind: str, grade: str, want: str) -> None:
    places = [char + grade, grade + char, grade[:1] + char + grade[1:], char + grade + char * 3]
    places.append(f"<think>{char}{REASONING}</think>{char}\n{grade}")
    places.append(f"{REASONING}</think{char}>\n{grade}{char}")  # inside a tag: it is still the tag
    for reply in places:
        assert parse_grade(kind, reply) == want, repr(reply)


def test_every_listed_invisible_character_is_there() -> None:
    listed = [*range(0x200B, 0x2010), *range(0x2060, 0x2065), 0xFEFF]
    assert [ord(c) for c in INVISIBLE] == listed


@pytest.mark.parametrize(
    "reply",
    [
        "<think>It is CORRECT</think>",  # nothing after the reasoning
        "<think>It is CORRECT",  # a block that never closes: all reasoning
        "<thinking>\nINCORRECT\n",
        "It is CORRECT</think>",  # only reasoning, its opening left out
        "<think>x</think>Final verdict: CORRECT",  # prose after the reasoning
        "<think>x</think>ANSWER: CORRECT",
        "<think>x</think>CORRECT because it matches",
        "IN<think>x</think>CORRECT",  # a block splits words; it never glues them
        "COR<think>x</think>RECT",
        "CORRECT</think>INCORRECT<think>",
        "<answer>CORRECT</answer>",  # other tags are not reasoning
        "\u200b",
        "\ufeff\u200b \n",
        "CORRECT\u00ad",  # a soft hyphen is not in the list
        "CORRECT\u2066",
        "INCORRECT\u200bCORRECT",
        "<think>a</think> <think>b",
    ],
)
def test_what_remains_must_still_be_exactly_the_grade(reply: str) -> None:
    with pytest.raises(ScorerError, match="not a grade"):
        parse_grade("correct", reply)


@pytest.mark.parametrize(
    ("reply", "cause"),
    [
        ("<think>It is CORRECT", "it is all reasoning: a <think> block opens and never closes"),
        ("<THINKING>7", "it is all reasoning"),
        ("<think>x</think>", "nothing follows its reasoning"),
        ("x</think>\n", "nothing follows its reasoning"),
        ("\u200b", "it is empty: '\\u200b'"),
        ("", "it is empty"),
        (None, "it is empty"),
        ("<think>x</think>Final: CORRECT", "'Final: CORRECT' (the reply read without its reasoning"),
    ],
)
def test_the_cause_says_why(reply: str | None, cause: str) -> None:
    with pytest.raises(ScorerError) as exc:
        parse_grade("correct" if reply is None or "7" not in reply else "rubric", reply)
    assert cause in str(exc.value)


def test_a_long_reasoning_is_cut_in_the_cause() -> None:
    with pytest.raises(ScorerError) as exc:
        parse_grade("correct", "<think>" + "hmm " * 10_000)
    assert len(str(exc.value)) < 500 and str(exc.value).endswith("...'")


def test_nested_blocks_go_whole() -> None:
    reply = "<think>outer <thinking>inner CORRECT</thinking> still INCORRECT</think>\nCORRECT"
    assert parse_grade("correct", reply) == "correct"
    assert parse_grade("correct", "<think>a</think>x</think>INCORRECT") == "incorrect"
    deep = "<think>" * 20_000 + "CORRECT" + "</think>" * 20_000  # one pass, however deep
    assert parse_grade("correct", deep + "\nINCORRECT") == "incorrect"


@settings(max_examples=examples(200), deadline=None)
@given(
    reasoning=st.text(st.characters(blacklist_characters="<>"), max_size=60),
    open_=st.sampled_from(OPENS),
    close=st.sampled_from(CLOSES),
    invisible=st.lists(st.sampled_from(INVISIBLE), max_size=3),
    grade=st.sampled_from(["CORRECT", "INCORRECT", "correct", "Incorrect"]),
)
def test_property_the_grade_after_any_reasoning_is_read_and_incorrect_never_reads_correct(
    reasoning: str, open_: str, close: str, invisible: list[str], grade: str
) -> None:
    noise = "".join(invisible)
    reply = f"{noise}{open_}{reasoning}{close}\n{noise}{grade}{noise}"
    assert parse_grade("correct", reply) == grade.lower()


@settings(max_examples=examples(300), deadline=None)
@given(
    before=st.text(max_size=30),
    after=st.text(max_size=30),
    grade=st.sampled_from(["CORRECT", "INCORRECT", "7"]),
    invisible=st.lists(st.sampled_from(INVISIBLE), max_size=2),
)
def test_property_no_verdict_is_taken_from_prose(
    before: str, after: str, grade: str, invisible: list[str]
) -> None:
    """A reply that says a word besides the grade (after the reasoning) is never read as one."""
    prose = (before + after).translate(dict.fromkeys(map(ord, INVISIBLE)))
    assume(any(ch.isalnum() for ch in prose) and "<" not in prose and ">" not in prose)
    noise = "".join(invisible)
    kind = "rubric" if grade == "7" else "correct"
    with pytest.raises(ScorerError, match="not a grade"):
        parse_grade(kind, f"<think>r</think>{before}{noise} {grade} {after}")


@pytest.mark.parametrize("kind", ["correct", "rubric"])
def test_through_a_benchmark_a_reasoning_judge_grades_every_row(kind: str) -> None:
    replies = {"correct": ("CORRECT", "INCORRECT"), "rubric": ("9", "2")}[kind]

    def judge(messages: Any, params: Any) -> str:
        right = "Answer to grade: Paris" in messages[0]["content"]
        grade = replies[0] if right else replies[1]
        return f"\ufeff<think>Weighing it: CORRECT? INCORRECT? 5/10?</think>\n\n{grade}\u200b"

    arm = hb.Arm("fixed", lambda item, ctx: {"France": "Paris", "Peru": "Quito"}[item])
    ref = hb.Reference({"q1": "France", "q2": "Peru"}, labels=["Paris", "Lima"])
    scorer = hb.judge_scorer(hb.MockClient(judge), kind)
    bench = hb.benchmark(arm, ref, runs=RUNS, scorer=scorer)
    got = {(r.item, r.correct, r.failure_kind) for r in bench.rows}
    assert got == {("q1", True, None), ("q2", False, "wrong")}


# -- {item}: the item's fields, not a Python repr ---------------------------------------------

DOC = "The Normans were in Normandy, a region in France. Their capital was Rouen."
READING = {"document": DOC, "question": "Where were the Normans?"}


def _prompts(item: Any, template: str | None = None, output: str = "Normandy") -> list[str]:
    seen: list[str] = []

    def judge(messages: Any, params: Any) -> str:
        seen.append(messages[0]["content"])
        return "CORRECT"

    arm = hb.Arm("fixed", lambda item, ctx: output)
    ref = hb.Reference({"q1": item}, labels=[["Normandy", "in Normandy"]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hb.benchmark(arm, ref, runs=RUNS, scorer=hb.judge_scorer(hb.MockClient(judge), template=template))
    return seen


def test_a_reading_item_tells_the_judge_its_question_not_the_document() -> None:
    prompts = _prompts(READING)
    assert prompts and all("Question: Where were the Normans?\n" in p for p in prompts)
    assert not any(DOC in p or "{'document'" in p or "'question'" in p for p in prompts)
    assert "Reference answer: Normandy | in Normandy\n" in prompts[0]


def test_a_reading_item_built_by_qa_reference_is_rendered_as_its_question() -> None:
    from hrbench.reading import qa_reference

    ref = qa_reference([{"id": "n1", "context": DOC, "question": "Where?", "answers": ["Normandy"]}])
    (item,) = ref.items.values()
    assert render_item(item) == "Where?"


def test_the_document_only_where_the_template_asks_for_it() -> None:
    template = (
        "Document:\n{document}\nQuestion: {question}\nGold: {label}\nAnswer: {output}\nCORRECT or INCORRECT?"
    )
    prompts = _prompts(READING, template)
    assert prompts[0] == (
        f"Document:\n{DOC}\nQuestion: Where were the Normans?\nGold: Normandy | in Normandy\n"
        "Answer: Normandy\nCORRECT or INCORRECT?"
    )


@pytest.mark.parametrize(
    ("item", "shown"),
    [
        ("France", "France"),
        (READING, "Where were the Normans?"),
        ({"question": "Q?", "document": DOC, "title": "Normans"}, "question: Q?\ntitle: Normans"),
        (
            {"question": "Which city?", "choices": ["Paris", "Lima"]},
            'question: Which city?\nchoices: ["Paris", "Lima"]',
        ),
        ({"country": "France", "year": 1990, "capital": None}, "country: France\nyear: 1990\ncapital: null"),
        ({"question": "Où ?", "ok": True}, "question: Où ?\nok: true"),
        (42, "42"),
        (["a", "b"], '["a", "b"]'),
    ],
)
def test_render_item_is_the_fields_as_text(item: Any, shown: str) -> None:
    assert render_item(item) == shown
    assert "{'" not in render_item(item)  # never a Python repr


def test_a_mapping_item_reaches_the_judge_as_its_fields() -> None:
    prompts = _prompts({"country": "France", "hint": "a city"}, output="Paris")
    assert "Question: country: France\nhint: a city\n" in prompts[0]


def test_question_of_a_plain_item_is_the_item() -> None:
    prompts = _prompts("Where were the Normans?", "Q: {question} A: {output}")
    assert prompts[0] == "Q: Where were the Normans? A: Normandy"


@pytest.mark.parametrize(
    ("item", "template", "said"),
    [
        ("France", "{document} {output}", "is not a mapping with a 'document' field (it is str)"),
        ({"question": "Q?"}, "{document} {output}", "the item has no 'document' field"),
        ({"text": "Q?"}, "{question} {output}", "the item has no 'question' field"),
        ({"question": 3}, "{question} {output}", "the item's 'question' is not a string (it is int)"),
    ],
)
def test_a_field_the_item_lacks_is_refused_before_the_first_run_and_the_judge_is_not_asked(
    item: Any, template: str, said: str
) -> None:
    asked: list[Any] = []
    arm = hb.Arm("fixed", lambda item, ctx: "x")
    ref = hb.Reference({"q1": item}, labels=["x"])
    scorer = hb.judge_scorer(hb.MockClient(lambda m, p: asked.append(m) or "CORRECT"), template=template)
    refusal = r"scorer_settings\.template: names \{(document|question)\}, which item 'q1' lacks"
    with pytest.raises(hb.ConfigError, match=refusal) as refused:
        hb.benchmark(arm, ref, runs=RUNS, scorer=scorer)
    assert "(1 of 1 item(s) lack it: q1)" in str(refused.value) and asked == []
    with pytest.raises(ScorerError, match=re.escape(said)):  # the row's cause, were it asked
        scorer.prompt(item, "x", "x")


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("{output} {score}", "names {score}; a judge template may name only {item}, {question}, {document}"),
        ("{item.question} {output}", "names {item.question}"),
        ("{item[question]} {output}", "names {item[question]}"),
        ("{} {output}", "names {}"),
        ("{0} {output}", "names {0}"),
        ("{Document} {output}", "names {Document}"),
        ("{question} {document} {item}", "needs an {output} placeholder"),
        ("{output", "malformed template"),
        ("{output:%}", "cannot be filled (ValueError"),
        ("{output!x}", "cannot be filled"),
    ],
)
def test_a_bad_template_is_refused_naming_the_field_and_the_value(template: str, said: str) -> None:
    with pytest.raises(hb.ConfigError) as exc:
        hb.judge_scorer(hb.MockClient(lambda m, p: "CORRECT"), template=template)
    assert exc.value.field == "template"
    assert str(exc.value).startswith("template: ") and said in str(exc.value)
    assert repr(template) in str(exc.value)  # the value, as given


def test_a_template_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(hb.ConfigError, match="template: a judge template must be a string"):
        hb.judge_scorer(hb.MockClient(lambda m, p: "CORRECT"), template=["{output}"])  # type: ignore[arg-type]


def test_every_placeholder_is_accepted() -> None:
    template = " ".join(f"{{{p}}}" for p in PLACEHOLDERS)
    judge = hb.judge_scorer(hb.MockClient(lambda m, p: "CORRECT"), template=template)
    assert judge.fields == PLACEHOLDERS
    assert (
        judge.prompt(READING, "Normandy", ["Normandy"])
        == f"Where were the Normans? Where were the Normans? {DOC} Normandy Normandy"
    )


def test_a_template_field_the_items_lack_is_refused_before_the_first_run() -> None:
    """A judge template naming ``{document}`` on items with none: one refusal, no judge call."""
    calls: list[str] = []

    def reply(messages: list[dict[str, str]], params: dict[str, object]) -> str:
        calls.append(messages[0]["content"])
        return "CORRECT"

    judge = hb.judge_scorer(hb.MockClient(reply), template="Doc: {document}\nAnswer: {output}\nRef: {label}")
    arm = hb.Arm("fixed", lambda item, ctx: "Paris")
    ref = hb.Reference({"q1": "France", "q2": "Peru"}, labels=["Paris", "Lima"])
    with pytest.raises(
        ConfigError, match=r"scorer_settings\.template: names \{document\}, which item 'q1' lacks"
    ):
        hb.benchmark(arm, ref, runs=5, scorer=judge)
    assert calls == []
