"""Folding and whole-number containment for the ``answer_contains`` scorer (seed 001).

Both the answer and every accepted answer go through :func:`fold_answer`; the answer is right
when :func:`contains_answer` finds a folded accepted answer in it. The rules, with the case ids
of ``../shared/cases/`` that pin them:

Folding (:func:`fold_answer`), in this order:

1. The no-break space U+00A0, the thin space U+2009 and the narrow no-break space U+202F are
   marked as possible thousands separators (H01b); curly quotes U+2018/U+2019/U+201C/U+201D
   become ASCII quotes (H08c); the minus sign U+2212 and the hyphens and dashes U+2010-U+2013
   become ``-`` (so ``"\u22125"`` is minus five and ``"10\u201312"`` a range).
2. NFKC (H08a, H08e): compatibility forms such as full-width digits ``"\uff11\uff12"`` become
   ASCII and accents are composed. Decided beyond NFKC: a decimal digit of any other script
   (Arabic-Indic, Devanagari, ...) becomes its ASCII digit too.
3. Full Unicode case folding (``str.casefold``, H07a: ``"STRASSE"`` equals ``"Stra\u00dfe"``);
   no locale-specific (Turkic) folding (H07c).
4. Thousands separators -- a comma or one of the three spaces above -- are dropped only
   between a lead of one to three digits and groups of exactly three digits, the same
   separator throughout, the last group not followed by more digits (decided, H01f): "1,204",
   "1\u00a0204", "1\u2009204", "1\u202f204" and "1204" fold alike (H01a, H01b, H01d), while
   the list "3,5,7", "1234,567" and "1,2345" are left as they are. An ordinary space is not a
   separator ("1 204" stays two numbers), nor is an apostrophe or a point.
5. Runs of white space become one space; the text is trimmed.
6. A sign written before a currency sign is moved after it, so "-$12.6" reads "$-12.6" and
   still holds the number -12.6 (a currency sign does not hide a number, H01a, H05a).
7. Decided: a decimal with trailing zeros equals the number without them ("29.00" and "29.0"
   equal "29", "45.20" equals "45.2"), and a bare leading point gets its zero (".5" is "0.5").
   Scientific notation is not expanded: "1e5" is not 100000 (L01d).

Containment (:func:`contains_answer`): plain substring containment, except that a number at
either end of the accepted answer is matched whole (seed 001):

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

Text without digits at its ends is matched by plain containment, as the seed says.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["contains_answer", "fold_answer"]

_SEP = "\ue000"  # a private-use marker for a possible thousands separator; NFKC leaves it alone

_PRE = str.maketrans(
    {
        "\u00a0": _SEP,
        "\u2009": _SEP,
        "\u202f": _SEP,
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
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text.translate(_PRE))
        if not text.isascii():
            text = _OTHER_DIGIT.sub(_ascii_digit, text)
    text = text.casefold()
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
    size = len(hay)
    start = 0
    while True:
        i = hay.find(needle, start)
        if i < 0:
            return False
        start = i + 1
        if head_digit and i > 0:
            p = hay[i - 1]
            if p in _DIGIT or p == "." or (p == "-" and _is_minus(hay, i - 1)):
                continue
        if head_minus and not _is_minus(hay, i):
            continue
        if tail_digit:
            j = i + n
            if j < size:
                c = hay[j]
                if c in _DIGIT:
                    continue
                if c == "." and j + 1 < size and hay[j + 1] in _DIGIT:
                    continue
        return True
