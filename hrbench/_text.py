"""Text folds that both built-in scorers share: caseless matching and minus signs.

``exact`` (seed 000, :func:`hrbench.scorer.fold`) and ``answer_contains`` (seed 001,
:func:`hrbench.reading.fold_answer`) apply these after NFKC, so the two scorers never disagree
on what counts as the same letter or the same sign. The rules (SPEC section 6):

- Caseless (decided, seed silent; cases H07a, H07c, I07s): Unicode's compatibility caseless
  match (The Unicode Standard, 3.13, D146: ``NFKD(casefold(NFKD(casefold(NFD(x)))))``), then
  NFC, so spellings that differ only in case are equal in every script, also where case
  folding leaves a text unnormalised (Greek ``"\u1fb7"`` against its title case). A dot above
  (U+0307) left on a soft-dotted ``i`` or ``j`` is dropped: lower-casing ``"\u0130"`` (capital
  I with dot) gives ``"i"`` plus that dot, which must not keep ``"\u0130zmir"`` from
  ``"izmir"``. No locale (Turkic) rule: the dotless ``"\u0131"`` stays apart from ``"i"``.
- Minus (decided, case R09a): the minus sign U+2212 (and what NFKC turns into it: superscript
  and subscript minus) is ``-``; any dash (Unicode category Pd) written right before a digit
  is ``-`` too, so ``"\u22125"``, ``"\u20135"`` and ``"-5"`` are one number.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["caseless", "fold_minus"]

_DASHES = (
    "\u058a\u05be\u1400\u1806\u2010-\u2015\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u2e5d"
    "\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead"
)
"""Every dash of Unicode category Pd but ``-`` itself (Unicode 15.1; a test checks the list)."""
_DASH_BEFORE_DIGIT = re.compile(f"[{_DASHES}](?=\\d)")
_MINUS = str.maketrans({"\u2212": "-", "\u2796": "-"})
_SOFT_DOT = re.compile("(?<=[ij\u012f\u0268\u029d\u0249\u0456\u0458\u03f3])([\u0323\u0328\u0330]*)\u0307")


def fold_minus(text: str) -> str:
    """Fold minus forms to ``-`` (decided, case R09a; the rule is in this module's docstring).

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
