"""Text folds that both built-in scorers share: caseless matching and minus signs.

``exact`` (seed 000, :func:`hrbench.scoring._scorer.fold`) and ``answer_contains`` (seed 001,
:func:`hrbench.reading.fold_answer`) apply these after NFKC, so the two scorers never disagree
on what counts as the same letter or the same sign. The rules (SPEC section 6):

- Caseless (cases H07a, H07c, I07s): Unicode's compatibility caseless
  match (The Unicode Standard, 3.13, D146: ``NFKD(casefold(NFKD(casefold(NFD(x)))))``), then
  NFC, so spellings that differ only in case are equal in every script, also where case
  folding leaves a text unnormalised (Greek ``"\u1fb7"`` against its title case). A dot above
  (U+0307) left on a soft-dotted ``i`` or ``j`` is dropped: lower-casing ``"\u0130"`` (capital
  I with dot) gives ``"i"`` plus that dot, which must not keep ``"\u0130zmir"`` from
  ``"izmir"``. No locale (Turkic) rule: the dotless ``"\u0131"`` stays apart from ``"i"``.
- Minus (case R09a): the minus sign U+2212 (and what NFKC turns into it: superscript
  and subscript minus) is ``-``; any dash (Unicode category Pd) written right before a digit
  is ``-`` too, so ``"\u22125"``, ``"\u20135"`` and ``"-5"`` are one number.
- Numerals NFKC would glue (:func:`fold_numerals`, applied before NFKC
  by all three scorers that read numbers: ``exact``, ``answer_contains`` and ``numeric``, so
  they cannot drift):

  * superscript and subscript digits written right after a digit stay apart from it: a
    superscript run is an exponent written ``^`` (``"5\u00b2"`` is ``5^2``, never ``52``;
    ``"10\u2078"`` is ``10^8``, never ``108``), a subscript run is written ``_``
    (``"10\u2082"`` is ``10_2``). After anything else they fold as NFKC folds them
    (``"H\u2082O"`` is ``H2O``), except that ``numeric`` drops them there (``"12 m\u00b2"``
    holds the one number 12: a unit's power is not a number of its own).
  * a vulgar fraction character (``"\u00bd"``, ``"\u00be"``, ``"\u2153"``, ...) and a
    fraction written with superscript and subscript digits round the fraction slash
    (``"\u00b3\u2044\u2081\u2086"``) are one number, ``3\u20444`` with the fraction slash
    U+2044 between ASCII digits; a digit written before one (``"2\u00bd"``) is its whole part,
    joined to it by :data:`JOIN` (a space in ``exact``), never glued into ``21\u20442``.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["FRACTION_SLASH", "JOIN", "caseless", "fold_minus", "fold_numerals"]

JOIN = "\ue001"
"""A private-use mark between a mixed number's whole part and its fraction (``2\u00bd``)."""
FRACTION_SLASH = "\u2044"
"""U+2044, NFKC's slash in a vulgar fraction: ``"\u00bd"`` is ``"1\u20442"``."""

_SUPERSCRIPTS = "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207a\u207b"
_SUBSCRIPTS = "\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089\u208a\u208b"
_SCRIPT_ASCII = str.maketrans(_SUPERSCRIPTS + _SUBSCRIPTS, "0123456789+-" * 2)
_VULGAR = "\u00bc-\u00be\u2150-\u215e\u2189"
_NUMERALS = re.compile(
    rf"(?P<whole>\d)?(?:(?P<vulgar>[{_VULGAR}])|(?P<num>[{_SUPERSCRIPTS[:10]}]+)\u2044(?P<den>[{_SUBSCRIPTS[:10]}]+))"
    rf"|(?<=\d)(?P<sup>[{_SUPERSCRIPTS[10:]}]?[{_SUPERSCRIPTS[:10]}]+)"
    rf"|(?<=\d)(?P<sub>[{_SUBSCRIPTS[10:]}]?[{_SUBSCRIPTS[:10]}]+)"
    rf"|(?P<lone>[{_SUPERSCRIPTS[10:]}{_SUBSCRIPTS[10:]}]?[{_SUPERSCRIPTS[:10]}{_SUBSCRIPTS[:10]}]+)"
)
_HAS_NUMERAL = re.compile(rf"[{_SUPERSCRIPTS[:10]}{_SUBSCRIPTS[:10]}{_VULGAR}]")

