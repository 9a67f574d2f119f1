"""The official SQuAD v2.0 exact match and F1 (``evaluate-v2.0.py``), re-implemented.

The rules (see :mod:`hrbench.metrics` for what they do to numbers, signs and one-letter
answers): lower case, ASCII punctuation removed, the words "a", "an", "the" removed, white
space collapsed; reference answers that normalise to nothing are dropped, and an item left with
none is unanswerable (its only reference is ``""``); F1 is over the bag of whitespace tokens;
an item's score is the best over its references. Both :mod:`hrbench.metrics` (``evaluate()``'s
metrics) and :mod:`hrbench.reading` (the ``squad`` scorer) score with these functions.

Example:
    >>> squad_exact("The Normans", ["Normans"]), round(squad_f1("Normans in France", "the Normans"), 4)
    (1.0, 0.5)
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from hrbench.errors import ConfigError
from hrbench.scoring._scorer import fold, plain_number

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)

_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(s: str) -> str:
    """Normalise an answer as the official SQuAD v2.0 script does.

    Lower case, then remove ``string.punctuation`` characters, then replace the whole words
    "a", "an", "the" by a space, then collapse white space.

    Args:
        s: the answer text.

    Returns:
        The normalised text.

    Example:
        >>> normalize_answer("The  Normans!")
        'normans'
        >>> normalize_answer("an apple, a day")
        'apple day'
    """
    return " ".join(_ARTICLES.sub(" ", s.lower().translate(_PUNCT)).split())


_NUM_THOUSANDS = re.compile(r"(?<![0-9.,])([0-9]{1,3})((?:,[0-9]{3})+)(?![0-9]|,[0-9])")
_NUM_ZEROS = re.compile(r"(?<![0-9.])([0-9]+)\.([0-9]*?)0+(?![0-9]|\.[0-9])")
_NUM_SIGN_CURRENCY = re.compile(r"(?<![0-9])-([$\u20ac\u00a3\u00a5])(?=[0-9.])")
_NUM_KEEP = re.compile(r"(?<![0-9])-(?=[0-9.])|(?<=[0-9])\.(?=[0-9])")
_NUM_BETWEEN = re.compile(f"(?<=[0-9])[{re.escape(string.punctuation)}]+(?=[0-9])")
_KEPT = str.maketrans({"\ue001": "-", "\ue002": "."})
_PUNCT_NUMBERS = str.maketrans("", "", string.punctuation)


def normalize_numbers(s: str) -> str:
    """Normalise an answer like SQuAD but keep numbers, signs and short answers intact.

    For non-SQuAD data (SPEC section 6; cases R09e, R09f, R10a, R11c show what SQuAD
    normalisation does instead). Steps, in order:

    1. :func:`hrbench.scoring._scorer.fold`: NFKC, curly quotes, minus forms to ``-``, caseless matching
       in every script, white space collapsed.
    2. Numbers: thousands commas dropped (``"1,234"`` is ``1234``; the list ``"3,5,7"`` is not
       a grouped number), trailing zeros of a decimal dropped (``"29.00"`` is ``29``), a sign
       before a currency sign moved after it (``"-$12"`` holds ``-12``).
    3. Punctuation (``string.punctuation``) removed, except a minus sign before a number and a
       decimal point between digits; punctuation between two digits becomes a space, so
       ``"3.14"`` is not ``"314"``, ``"-154"`` is not ``"154"`` and ``"10-12"`` is ``"10 12"``.
    4. The words "a", "an", "the" removed, as in SQuAD, unless nothing else is left: the
       answer ``"A"`` stays ``"a"`` (and is not ``"an"``).
    5. If nothing is left (an answer of punctuation only), the folded text of step 1 is the
       answer, so ``") ] }"`` is not ``"} ] )"``.

    Args:
        s: the answer text.

    Returns:
        The normalised text; empty only for an empty or blank answer.

    Example:
        >>> normalize_numbers("The change was \u2212154."), normalize_numbers("About 3.14")
        ('change was -154', 'about 3.14')
        >>> normalize_numbers("A"), normalize_numbers("1,204.50 USD"), normalize_numbers(") ] }")
        ('a', '1204.5 usd', ') ] }')
    """
    folded = fold(s)
    t = folded
    if "," in t:
        t = _NUM_THOUSANDS.sub(lambda m: m.group(1) + m.group(2).replace(",", ""), t)
    if "." in t:
        t = _NUM_ZEROS.sub(lambda m: m.group(1) + ("." + m.group(2) if m.group(2) else ""), t)
    if "-" in t:
        t = _NUM_SIGN_CURRENCY.sub(r"\1-", t)
    t = _NUM_KEEP.sub(lambda m: "\ue001" if m.group() == "-" else "\ue002", t)
    t = _NUM_BETWEEN.sub(" ", t)
    t = t.translate(_PUNCT_NUMBERS).translate(_KEPT)
    words = t.split()
    kept = [w for w in words if w not in ("a", "an", "the")]
    return " ".join(kept or words) or folded


def normaliser(normalise: Any) -> Callable[[str], str] | None:
    """The normalisation a metric's ``normalise`` setting names (``None``: compare as written).

    Raises:
        ConfigError: ``normalise`` is not ``True``, ``"squad"``, ``"numbers"`` or ``False``.

    Example:
        >>> normaliser("squad") is normalize_answer, normaliser(False)
        (True, None)
    """
    if normalise is True or normalise == "squad":
        return normalize_answer
    if normalise == "numbers":
        return normalize_numbers
    if normalise is False:
        return None
    raise ConfigError("normalise", normalise, 'expected True or "squad" (SQuAD v2.0), "numbers", or False')


def _missing(value: Any) -> bool:
    """``None``, NaN, or pandas' ``NA``/``NaT``."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return type(value).__name__ in ("NAType", "NaTType")


