"""Numerals as models write them, read alike by ``numeric``, ``exact`` and ``answer_contains``.

Families of the shared cases S01-S04 (superscript and subscript digits, vulgar fractions, a/b
and LaTeX fractions, LaTeX scientific notation, ``\\%`` and ``,\\!``), as property tests over
random values and every spelling. The rules are in :mod:`hrbench._util.text` (``fold_numerals``),
:mod:`hrbench.scoring._numeric` and :mod:`hrbench.scoring._fold`.
"""

from __future__ import annotations

import unicodedata
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hrbench as hb
from hrbench._util.text import fold_numerals
from hrbench.reading import answer_scorer, fold_answer
from hrbench.scoring import read_numbers

NUM = hb.numeric_scorer()
EXACT = hb.exact_scorer()
CONTAINS = answer_scorer()

SUP = str.maketrans(
    "0123456789-+", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b\u207a"
)
SUB = str.maketrans(
    "0123456789-+", "\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089\u208b\u208a"
)
VULGAR = [
    chr(o) for o in [0xBC, 0xBD, 0xBE, *range(0x2150, 0x215F), 0x2189]
]  # every vulgar fraction character but U+215F (a numerator alone)


def values(text: str) -> list[Decimal]:
    return [q.value for q in read_numbers(text)]


# -- superscript and subscript digits after a digit stay apart --------------------------------
@given(st.integers(min_value=1, max_value=999), st.integers(min_value=0, max_value=30))
def test_property_a_superscript_after_a_digit_is_an_exponent(base: int, power: int) -> None:
    written = f"{base}{str(power).translate(SUP)}"
    glued = f"{base}{power}"
    assert fold_numerals(written) == f"{base}^{power}"
    assert values(f"x = {written}") == [Decimal(base**power)]  # exactly, past 28 digits too
    for s in (EXACT, CONTAINS):  # never the digits glued into one number
        assert s(None, written, int(glued)).correct is False, (s.name, written)
    assert EXACT(None, written, f"{base}^{power}").correct is True
    assert CONTAINS(None, f"the area is {written}", f"{base}^{power}").correct is True
    assert CONTAINS(None, f"x = {written}", base).correct is False  # a number is matched whole


@given(st.integers(min_value=1, max_value=99), st.integers(min_value=-30, max_value=30))
def test_property_times_ten_to_a_superscript_power_is_scientific_notation(m: int, n: int) -> None:
    want = Decimal(m).scaleb(n)
    for form in ("{m} \u00d7 10{n}", "{m}\u00d710{n}", "{m} x 10{n}", "{m} \u00b7 10{n}"):
        text = "c = " + form.format(m=m, n=str(n).translate(SUP)) + " m/s"
        assert values(text) == [want], text
        assert NUM(None, text, f"{m}e{n}").correct is True, text


@given(st.integers(min_value=1, max_value=99), st.integers(min_value=-30, max_value=30), st.booleans())
def test_property_latex_scientific_notation(m: int, n: int, braces: bool) -> None:
    power = f"{{{n}}}" if braces else str(n)
    want = Decimal(m).scaleb(n)
    for op in ("\\times", "\\cdot", "\\times ", "\\cdot  "):
        text = f"\\boxed{{{m}.5 {op}10^{power}}}"
        assert values(text) == [Decimal(f"{m}.5").scaleb(n)], text
    assert NUM(None, f"$${m} \\times 10^{power}$$", str(want)).correct is True


@pytest.mark.parametrize("unit", ["m", "cm", "km", "ft", "s", "in"])
@pytest.mark.parametrize("power", ["\u00b2", "\u00b3", "\u207b\u00b9", "\u2074"])
def test_a_units_power_is_not_a_number_in_numeric(unit: str, power: str) -> None:
    text = f"The area is 12 {unit}{power}"
    assert values(text) == [Decimal(12)]
    assert NUM(None, text, 12).correct is True
    assert NUM(None, text, int(unicodedata.normalize("NFKC", power).replace("\u2212", "-"))).correct is False
    assert CONTAINS(None, text, 12).correct is True


@pytest.mark.parametrize(
    ("written", "label"),
    [("H\u2082O", "H2O"), ("CO\u2082", "CO2"), ("x\u00b2", "x2"), ("E = mc\u00b2", "e = mc2")],
)
def test_after_a_letter_scripts_still_fold_as_nfkc_folds_them(written: str, label: str) -> None:
    assert EXACT(None, written, label).correct is True


@given(st.integers(min_value=0, max_value=999), st.integers(min_value=0, max_value=99))
def test_property_a_subscript_after_a_digit_stays_apart(n: int, k: int) -> None:
    written = f"{n}{str(k).translate(SUB)}"
    assert fold_numerals(written) == f"{n}_{k}"
    assert EXACT(None, written, f"{n}{k}").correct is False
    assert values(written) == [Decimal(n)]


