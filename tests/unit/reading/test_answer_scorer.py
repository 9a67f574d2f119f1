"""Seed 001: the ``answer_contains`` scorer; every shared ``answer_contains`` case and its family."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hrbench.reading import answer_scorer, contains_answer, example_document, fold_answer, stop_kind
from hrbench.records import Answer, Result, Score, Step
from tests._examples import examples
from tests.conftest import load_cases

CASES = load_cases("answer_contains")
S = answer_scorer()
ITEM = {"question": "How many units?", "document": example_document()}


def score(output: object, label: object) -> Score:
    return S(ITEM, output, label)


def right(output: object, label: object) -> bool:
    s = score(output, label)
    assert (s.correct is True) == (s.failure_kind is None), s
    return bool(s.correct)


# -- seed 001's examples -----------------------------------------------------------------------
def test_seed001_examples() -> None:
    assert S.name == "answer_contains"
    assert score("Sheffield produced 12,400 units.", "12400").correct is True
    assert score("NOT_IN_DOCUMENT", "12400").failure_kind == "not_in_document"
    assert score("NOT_IN_DOCUMENT", "NOT_IN_DOCUMENT").correct is True


@pytest.mark.parametrize(
    ("output", "label", "expected"),
    [
        ("1,204", 1204, True),
        ("1\u00a0204", 1204, True),
        ("1\u2009204", 1204, True),
        ("1204", 1204, True),
        ("100,000", 100000, True),
        ("It is 145.2", 45.2, False),
        ("It is 45.25", 45.2, False),
        ("It is .12", 12, False),
        ("It is -12", 12, False),
        ("It measured 45.2m", 45.2, True),
        ("a 5mg dose", 5, True),
        ("between 12-15 of them", 15, True),
    ],
)
def test_seed001_rules(output: str, label: object, expected: bool) -> None:
    assert right(output, label) is expected


# -- every shared case, by id ------------------------------------------------------------------
ANSWER_CONTAINS_CASE_IDS = [
    "H01a",
    "H01b",
    "H01d",
    "H01f",
    "H02a",
    "H02b",
    "H02c",
    "H02e",
    "H03b",
    "H03d",
    "H04a",
    "H04b",
    "H04d",
    "H04e",
    "H04f",
    "H05a",
    "H05d",
    "H09f",
    "H10a",
    "H10c",
    "H10d",
    "H10f",
    "H11a",
    "H11c",
    "H11i",
    "H13c",
    "H13e",
    "L01d",
    "R09c",
    "R09d",
    "R10c",
    "R10d",
    "R10e",
    "R10g",
    "R10i",
    "R12a",
    "R12c",
    "R13a",
    "R13c",
    "R14a",
    "R14b",
    "R14c",
    "R15a",
    "R15b",
    "R15c",
    "R16a",
    "R16b",
    "R16c",
    "R16d",
    "R16e",
    "R16f",
    "I07s",
    "S01e",
    "S01g",
    "S02d",
    "S03f",
    "S04d",
]


def test_every_answer_contains_case_is_here() -> None:
    """The shared cases this file tests, named; a case added or dropped upstream fails here."""
    assert [c["id"] for c in CASES] == ANSWER_CONTAINS_CASE_IDS


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_shared_answer_contains_case(case: dict) -> None:
    s = score(case["output"], case["label"])
    assert s.correct is case["expected_correct"], case["rule"]
    assert s.failure_kind == case["expected_failure_kind"], case["rule"]


def test_every_case_kind_is_covered() -> None:
    assert len(CASES) >= 28


# -- H01: thousands separators (comma, U+00A0, U+2009, U+202F), and what is not one -----------
SEPARATORS = [
    ",",
    "\u00a0",
    "\u2009",
    "\u202f",
    "\u2007",
    "\uff0c",
    "{,}",
    "\\,",
]  # U+FF0C: a comma after NFKC; LaTeX (R13a)


def group(n: int, sep: str) -> str:
    return f"{n:,}".replace(",", sep)


@pytest.mark.parametrize("sep", SEPARATORS)
@pytest.mark.parametrize("n", [1000, 8000, 12400, 100000, 1204567, 1000000000])
def test_h01_separators_fold_alike(sep: str, n: int) -> None:
    assert fold_answer(group(n, sep)) == str(n)
    assert right(f"Total: {group(n, sep)} units", n)
    assert right(f"It cost ${group(n, sep)}.", n)


@given(st.integers(min_value=0, max_value=10**15), st.sampled_from(SEPARATORS))
def test_h01_property_grouped_equals_plain(n: int, sep: str) -> None:
    assert fold_answer(group(n, sep)) == fold_answer(str(n)) == str(n)
    assert contains_answer(fold_answer(f"about {group(n, sep)} people"), str(n))


@given(st.integers(min_value=1000, max_value=10**12))
def test_h01_property_three_forms_agree(n: int) -> None:
    forms = {fold_answer(group(n, s)) for s in (",", "\u00a0", "\u2009", "\u202f")}
    assert forms == {fold_answer(str(n))}


@pytest.mark.parametrize(
    ("output", "label"),
    [
        ("The solutions are 357.", "3,5,7"),  # H01f
        ("The solutions are 357.", "3\u00a05\u00a07"),
        ("The pair is 01", "0,1"),
        ("12345", "1,2345"),  # a group of four digits is not a thousands group
        ("1234567", "1234,567"),  # a lead of four digits is not either
        ("1204", "1 204"),  # an ordinary space is not a separator (seed 001 names no-break and thin)
        ("1000", "1,000,0"),  # a short last group: not a grouped number
    ],
)
def test_h01f_lists_are_not_grouped_numbers(output: str, label: str) -> None:
    assert not right(output, label)


def test_h01f_list_forms_still_match_themselves() -> None:
    assert right("The solutions are 3,5,7.", "3,5,7")
    assert fold_answer("3,5,7") == "3,5,7"
    assert fold_answer("1 204") == "1 204"


# -- H02/H03: a number is matched whole --------------------------------------------------------
@pytest.mark.parametrize(
    ("output", "label"),
    [
        ("ANSWER: 711", 11),
        ("got 25 here", 5),
        ("The rate is 0.12", 12),
        ("The rate is .12", 12),
        ("The value is 314", 3.14),
        ("The answer is 100", 10),
        ("It is 145.2", 45.2),
        ("It is 45.25", 45.2),
        ("In 2019", 19),
        ("In 2019", 201),
        ("1,204 units", 204),
        ("1,204 units", 1),
        ("12.5%", 12),
        ("3.14159", 3.14),
        ("version 10", 1),
    ],
)
def test_h02_number_not_found_inside_a_larger_one(output: str, label: object) -> None:
    assert not right(output, label)


digits = st.text(alphabet="0123456789", min_size=1, max_size=6)


@given(digits, digits)
@example("7", "11")
@example("1", "45.2")
def test_h02_property_never_inside_a_larger_number(pre: str, lab: str) -> None:
    label = lab.lstrip("0") or "0"
    outputs = [f"{pre}{label}", f"{label}{pre}", f"-{label}", f"x -{label} y"]
    if pre.strip("0") or label != "0":  # "0.0" is 0: trailing zeros do not count
        outputs.append(f"{pre}.{label}")
    for output in outputs:
        assert not contains_answer(fold_answer(output), fold_answer(label)), output
    if pre.strip("0"):  # "12.0" is 12 (trailing zeros do not count), so only non-zero decimals
        assert not contains_answer(fold_answer(f"{label}.{pre}"), fold_answer(label))


@given(st.integers(min_value=-(10**9), max_value=10**9), st.sampled_from([" ", "(", "$", "~", "= ", "\n"]))
def test_h02_property_found_when_whole(n: int, before: str) -> None:
    assert contains_answer(fold_answer(f"it is{before}{n} units."), str(n))


# -- H02e/H05: units and currency against a number do not hide it ------------------------------
@pytest.mark.parametrize(
    "unit", ["m", "km", "kg", "mg", "%", " km", " kg", "\u00b0C", "m\u00b2", "x", " million", "bn"]
)
def test_h02e_units_do_not_hide_a_number(unit: str) -> None:
    assert right(f"It measured 45.2{unit}", 45.2)
    assert right(f"It measured 45.20{unit}", 45.2)
    assert not right(f"It measured 45.25{unit}", 45.2)


@pytest.mark.parametrize(
    "currency", ["$", "\u00a3", "\u20ac", "\u00a5", "US$", "\u20b9", "\uff04", "\u20ac "]
)
def test_h05_currency_does_not_hide_a_number(currency: str) -> None:
    assert right(f"So the total cost is {currency}29.", 29)
    assert right(f"The house sold for {currency}8,000.", 8000)
    assert right(f"about {currency}1\u202f204", 1204)


@pytest.mark.parametrize(
    ("output", "label", "expected"),
    [
        ("-$12.6 million", -12.6, True),
        ("-$12.6 million", 12.6, False),
        ("\u2212\u20ac5", -5, True),
        ("+$5", 5, True),
    ],
)
def test_h05_sign_before_currency_stays_with_the_number(output: str, label: float, expected: bool) -> None:
    assert right(output, label) is expected


@pytest.mark.parametrize("output", ["$29.", "29.", "It was 29.\nNext", "(29).", "29!", "29, then"])
def test_h05a_full_stop_is_not_a_decimal_point(output: str) -> None:
    assert right(output, 29)


@pytest.mark.parametrize(
    ("output", "label", "expected"),
    [
        ("$29.00", 29, True),  # trailing zeros of a decimal do not count
        ("29.0", 29, True),
        ("29.000 units", "29", True),
        ("29.50", 29.5, True),
        ("29.5", "29.50", True),
        ("29.05", 29.5, False),
        ("290", 29, False),
        ("29.001", 29, False),
        ("0.5", ".5", True),  # ".5" is "0.5"
        ("about .5", 0.5, True),
    ],
)
def test_decided_trailing_zeros(output: str, label: object, expected: bool) -> None:
    assert right(output, label) is expected


# -- H04: the minus sign and ranges ------------------------------------------------------------
@pytest.mark.parametrize(
    ("output", "label", "expected"),
    [
        ("5", -5, False),
        ("-5", 5, False),
        ("\u22125", 5, False),  # U+2212 is a minus
        ("\u22125", -5, True),
        ("fell to -3 degrees", -3, True),
        ("fell to -3 degrees", 3, False),
        ("from 5 to -12", -12, True),
        ("from 5 to -12", 12, False),
        ("10-12 players", 12, True),
        ("10-12 players", -12, False),
        ("10-12 players", 10, True),
        ("2 - 12 players", 12, True),
        ("2 - 12 players", -12, False),
        ("10\u201312 players", 12, True),  # en dash
        ("10\u201312 players", -12, False),
        ("10 \u2013 12 players", 12, True),
        ("10\u221212", 12, True),  # a minus sign between two numbers is a range too
        ("5km-12km", 12, True),
        ("5km-12km", -12, False),
        ("10%-12%", 12, True),
        ("10% - 12%", -12, False),
        ("COVID-19", 19, True),  # a hyphen after a letter joins a word
        ("COVID-19", -19, False),
        ("B-52 bomber", 52, True),
        ("(-4)", -4, True),
        ("x=-4", -4, True),
        ("x=-4", 4, False),
        ("\u00a3-4", -4, True),
    ],
)
def test_h04_minus_and_ranges(output: str, label: object, expected: bool) -> None:
    assert right(output, label) is expected


# -- H08 and other scripts: NFKC, any script's digits, case folding, quotes --------------------
@pytest.mark.parametrize(
    "output",
    [
        "\uff11\uff12\uff14\uff10\uff10",  # full-width
        "\uff11\uff12\uff0c\uff14\uff10\uff10",  # full-width with a full-width comma
        "\u0661\u0662\u0664\u0660\u0660",  # Arabic-Indic
        "\u06f1\u06f2\u06f4\u06f0\u06f0",  # Persian
        "\u0967\u0968\u096a\u0966\u0966",  # Devanagari
        "\U0001d7cf\U0001d7d0\U0001d7d2\U0001d7ce\U0001d7ce",  # mathematical bold
        "\u0e51\u0e52,\u0e54\u0e50\u0e50",  # Thai, grouped
        "12\u00a0400",
    ],
)
def test_other_scripts_digits(output: str) -> None:
    assert right(f"Sheffield produced {output} units", 12400)
    assert not right(f"Sheffield produced {output}1 units", 12400)


@pytest.mark.parametrize(
    ("output", "label", "expected"),
    [
        ("STRASSE", "Stra\u00dfe", True),
        ("\u0131stanbul", "Istanbul", False),
        ("can\u2019t", "can't", True),
        ("\u201cquoted\u201d", '"quoted"', True),
        ("cafe\u0301", "caf\u00e9", True),
        ("SYBILLA OF NORMANDY", "Sybilla of Normandy", True),
        ("  Sybilla   of\nNormandy ", "Sybilla of Normandy", True),
        ("The Parisian", "Paris", False),  # a word label is matched whole (SPEC section 6)
    ],
)
def test_folding_text(output: str, label: str, expected: bool) -> None:
    assert right(output, label) is expected


@pytest.mark.parametrize(
    "output", ["roughly 1e5 people", "1E5", "1.0e5", "1e+05", "10^5", "one hundred thousand"]
)
def test_l01d_scientific_notation_is_not_expanded(output: str) -> None:
    assert not right(output, 100000)


@pytest.mark.parametrize(
    ("label", "output"), [(1e5, "100,000"), (100000.0, "100000"), (29.0, "29"), (-0.5, "-0.5")]
)
def test_number_labels_in_plain_digits(label: float, output: str) -> None:
    assert right(output, label)


def test_several_accepted_answers() -> None:
    assert right("It was sixty", ["60", "sixty"])
    assert not right("It was 600", ["60", "sixty"])
    assert not right("anything", [])
    assert not right("anything", [""])  # an empty accepted answer never matches


# -- failure kinds: the order and the stops ----------------------------------------------------
LIMITS = ["cost_cap_reached", "call_cap_reached", "limit_refused", "token_cap_reached"]


def steps(*reasons: str) -> list[Step]:
    return [Step(ledger_id="b/a/i/1", finish_reason=r) for r in reasons]


@pytest.mark.parametrize("note", LIMITS)
def test_budget_stop(note: str) -> None:
    stopped = Answer(text="Leeds", partial=True, notes=[note])
    assert score(stopped, 12400).failure_kind == "budget_stop"
    assert score(Answer(text="so far 12,400", partial=True, notes=[note]), 12400).correct is True
    # a not-found answer from a stopped run is that stop, on an unanswerable item as well
    nf = Answer(text="NOT_IN_DOCUMENT", partial=True, notes=[note])
    assert score(nf, "NOT_IN_DOCUMENT").failure_kind == "budget_stop"
    assert score(nf, 12400).failure_kind == "budget_stop"
    # no text: parse_failure first (the seed's order; cases H13e and H10d)
    assert score(Answer(text=None, partial=True, notes=[note]), 12400).failure_kind == "parse_failure"
    assert score({"text": "Leeds", "notes": [note]}, 12400).failure_kind == "budget_stop"
    assert score({"answer": "Leeds", "notes": note}, 12400).failure_kind == "budget_stop"


def test_a_stop_needs_partial_and_a_limit_note() -> None:
    assert score(Answer(text="Leeds", partial=False, notes=["cost_cap_reached"]), 1).failure_kind == "wrong"
    assert score(Answer(text="Leeds", partial=True, notes=["something"]), 1).failure_kind == "wrong"
    assert (
        score({"text": "Leeds", "notes": ["cost_cap_reached"], "partial": False}, 1).failure_kind == "wrong"
    )


@pytest.mark.parametrize(
    "output",
    [
        Answer(text="I can't help with that.", trace=steps("stop", "refusal")),
        Answer(text="I can't help with that.", trace=steps("content_filter")),
        {"text": "I can't help", "steps": [{"finish_reason": "refusal"}]},
        {"text": "I can't help", "trace": [{"finish_reason": "content_filter"}]},
        {"text": "I can't help", "refused": True},
        {"text": "I can't help", "finish_reason": "refusal"},
        Result(text="I can't help", refused=True),
        Result(text="I can't help", finish_reason="content_filter"),
    ],
)
def test_refusal(output: object) -> None:
    assert score(output, 42).failure_kind == "refusal"
    assert stop_kind(output) == "refusal"


def test_refused_run_that_found_the_answer_is_right() -> None:
    out = Answer(text="42, but I should not say", trace=steps("refusal"))
    assert score(out, 42).correct is True
    nf = Answer(text="The passage does not mention it.", trace=steps("refusal"))
    assert score(nf, "NOT_IN_DOCUMENT").failure_kind == "refusal"


def test_budget_stop_comes_before_refusal() -> None:
    out = Answer(text="no", partial=True, notes=["cost_cap_reached"], trace=steps("refusal"))
    assert score(out, 42).failure_kind == "budget_stop"


def test_h10_apology_words_are_not_refusals() -> None:
    assert score("Sorry, I can't be sure: 42", 42).correct is True
    assert score("I cannot answer that.", 42).failure_kind == "wrong"
    assert (
        score({"text": "I apologise, it is 41", "steps": [{"finish_reason": "stop"}]}, 42).failure_kind
        == "wrong"
    )


@pytest.mark.parametrize(
    ("output", "kind"),
    [
        ({"text": "12400", "failure_kind": "refusal"}, "refusal"),  # an output's own kind is kept
        ({"text": "", "failure_kind": "budget_stop"}, "budget_stop"),
        (Result(text="12400", ok=False, error="HTTP 500"), "error"),
        ({"ok": False, "error": "HTTP 500"}, "error"),
        (None, "parse_failure"),
        ("", "parse_failure"),
        ("  \n ", "parse_failure"),
        (12400, "parse_failure"),  # seed 001: the output is not a string
        ({"foo": "12400"}, "parse_failure"),
        ({"text": None, "steps": [{"finish_reason": "content_filter"}]}, "parse_failure"),  # H10d
        (Answer(text=None), "parse_failure"),
        (Result(text=None, finish_reason="length"), "parse_failure"),
        ("The passage does not mention it.", "not_in_document"),
        ("Leeds", "wrong"),
    ],
)
def test_failure_kinds(output: object, kind: str) -> None:
    s = score(output, 12400)
    assert s.correct is False
    assert s.failure_kind == kind


@pytest.mark.parametrize(
    "text", ["unanswerable", "NOT_IN_DOCUMENT", "not_in_document", "The text does not say.", "NO ANSWER"]
)
def test_h11_unanswerable_items(text: str) -> None:
    assert score(text, "NOT_IN_DOCUMENT").correct is True
    assert score(text, ["NOT_IN_DOCUMENT"]).correct is True
    assert score(text, 12400).failure_kind == "not_in_document"


def test_h11_answer_on_unanswerable_item_is_wrong() -> None:
    assert score("Dyrrachium", "NOT_IN_DOCUMENT").failure_kind == "wrong"
    assert score("not_in_document", ["NOT_IN_DOCUMENT", "Dyrrachium"]).correct is True
    assert score("Dyrrachium", ["NOT_IN_DOCUMENT", "Dyrrachium"]).correct is True


def test_outcome_is_the_folded_text() -> None:
    assert score("  Sheffield produced 12,400 UNITS. ", 12400).outcome == "sheffield produced 12400 units."
    assert score(Answer(text="1\u00a0204"), 1204).outcome == "1204"
    assert score(None, 1).outcome is None


def test_item_without_label() -> None:
    assert score("12400", None) == Score(correct=None, outcome="12400", failure_kind=None)
    stopped = Answer(text="x", partial=True, notes=["call_cap_reached"])
    assert score(stopped, None) == Score(correct=None, outcome="x", failure_kind="budget_stop")


@settings(max_examples=examples(200))
@given(
    st.text(max_size=40),
    st.one_of(st.text(max_size=10), st.integers(), st.floats(allow_nan=False, allow_infinity=False)),
)
def test_property_never_breaks_the_contract(text: str, label: object) -> None:
    s = score(text, label)  # the Scorer wrapper raises ScorerError on a broken contract
    assert (s.correct is True) == (s.failure_kind is None)


@pytest.mark.parametrize(
    ("output", "label"),
    [
        ("NO ANSWER", ["no", "Third-party channels"]),
        ("NOT_IN_DOCUMENT", "document"),
        ("I don't know", "know"),
    ],
)
def test_decided_an_abstention_does_not_contain_an_answer(output: str, label: object) -> None:
    assert score(output, label).failure_kind == "not_in_document"
    assert (
        score(Answer(text=output, partial=True, notes=["cost_cap_reached"]), label).failure_kind
        == "budget_stop"
    )