def cell_text(value: Any) -> str:
    """A data cell as the text an answer is compared as: ``""`` when missing, a number written plainly.

    Example:
        >>> cell_text(None), cell_text(float("nan")), cell_text(3.0), cell_text(True)
        ('', '', '3', 'True')
    """
    if _missing(value):
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return ""
        return plain_number(value)
    if hasattr(value, "item") and not hasattr(value, "__len__"):  # a numpy scalar
        return cell_text(value.item())
    return str(value)


def references(value: Any) -> list[str]:
    """The reference answers in a data cell, as strings.

    ``None``, NaN, pandas ``NA`` and an empty list give no reference (an unanswerable item); a
    string gives one; a list, tuple or array gives one per element (missing elements dropped).

    Args:
        value: the cell.

    Returns:
        The reference answers, before normalisation.

    Example:
        >>> references(["Normans", "the Normans"]), references("Paris"), references(None)
        (['Normans', 'the Normans'], ['Paris'], [])
    """
    if isinstance(value, str):
        return [value]
    if _missing(value):
        return []
    if hasattr(value, "tolist") and not isinstance(value, (int, float)):  # numpy / pandas / polars
        value = value.tolist()
    if isinstance(value, (list, tuple, set, frozenset)) or (
        isinstance(value, Sequence) and not isinstance(value, (str, bytes))
    ):
        return [cell_text(v) for v in value if not _missing(v)]
    return [cell_text(value)]


def gold_answers(refs: list[str], norm: Callable[[str], str] = normalize_answer) -> list[str]:
    """The references the official SQuAD v2.0 script scores against: those ``norm`` leaves non-empty, else ``[""]``.

    Example:
        >>> gold_answers(["the", "Paris"]), gold_answers(["a"])
        (['Paris'], [''])
    """
    gold = [a for a in refs if norm(a)]
    return gold or [""]


def _f1_one(gold: str, pred: str, norm: Callable[[str], str] = normalize_answer) -> float:
    gold_toks = norm(gold).split() if gold else []
    pred_toks = norm(pred).split() if pred else []
    if not gold_toks or not pred_toks:
        return float(gold_toks == pred_toks)
    num_same = sum((Counter(gold_toks) & Counter(pred_toks)).values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(pred_toks)
    recall = num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def squad_exact(prediction: Any, refs: Any, norm: Callable[[str], str] = normalize_answer) -> float:
    """SQuAD v2.0 exact match of one prediction: the best over the references.

    Args:
        prediction: the predicted answer (``None`` is the empty answer).
        refs: one reference, a list of them, or ``None``/``[]`` for an unanswerable item.
        norm: the normalisation (default the official SQuAD one; :func:`normalize_numbers`
            keeps numbers, signs and one-letter answers).

    Returns:
        1.0 or 0.0.

    Example:
        >>> squad_exact("The Normans", ["Normans"]), squad_exact("", []), squad_exact("x", [])
        (1.0, 1.0, 0.0)
    """
    pred = norm(cell_text(prediction))
    gold = [g for g in map(norm, references(refs)) if g] or [""]
    return 1.0 if pred in gold else 0.0


def squad_f1(prediction: Any, refs: Any, norm: Callable[[str], str] = normalize_answer) -> float:
    """SQuAD v2.0 token F1 of one prediction: the best over the references.

    Args:
        prediction: the predicted answer (``None`` is the empty answer).
        refs: one reference, a list of them, or ``None``/``[]`` for an unanswerable item.
        norm: the normalisation (default the official SQuAD one).

    Returns:
        The F1 score in [0, 1].

    Example:
        >>> round(squad_f1("Normans in France", "the Normans"), 4)
        0.5
    """
    pred = cell_text(prediction)
    return max(_f1_one(g, pred, norm) for g in gold_answers(references(refs), norm))
