r"""The ``numeric`` scorer: the number a reply gives, against the label's, within a tolerance.

Where ``answer_contains`` (seed 001) asks whether the label's number is written in the reply,
``numeric`` reads the reply's answer as a number and compares values, as inspect_ai's
``match(numeric=True)`` and promptfoo's numeric assertions do. Rules:

- Reading: the reply is folded as ``answer_contains`` folds it (:func:`hrbench.reading.fold_answer`:
  thousands separators of every kind, minus forms, full-width and other scripts' digits, a sign
  before a currency sign), then every number is read with its sign (a hyphen between two numbers
  is a range, not a minus: seed 001), its decimal part, a ``%`` or the word ``percent`` after it,
  and a scale word after it (``thousand``, ``million``, ``billion``, ``trillion``, ``bn``, or a
  ``k`` written against the number: ``"$12k"``). Number words are not read (case R15a).
- Scientific notation (``"1e6"`` is 1000000, never 6): a number is read with its exponent, as its value: ``1e6``, ``1E6``,
  ``1e+06``, ``2.5e-3``, and the written forms ``1.2×10^3``, ``1.2 x 10^3``, ``1.2*10**3``,
  ``3 × 10⁸`` (a superscript power), ``1.2 · 10^3`` and LaTeX's ``1.5 \times 10^{3}`` and
  ``1.5 \cdot 10^3``.
  An ``e`` exponent followed by a letter or digit is not one (``"3e4f"`` reads 3, then 4: a
  hash, not a number); an exponent has at most three digits (floats reach ``1e308``), so
  ``"1e9999"`` is not read as a value beyond any label's. Only this scorer reads it: ``exact`` keeps seed 000's rule that the
  label 100000 does not accept ``"1e+05"``.
- Powers and units (shared case S01): a superscript run right after a
  digit is that number's exponent, as is ``^n`` or ``^{n}`` (``"10⁸"`` and ``"10^8"`` are
  100000000, ``"5²"`` is 25), never a digit glued to the number (NFKC alone reads ``"10⁸"`` as
  108); a subscript run after a digit is an index, not read. Superscript and subscript digits
  after anything else are not numbers of their own: ``"12 m²"`` holds the one number 12, and
  the ``2`` of ``"x^2"`` or ``"x^{2}"`` is not read either.
- Fractions (shared cases S02, S03): a fraction is read as one value, a
  divided by b, or not at all, never as its denominator: ``3/4`` (and ``3 / 4``), a vulgar
  fraction ``½``, ``¾``, ``⅓`` (its whole part before it: ``2½`` is 2.5), a fraction of
  superscript and subscript digits ``³⁄₁₆``, and LaTeX's ``\frac{a}{b}``, ``\dfrac``,
  ``\tfrac`` and ``\frac12``, with a minus sign before or inside. A fraction whose parts are
  not plain numbers (``\frac{\sqrt{3}}{2}``), one over zero, and a chain of slashes such as a
  date (``12/25/2024``) give no number at all.
- LaTeX marks (shared case S04): ``\%`` is a percent sign, ``\$`` a
  currency sign, and ``,\!`` between digit groups a thousands separator as ``{,}`` and ``\,``
  are (``\$15,\!000`` is 15000; :mod:`hrbench.scoring._fold`).
- Which number: the last one in the reply (``which="last"``, the default: a reply that works
  its way to an answer states it last), or any of them (``which="any"``).
- Accounting brackets: ``"(1,234)"`` is 1234 unless ``accounting=True``, which reads it as
  -1234 (case R14a: brackets are not a minus sign in prose; financial tables use them).
- Percent and scale on one side only are read both ways: the reply ``"25%"`` matches the
  labels 25 and 0.25; ``"1.5 million"`` matches 1.5 and 1500000 (TAT-QA-style references keep
  the scale apart from the number). With the same mark on both sides the values are compared.
- Tolerance: ``abs(reply - label) <= max(abs_tol, rel_tol * abs(label))``. With both 0 (the
  default) the values are compared as decimals (``"29.00"`` equals 29, ``"0.30"`` equals 0.3),
  equal up to binary floating-point noise (``"0.30000000000000004"``, what Python prints for
  ``0.1 + 0.2``, equals the label 0.3; program-of-thought models print such floats): two numbers of the same sign are
  equal when they differ by less than one unit in the 15th significant digit of the smaller
  in magnitude. Source: C's ``DBL_DIG`` = 15 (C11 5.2.4.2.2; IEEE 754 binary64): every decimal of
  15 significant digits survives a round trip through a float64, so two such decimals that
  differ are different doubles and stay unequal (``45.2`` is not ``45.25``; numbers differing
  in the 10th, or the 15th, significant digit are unequal), while a float64 printed with 16 or
  17 digits (``repr``) is within half a unit of the 15th digit of the decimal it stands for,
  with room for a few more units in the last place of arithmetic error
  (``100 * (1.1 - 1)`` prints ``10.000000000000009``, equal to 10). Zero equals only zero: noise
  around 0 (``0.1 + 0.2 - 0.3`` is ``5.55e-17``) has no scale to be judged against; give
  ``abs_tol`` for it. The rule applies with any tolerance (:func:`hrbench._util.floats.float_noise_equal`).
  Numbers that differ only after their 15th significant digit are equal by it: a 16-digit
  identifier is not a quantity, score it with ``exact``. The rule is for a double's printed
  value, which has at most 17 significant digits (:data:`hrbench._util.floats.REPR_DIGITS`):
  when either side is written with more (``123456789012345678901234567891``, zeros at either
  end not counted), the two are compared exactly, as decimals, and the outcome shows the
  number as written (never rounded to a float's or a decimal context's precision). ``answer_contains`` applies the same
  rule only to a reply's number written with a decimal point and more than 15 significant
  digits (a printed float); ``exact`` stays literal (seed 000).
- A reply with no number is ``parse_failure``; a label that does not hold exactly one number raises
  :class:`~hrbench.errors.ScorerError` naming it. Refusals, failed calls and limit stops keep
  their failure kinds as in ``answer_contains``; the label ``NOT_IN_DOCUMENT`` (read by ``answer_contains``'s rule,
  :func:`~hrbench.scoring._answer.is_not_in_document_label`) is right when
  the reply says the document lacks the answer (:func:`hrbench.reading.is_not_found`).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation, localcontext
from functools import lru_cache
from typing import Any, Literal

from hrbench._util.floats import DBL_DIG, float_noise_equal, may_be_float_repr
from hrbench._util.text import FRACTION_SLASH, JOIN, fold_numerals
from hrbench.errors import ConfigError, ScorerError
from hrbench.records import Score
from hrbench.scoring._answer import is_not_in_document_label, stop_kind
from hrbench.scoring._fold import _is_minus, fold_answer
from hrbench.scoring._not_found import is_not_found
from hrbench.scoring._scorer import Scorer, label_answers, screen

__all__ = ["DBL_DIG", "Quantity", "float_noise_equal", "numeric_scorer", "read_numbers"]

_N = r"[0-9]+(?:\.[0-9]+)?"
_ARG = r"\{((?:[^{}]|\{[^{}]*\})*)\}"  # one brace group (one level of braces inside)
_SCI = (
    r"[eE](?P<e>[+-]?[0-9]{1,3})(?![0-9A-Za-z_])"
    r"|\s?(?:[\u00d7xX*\u00b7\u22c5]|\\times|\\cdot)\s?10\s?(?:\^|\*\*)\s?(?P<xbrace>\{)?(?P<x>[+-]?[0-9]{1,3})"
    r"(?(xbrace)\})(?![0-9])"
)
_NUMBER = re.compile(
    # 1-2: \frac{a}{b}, \dfrac, \tfrac (and LaTeX's \frac12): a / b, or nothing when a or b is not a number
    rf"(?P<lsign>-)?\s?\\[dt]?frac\s*(?:{_ARG}|([0-9]))\s*(?:{_ARG}|([0-9]))"
    # a mixed number of a vulgar fraction: 2 1/2 (hrbench._util.text.JOIN between)
    rf"|(?<![0-9.])(?P<msign>-)?(?P<whole>[0-9]+){JOIN}(?P<mn>[0-9]+){FRACTION_SLASH}(?P<md>[0-9]+)"
    # a fraction: a vulgar one (1 U+2044 2), a/b; a chain a/b/c (a date) is no number
    rf"|(?<![0-9./])(?P<chain>(?:{_N}/){{2,}}{_N})(?![0-9])"
    rf"|(?<![0-9./])(?P<fsign>-)?(?P<fn>{_N})(?:{FRACTION_SLASH}|\s?/\s?)(?P<fd>{_N})(?![0-9.]|/[0-9])"
    # a number, with its exponent (1e6, 1.2 x 10^3, 1.5 \times 10^{3}) or power (10^8, 5^2)
    rf"|(?<![0-9.^])(?P<sign>-)?(?P<digits>{_N})"
    rf"(?:{_SCI}"
    rf"|\^\s?(?P<pbrace>\{{)?(?P<power>[+-]?[0-9]{{1,3}})(?(pbrace)\}}))?"
    r"(?:_[0-9]+)?(?![0-9])"
    # an exponent of a letter (x^2, x^{2}): no number of its own
    r"|\^\s?\{?[+-]?[0-9]+\}?"
)
_AFTER = re.compile(
    r"(\))?\s?(%|\\%|percent\b|per cent\b)?\s?(thousand\b|million\b|billion\b|trillion\b|bn\b|k\b)?(\))?"
)
_OPEN = re.compile(r"\(\s?[$\u20ac\u00a3\u00a5\u20b9]?\s?$")
_SCALE = {"thousand": 3, "k": 3, "million": 6, "billion": 9, "bn": 9, "trillion": 12}
"""A scale word's power of ten."""
_MAX_POWER_DIGITS = 1000
"""A power (``5^2``) is computed exactly up to about this many digits, else to the decimal context's."""


