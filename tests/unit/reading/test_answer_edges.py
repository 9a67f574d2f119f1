"""answer_contains at the edges (SPEC section 6, cases R10-R16, I07s): each rule as a family."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrbench.reading import answer_scorer, contains_answer, fold_answer

S = answer_scorer()


def right(output: str, label: object) -> bool:
    s = S(None, output, label)
    assert (s.correct is True) == (s.failure_kind is None), s
    return bool(s.correct)


# -- a word label is matched as whole words (R10c, R10d, R10g, R10i) ---------------------------
WORD_LABELS = [
    "A",
    "no",
    "yes",
    "Paris",
    "Ab",
    "\u0391\u03b8\u03ae\u03bd\u03b1",
    "\u041c\u043e\u0441\u043a\u0432\u0430",
    "\u05e2\u05d1\u05e8",
]
LETTERS = ["x", "s", "\u00e9", "\u03b1", "\u0436", "\u05d0", "\u0905", "9"]


@pytest.mark.parametrize("label", WORD_LABELS)
@pytest.mark.parametrize("letter", LETTERS, ids=ascii)
def test_a_word_label_does_not_run_on_into_a_letter_or_digit(label: str, letter: str) -> None:
    assert not right(f"It is {letter}{label} here", label)
    assert not right(f"It is {label}{letter} here", label)
    assert not right(f"{letter}{label}{letter}", label)


@pytest.mark.parametrize("label", WORD_LABELS)
@pytest.mark.parametrize(
    "edge", [" ", "(", ")", "*", "-", "/", "'", '"', ".", ",", "\n", "\u00bf", "_", ""], ids=ascii
)
def test_a_word_label_is_found_between_non_letters(label: str, edge: str) -> None:
    assert right(f"The answer:{edge}{label}{edge}", label)
    assert right(f"{edge}{label}{edge} is the answer", label)


@pytest.mark.parametrize(
    ("output", "label", "expected"),
    [
        ("The answer is B", "A", False),  # R10c: 'A' is not the a of 'answer'
        ("Answer: (C)", "A", False),  # R10d
        ("(A)", "A", True),  # R10e
        ("**A**", "A", True),
        ("I know the answer: yes", "no", False),  # R10g
        ("None of them", "no", False),
        ("No, it was never signed.", "no", True),  # R10i
        ("Parisian cafes", "Paris", False),
        ("Paris's cafes", "Paris", True),
        ("in Paris-Nord", "Paris", True),
        ("the ninth symphony", "ninth symphony", True),
        ("the ninth symphonyX", "ninth symphony", False),
        ("km", "km", True),
        ("5km", "km", False),  # a letter of the label may not run on into a digit
        ("B12", "B", False),
        ("4.5 kg", "4.5 kg", True),
        ("45.2m", 45.2, True),  # numbers keep seed 001's rule: a unit against them does not hide them
        ("covid19", 19, True),
        ("1st place", "1st", True),
        ("1sts", "1st", False),
    ],
)
def test_whole_word_table(output: str, label: object, expected: bool) -> None:
    assert right(output, label) is expected


@pytest.mark.parametrize(
    ("output", "label"),
    [
        ("\u9996\u90fd\u662f\u5317\u4eac\u3002", "\u5317\u4eac"),  # Chinese: no spaces between words
        ("\u9996\u90fd\u306f\u6771\u4eac\u3067\u3059", "\u6771\u4eac"),  # Japanese
        (
            "\u0e40\u0e21\u0e37\u0e2d\u0e07\u0e2b\u0e25\u0e27\u0e07\u0e04\u0e37\u0e2d\u0e01\u0e23\u0e38\u0e07\u0e40\u0e17\u0e1e",
            "\u0e01\u0e23\u0e38\u0e07\u0e40\u0e17\u0e1e",
        ),  # Thai
        ("\uc218\ub3c4\ub294 \uc11c\uc6b8\uc774\ub2e4", "\uc11c\uc6b8"),  # Korean: a particle attaches
    ],
)
def test_scripts_without_word_spaces_are_matched_by_containment(output: str, label: str) -> None:
    assert right(output, label)


@given(
    st.text(alphabet=st.characters(categories=("Ll", "Lu")), min_size=1, max_size=6),
    st.sampled_from(["q", "\u00df", "\u03b2", "\u0431", "7"]),
)
def test_property_a_word_inside_a_longer_word_is_not_found(word: str, letter: str) -> None:
    hay, needle = fold_answer(f"{letter}{word}{letter}"), fold_answer(word)
    if needle and needle[0].isalpha() and needle[-1].isalpha() and needle != hay:
        assert not contains_answer(hay, needle)


# -- sentence punctuation and quotes round a label or an output (R12a, R12c) -------------------
PUNCT = [".", ",", ";", ":", "!", "?", "...", '"', "'", "\u201d", "\u2019", ".\u201d"]


@pytest.mark.parametrize("mark", PUNCT, ids=ascii)
@pytest.mark.parametrize("label", ["No", "sum of the current and deferred taxes", "Paris", "U.S", "42"])
def test_punctuation_round_a_label_is_not_part_of_it(mark: str, label: str) -> None:
    assert right(label, f"{label}{mark}")
    assert right(f"the {label}", f"{label}{mark}")
    assert right(f"{label}{mark}", label)
    assert right(label, f"\u201c{label}{mark}\u201d")
    assert right(f'"{label}"', f"'{label}'")


def test_a_label_of_punctuation_only_is_kept() -> None:
    assert right("The answer is ?", "?")
    assert not right("The answer is !", "?")


def test_not_in_document_with_a_full_stop() -> None:
    assert right("NOT_IN_DOCUMENT", "NOT_IN_DOCUMENT.")


# -- digit groups: U+2007 and LaTeX (R13a, R13c) -----------------------------------------------
@pytest.mark.parametrize("sep", ["\u2007", "{,}", "\\,"], ids=ascii)
@given(n=st.integers(min_value=1000, max_value=10**12))
def test_new_separators_group_digits(sep: str, n: int) -> None:
    grouped = f"{n:,}".replace(",", sep)
    assert right(f"$\\boxed{{{grouped}}}$", n)
    assert right(f"Total: {grouped} units", n)


def test_latex_separators_only_between_digits() -> None:
    assert fold_answer("a\\,b") == "a\\,b"
    assert fold_answer("x{,}y") == "x{,}y"
    assert not right("3{,}5{,}7", 357)  # a list, not a grouped number (H01f)


# -- minus forms (R09a family; the exact side is in tests/unit/_util/test_text.py) -------------------
@pytest.mark.parametrize(
    "minus", ["\u2212", "\u2013", "\u2014", "\u2012", "\uff0d", "\ufe63", "\u207b"], ids=ascii
)
def test_minus_forms_keep_the_sign(minus: str) -> None:
    assert right(f"The change was {minus}1,234.", -1234)
    assert not right(f"The change was {minus}1,234.", 1234)  # R14c
    assert right(f"from 10{minus}12", 12)  # between two numbers it is a range (H04d)
