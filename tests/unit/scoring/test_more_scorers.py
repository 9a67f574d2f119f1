"""The numeric, choice and pattern scorers: every written form, as families."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hrbench as hb
from hrbench.errors import ArmErrorWarning, ConfigError, ScorerError
from hrbench.scoring import read_numbers
from hrbench.scoring._choice import read_choice
from hrbench.specs import build_scorer


def verdict(s: hb.Scorer, output: object, label: object) -> tuple[bool | None, str | None]:
    r = s(None, output, label)
    return r.correct, r.failure_kind


# -- numeric -----------------------------------------------------------------------------------
NUM = hb.numeric_scorer()


@pytest.mark.parametrize(
    ("output", "label", "expected"),
    [
        ("42", 42, True),
        ("The answer is 42.", 42, True),
        ("I first got 40, but the answer is 42", 42, True),  # the last number
        ("The answer is 42, not 40", 42, False),  # ... is 40 here
        ("1,204", 1204, True),
        ("1\u00a0204", 1204, True),
        ("1{,}204", 1204, True),
        ("$1,204.50", 1204.5, True),
        ("29.00", 29, True),
        ("0.30", 0.3, True),
        ("-$12.6 million", -12.6, True),  # scale on one side only: read both ways
        ("-$12.6 million", -12600000, True),
        ("\u221212.6", -12.6, True),
        ("12.6", -12.6, False),
        ("-12.6", 12.6, False),
        ("from 10-12", 12, True),  # a range, not minus 12
        ("25%", 25, True),
        ("25%", 0.25, True),  # percent on one side only: read both ways
        ("25 percent", "25%", True),
        ("0.25", "25%", True),
        ("25%", "0.25%", False),  # the same mark on both sides: values compared
        ("1.5 million", "1.5 million", True),
        ("1.5 million", "1500 thousand", True),
        ("$12k", 12000, True),
        ("3.2bn", 3.2e9, True),
        ("four", 4, False),  # R15a: number words are not read
        ("(1,234)", 1234, True),  # R14b: brackets are not a sign by default
        ("(1,234)", -1234, False),  # R14a
        ("\uff14\uff12", 42, True),
        ("\u0664\u0662", 42, True),  # Arabic-Indic digits
    ],
)
def test_numeric_forms(output: str, label: object, expected: bool) -> None:
    assert NUM(None, output, label).correct is expected


@pytest.mark.parametrize(
    ("output", "label", "expected"),
    [
        ("(1,234)", -1234, True),
        ("$(9.8) million", -9.8, True),
        ("(25%)", -25, True),
        ("(1,234)", 1234, False),
    ],
)
def test_numeric_accounting_option(output: str, label: object, expected: bool) -> None:
    assert hb.numeric_scorer(accounting=True)(None, output, label).correct is expected


def test_numeric_tolerances() -> None:
    assert hb.numeric_scorer(abs_tol=0.01)(None, "3.145", 3.14).correct is True
    assert hb.numeric_scorer(abs_tol=0.001)(None, "3.145", 3.14).correct is False
    assert hb.numeric_scorer(rel_tol=0.01)(None, "101", 100).correct is True
    assert hb.numeric_scorer(rel_tol=0.01)(None, "102", 100).correct is False
    # a fraction of the label, not of the reply: 10% of 100 is 10 either side
    assert hb.numeric_scorer(rel_tol=0.1)(None, "110.5", 100).correct is False
    assert hb.numeric_scorer(rel_tol=0.1)(None, "90.5", 100).correct is True
    # the default: equal up to float64 noise (0.1 + 0.2 - 0.2 is 0.10000000000000003), no more
    # (tests/unit/scoring/test_numeric_noise.py)
    assert hb.numeric_scorer()(None, "0.1", 0.1 + 0.2 - 0.2).correct is True
    assert hb.numeric_scorer()(None, "0.1000000000001", 0.1).correct is False


@given(
    st.integers(min_value=-(10**12), max_value=10**12),
    st.sampled_from([",", "\u00a0", "\u2009", "\u202f", "\u2007"]),
)
def test_property_numeric_reads_any_grouping_and_sign(n: int, sep: str) -> None:
    grouped = f"{n:,}".replace(",", sep).replace("-", "\u2212")
    assert NUM(None, f"So the total is {grouped} units.", n).correct is True
    if n:
        assert NUM(None, f"So the total is {grouped} units.", -n).correct is False


# the seeds are silent: "1e6" is read as 1000000, never as 6 against the label 1000000
@pytest.mark.parametrize(
    ("output", "label", "outcome"),
    [
        ("1e6", 1000000, "1000000"),
        ("1E6", 1000000, "1000000"),
        ("1e+06", 1000000, "1000000"),
        ("1e-3", 0.001, "0.001"),
        ("5e-1", 0.5, "0.5"),
        ("2.5e-3", 0.0025, "0.0025"),
        ("-2.5E+3", -2500, "-2500"),
        ("\u22122.5e\u22123", -0.0025, "-0.0025"),  # minus signs of every form
        ("The answer is 6.02e23.", "602000000000000000000000", "602000000000000000000000"),
        ("1.2\u00d710^3", 1200, "1200"),
        ("1.2 x 10^3", 1200, "1200"),
        ("1.2 * 10**-3", 0.0012, "0.0012"),
        ("1e5 units", "100000", "100000"),
        ("1e6", "1 million", "1000000"),  # scale on the label's side only
        ("2.5e1%", 0.25, "25%"),
    ],
)
def test_numeric_reads_scientific_notation_as_its_value(output: str, label: object, outcome: str) -> None:
    r = NUM(None, output, label)
    assert (r.correct, r.outcome) == (True, outcome)


@pytest.mark.parametrize(
    ("output", "numbers"),
    [
        ("3e4f", ["3", "4"]),  # an e followed by a letter: a hash, not an exponent
        ("1e9999", ["1", "9999"]),  # beyond any float: not an exponent
        ("the e-mail from 2021e", ["2021"]),
        ("x10^3", ["1000"]),  # no number before the sign: a power, 10^3, read as its value
        ("3 eggs", ["3"]),
    ],
)
def test_numeric_reads_no_exponent_where_none_is_written(output: str, numbers: list[str]) -> None:
    assert [repr(q)[9:-1] for q in read_numbers(output)] == numbers


def test_exact_still_refuses_scientific_notation_for_a_plain_label() -> None:
    # seed 000: the label 100000 accepts "100000" (not "1e+05"); only `numeric` reads exponents
    assert hb.exact_scorer()(None, "1e+05", 100000).correct is False
    assert NUM(None, "1e+05", 100000).correct is True


@given(
    # normal floats: a subnormal's repr keeps fewer digits than %e shows ("5e-324" is 4.94066e-324)
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x == 0 or abs(x) >= sys.float_info.min),
    st.sampled_from(["%e", "%g", "%E", "%.3e", "repr"]),
)
def test_property_numeric_reads_floats_in_every_python_format(x: float, form: str) -> None:
    text = repr(x) if form == "repr" else form % x
    # %e and %g keep 6 significant digits (%.3e keeps 4): a relative error of at most 5e-6
    # (5e-4); repr is the label's own digits, so it must match exactly
    tol = 0.0 if form == "repr" else (1e-3 if form == "%.3e" else 1e-5)
    r = hb.numeric_scorer(rel_tol=tol)(None, f"So it is {text}.", x)
    assert r.correct is True, (text, r)


def test_numeric_which_any() -> None:
    assert hb.numeric_scorer(which="any")(None, "The answer is 42, not 40", 42).correct is True


def test_numeric_failure_kinds_and_errors() -> None:
    assert verdict(NUM, "I cannot tell.", 3) == (False, "parse_failure")
    assert verdict(NUM, "NOT_IN_DOCUMENT", "NOT_IN_DOCUMENT") == (True, None)
    assert verdict(NUM, "The document does not say.", 3) == (False, "not_in_document")
    assert verdict(NUM, {"text": "3", "failure_kind": "refusal"}, 3) == (False, "refusal")
    assert verdict(NUM, hb.Result(text=None, ok=False, error="HTTP 500"), 3) == (False, "error")
    assert verdict(NUM, "3", None) == (None, None)
    with pytest.raises(ScorerError, match="label 'Paris' holds 0 numbers"):
        NUM(None, "3", "Paris")
    for bad in ({"abs_tol": -1}, {"rel_tol": "x"}, {"which": "first"}):
        with pytest.raises(ConfigError):
            hb.numeric_scorer(**bad)  # type: ignore[arg-type]


def test_read_numbers_marks() -> None:
    got = read_numbers("up 12.5% to $1,204.50 million and 3 thousand")
    assert [(str(q.value), q.percent, q.scaled) for q in got] == [
        ("12.5", True, False),
        ("1204500000.0", False, True),
        ("3000", False, True),
    ]


# -- choice ------------------------------------------------------------------------------------
CHOICE = hb.choice_scorer("ABCD")

WRITTEN_FORMS = [
    "B",
    "b",
    "(B)",
    "(b)",
    "[B]",
    "**B**",
    "B.",
    "B)",
    "B) 1918",
    "B. 1918",
    "B: 1918",
    "Answer: B",
    "answer: (B)",
    "Answer: B) 1918",
    "The answer is B",
    "The correct answer is (B).",
    "**Final answer: B**",
    "Final Answer: **B**",
    "I think the answer would be B because the treaty was signed in 1918.",
    "Option B",
    "Option A is wrong; the answer is B.",
    "Let me go through them.\nA) no\nB) yes, 1918\nAnswer: B",
    "Reasoning...\n\nB) 1918",
    "\uff22",  # a full-width B
    "I believe (B) is right.",
]


@pytest.mark.parametrize("output", WRITTEN_FORMS)
def test_choice_reads_every_common_form(output: str) -> None:
    assert verdict(CHOICE, output, "B") == (True, None)
    assert verdict(CHOICE, output, "C") == (False, "wrong")


@pytest.mark.parametrize(
    "output",
    [
        "A or C",  # no form names a letter
        "(A) or (C)",
        "Answer: A. Actually, the answer is C.",
        "I think the answer is a tough one.",  # 'a' is an article
        "I cannot decide.",  # 'I' is a pronoun
        "None of these.",
        "The answer is E",  # not an option of ABCD
        "",
    ],
)
def test_choice_refuses_two_letters_or_none(output: str) -> None:
    assert verdict(CHOICE, output, "A")[1] == "parse_failure"


# README: "a reply naming two letters is refused"; a cued letter followed by a second one
# ("The answer is A or B") must not pick the first: a hedge never scores right
HEDGES = [
    "The answer is {a} or {b}.",
    "Answer: {a} or {b}",
    "The answer is ({a}) or ({b})",
    "Answer: {a}, {b}",
    "answer: {a}/{b}",
    "Answer: {a} and {b}",
    "Answer: **{a}** or **{b}**",
    "The answer is {a} or maybe {b}",
    "Final answer: {a} & {b}",
    "Option {a} or {b}",
]
NOT_A_SECOND_PICK = [
    "The answer is {a}, not {b}.",  # B is named, not picked
    "The answer is {a}. Option {b} is wrong.",
    "Answer: {a} and I am sure of it.",  # 'I' is a pronoun
    "Answer: {a} and a short note.",  # 'a' is an article
    "Answer: {a}\n{b}) is a distractor",
]


@pytest.mark.parametrize("form", HEDGES)
@pytest.mark.parametrize(("a", "b"), [("A", "B"), ("B", "A"), ("C", "D"), ("D", "B")])
def test_choice_refuses_a_cued_letter_joined_to_another(form: str, a: str, b: str) -> None:
    text = form.format(a=a, b=b)
    assert read_choice(text, "ABCD") == {a, b}, text
    for label in (a, b):  # right for neither of the two letters it hedges between
        assert verdict(CHOICE, text, label) == (False, "parse_failure"), text


@pytest.mark.parametrize("form", NOT_A_SECOND_PICK)
@pytest.mark.parametrize(("a", "b"), [("A", "B"), ("B", "A"), ("C", "D")])
def test_choice_a_letter_named_but_not_picked_is_not_read(form: str, a: str, b: str) -> None:
    text = form.format(a=a, b=b)
    assert verdict(CHOICE, text, a) == (True, None), text
    assert verdict(CHOICE, text, b) == (False, "wrong"), text


def test_choice_label_forms_and_errors() -> None:
    assert verdict(CHOICE, "B", ["B", "C"]) == (True, None)
    assert verdict(CHOICE, "(b)", "(B)") == (True, None)
    with pytest.raises(ScorerError, match="not one of the letters"):
        CHOICE(None, "B", "Paris")
    with pytest.raises(ConfigError, match="letters"):
        hb.choice_scorer("AAB")
    assert hb.choice_scorer("ABCDEFGHIJ")(None, "Answer: J", "J").correct is True
    assert read_choice("Answer: (B)") == {"B"}


@given(st.sampled_from("ABCDEFGHIJ"), st.sampled_from(WRITTEN_FORMS))
def test_property_choice_forms_work_for_every_letter(letter: str, form: str) -> None:
    if "A is wrong" in form or "A) no" in form:
        return
    text = re.sub(r"\bB\b", letter, form)
    text = re.sub(r"\bb\b", letter.lower(), text).replace("\uff22", chr(0xFF21 + ord(letter) - 65))
    assert read_choice(text) == {letter}, text


# -- pattern -----------------------------------------------------------------------------------
def test_pattern_named_group_first_group_and_whole_match() -> None:
    named = hb.pattern_scorer(r"ANSWER:\s*(?P<answer>\w+)")
    assert verdict(named, "blah\nAnswer: Paris", "Paris") == (True, None)
    first = hb.pattern_scorer(r"ANSWER:\s*(\w+)")
    assert verdict(first, "answer: paris", "Paris") == (True, None)
    whole = hb.pattern_scorer(r"\d+", then="numeric")
    assert verdict(whole, "I count 12 then 14", 14) == (True, None)


def test_pattern_last_or_first_match() -> None:
    text = "Answer: 3\nwait, recount\nAnswer: 4"
    assert hb.pattern_scorer(r"Answer: (\d+)", then="numeric")(None, text, 4).correct is True
    assert hb.pattern_scorer(r"Answer: (\d+)", then="numeric", which="first")(None, text, 3).correct is True


@pytest.mark.parametrize(
    ("reply", "last", "first"),
    [
        ("3.0 apples", "0", "3"),  # the documented non-overlapping matches
        ("3.25 apples", "25", "3"),
        ("1,204 units", "204", "1"),
        ("-7 degrees", "7", "7"),
        ("about 12 or 13", "13", "12"),
    ],
)
def test_pattern_last_is_the_last_non_overlapping_match_as_documented(
    reply: str, last: str, first: str
) -> None:
    assert [m.group(1) for m in re.finditer(r"(\d+)", reply)][-1] == last  # what the docs describe
    assert hb.pattern_scorer(r"(\d+)")(None, reply, last).outcome == last
    assert hb.pattern_scorer(r"(\d+)", which="first")(None, reply, first).outcome == first
    # the pattern the docs advise for a decimal number takes it whole
    whole = hb.pattern_scorer(r"(-?\d+(?:\.\d+)?)", then="numeric", which="first")
    assert whole(None, reply, float(re.search(r"-?\d+(?:\.\d+)?", reply).group())).correct is True


def test_pattern_then_scorers_and_settings() -> None:
    s = hb.pattern_scorer(r"<answer>(.*?)</answer>", then="answer_contains")
    assert verdict(s, "<answer>It was 1,204 people.</answer>", 1204) == (True, None)
    s = hb.pattern_scorer(r"FINAL:(.*)", then="numeric", then_settings={"rel_tol": 0.01})
    assert verdict(s, "FINAL: 101", 100) == (True, None)
    s = hb.pattern_scorer(r"choice=(.*)", then=hb.choice_scorer("AB"))
    assert verdict(s, "choice=(B)", "B") == (True, None)
    assert verdict(s, "choice=", "B") == (False, "parse_failure")
    assert verdict(s, "no pattern here", "B") == (False, "parse_failure")
    assert verdict(s, {"text": "choice=B", "failure_kind": "refusal"}, "B") == (False, "refusal")


def test_pattern_errors_name_the_field() -> None:
    with pytest.raises(ConfigError, match="pattern.*does not compile"):
        hb.pattern_scorer(r"(unclosed")
    with pytest.raises(ConfigError, match="which"):
        hb.pattern_scorer(r"x", which="middle")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="scorer"):
        hb.pattern_scorer(r"x", then="nope")


# -- from specs, TOML and the hrb command ---------------------------------------------------------
def test_built_by_name_with_settings() -> None:
    assert build_scorer("numeric", {"rel_tol": 0.05})(None, "104", 100).correct is True
    assert build_scorer("choice")(None, "Answer: (J)", "J").correct is True
    assert build_scorer("pattern", {"pattern": r"=(\d+)", "then": "numeric"})(None, "x=5", 5).correct is True
    with pytest.raises(ConfigError, match="scorer_settings"):
        build_scorer("numeric", {"tolerance": 1})


def test_pattern_by_name_without_a_pattern_names_the_setting() -> None:
    with pytest.raises(ConfigError, match=r"scorer_settings\.pattern.*needs a regex"):
        build_scorer("pattern")


NID_SPELLINGS = [
    "NOT_IN_DOCUMENT",
    "not_in_document",
    "  Not_In_Document  ",
    "NOT_IN_DOCUMENT.",
    "NOT_IN_DOCUMENT!",
    '"NOT_IN_DOCUMENT"',
    "\u201cNOT_IN_DOCUMENT.\u201d",
]
NOT_NID = ["NOT_IN_DOCUMENTS", "NOT_IN", "IN_DOCUMENT", "NOT_IN_DOCUMENT_X", "xNOT_IN_DOCUMENT"]


def _reads_as_nid(scorer: hb.Scorer, label: str) -> bool:
    """Whether ``scorer`` takes ``label`` as NOT_IN_DOCUMENT: a not-found reply is then right."""
    try:
        return scorer(None, "The document does not say.", label).correct is True
    except ScorerError:  # the numeric scorer: a label with no number that is not the marker
        return False


@pytest.mark.parametrize("label", NID_SPELLINGS + NOT_NID)
def test_numeric_and_answer_contains_read_the_not_in_document_label_alike(label: str) -> None:
    # one rule (hrbench.scoring._answer.is_not_in_document_label); the numeric scorer once used
    # strip().rstrip(".") and refused a quoted or exclaimed label that answer_contains accepted
    contains, numeric = hb.answer_scorer(), hb.numeric_scorer()
    want = label in NID_SPELLINGS
    assert _reads_as_nid(contains, label) is want
    assert _reads_as_nid(numeric, label) is want


# -- choice: a cued letter in dress, final marks first (shared cases S05-S08) --------------------
DRESSED = [
    "{x}",
    "${x}",
    "${x}$",
    "({x})",
    "[{x}]",
    "**{x}**",
    "*{x}*",
    "_{x}_",
    '"{x}"',
    "'{x}'",
    "`{x}`",
    "\\boxed{{{x}}}",
    "$\\boxed{{{x}}}$",
    "\\boxed{{\\text{{{x}}}}}",
    "\\boxed{{\\textbf{{{x}}}}}",
    "\\boxed{{\\mathrm{{{x}}}}}",
    "<answer>{x}</answer>",
    "**({x})**",
]
CUES = [
    "Answer: ",
    "ANSWER: ",
    "The answer is ",
    "Final answer: ",
    "**Answer:** ",
    "**Answer**: ",
    "answer = ",
]
ELSEWHERE = [
    "I first considered ({y}), but it fails.",
    "Option ({y}) is tempting.",
    "**{y}** looked right.",
    "{y}) no",
]


@given(
    st.sampled_from("ABCD"),
    st.sampled_from("ABCD"),
    st.sampled_from(DRESSED),
    st.sampled_from(CUES),
    st.sampled_from(ELSEWHERE),
)
def test_property_a_dressed_cued_letter_is_read_before_letters_marked_elsewhere(
    x: str, y: str, dress: str, cue: str, elsewhere: str
) -> None:
    text = elsewhere.format(y=y) + "\n" + cue + dress.format(x=x)
    assert read_choice(text, "ABCD") == {x}, text
    assert verdict(CHOICE, text, x) == (True, None), text
    if x != y:  # the rejected option is never counted right
        assert verdict(CHOICE, text, y) == (False, "wrong"), text


@given(st.sampled_from("ABCD"), st.sampled_from(DRESSED))
def test_property_a_reply_that_is_a_dressed_letter_is_read(x: str, dress: str) -> None:
    assert read_choice(dress.format(x=x), "ABCD") == {x}


@given(
    st.sampled_from("ABCD"),
    st.sampled_from(["\\boxed{{{x}}}", "<answer>{x}</answer>", "\\boxed{{\\text{{{x}}}}}"]),
)
def test_property_a_box_or_answer_tag_anywhere_is_a_final_mark(x: str, mark: str) -> None:
    for y in "ABCD":
        text = f"Option ({y}) is tempting, but thus {mark.format(x=x)}."
        assert read_choice(text, "ABCD") == {x}, text


@pytest.mark.parametrize("cue", ["The answer is ", "Answer: ", "the correct answer is "])
@pytest.mark.parametrize("dress", ["({x})", "[{x}]", "**({x})**"])
def test_a_lower_case_letter_in_brackets_after_a_cue_counts(cue: str, dress: str) -> None:
    for x in "abcd":
        assert read_choice(cue + dress.format(x=x) + ".", "ABCD") == {x.upper()}


@pytest.mark.parametrize(
    "output",
    [
        "ANSWER: b",  # a bare lower-case letter after a cue: refused
        "The answer is unclear, but (A) fits.",  # a cue with no readable letter never falls back
        "Answer: $\\mathbf{}$. I liked (B).",
        "The answer is E, so (A).",  # E is not an option of ABCD
        "Answer: A\n\\boxed{B}",  # two final marks
        "<answer>A</answer> ... ANSWER: C",
        "Antwort: C",  # the cue is the English word
        "R\u00e9ponse : C",
        "The answer is a good one, (B) maybe.",  # the article 'a'
    ],
)
def test_choice_documented_refusals(output: str) -> None:
    assert verdict(CHOICE, output, "A")[1] == "parse_failure", read_choice(output, "ABCD")
    assert verdict(CHOICE, output, "B")[1] == "parse_failure"
    assert verdict(CHOICE, output, "C")[1] == "parse_failure"


# -- pattern: the group that took part, and a time limit (shared cases S11, S12) ----------------
ALTERNATIVES = [r"ANSWER: (\d+)", r"\\boxed\{(\d+)\}", r"<answer>(\d+)</answer>", r"Final: \*\*(\d+)\*\*"]
WRITTEN = ["ANSWER: {n}", "\\boxed{{{n}}}", "<answer>{n}</answer>", "Final: **{n}**"]


@given(
    st.permutations(range(4)),
    st.integers(min_value=0, max_value=4),
    st.integers(min_value=0, max_value=10**6),
)
def test_property_the_answer_is_the_first_group_that_took_part(order: list[int], k: int, n: int) -> None:
    k = min(k, 3)
    pattern = "|".join(ALTERNATIVES[i] for i in order)
    s = hb.pattern_scorer(pattern, then="numeric")
    reply = "Some working first.\n" + WRITTEN[order[k]].format(n=n)
    assert verdict(s, reply, n) == (True, None), (pattern, reply)
    assert verdict(s, "no answer here", n) == (False, "parse_failure")


def test_pattern_nested_and_optional_groups() -> None:
    assert hb.pattern_scorer(r"(ANSWER: (\d+))|x(y)?")(None, "ANSWER: 7", "ANSWER: 7").correct is True
    assert verdict(hb.pattern_scorer(r"ANSWER:\s*(\d+)?", then="numeric"), "ANSWER: ", 1) == (
        False,
        "parse_failure",
    )
    assert verdict(hb.pattern_scorer(r"ANSWER:\s*(\d*)"), "ANSWER: ", 1) == (False, "parse_failure")


def test_a_pattern_past_its_time_limit_is_an_error_naming_the_pattern_and_the_limit() -> None:
    s = hb.pattern_scorer(r"(a|a)+$", timeout=0.05)
    with pytest.raises(ScorerError, match=r"'\(a\|a\)\+\$' took longer than its time limit of 0\.05 s"):
        s(None, "a" * 40 + "b", "a")
    assert s.spec["settings"]["timeout"] == 0.05
    assert "timeout" not in hb.pattern_scorer(r"x").spec["settings"]  # the default keeps old specs' keys
    arm = hb.Arm("backtracks", lambda item, ctx: "a" * 40 + "b" if item == "q1" else "a")
    ref = hb.Reference({"slow": "q1", "fast": "q2"}, labels=["a", "a"])
    with pytest.warns(ArmErrorWarning, match=r"time limit of 0\.05 s"):
        bench = hb.benchmark(arm, ref, runs=5, scorer=s)
    rows = {r.item: r for r in bench.rows}
    assert (rows["slow"].correct, rows["slow"].failure_kind) == (False, "error")
    assert (rows["fast"].correct, rows["fast"].failure_kind) == (True, None)
    assert "scorer 'pattern'" in bench.error_note()


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "1", True])
def test_pattern_timeout_must_be_seconds_above_zero(bad: object) -> None:
    with pytest.raises(ConfigError, match="timeout"):
        hb.pattern_scorer(r"x", timeout=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="timeout"):
        build_scorer("pattern", {"pattern": "x", "timeout": bad})
