"""Numbers written with float noise or a percent mark, in the built-in scorers.

answer_contains: a printed float (decimal point, more than 15 significant digits) equal to a bare
numeric label up to float64 noise is found (hrbench/_util/floats.py: C's DBL_DIG); a label with a percent
mark accepts ``%``, `` %``, ``percent`` and ``per cent``. exact: a float label carrying noise also
accepts its 15-digit form. Seed 001's whole-number rule and seed 000's "100000, not 1e+05" hold.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import hrbench as hb
from hrbench._util.floats import significant_digits
from hrbench.scoring import plain_number

AC = hb.answer_scorer()
EXACT = hb.exact_scorer()


@given(st.floats(1e-6, 1e12), st.sampled_from([math.inf, 0.0]), st.booleans())
def test_answer_contains_finds_a_label_printed_with_float_noise(
    x: float, toward: float, negative: bool
) -> None:
    x = -x if negative else x
    label = plain_number(float(format(x, ".12g")))  # 12 significant digits, in plain digits
    noisy = math.nextafter(float(label), toward if not negative else -toward)
    printed = repr(noisy)
    # a float printed with noise (in Python's plain form); other neighbours are matched as written
    assume("e" not in printed and "." in printed and significant_digits(printed) > 15)
    assert AC(None, f"The result is {printed}.", label).correct, (printed, label)


@given(st.integers(10**9, 10**12), st.integers(1, 9), st.integers(1, 6))
def test_answer_contains_keeps_numbers_that_differ_apart(mantissa: int, step: int, decimals: int) -> None:
    label = f"{mantissa / 10**decimals:.{decimals}f}"
    other = f"{(mantissa + step) / 10**decimals:.{decimals}f}"
    assert not AC(None, other, label).correct
    assert not AC(None, other + "0000000001", label).correct  # 15+ digits, but not noise


@pytest.mark.parametrize(
    ("output", "label", "correct"),
    [
        ("0.30000000000000004", 0.3, True),
        ("The ratio is 0.30000000000000004.", "0.3", True),
        ("0.29999999999999993", "0.3", True),  # 0.7 - 0.4
        ("-22.222222222222225", "-22.222222222222222", True),
        ("growth of 10.000000000000009%", "10%", True),
        ("0.30000000000000004 per cent", "0.3%", True),
        ("0.30000000000000004", "0.3%", False),  # the label's percent mark is asked for
        ("-0.30000000000000004", "0.3", False),  # the minus sign belongs to the number
        ("10-0.30000000000000004", "0.3", True),  # a range, as seed 001 reads it
        ("0.31", "0.3", False),
        ("45.25", 45.2, False),  # seed 001
        ("145.2", 45.2, False),  # seed 001
        ("0.300000000000001", "0.3", False),  # 15 digits: as written
        ("1234567890123457", "1234567890123456", False),  # an integer is matched as written
        ("-22.2222222222%", "-22.22", False),  # rounding is not noise
        ("25 %", "25%", True),
        ("25 percent", "25%", True),
        ("25 per cent", "25 percent", True),
        ("25%", "25 per cent", True),
        ("125 percent", "25%", False),  # whole numbers
        ("25 percentile", "25%", False),  # whole words
        ("25%", "0.25", False),  # R16e: no percent-to-fraction conversion
        ("roughly 1e5 people", 100000, False),  # L01d
    ],
)
def test_answer_contains_noise_and_percent_family(output: str, label: object, correct: bool) -> None:
    assert AC(None, output, label).correct is correct


@pytest.mark.parametrize(
    ("output", "label", "correct"),
    [
        ("0.3", 0.1 + 0.2, True),  # the label carries the noise, the reply does not
        ("0.30000000000000004", 0.1 + 0.2, True),
        ("0.333333333333333", 1 / 3, True),
        ("0.30000000000000004", 0.3, False),  # exact stays literal on the reply's side
        ("1e+05", 100000, False),  # L01a
        ("1e+05", 1e5, False),
        ("100000", 1e5, True),
    ],
)
def test_exact_with_float_labels(output: str, label: object, correct: bool) -> None:
    assert EXACT(None, output, label).correct is correct


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_label_always_accepts_its_plain_repr(x: float) -> None:
    assert EXACT(None, plain_number(x), x).correct