# -- fractions --------------------------------------------------------------------------------
@pytest.mark.parametrize("glyph", VULGAR)
def test_every_vulgar_fraction_is_one_number(glyph: str) -> None:
    value = Fraction(unicodedata.numeric(glyph)).limit_denominator(10)
    num, den = unicodedata.normalize("NFKC", glyph).split("\u2044")
    assert Fraction(int(num), int(den)) == value
    [got] = values(f"the result is {glyph}")
    assert Fraction(got).limit_denominator(10) == value
    assert NUM(None, f"about {glyph}", f"{num}/{den}").correct is True
    for part in {int(num), int(den)} - {0} - ({1} if value == 1 else set()):
        assert NUM(None, f"the result is {glyph}", part).correct is (part == value), (glyph, part)
        assert CONTAINS(None, f"the result is {glyph}", part).correct is False, (glyph, part)
    assert CONTAINS(None, f"the result is {glyph}.", glyph).correct is True
    [mixed] = values(f"answer 2{glyph} cups")
    assert Fraction(mixed).limit_denominator(10) == 2 + value
    assert CONTAINS(None, f"answer 2{glyph} cups", 2).correct is False
    assert EXACT(None, f"2{glyph}", f"2{int(num)}").correct is False


@given(st.integers(min_value=1, max_value=99), st.integers(min_value=1, max_value=99))
def test_property_a_superscript_fraction_is_one_number(a: int, b: int) -> None:
    text = f"{str(a).translate(SUP)}\u2044{str(b).translate(SUB)} of the pie"
    assert values(text) == [Decimal(a) / Decimal(b)]
    assert CONTAINS(None, text, b).correct is False


FRACTION_FORMS = [
    "{s}{a}/{b}",
    "{s}{a} / {b}",
    "{s}\\frac{{{a}}}{{{b}}}",
    "{s}\\dfrac{{{a}}}{{{b}}}",
    "{s}\\tfrac{{{a}}}{{{b}}}",
    "\\frac{{{s}{a}}}{{{b}}}",
    "\\boxed{{{s}\\frac{{{a}}}{{{b}}}}}",
    "${s}\\dfrac{{ {a} }}{{ {b} }}$",
]


@given(
    st.integers(min_value=0, max_value=999),
    st.integers(min_value=1, max_value=999),
    st.sampled_from(FRACTION_FORMS),
    st.booleans(),
)
def test_property_numeric_reads_a_fraction_as_a_divided_by_b(a: int, b: int, form: str, minus: bool) -> None:
    text = "The answer is " + form.format(a=a, b=b, s="-" if minus else "")
    want = Decimal(a) / Decimal(b) * (-1 if minus else 1)
    assert values(text) == [want], text
    r = NUM(None, text, str(Fraction(a, b) * (-1 if minus else 1)).replace("/", " / "))
    assert r.correct is True, (text, r)
    if Fraction(a, b) != b and not (minus and a):  # never the denominator as the reply's number
        assert NUM(None, text, b).correct is False, text


@pytest.mark.parametrize(
    "text",
    ["\\frac{\\sqrt{3}}{2}", "\\frac{x}{2}", "\\dfrac{\\pi}{4}", "1/0", "3/0", "12/25/2024", "\\frac{1}{0}"],
)
def test_a_fraction_with_no_value_is_not_read_at_all(text: str) -> None:
    assert values(text) == []
    assert NUM(None, text, 2).failure_kind == "parse_failure"


def test_latex_shorthand_fraction_and_a_division_chain() -> None:
    assert values("\\frac12") == [Decimal("0.5")]
    assert values("on 12/25/2024 it was 7") == [Decimal(7)]


# -- \% and ,\! -------------------------------------------------------------------------------
@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=9))
def test_property_latex_percent_is_a_percent_sign(n: int, d: int) -> None:
    text = f"\\boxed{{{n}.{d}\\%}}"
    [q] = read_numbers(text)
    assert q.percent and q.value == Decimal(f"{n}.{d}")
    assert NUM(None, text, str(Decimal(f"{n}.{d}") / 100)).correct is True
    assert NUM(None, str(Decimal(f"{n}.{d}") / 100), f"{n}.{d}\\%").correct is True


@given(st.integers(min_value=1000, max_value=10**12), st.sampled_from(["\\$", "$", ""]))
def test_property_comma_negative_thin_space_groups_digits(n: int, currency: str) -> None:
    grouped = currency + f"{n:,}".replace(",", ",\\!")
    assert fold_answer(grouped).endswith(str(n))
    assert NUM(None, f"\\boxed{{{grouped}}}", n).correct is True
    assert CONTAINS(None, grouped, n).correct is True
    assert EXACT(None, grouped, n).correct is False  # exact stays literal (seed 000)