_DASHES = (
    "\u058a\u05be\u1400\u1806\u2010-\u2015\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u2e5d"
    "\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead"
)
"""Every dash of Unicode category Pd but ``-`` itself (Unicode 15.1; a test checks the list)."""
_DASH_BEFORE_DIGIT = re.compile(f"[{_DASHES}](?=\\d)")
_MINUS = str.maketrans({"\u2212": "-", "\u2796": "-"})
_SOFT_DOT = re.compile("(?<=[ij\u012f\u0268\u029d\u0249\u0456\u0458\u03f3])([\u0323\u0328\u0330]*)\u0307")


def fold_numerals(text: str, units: bool = False) -> str:
    """Keep apart the numerals NFKC would glue together (this module's docstring).

    Applied before NFKC. Args:
        text: a reply or a label, as written.
        units: drop superscript and subscript digits that do not follow a digit (``numeric``:
            ``"m\u00b2"`` is the unit ``m``) instead of leaving them to NFKC.

    Returns:
        The text with superscript and subscript digits after a digit as ``^n`` and ``_n``, and
        fractions as ``n\u2044d`` (after a digit, with :data:`JOIN` before them).

    Example:
        >>> fold_numerals("5\u00b2 and 3 \u00d7 10\u2078 and H\u2082O")
        '5^2 and 3 \u00d7 10^8 and H\u2082O'
        >>> fold_numerals("2\u00bd cups, 12 m\u00b2", units=True) == "2" + JOIN + "1\u20442 cups, 12 m"
        True
    """
    if text.isascii() or _HAS_NUMERAL.search(text) is None:
        return text
    return _NUMERALS.sub(lambda m: _numeral(m, units), text)


def _numeral(m: re.Match[str], units: bool) -> str:
    if m.group("sup"):
        return "^" + m.group("sup").translate(_SCRIPT_ASCII)
    if m.group("sub"):
        return "_" + m.group("sub").translate(_SCRIPT_ASCII)
    if m.group("lone"):
        return "" if units else m.group("lone")
    whole = m.group("whole") or ""
    if m.group("vulgar"):
        frac = unicodedata.normalize("NFKC", m.group("vulgar"))
    else:
        frac = (
            m.group("num").translate(_SCRIPT_ASCII) + FRACTION_SLASH + m.group("den").translate(_SCRIPT_ASCII)
        )
    return whole + (JOIN if whole else "") + frac


def fold_minus(text: str) -> str:
    """Fold minus forms to ``-`` (case R09a; the rule is in this module's docstring).

    Args:
        text: a text after NFKC.

    Returns:
        The text with U+2212 and U+2796 as ``-``, and a dash before a digit as ``-``.

    Example:
        >>> fold_minus("\u22125 and \u20143 and 10\u201312 and A\u2014B")
        '-5 and -3 and 10-12 and A\u2014B'
    """
    if text.isascii():
        return text
    return _DASH_BEFORE_DIGIT.sub("-", text.translate(_MINUS))


def caseless(text: str) -> str:
    """Fold case so that spellings differing only in case are equal (this module's docstring).

    Args:
        text: any text.

    Returns:
        The caseless text, NFC-composed.

    Example:
        >>> caseless("\u0130ZM\u0130R") == caseless("izmir"), caseless("STRASSE") == caseless("Stra\u00dfe")
        (True, True)
        >>> caseless("\u0131stanbul") == caseless("Istanbul")
        False
    """
    if text.isascii():
        return text.lower()
    nfkd = unicodedata.normalize
    text = nfkd("NFKD", nfkd("NFKD", nfkd("NFD", text).casefold()).casefold())
    if "\u0307" in text:
        text = _SOFT_DOT.sub(r"\1", text)
    return nfkd("NFC", text)
