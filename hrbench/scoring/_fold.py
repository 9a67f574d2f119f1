r"""Folding and whole-number containment for the ``answer_contains`` scorer (seed 001).

Both the answer and every accepted answer go through :func:`fold_answer`; the answer is right
when :func:`contains_answer` finds a folded accepted answer in it. The rules, with the case ids
of ``../shared/cases/`` that pin them:

Folding (:func:`fold_answer`), in this order:

0. LaTeX digit grouping (R13a): ``{,}`` and ``,\!`` (a comma, then LaTeX's negative
   thin space) between two digits are a comma and ``\,`` between two digits a thin space, so
   ``"1{,}204"``, ``"1,\!204"`` and ``"1\,204"`` are 1204.
   Then numerals NFKC would glue are kept apart (:func:`hrbench._util.text.fold_numerals`): a superscript or subscript digit right after a digit
   is an exponent ``^n`` or an index ``_n`` (``"5\u00b2"`` is ``5^2``, never 52), and a vulgar
   fraction (``"\u00bd"``, ``"2\u00bd"``) is one number, ``1\u20442`` with its whole part
   joined by a private mark, never a 1 and a 2.
1. The no-break space U+00A0, the thin space U+2009, the narrow no-break space U+202F and the
   figure space U+2007 (R13c) are marked as possible thousands separators (H01b);
   curly quotes U+2018/U+2019/U+201C/U+201D become ASCII quotes (H08c); the minus sign U+2212
   and the hyphens and dashes U+2010-U+2013 become ``-`` (so ``"\u22125"`` is minus five and
   ``"10\u201312"`` a range).
2. NFKC (H08a, H08e): compatibility forms such as full-width digits ``"\uff11\uff12"`` become
   ASCII and accents are composed. Beyond NFKC: a decimal digit of any other script
   (Arabic-Indic, Devanagari, ...) becomes its ASCII digit too, and any other dash written
   before a digit is a minus sign (R09a; :func:`hrbench._util.text.fold_minus`).
3. Caseless matching in every script (:func:`hrbench._util.text.caseless`; H07a: ``"STRASSE"``
   equals ``"Stra\u00dfe"``; I07s: ``"\u0130zmir"`` equals ``"izmir"``); no locale-specific
   (Turkic) folding (H07c).
4. Thousands separators -- a comma or one of the four spaces above -- are dropped only
   between a lead of one to three digits and groups of exactly three digits, the same
   separator throughout, the last group not followed by more digits (H01f): "1,204",
   "1\u00a0204", "1\u2009204", "1\u202f204" and "1204" fold alike (H01a, H01b, H01d), while
   the list "3,5,7", "1234,567" and "1,2345" are left as they are. An ordinary space is not a
   separator ("1 204" stays two numbers), nor is an apostrophe or a point.
5. Runs of white space become one space; the text is trimmed.
6. A sign written before a currency sign is moved after it, so "-$12.6" reads "$-12.6" and
   still holds the number -12.6 (a currency sign does not hide a number, H01a, H05a).
7. A decimal with trailing zeros equals the number without them ("29.00" and "29.0"
   equal "29", "45.20" equals "45.2"), and a bare leading point gets its zero (".5" is "0.5").
   Scientific notation is not expanded: "1e5" is not 100000 (L01d).

Sentence punctuation and quotes round an accepted answer are dropped before matching
(:func:`strip_around`; R12a, R12c: the label ``"No."`` accepts ``"No"``); round the
answer they never block a match, since they are neither letters nor digits.

Containment (:func:`contains_answer`): substring containment, except that a word at either end
of the accepted answer is matched whole, and a number at either end is matched whole (seed 001).

Words (SPEC section 6, R10c, R10d, R10g): when the accepted answer begins
or ends with a letter, that letter may not run on into a letter, digit or combining mark of the
answer, the way open-domain QA scorers match answer tokens: ``"A"`` is not in ``"The answer is
B"``, ``"no"`` not in ``"know"``, ``"Paris"`` not in ``"Parisian"``, ``"km"`` not in ``"5km"``;
``"(A)"``, ``"**A**"``, ``"Paris's"`` and ``"Paris-Nord"`` contain their word. Scripts written
without spaces between words (Han, kana, Hangul, Thai, Lao, Khmer, Myanmar, Tibetan) are matched
by plain containment on the sides where they meet (``"\u5317\u4eac"`` is in
``"\u9996\u90fd\u662f\u5317\u4eac"``).

Numbers (seed 001):

* a fraction written with the fraction slash (a vulgar fraction ``"\u00bd"`` folds to
  ``1\u20442``) and a number with an exponent (``5^2``, from ``"5\u00b2"`` or written so) are
  each one number: neither the 1 nor the 2 of ``"\u00bd"`` is in it, nor 5 or 2 in ``"5\u00b2"``.
  An ASCII slash is not such a mark: ``"3/4"`` contains 3 and 4
  (case R16f), as a range contains its ends;
* it is not found inside a larger number: "11" is not in "711" (H02a), "5" not in "25"
  (H02b), "10" not in "100" (H03d), "45.2" not in "145.2" or "45.25", "3.14" not in "314"
  (H03b);
* the decimal point belongs to the number: "12" is not in ".12" / "0.12" (H02c), but a full
  stop after a number is not a decimal point ("$29." contains 29, H05a);
* the minus sign belongs to the number: "5" is not in "-5" nor "3" in "-3" (H04a, H04b), and
  "-5" is not in "5";
* a hyphen between two numbers is a range, not a minus sign, with or without spaces round it
  ("10-12" and "2 - 12" contain 12 and do not contain -12; H04d, H04e, H04f); a unit or "%"
  written against the first number keeps it a range ("5km-12km", "10%-12%"); a hyphen right
  after a letter joins a word ("covid-19" contains 19, not -19);
* units, currency and "%" written against a number do not hide it ("45.2m", "5mg", "$8,000.",
  "20%", "\u00a3304m", "\u20ac5", "\u00a55"; H02e, H05d).
* float64 noise: a number of the answer written
  with a decimal point and 16 or 17 significant digits -- a float as a program prints it,
  ``"0.30000000000000004"`` for ``0.1 + 0.2`` -- contains an accepted answer that is a bare
  number equal to it up to float64 noise (:func:`contains_float_noise`; the rule and its source,
  C's ``DBL_DIG``, in :mod:`hrbench._util.floats`). A number of 15 significant digits or fewer is
  matched as written, so "45.2" is still not in "45.25" nor "0.3" in "0.31"; so is one of more
  than 17 (no float64's repr has more, :data:`hrbench._util.floats.REPR_DIGITS`), on either side.

Seed 001 says "contains" and pins numbers; the word rule above is hrbench's own, and text with
neither a letter nor a digit at an end (``"(A)"``, ``"$5"``) is matched by plain containment at
that end.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal
from functools import lru_cache

from hrbench._util.floats import DBL_DIG, float_noise_equal, may_be_float_repr, significant_digits
from hrbench._util.text import FRACTION_SLASH, JOIN, caseless, fold_minus, fold_numerals

__all__ = ["contains_answer", "contains_float_noise", "fold_answer", "strip_around"]

_SEP = "\ue000"  # a private-use marker for a possible thousands separator; NFKC leaves it alone

_PRE = str.maketrans(
    {
        "\u00a0": _SEP,
        "\u2009": _SEP,
        "\u202f": _SEP,
        "\u2007": _SEP,
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2212": "-",
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
    }
)


_OTHER_DIGIT = re.compile(r"(?![0-9])\d")  # a decimal digit of another script


def _ascii_digit(m: re.Match[str]) -> str:
    return str(unicodedata.decimal(m.group()))


_LATEX_GROUP = re.compile(r"(?<=[0-9])(\{,\}|,\\!|\\,)(?=[0-9])")


def _latex_group(m: re.Match[str]) -> str:
    return _SEP if m.group(1) == "\\," else ","


_THOUSANDS = re.compile(r"(?<![0-9.])([0-9]{1,3})([,\ue000])([0-9]{3}(?:\2[0-9]{3})*)(?![0-9]|\2[0-9])")
_SIGN_CURRENCY = re.compile(r"(?<![0-9])([-+])([$\u20ac\u00a3\u00a5\u20b9\u20a9\u20bd\u20ba])(?=[0-9.])")
_TRAILING_ZEROS = re.compile(r"(?<![0-9.])([0-9]+)\.([0-9]*?)0+(?![0-9]|\.[0-9])")
_LEADING_POINT = re.compile(r"(?<![0-9a-z.])\.(?=[0-9])")


def _drop_separators(m: re.Match[str]) -> str:
    return m.group(1) + m.group(3).replace(m.group(2), "")


def _strip_zeros(m: re.Match[str]) -> str:
    frac = m.group(2)
    return m.group(1) + ("." + frac if frac else "")


_CACHED_CHARS = 512
"""Texts up to this long are cached (answers repeat across runs and arms); longer ones are not."""


def fold_answer(text: str) -> str:
    r"""Fold a text for ``answer_contains``: the steps in this module's docstring.

    Args:
        text: an answer or an accepted answer.

    Returns:
        The folded text.

    Example:
        >>> fold_answer("  Sheffield produced 12,400 UNITS.")
        'sheffield produced 12400 units.'
        >>> fold_answer("1\u00a0204 and 3,5,7 and $29.00")
        '1204 and 3,5,7 and $29'
    """
    if len(text) <= _CACHED_CHARS:
        return _fold_cached(text)
    return _fold(text)


def _fold(text: str) -> str:
    if "\\," in text or "{,}" in text or ",\\!" in text:
        text = _LATEX_GROUP.sub(_latex_group, text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", fold_numerals(text).translate(_PRE))
        if not text.isascii():
            text = fold_minus(_OTHER_DIGIT.sub(_ascii_digit, text))
    text = caseless(text)
    if "," in text or _SEP in text:
        text = _THOUSANDS.sub(_drop_separators, text)
        if _SEP in text:
            text = text.replace(_SEP, " ")
    text = " ".join(text.split())
    if "." in text:
        text = _LEADING_POINT.sub("0.", text)
        text = _TRAILING_ZEROS.sub(_strip_zeros, text)
    if "-" in text or "+" in text:
        text = _SIGN_CURRENCY.sub(r"\2\1", text)
    return text


_fold_cached = lru_cache(maxsize=1 << 16)(_fold)


_DIGIT = frozenset("0123456789")
_JOINERS = frozenset((FRACTION_SLASH, JOIN))
"""Marks that join two numbers into one (a fraction, a mixed number)."""
_POWER = frozenset("^_")
"""An exponent (``5^2``) or an index (``10_2``) after a number: one number with it."""
_UNIT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz%\u00b0")


def _is_minus(hay: str, k: int) -> bool:
    """Whether ``hay[k]`` (a ``-``) is a minus sign rather than a range or word hyphen."""
    m = k - 1
    if m < 0:
        return True
    spaced = False
    while m >= 0 and hay[m] == " ":
        m -= 1
        spaced = True
    if m < 0:
        return True
    c = hay[m]
    if c in _DIGIT:
        return False  # "10-12", "2 - 12": a range
    if c in _UNIT_CHARS:
        j = m
        while j >= 0 and m - j < 4 and hay[j] in _UNIT_CHARS:
            j -= 1
        if j >= 0 and hay[j] in _DIGIT:
            return False  # "5km-12km", "10% - 12%": a range
        if not spaced and c != "%":
            return False  # "covid-19": a hyphen joining a word
    return True


def _word_char(c: str) -> bool:
    """A letter, digit or combining mark that is not of a script written without word spaces."""
    if c.isascii():
        return c.isalnum()
    if c.isalnum():
        return not _unspaced(c)
    return unicodedata.category(c)[0] == "M"


def _unspaced(c: str) -> bool:
    """Whether ``c`` belongs to a script written without spaces between words."""
    o = ord(c)
    return (
        0x2E80 <= o <= 0x9FFF  # CJK radicals, kana, CJK ideographs
        or 0xAC00 <= o <= 0xD7AF  # Hangul syllables: particles attach to the noun
        or 0xF900 <= o <= 0xFAFF
        or 0x20000 <= o <= 0x3FFFF
        or 0x0E00 <= o <= 0x0EFF  # Thai, Lao
        or 0x1000 <= o <= 0x109F  # Myanmar
        or 0x1780 <= o <= 0x17FF  # Khmer
        or 0x0F00 <= o <= 0x0FFF  # Tibetan
    )


_AROUND = "\"'.,;:!? "
"""Sentence punctuation and quotes (curly ones are folded to these) round an answer."""


def strip_around(folded: str) -> str:
    """Drop sentence punctuation and quotes round a folded answer (cases R12a, R12c).

    ``. , ; : ! ?`` and straight quotes (curly quotes are already folded to them) at either
    end are not part of an answer: the label ``"No."`` is the answer ``no``. A text made only of
    such marks is kept as it is.

    Example:
        >>> strip_around('"sum of the current and deferred taxes."'), strip_around("?")
        ('sum of the current and deferred taxes', '?')
    """
    return folded.strip(_AROUND) or folded


def contains_answer(hay: str, needle: str) -> bool:
    """Whether the folded answer ``hay`` contains the folded accepted answer ``needle``.

    A number at either end of ``needle`` is matched whole (seed 001); the rules are in this
    module's docstring.

    Args:
        hay: the folded answer text.
        needle: one folded accepted answer.

    Returns:
        ``True`` when ``needle`` occurs in ``hay`` with its end numbers whole.

    Example:
        >>> contains_answer("answer: 711", "11"), contains_answer("for 10-12 players", "12")
        (False, True)
    """
    n = len(needle)
    if n == 0:
        return False
    head_digit = needle[0] in _DIGIT
    head_minus = needle[0] == "-" and n > 1 and needle[1] in _DIGIT
    tail_digit = needle[-1] in _DIGIT
    head_word = not head_digit and _word_char(needle[0])
    tail_word = not tail_digit and _word_char(needle[-1])
    size = len(hay)
    start = 0
    while True:
        i = hay.find(needle, start)
        if i < 0:
            return False
        start = i + 1
        if head_digit and i > 0:
            p = hay[i - 1]
            if p in _DIGIT or p == "." or (p == "-" and _is_minus(hay, i - 1)) or p in _JOINERS:
                continue
            if p in _POWER and i > 1 and hay[i - 2] in _DIGIT:
                continue
        if head_minus and not _is_minus(hay, i):
            continue
        if head_word and i > 0 and _word_char(hay[i - 1]):
            continue
        j = i + n
        if j < size:
            c = hay[j]
            if tail_digit:
                if c in _DIGIT:
                    continue
                if (c == "." or c in _JOINERS) and j + 1 < size and hay[j + 1] in _DIGIT:
                    continue
                if c in _POWER and hay[j + 1 : j + 3].lstrip("+-{")[:1] in _DIGIT:
                    continue
            elif tail_word and _word_char(c):
                continue
        return True


_BARE_NUMBER = re.compile(r"(-?[0-9]+(?:\.[0-9]+)?)((?: ?%| percent| per cent)?)")
_LONG_RUN = re.compile(r"[0-9.]{17}")  # a number with a point and 16+ digits has 17+ such characters
_PRINTED_FLOAT = re.compile(r"(?<![0-9.])(-?)([0-9]+\.[0-9]+)(?![0-9]|\.[0-9])")


def contains_float_noise(hay: str, needle: str) -> bool:
    """Whether ``hay`` holds a printed float equal to the bare number ``needle`` up to noise.

    Only numbers of ``hay`` written with a decimal point and 16 or 17 significant digits
    are read, and only a ``needle`` of at most 17 (module docstring); each is matched whole, with its minus sign as
    :func:`contains_answer` reads it (a hyphen between two numbers is a range).

    Args:
        hay: the folded answer text.
        needle: one folded accepted answer; only a bare number (``"0.3"``, ``"-12"``), or one
            with a percent mark (``"0.3%"``, ``"0.3 percent"``: the answer's number must carry
            the same mark), is sought.

    Returns:
        ``True`` when such a number equals ``needle`` by :func:`hrbench._util.floats.float_noise_equal`.

    Example:
        >>> contains_float_noise("the ratio is 0.30000000000000004.", "0.3")
        True
        >>> contains_float_noise("0.31", "0.3"), contains_float_noise("1234567890123457", "1234567890123456")
        (False, False)
        >>> contains_float_noise("0.300000000000000000001", "0.3")
        False
    """
    bare = _BARE_NUMBER.fullmatch(needle)
    if bare is None or _LONG_RUN.search(hay) is None:
        return False
    if not may_be_float_repr(bare.group(1)):
        return False
    want, mark = Decimal(bare.group(1)), bare.group(2)
    for m in _PRINTED_FLOAT.finditer(hay):
        digits = m.group(2)
        if significant_digits(digits) <= DBL_DIG or not may_be_float_repr(digits):
            continue  # no float noise: 15 digits or fewer survive a float64; over 17 are no float's repr
        value = Decimal(digits)
        if m.group(1) and _is_minus(hay, m.start(1)):
            value = -value
        end = m.end() + len(mark)
        if mark and (hay[m.end() : end] != mark or (end < len(hay) and _word_char(hay[end]))):
            continue
        if float_noise_equal(value, want):
            return True
    return False
