"""The official TAT-QA metric (exact match and F1), re-implemented.

Source: GitHub ``NExTplusplus/TAT-QA`` (MIT), snapshot commit
``870accc41953dcde885aabeb963d94aabdc0fbc3``: ``tatqa_utils.py`` (number reading and
normalisation), ``tatqa_metric.py`` (``get_answer_str``, ``add_percent_pred``, ``get_metrics``,
``extract_gold_answers``, ``TaTQAEmAndF1``) and ``tatqa_eval.py`` (the per-question loop and
the mean). Each function below names the official function it re-implements and lists its
rules, including the official script's quirks, which are kept so the figures match it: on the
1,668 dev questions and the six shipped runs of ``tatqa-dev-llm`` (``bench/tatqa_metric.py``)
every question's EM and F1 equal the official script's.

One question is scored in four steps (:func:`tatqa_em_f1`):

1. no prediction (``None``, ``""``, ``[]``, and, as in the official ``if not prediction``, the
   number 0) scores 0 and 0;
2. the gold answer and the prediction are each written as one string by
   :func:`tatqa_answer_string`: the spans sorted, each number span rounded to 2 decimals and
   multiplied out by the scale (``1496.5`` with ``million`` -> ``"1496500000.0000"``), other
   spans followed by the scale word, all joined by spaces; a single-number prediction without
   a scale gets a second chance as the bare number (``add_percent_pred``: 0.2342 against
   23.42 percent);
3. both strings are normalised (:func:`tatqa_normalize`); EM is whether they are equal, F1 the
   F1 of their sets of tokens (a multi-span answer is one bag of tokens), rounded to 2
   decimals; the best over the prediction's strings counts;
4. an arithmetic or count question's F1 is its EM (no partial credit for a number).
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from hrbench.scoring._squad import _missing

__all__ = [
    "tatqa_answer_string",
    "tatqa_em_f1",
    "tatqa_normalize",
    "tatqa_number",
]

# -- numbers (tatqa_utils.py) ------------------------------------------------------------------

_NOT_IN_NUMBER = frozenset("'\"\\$€£¥%(),[]")  # EXCLUDE_IN_NUM
_FIRST_NUMBER = re.compile(r"([+-]?\d+(\.\d+)?)|([+-]?\.\d+)")
_BRACKETED = re.compile(r"(\([\d.\s]+\))")
_PERCENT = re.compile(r"([\d.\s]+%)")
_NUMBER_WORD = re.compile(r"([\d.]+\s?[a-zA-Z]+)")
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)
_SCALES = (("hundred", 100), ("thousand", 1000), ("million", 1000000), ("billion", 1000000000))


def _scale_value(scale: str) -> int | float:
    """The factor of a scale word (official ``scale_to_num``).

    The first of "hundred" 100, "thousand" 1000, "million" 10**6, "billion" 10**9,
    "percent" 0.01 found anywhere in the lower-cased text; 1 otherwise (so "cents per share"
    and "year" are 1). Ints stay ints, so a thousand-scaled integer stays an integer.
    """
    low = scale.lower()
    for word, factor in _SCALES:
        if word in low:
            return factor
    return 0.01 if "percent" in low else 1


def _strip(text: str) -> str:
    """Drop quotes, backslash, currency signs, ``%``, brackets, commas (official ``_clean_num``)."""
    return "".join(ch for ch in text if ch not in _NOT_IN_NUMBER)


def _first_number(text: str) -> int | float | None:
    """The first number in the stripped text (official ``extract_one_num_from_str``).

    A signed integer or decimal; an int when it has no decimal point. Official quirk kept: when
    the first number found starts with its decimal point (``".5"``) there is no number.
    """
    m = _FIRST_NUMBER.search(_strip(text))
    if m is None or not m.group(1):
        return None
    num = m.group(1)
    return float(num) if "." in num else int(num)


@lru_cache(maxsize=1 << 16)
def _is_number(text: str) -> bool:
    """Whether a text reads as a number (official ``is_number``).

    Each white-space word is stripped of currency, quotes, brackets, commas and ``%``; the first
    word must parse as a Python float that is not NaN (so ``"1e5"``, ``"inf"`` and ``"1_000"``
    count, as in the official script); a second word, if any, must be a scale word
    (``"1.5 million"`` is a number, ``"2019 revenue"`` is not).
    """
    words = " ".join(_strip(w) for w in text.split()).split()
    if not words:
        return False
    try:
        num = float(words[0])
    except ValueError:
        return False
    if num != num:
        return False
    return len(words) < 2 or _scale_value(words[1]) != 1


def tatqa_number(text: str) -> int | float | None:
    """The value of a number text, as the official ``to_number`` reads it.

    The first number (:func:`_first_number`), times: the factor of the scale word written
    right after the first number-and-word run (``"1.5 million"`` -> 1.5e6; official
    ``word_scale_handle``: only the first run of digits followed by letters counts), -1 when a
    number stands in brackets (``"(134)"`` -> -134, official ``negative_num_handle``), 0.01
    when a number is followed by ``%`` (``"12%"`` -> 0.12, official ``percent_num_handle``);
    rounded to 4 decimals. ``None`` when there is no number.

    Args:
        text: the text.

    Returns:
        An int when every factor is whole, a float otherwise, or ``None``.

    Example:
        >>> tatqa_number("$(9.8)"), tatqa_number("12%"), tatqa_number("1.5 million"), tatqa_number("7")
        (-9.8, 0.12, 1500000.0, 7)
    """
    num = _first_number(text)
    if num is None:
        return None
    m = _NUMBER_WORD.search(text)
    scale = _scale_value(m.group(0)) if m else 1
    sign = -1 if _BRACKETED.findall(text.strip()) else 1
    percent = 0.01 if _PERCENT.findall(text.strip()) else 1
    return round(num * scale * sign * percent, 4)


def tatqa_normalize(text: str) -> str:
    """Normalise an answer string as the official ``normalize_answer`` does.

    The text is split on single spaces; each piece is lower-cased; stripped of
    ``string.punctuation`` unless it reads as a number (:func:`_is_number`); a number is
    replaced by ``str`` of its value (:func:`tatqa_number`: ``"1,200"`` -> ``"1200"``,
    ``"(5)"`` -> ``"-5"``, ``"5.0000"`` -> ``"5.0"``; official quirk kept: ``".5"`` reads as
    a number without a value and becomes ``"None"``); the words "a", "an", "the" are removed;
    white space is collapsed. Empty pieces are dropped and the rest joined by one space.

    Args:
        text: the answer string.

    Returns:
        The normalised string.

    Example:
        >>> tatqa_normalize("The revenue was $1,200 (thousand).")
        'revenue was 1200 thousand'
    """
    return _normalize(text)


@lru_cache(maxsize=1 << 14)
def _normalize(text: str) -> str:
    parts = []
    for token in text.split(" "):
        token = token.lower()
        if not _is_number(token):
            token = "".join(ch for ch in token if ch not in _PUNCTUATION)
        if _is_number(token):
            token = str(tatqa_number(token))
        token = " ".join(_ARTICLES.sub(" ", token).split())
        if token.strip():
            parts.append(token)
    return " ".join(parts).strip()


# -- answers (tatqa_metric.py) -----------------------------------------------------------------


def tatqa_answer_string(answers: Sequence[Any], scale: str) -> str:
    """One answer (gold or predicted) as one string (official ``get_answer_str``).

    The answers are sorted as they are (official: ``sorted(answers)``), then each is written
    with ``str``: a number text (:func:`_is_number`) becomes its value with 4 decimals,
    ``"%.4f"``: when it holds ``%`` the value already carries the percent
    (``"36%"`` -> ``"0.3600"``), otherwise the value is rounded to 2 decimals and multiplied by
    the scale's factor (``1496.5`` with ``million`` -> ``"1496500000.0000"``, ``36`` with
    ``percent`` -> ``"0.3600"``, ``-22.2222`` with ``percent`` -> ``"-0.2222"``); a number text
    without a value, and any other text, is followed by a space and the scale word when there
    is a scale. The pieces are joined by one space, so a multi-span answer is one string.

    Args:
        answers: the spans (strings or numbers).
        scale: the scale word (``""``, ``"thousand"``, ``"million"``, ``"billion"``,
            ``"percent"``, or a prediction's own word).

    Returns:
        The answer string.

    Raises:
        TypeError: when the answers cannot be sorted together (strings beside numbers), as in
            the official script.

    Example:
        >>> tatqa_answer_string(["$1,496.5"], "million"), tatqa_answer_string(["b", "a"], "")
        ('1496500000.0000', 'a b')
    """
    return " ".join(_piece(str(ans), scale) for ans in sorted(answers))


@lru_cache(maxsize=1 << 14)
def _piece(text: str, scale: str) -> str:
    """One span of :func:`tatqa_answer_string`, written."""
    value = tatqa_number(text) if _is_number(text) else None
    if value is None:
        return f"{text} {scale}" if scale else text
    if "%" in text:
        return f"{value:.4f}"
    return f"{round(value, 2) * _scale_value(scale):.4f}"


def _bag_f1(pred: set[str], gold: set[str]) -> float:
    """F1 of two token sets (official ``_compute_f1``): an empty side has precision (recall) 1."""
    common = len(gold & pred)
    precision = common / len(pred) if pred else 1.0
    recall = common / len(gold) if gold else 1.0
    if precision == 0.0 and recall == 0.0:
        return 0.0
    return (2 * precision * recall) / (precision + recall)


def _em_f1_strings(pred: str, gold: str) -> tuple[float, float]:
    """EM and F1 of two answer strings (official ``get_metrics``).

    Both are normalised (:func:`tatqa_normalize`); EM is 1.0 when equal. F1 is over the sets
    of their tokens (a repeated token counts once), rounded to 2 decimals as numpy rounds
    (``rint(x * 100) / 100``). The official alignment of several bags is one-to-one here:
    every answer is one string.
    """
    p, g = _normalize(pred), _normalize(gold)
    em = 1.0 if p == g else 0.0
    f1 = _bag_f1(set(p.split()), set(g.split()))
    return em, round(f1 * 100) / 100


def _gold_spans(answer: Any, answer_type: str) -> list[Any]:
    """The gold answer as a list of spans (official ``extract_gold_answers``).

    ``span`` and ``multi-span``: the list itself; ``count``: ``str(int(answer))``; any other
    type (``arithmetic``): ``str(answer)``. Rule (the official data always has a type and
    gives spans as a list): a list answer without a type is taken as spans, and a span answer
    that is not a list as one span.
    """
    if answer_type in ("span", "multi-span") or (not answer_type and isinstance(answer, (list, tuple))):
        return list(answer) if isinstance(answer, (list, tuple)) else [answer]
    if answer_type == "count":
        return [str(int(answer))]
    return [str(answer)]


def _best(pred_strings: list[str], gold: str) -> tuple[float, float]:
    """The best (EM, F1) over the prediction's strings, compared as pairs, EM first.

    Official ``metric_max_over_ground_truths`` takes ``max`` of the ``(em, f1)`` tuples.
    """
    return max(_em_f1_strings(p, gold) for p in pred_strings)


def _extra_percent(prediction: list[Any], pred_scale: str) -> str | None:
    """The second chance of official ``add_percent_pred``.

    A prediction of one number text without ``%`` and without a scale is also tried as its
    value with 4 decimals, unrounded and unscaled (0.2342 against 23.42 percent).
    """
    if len(prediction) > 1:
        return None
    text = str(prediction[0])
    if pred_scale or "%" in text or not _is_number(text):
        return None
    value = tatqa_number(text)
    return None if value is None else f"{value:.4f}"


def tatqa_em_f1(
    prediction: Any, pred_scale: str | None, answer: Any, scale: str, answer_type: str
) -> tuple[float, float]:
    """The official TAT-QA exact match and F1 of one prediction (``TaTQAEmAndF1.__call__``).

    Args:
        prediction: the predicted answer: a string, a number, or a list of spans; ``None``,
            ``""``, ``[]`` and (official quirk) the number 0 score 0 and 0.
        pred_scale: the prediction's scale word (``""`` or ``None`` for none).
        answer: the gold answer: a list of spans, or a number for ``arithmetic``/``count``.
        scale: the gold scale (``""``, ``"thousand"``, ``"million"``, ``"billion"``, ``"percent"``).
        answer_type: ``"span"``, ``"multi-span"``, ``"arithmetic"`` or ``"count"``.

    Returns:
        ``(em, f1)``, each in [0, 1]; for ``arithmetic`` and ``count`` F1 equals EM.

    Raises:
        TypeError: a prediction list mixing strings and numbers (the official script's
            ``sorted`` fails the same way).

    Example:
        >>> tatqa_em_f1(["1496.5"], "million", ["$1,496.5"], "million", "span")
        (1.0, 1.0)
        >>> tatqa_em_f1("-22.21", "percent", -22.22, "percent", "arithmetic")
        (0.0, 0.0)
        >>> tatqa_em_f1(["2019", "2018"], "", ["2019"], "", "multi-span")
        (0.0, 0.67)
    """
    if _missing(prediction) or not prediction:
        return 0.0, 0.0
    gold_spans = _gold_spans(answer, answer_type)
    if not gold_spans:
        return 0.0, 0.0
    gold = tatqa_answer_string(gold_spans, scale)
    preds = list(prediction) if isinstance(prediction, list) else [prediction]
    p_scale = pred_scale or ""
    strings = [tatqa_answer_string(preds, p_scale)]
    extra = _extra_percent(preds, p_scale)
    if extra is not None:
        strings.append(extra)
    em, f1 = _best(strings, gold)
    if answer_type in ("arithmetic", "count"):
        f1 = em
    return em, f1