def _shift(d: Decimal, n: int, how: str = "scaleb") -> Decimal:
    """``d`` times ``10**n``, exactly: by :meth:`Decimal.scaleb`, ``"times"`` or ``"over"`` ``10**-n``.

    Decimal arithmetic rounds to its context's 28 digits; here the context holds every digit of
    ``d``. The three ways give the same value, each with the exponent its operation gives.
    """
    with localcontext() as ctx:
        ctx.prec = max(ctx.prec, len(d.as_tuple().digits) + 1)
        if how == "times":
            return d * Decimal(10) ** n
        if how == "over":
            return d / Decimal(10) ** -n
        return d.scaleb(n)


class Quantity:
    """A number read from a text: its value, and whether a percent or scale word marked it.

    Attributes:
        value: the value, scale applied (``"1.5 million"`` -> 1500000).
        bare: the number as written, before its scale (``1.5``).
        percent: ``True`` when ``%`` or ``percent`` followed it.
        scaled: ``True`` when a scale word followed it.
        exact: ``True`` when it is written with more significant digits than a float64's repr
            has (:func:`hrbench._util.floats.may_be_float_repr`): compared with no float noise.
    """

    __slots__ = ("bare", "exact", "percent", "scaled", "value")

    def __init__(
        self, bare: Decimal, percent: bool = False, scale: int | None = None, exact: bool = False
    ) -> None:
        self.bare = bare
        self.percent = percent
        self.scaled = scale is not None
        self.value = _shift(bare, scale, "times") if scale is not None else bare
        self.exact = exact

    def __repr__(self) -> str:
        mark = "%" if self.percent else (" (scaled)" if self.scaled else "")
        return f"Quantity({_plain(self.value)}{mark})"

    def readings(self) -> list[Decimal]:
        """The values this quantity may stand for when the other side lacks its mark."""
        out = [self.value]
        if self.percent:
            out.append(_shift(self.value, -2, "over"))
        if self.scaled:
            out.append(self.bare)
        return out


