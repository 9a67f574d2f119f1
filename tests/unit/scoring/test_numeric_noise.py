"""numeric: equal up to float64 noise by default, never beyond DBL_DIG digits, never past a repr's 17.

``hrb score --scorer numeric --label 0.3 "0.30000000000000004"`` is right: the default tolerance
is not exactly zero. The rule (hrbench/scoring/_numeric.py's docstring, source C's DBL_DIG): two numbers of
the same sign are equal when closer than one unit in the 15th significant digit of the smaller;
a number written with more than 17 significant digits is no float64's repr and is compared
exactly, its outcome shown as written.
"""

from __future__ import annotations

import math
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hrbench.scoring import answer_scorer, numeric_scorer
from hrbench.scoring._numeric import float_noise_equal
from tests._slow import slow

NORMAL = st.floats(-1e300, 1e300).filter(lambda x: abs(x) >= sys.float_info.min)
SCORER = numeric_scorer()


@given(NORMAL, st.sampled_from([math.inf, -math.inf]), st.integers(1, 2))
@example(0.3, math.inf, 1)
@example(-22.22, -math.inf, 2)
def test_a_float_and_its_neighbours_a_few_ulps_away_are_equal(x: float, toward: float, ulps: int) -> None:
    noisy = x
    for _ in range(ulps):
        noisy = math.nextafter(noisy, toward)
    assert math.isfinite(noisy)
    # the label as Python prints it, the reply as a program prints the noisy float
    assert SCORER(None, f"The answer is {noisy!r}", repr(x)).correct, (x, noisy)
    assert SCORER(None, repr(x), x).correct  # a float label, written in plain digits


@given(st.floats(0.001, 1e6), st.floats(0.001, 1e6))
def test_float_arithmetic_as_a_program_prints_it_equals_the_decimal_result(a: float, b: float) -> None:
    """a + b printed by Python equals the exact decimal sum rounded to 15 digits."""
    exact = Decimal(repr(a)) + Decimal(repr(b))
    label = format(exact, ".15g")
    assert float_noise_equal(Decimal(label), exact)  # rounding to 15 digits stays within the rule
    assert SCORER(None, repr(a + b), label).correct, (a, b)


@given(
    st.integers(10**9, 10**10 - 2),
    st.integers(1, 9),
    st.integers(-30, 30),
    st.booleans(),
)
def test_numbers_differing_in_the_10th_significant_digit_are_not_equal(
    mantissa: int, step: int, exponent: int, negative: bool
) -> None:
    other = mantissa + step
    if other >= 10**10:
        other = mantissa - step
    sign = "-" if negative else ""
    a, b = f"{sign}{mantissa}e{exponent}", f"{sign}{other}e{exponent}"
    assert not SCORER(None, a, b).correct, (a, b)
    assert not float_noise_equal(Decimal(a), Decimal(b))


@given(st.integers(10**14, 10**15 - 1), st.integers(10**14, 10**15 - 1), st.integers(-20, 20))
def test_different_decimals_of_15_significant_digits_are_never_equal(m: int, n: int, exponent: int) -> None:
    """DBL_DIG: distinct 15-digit decimals are distinct doubles, so the rule keeps them apart."""
    a, b = Decimal(m).scaleb(exponent), Decimal(n).scaleb(exponent - 1)
    assert float_noise_equal(a, b) == (a == b)


