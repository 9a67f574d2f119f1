"""The folds both scorers share (SPEC section 6): caseless matching and minus signs, as families."""

from __future__ import annotations

import functools
import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hrbench as hb
from hrbench._util.text import _DASHES, caseless, fold_minus
from hrbench.reading import fold_answer
from hrbench.scoring._scorer import fold

FOLDS = [fold, fold_answer]
EVERY_DASH = sorted(chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Pd")


def test_the_dash_list_is_every_pd_dash() -> None:
    import re

    every_char = "".join(map(chr, range(sys.maxunicode + 1)))  # one search, not 1.1 million
    listed = set(re.findall(f"[{_DASHES}]", every_char))
    assert listed == set(EVERY_DASH) - {"-"}


@pytest.mark.parametrize("f", FOLDS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dash", [*EVERY_DASH, "\u2212", "\u2796", "\u207b", "\u208b"], ids=ascii)
def test_every_minus_form_before_a_digit_is_minus(f, dash: str) -> None:
    assert f(f"{dash}5") == f("-5")
    assert f(f"a change of {dash}12.5") == f("a change of -12.5")


@pytest.mark.parametrize("dash", ["\u2014", "\u2015", "\u301c", "\u058a"], ids=ascii)
def test_a_dash_not_before_a_digit_stays(dash: str) -> None:
    assert fold(f"Paris{dash}Lyon") != fold("Paris-Lyon")
    assert fold_minus(f"A{dash}B") == f"A{dash}B"


def test_exact_minus_sign_equals_negative_label() -> None:
    ex = hb.exact_scorer()
    for minus in ("\u2212", "\u2013", "\uff0d", "\ufe63", "\u2012"):
        assert ex(None, f"{minus}5", -5).correct is True, ascii(minus)
    assert ex(None, "\u22125", 5).correct is False


@functools.cache
def cased() -> list[str]:
    """Every code point whose case forms differ, found at first use rather than at collection.

    The scan of all 1.1 million code points takes about a second, which every xdist worker
    would otherwise pay while collecting this module.
    """
    return [
        chr(c)
        for c in range(sys.maxunicode + 1)
        if unicodedata.category(chr(c)) != "Cs"
        and len({chr(c), chr(c).lower(), chr(c).upper(), chr(c).title()}) > 1
    ]


@pytest.mark.parametrize("f", FOLDS, ids=lambda f: f.__name__)
def test_every_cased_letter_folds_with_its_other_cases(f) -> None:
    """Every code point whose case forms differ folds with all of them, in every script.

    The one exception (case H07c): no Turkic rule, so the dotless i stays apart
    from the i that ``I`` folds to.
    """
    apart = []
    for c in cased():
        if c == "\u0131":
            continue
        forms = {c, c.lower(), c.upper(), c.title()}
        if len({f(x) for x in forms}) > 1:
            apart.append(c)
    assert apart == []
    assert f("\u0131") != f("I")


@pytest.mark.parametrize("f", FOLDS, ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("\u0130zmir", "izmir"),  # I07s: lower-casing U+0130 adds a combining dot
        ("D\u0130YARBAKIR", "diyarbakir"),
        ("\u0130", "i"),
        ("I\u0307", "i"),  # the decomposed capital I with dot
        ("STRASSE", "stra\u00dfe"),
        ("\u1fbc\u0342", "\u1fb7"),  # Greek: case folding leaves a text to normalise again
        ("\u0399\u0308\u0301", "\u0390"),
        ("\u03a3\u039f\u03a6\u039f\u03a3", "\u03c3\u03bf\u03c6\u03bf\u03c2"),  # final sigma
        ("\u0414\u041e\u041c", "\u0434\u043e\u043c"),
        ("\u10a0", "\u2d00"),  # Georgian
        ("\U00010400", "\U00010428"),  # Deseret
    ],
)
def test_case_family(f, a: str, b: str) -> None:
    assert f(a) == f(b)


@given(st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12))
def test_caseless_is_stable_under_case_changes(s: str) -> None:
    assert caseless(caseless(s)) == caseless(s)
    s = s.replace("\u0131", "")  # no Turkic rule (H07c)
    assert caseless(s.upper()) == caseless(s.lower()) == caseless(s)