def _plain(d: Decimal) -> str:
    """``d`` in plain digits, as exact as it is held (no trailing zeros after a point)."""
    s = format(d, "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def read_numbers(text: str, accounting: bool = False) -> list[Quantity]:
    """Every number in a text, in order, with its sign, percent and scale (module docstring).

    Args:
        text: a reply or a label, unfolded.
        accounting: read a number in brackets as negative (``"(1,234)"`` -> -1234).

    Returns:
        The quantities, in the order they are written.

    Example:
        >>> read_numbers("Revenue rose 12.5% to $1,204.50 million, from 10-12 units")
        [Quantity(12.5%), Quantity(1204500000 (scaled)), Quantity(10), Quantity(12)]
        >>> read_numbers("Net loss (1,234)"), read_numbers("Net loss (1,234)", accounting=True)
        ([Quantity(1234)], [Quantity(-1234)])
    """
    hay = fold_answer(fold_numerals(text, units=True))
    out: list[Quantity] = []
    for m in _NUMBER.finditer(hay):
        try:
            value, sign_at = _value(m)
        except (InvalidOperation, ArithmeticError):  # 1/0, 0^-1: no value
            continue
        written = m.group("digits")
        if value is None:
            continue
        if sign_at is not None and _is_minus(hay, sign_at):
            value = -value
        after = _AFTER.match(hay, m.end())
        closed1, pct, word, closed2 = after.groups() if after else (None, None, None, None)
        if accounting and (closed1 or closed2) and _OPEN.search(hay, max(0, m.start() - 4), m.start()):
            value = -abs(value)
        scale = _SCALE.get(word) if word else None
        exact = written is not None and not may_be_float_repr(written)
        out.append(Quantity(value, percent=pct is not None, scale=scale, exact=exact))
    return out


_PLAIN = re.compile(r"\s*(-?)\s*([0-9]+(?:\.[0-9]+)?)\s*")


def _arg(text: str | None, digit: str | None) -> Decimal | None:
    r"""A ``\frac`` argument's value, when it is a plain number."""
    if digit is not None:
        return Decimal(digit)
    m = _PLAIN.fullmatch(text or "")
    if m is None:
        return None
    return -Decimal(m.group(2)) if m.group(1) else Decimal(m.group(2))


def _value(m: re.Match[str]) -> tuple[Decimal | None, int | None]:
    """The value of one match of ``_NUMBER`` and where its minus sign is (``None``: none)."""
    g = m.group
    if g("digits") is not None:
        value = Decimal(g("digits"))
        exponent = g("e") or g("x")
        if exponent is not None:
            value = _shift(value, int(exponent))
        elif g("power") is not None:
            power = int(g("power"))
            with localcontext() as ctx:  # exact while the result stays within _MAX_POWER_DIGITS
                ctx.prec = max(
                    ctx.prec, min(_MAX_POWER_DIGITS, len(value.as_tuple().digits) * abs(power) + 1)
                )
                value = value**power
        return value, m.start("sign") if g("sign") else None
    if g("fn") is not None:
        return Decimal(g("fn")) / Decimal(g("fd")), m.start("fsign") if g("fsign") else None
    if g("whole") is not None:
        value = Decimal(g("whole")) + Decimal(g("mn")) / Decimal(g("md"))
        return value, m.start("msign") if g("msign") else None
    if g("chain") is not None or g(0).lstrip().startswith("^"):
        return None, None
    a, b = _arg(m.group(2), m.group(3)), _arg(m.group(4), m.group(5))
    if a is None or b is None:
        return None, None
    return a / b, m.start("lsign") if g("lsign") else None


@lru_cache(maxsize=1 << 14)
def _label_numbers(label: str, accounting: bool) -> tuple[Quantity, ...]:
    return tuple(read_numbers(label, accounting))


def _equal(a: Decimal, b: Decimal, abs_tol: float, rel_tol: float, exact: bool) -> bool:
    if a == b or (not exact and float_noise_equal(a, b)):
        return True
    if abs_tol == 0 and rel_tol == 0:
        return False
    return abs(a - b) <= max(Decimal(repr(abs_tol)), Decimal(repr(rel_tol)) * abs(b))


def _matches(got: Quantity, want: Quantity, abs_tol: float, rel_tol: float) -> bool:
    exact = got.exact or want.exact
    if got.percent == want.percent and got.scaled == want.scaled:
        return _equal(got.value, want.value, abs_tol, rel_tol, exact)
    return any(_equal(g, w, abs_tol, rel_tol, exact) for g in got.readings() for w in want.readings())


def numeric_scorer(
    abs_tol: float = 0.0,
    rel_tol: float = 0.0,
    which: Literal["last", "any"] = "last",
    accounting: bool = False,
) -> Scorer:
    """The ``numeric`` scorer: the reply's number equals the label's within a tolerance.

    The rules are in this module's docstring.

    Args:
        abs_tol: absolute tolerance, in the label's units (``0.01`` for cents); with
            ``rel_tol`` 0 too, values equal up to float64 noise (:func:`float_noise_equal`).
        rel_tol: relative tolerance, a fraction of the label (``0.01`` is 1%).
        which: ``"last"`` compares the reply's last number; ``"any"`` accepts any of them.
        accounting: read a number in brackets as negative.

    Returns:
        A :class:`~hrbench.scoring.Scorer` named ``"numeric"``; ``outcome`` is the number read
        (``"25%"``, ``"1500000"``).

    Raises:
        ConfigError: a negative tolerance or an unknown ``which``.
        ScorerError: (on call) a label that holds no number, or more than one.

    Example:
        >>> s = numeric_scorer(rel_tol=0.01)
        >>> s(None, "First 40, then about 45.3 in the end.", 45.2)
        Score(correct=True, outcome='45.3', failure_kind=None)
        >>> numeric_scorer()(None, "It grew 25%.", 0.25).correct, numeric_scorer()(None, "Large.", 3).failure_kind
        (True, 'parse_failure')
        >>> numeric_scorer()(None, "0.30000000000000004", 0.3).correct, numeric_scorer()(None, "45.25", 45.2).correct
        (True, False)
    """
    for field, tol in (("abs_tol", abs_tol), ("rel_tol", rel_tol)):
        if not isinstance(tol, (int, float)) or isinstance(tol, bool) or tol < 0:
            raise ConfigError(field, tol, "expected a number >= 0")
    if which not in ("last", "any"):
        raise ConfigError("which", which, 'expected "last" or "any"')

    def fn(item: Any, output: Any, label: Any) -> Score:
        text = screen(output)
        if isinstance(text, Score):
            return text
        found = read_numbers(text, accounting)
        outcome = None
        if found:
            q = found[-1]
            outcome = _plain(q.value) + ("%" if q.percent else "")
        answers = label_answers(label)
        if answers is None:
            return Score(correct=None, outcome=outcome, failure_kind=stop_kind(output))
        wants: list[Quantity] = []
        nid = False
        for a in answers:
            if is_not_in_document_label(a):
                nid = True
                continue
            got = _label_numbers(a, accounting)
            if len(got) != 1:
                raise ScorerError(f"numeric scorer: label {a!r} holds {len(got)} numbers; expected one")
            wants.extend(got)
        candidates = found if which == "any" else found[-1:]
        if any(_matches(g, w, abs_tol, rel_tol) for g in candidates for w in wants):
            return Score(correct=True, outcome=outcome, failure_kind=None)
        stop = stop_kind(output)
        if stop is not None:
            return Score(correct=False, outcome=outcome, failure_kind=stop)
        if is_not_found(text):
            if nid:
                return Score(correct=True, outcome=outcome, failure_kind=None)
            return Score(correct=False, outcome=outcome, failure_kind="not_in_document")
        if not found:
            return Score(correct=False, outcome=None, failure_kind="parse_failure")
        return Score(correct=False, outcome=outcome, failure_kind="wrong")

    settings = {"abs_tol": abs_tol, "rel_tol": rel_tol, "which": which, "accounting": accounting}
    return Scorer(fn, "numeric", settings, reads_reply=True)
