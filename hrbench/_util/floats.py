"""Float64 representation noise: when two written numbers are the same double's value.

The rule the built-in scorers share (a program-of-thought reply ``"0.30000000000000004"``, what
Python prints for ``0.1 + 0.2``, equals the label 0.3). Source: C's ``DBL_DIG`` = 15 (C11 5.2.4.2.2, IEEE 754 binary64):
every decimal of 15 significant digits survives a round trip through a float64, so two such
decimals that differ are different doubles, while ``repr`` of a double (up to 17 digits) lies
within half a unit of the 15th digit of the decimal it was converted from.

The rule is for a double's printed value: the shortest ``repr`` of a float64 has at most 17
significant digits (:data:`REPR_DIGITS`), so a number written with more
(``123456789012345678901234567891``) is no double's repr and is compared exactly
(:func:`may_be_float_repr`).
"""

from __future__ import annotations

from decimal import Decimal

__all__ = ["DBL_DIG", "REPR_DIGITS", "float_noise_equal", "may_be_float_repr", "significant_digits"]

DBL_DIG = 15
"""Significant decimal digits a float64 keeps through a round trip (C11 5.2.4.2.2, ``DBL_DIG``)."""


REPR_DIGITS = 17
"""Significant decimal digits that always tell a float64 apart, the most its shortest repr holds (IEEE 754-2008 5.12.2)."""


def may_be_float_repr(digits: str) -> bool:
    """Whether a number written as ``digits`` may be a float64's printed value: at most 17 significant digits.

    Zeros at either end are not significant here: JavaScript prints the double nearest
    123456789012345678901 as ``123456789012345680000`` (17 significant digits).

    Args:
        digits: the number as written, plain digits with an optional point and minus
            (an exponent's mantissa alone).

    Example:
        >>> may_be_float_repr("0.30000000000000004"), may_be_float_repr("123456789012345680000")
        (True, True)
        >>> may_be_float_repr("123456789012345678901234567891")
        False
    """
    return len(digits.replace(".", "").replace("-", "").strip("0")) <= REPR_DIGITS


def float_noise_equal(a: Decimal, b: Decimal) -> bool:
    """Whether two numbers are equal up to binary floating-point noise (module docstring).

    True when they are equal, or of the same sign and closer than one unit in the 15th
    significant digit (:data:`DBL_DIG`) of the smaller in magnitude. Source:
    C's ``DBL_DIG``; two different decimals of at most 15 significant digits are never
    equal by this rule.

    Args:
        a: one number.
        b: the other.

    Returns:
        Whether they are the same number up to float64 noise.

    Example:
        >>> float_noise_equal(Decimal("0.30000000000000004"), Decimal("0.3"))
        True
        >>> float_noise_equal(Decimal("45.2"), Decimal("45.25")), float_noise_equal(Decimal("5.55e-17"), Decimal(0))
        (False, False)
    """
    if a == b:
        return True
    if not a or not b or (a < 0) != (b < 0):
        return False
    small = min(abs(a), abs(b))
    return abs(a - b) < Decimal(1).scaleb(small.adjusted() - (DBL_DIG - 1))


def significant_digits(digits: str) -> int:
    """How many significant digits a plain-digit number is written with.

    Example:
        >>> significant_digits("0.30000000000000004"), significant_digits("045.20"), significant_digits("0")
        (17, 4, 0)
    """
    return len(digits.replace(".", "").replace("-", "").lstrip("0"))