@pytest.mark.parametrize(
    ("reply", "label", "correct"),
    [
        ("0.30000000000000004", 0.3, True),  # 0.1 + 0.2
        ("0.30000000000000004", "0.3", True),
        ("0.29999999999999993", 0.3, True),  # 0.7 - 0.4
        ("10.000000000000009", 10, True),  # 100 * (1.1 - 1)
        ("-22.222222222222225%", "-22.222222222222222%", True),
        ("3.3000000000000003 million", "3300000", True),
        ("1.0000000000000002e+16", "10000000000000000", True),
        ("45.25", 45.2, False),  # seed 001's pair stays apart
        ("45.2", 45.25, False),
        ("145.2", 45.2, False),
        ("0.300000000000001", 0.3, False),  # a 15-digit decimal that differs
        ("5.551115123125783e-17", 0, False),  # noise around zero has no scale: give abs_tol
        ("-0.30000000000000004", 0.3, False),  # the sign counts
        ("1000000000000.01", "1000000000000.02", False),
        ("-22.2222222222%", "-22.22%", False),  # rounding is not noise (TAT-QA rounds; this does not)
    ],
)
def test_float_noise_family(reply: str, label: object, correct: bool) -> None:
    assert SCORER(None, reply, label).correct is correct


def test_noise_around_zero_is_equal_with_an_absolute_tolerance() -> None:
    assert numeric_scorer(abs_tol=1e-9)(None, "5.551115123125783e-17", 0).correct


def test_hrb_score_reads_float_noise_as_equal() -> None:
    hrb = Path(sys.executable).with_name("hrb")
    done = subprocess.run(
        [str(hrb), "score", "--scorer", "numeric", "--label", "0.3", "0.30000000000000004", "--check"],
        capture_output=True,
        text=True,
        timeout=slow(120),
    )
    assert done.returncode == 0, done.stderr
    assert '"correct":true' in done.stdout


BIG = "123456789012345678901234567890"


@pytest.mark.parametrize(
    ("reply", "label", "correct", "outcome"),
    [
        (BIG[:-1] + "1", BIG, False, BIG[:-1] + "1"),  # 29 significant digits: exact
        (BIG, BIG[:-1] + "1", False, BIG),
        (BIG, int(BIG), True, BIG),
        ("0.300000000000000000001", 0.3, False, "0.300000000000000000001"),  # 21 digits: no repr
        ("1.23456789012345678901e5", "123456.789012345678902", False, "123456.789012345678901"),
        (BIG[:-1] + "1 million", BIG + "000000", False, BIG[:-1] + "1000000"),  # scaled exactly
        (BIG[:-1] + "1%", "1234567890123456789012345678.91", True, BIG[:-1] + "1%"),  # percent, exactly
        ("2^100", "1267650600228229401496703205376", True, "1267650600228229401496703205376"),
        ("2^100", "1267650600228229401496703205377", False, "1267650600228229401496703205376"),
        # 17 digits or fewer may be float noise, as before
        ("9007199254740993", 9007199254740992, True, "9007199254740993"),
        ("0.30000000000000004", 0.3, True, "0.30000000000000004"),
        ("100000000000000010000", "1e20", True, "100000000000000010000"),  # zeros at the end: no digits
    ],
)
def test_a_number_of_more_than_17_significant_digits_is_compared_exactly(
    reply: str, label: object, correct: bool, outcome: str
) -> None:
    got = SCORER(None, reply, label)
    assert (got.correct, got.outcome) == (correct, outcome)


def test_answer_contains_reads_no_float_noise_past_17_digits() -> None:
    contains = answer_scorer()
    assert contains(None, "it is 0.30000000000000004", 0.3).correct
    assert not contains(None, "it is 0.300000000000000000001", 0.3).correct


def test_a_tolerance_still_applies_to_numbers_compared_exactly() -> None:
    assert numeric_scorer(abs_tol=1)(None, BIG[:-1] + "1", BIG).correct
    assert not numeric_scorer(abs_tol=0.5)(None, BIG[:-1] + "1", BIG).correct


def test_hrb_score_compares_long_integers_exactly() -> None:
    hrb = Path(sys.executable).with_name("hrb")
    done = subprocess.run(
        [str(hrb), "score", "--scorer", "numeric", "--label", BIG, BIG[:-1] + "1"],
        capture_output=True,
        text=True,
        timeout=slow(120),
    )
    assert done.returncode == 0, done.stderr
    assert f'"correct":false,"outcome":"{BIG[:-1]}1"' in done.stdout, done.stdout
