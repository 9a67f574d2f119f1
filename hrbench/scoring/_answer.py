"""The ``answer_contains`` scorer (seed 001, the R original's ``gr_scorer_answer``)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from hrbench.records import REFUSAL_REASONS, Answer, Result, Score
from hrbench.scoring._fold import contains_answer, contains_float_noise, fold_answer, strip_around
from hrbench.scoring._not_found import _folded_not_found
from hrbench.scoring._scorer import (
    NOT_IN_DOCUMENT,
    Scorer,
    _get,
    label_answers,
    output_failure,
    output_text,
)

__all__ = ["LIMIT_NOTES", "REFUSAL_REASONS", "answer_scorer", "stop_kind"]

LIMIT_NOTES = frozenset(
    {
        "cost_cap_reached",
        "call_cap_reached",
        "token_cap_reached",
        "limit_refused",
        "run_cost_cap_reached",
        "run_call_cap_reached",
        "run_token_cap_reached",
    }
)
"""Notes that say a limit stopped a run (seed 001 names the first, second and fourth; ``run_*``
are a run's own caps, ``max_*_per_run``)."""

_NID = NOT_IN_DOCUMENT.casefold()


def stop_kind(output: Any) -> str | None:
    """Whether a limit or a refusal stopped the run behind an output (seed 001).

    ``"budget_stop"`` when the output is partial and notes a limit (``cost_cap_reached``,
    ``call_cap_reached``, ``token_cap_reached``, ``limit_refused``): an
    :class:`~hrbench.records.Answer` with ``partial=True``; a dict with such a note in ``notes``
    and ``partial`` not ``False`` (a dict that notes a limit is taken as partial unless
    it says otherwise, as in case H13c); a :class:`~hrbench.records.Result` whose ``note`` is a
    limit. Otherwise ``"refusal"`` when a step of the trace (``Answer.trace``, or a dict's
    ``steps``/``trace``) finished with reason ``refusal`` or ``content_filter``, or the output
    itself is a refused result (``refused=True`` or such a finish reason). Apology or refusal
    words in the text are never a refusal (cases H10a, H10f).

    Args:
        output: what an arm returned.

    Returns:
        ``"budget_stop"``, ``"refusal"`` or ``None``.

    Example:
        >>> stop_kind({"text": "x", "steps": [{"finish_reason": "content_filter"}]})
        'refusal'
    """
    if output is None or isinstance(output, (str, int, float)):
        return None
    if isinstance(output, Answer):
        partial: Any = output.partial
        notes: Any = output.notes
        steps: Any = output.trace
    elif isinstance(output, Result):
        partial, notes, steps = True, [output.note] if output.note else [], [output]
    else:
        notes = _get(output, "notes") or []
        if isinstance(notes, str):
            notes = [notes]
        partial = _get(output, "partial")
        partial = partial is not False
        steps = _get(output, "steps")
        if steps is None:
            steps = _get(output, "trace")
        steps = [output, *(steps or [])]
    if partial and any(n in LIMIT_NOTES for n in notes):
        return "budget_stop"
    for step in steps:
        if _get(step, "finish_reason") in REFUSAL_REASONS or _get(step, "refused") is True:
            return "refusal"
    return None


def is_not_in_document_label(answer: str) -> bool:
    """Whether an accepted answer is the ``NOT_IN_DOCUMENT`` label: one rule for every scorer.

    The answer is folded as ``answer_contains`` folds labels (case, white space, the folds of
    :func:`~hrbench.scoring.fold_answer`) and sentence punctuation and quotes around it
    are dropped (cases R12a, R12c). ``answer_contains`` and the numeric scorer both use it
    (one rule, so they agree on a quoted or exclaimed label).

    Example:
        >>> [is_not_in_document_label(a) for a in ("NOT_IN_DOCUMENT", ' "not_in_document." ', "NOT_IN")]
        [True, True, False]
    """
    return strip_around(fold_answer(answer)) == _NID


_PERCENT_LABEL = re.compile(r"(.*[0-9])\s?(?:%|percent|per cent)")
_PERCENT_FORMS = ("%", " %", " percent", " per cent")


@lru_cache(maxsize=1 << 14)
def _needles(answers: tuple[str, ...]) -> tuple[bool, tuple[str, ...]]:
    """(does the label accept NOT_IN_DOCUMENT, the other accepted answers folded).

    Rule (the label ``"25%"`` accepts ``"25 percent"``): an accepted answer that ends in a number with a percent mark (``%``, ``percent``,
    ``per cent``, with or without a space) accepts each of those four forms.
    """
    nid = False
    folded: list[str] = []
    for a in answers:
        if is_not_in_document_label(a):
            nid = True
            continue
        f = strip_around(fold_answer(a))
        m = _PERCENT_LABEL.fullmatch(f)
        forms = [m.group(1) + p for p in _PERCENT_FORMS] if m else [f]
        for g in forms:
            if g and g not in folded:
                folded.append(g)
    return nid, tuple(folded)


def screen_folded(output: Any) -> Score | str:
    """:func:`hrbench.scoring._scorer.screen` for the reading scorers: a failed output's outcome is folded.

    Returns:
        A wrong :class:`Score` for an output that is not an answer (its failure kind, or
        ``"parse_failure"`` when it has no text), its outcome the folded text; else the text.

    Example:
        >>> screen_folded({"text": " Paris ", "failure_kind": "refusal"}).outcome, screen_folded(" B ")
        ('paris', ' B ')
    """
    kind = output_failure(output)
    text = output_text(output)
    if kind is not None:
        return Score(correct=False, outcome=None if text is None else fold_answer(text), failure_kind=kind)
    if text is None:
        return Score(correct=False, outcome=None, failure_kind="parse_failure")
    return text


def verdict(outcome: str | None, right: bool | None, stop: str | None, abstains: bool) -> Score:
    """The reading scorers' common ending: a run's :class:`Score` once its answer has been checked.

    Args:
        outcome: what the run answered, normalised as the scorer reports it.
        right: whether the answer matched the label (``None``: the item has no label).
        stop: :func:`stop_kind` of the output (a run cut short by its length limit or a filter).
        abstains: whether the reply says the document lacks the answer.

    Returns:
        Unlabelled: ``correct=None`` (the stop kept); right: correct; cut short: its stop; a
        reply that abstains on an answerable question: ``"not_in_document"``; else ``"wrong"``.

    Example:
        >>> verdict("paris", False, None, False).failure_kind, verdict("", False, None, True).failure_kind
        ('wrong', 'not_in_document')
    """
    if right is None:
        return Score(correct=None, outcome=outcome, failure_kind=stop)
    if right:
        return Score(correct=True, outcome=outcome, failure_kind=None)
    if stop is not None:
        return Score(correct=False, outcome=outcome, failure_kind=stop)
    return Score(correct=False, outcome=outcome, failure_kind="not_in_document" if abstains else "wrong")


def _answer_contains(item: Any, output: Any, label: Any) -> Score:
    text = screen_folded(output)
    if isinstance(text, Score):
        return text
    outcome = fold_answer(text)
    stop = stop_kind(output)
    answers = label_answers(label)
    if answers is None:
        return Score(correct=None, outcome=outcome, failure_kind=stop)
    nid, needles = _needles(tuple(answers))
    not_found: bool | None = None
    for needle in needles:
        if contains_answer(outcome, needle) or contains_float_noise(outcome, needle):
            not_found = _folded_not_found(outcome)
            if not not_found:
                return Score(correct=True, outcome=outcome, failure_kind=None)
            break
    if stop is not None:
        return Score(correct=False, outcome=outcome, failure_kind=stop)
    if not_found is None:
        not_found = _folded_not_found(outcome)
    if not_found:
        if nid:
            return Score(correct=True, outcome=outcome, failure_kind=None)
        return Score(correct=False, outcome=outcome, failure_kind="not_in_document")
    return Score(correct=False, outcome=outcome, failure_kind="wrong")


def answer_scorer() -> Scorer:
    r"""The number-aware reading scorer ``answer_contains`` (seed 001).

    An answer is right when its text contains any of the item's accepted answers after both
    are folded the same way (seed 001: containment after folding). Folding and matching, in
    full in :mod:`hrbench.scoring._fold`:

    - NFKC, then any script's decimal digits as ASCII digits (case H08a); curly quotes
      as ASCII (H08c); caseless matching in every script, also where lower-casing adds
      a combining mark (H07a, I07s: ``"\u0130zmir"`` is ``"izmir"``), no Turkic rule
      (H07c); U+2212 and a dash before a digit as ``-`` (R09a); runs of white space as
      one space.
    - Sentence punctuation and quotes round a label are not part of it (R12a, R12c:
      ``"No."`` accepts ``"No"``).
    - A label that begins or ends with a letter is matched as whole words: that letter may not
      run on into a letter or digit of the answer (SPEC section 6, R10c, R10g:
      ``"A"`` is not in ``"The answer is B"``, ``"no"`` is not in ``"know"``); scripts written
      without word spaces (Chinese, Japanese, Korean, Thai, ...) are matched by containment.
    - Thousands separators dropped: a comma, a no-break space U+00A0, a thin space U+2009, a
      narrow no-break space U+202F or a figure space U+2007 (R13c), and LaTeX's
      ``{,}`` and ``\,`` (R13a), only between a lead of 1-3 digits and groups of exactly
      three digits (H01f: the list "3,5,7" is not 357; seed 001: "1,204", "1 204" with
      a no-break or thin space, and "1204" are the same; H01a, H01b, H01d). An ordinary space
      is not a separator.
    - A number in a label is written in plain digits (seed 001: the label 100000 accepts
      "100,000"); "1e5" is not 100000 (L01d).
    - Trailing zeros of a decimal do not count ("29.00" equals 29, "45.20" equals
      45.2); ".5" equals "0.5".
    - A number is matched whole (seed 001): "45.2" is not in "145.2" or "45.25"; "12" is not
      in ".12" or "-12"; "11" is not in "711" (H02a, H02b, H02c, H03b, H03d); the minus sign
      belongs to the number ("5" is not "-5", H04a, H04b); the Unicode minus U+2212 is a minus.
      A full stop after a number is not a decimal point ("$29." contains 29, H05a).
    - Units, currency and "%" against a number do not hide it (seed 001: "45.2m", "5mg";
      H01a "$8,000", H02e, H05d "20%"); a sign before a currency sign stays with the number
      ("-$12.6" holds -12.6).
    - Brackets round a number neither hide it nor make it negative (R09c, R14a, R14b:
      ``"(1,234)"`` holds 1234, not -1234; accounting brackets are a reading rule of financial
      tables, which the TAT-QA metric applies). Number words and ordinals are not folded
      (R15a-c: ``"four"`` is not 4), nor percentages or fractions into decimals (R16e, R16f).
    - A hyphen between two numbers is a range, not a minus (seed 001: "12-15" contains 15;
      H04d, H04e), with spaces round it as well (H04f: "2 - 12" contains 12, not -12).
    - Float64 noise: a number of the answer written
      with a decimal point and more than 15 significant digits (a float as a program prints it,
      ``"0.30000000000000004"``) contains a bare numeric label it equals up to float64 noise
      (C's ``DBL_DIG``: :mod:`hrbench._util.floats`); a float label carrying noise (``0.1 + 0.2``)
      also accepts its 15-digit form (:func:`~hrbench.scoring.label_answers`). Numbers of 15
      significant digits or fewer are matched as written; rounding is not noise
      (``"-22.2222222222%"`` does not contain -22.22).
    - A label ending in a number with a percent mark accepts ``%``, `` %``, ``percent`` and
      ``per cent`` (``"25%"`` accepts "25 percent").

    On an item labelled ``NOT_IN_DOCUMENT`` the answer is right when :func:`is_not_found` says
    it reports that the document does not hold the answer (H11a); an invented answer there is
    ``"wrong"`` (H11c). An answer that reports absence is not searched
    for accepted answers, so ``"NO ANSWER"`` does not contain the answer ``"no"`` and
    ``"NOT_IN_DOCUMENT"`` does not contain ``"document"`` (a real case in the bundled SQuAD
    runs); it is ``"not_in_document"``.

    An output that is not right gets the first failure kind that applies (seed 001):
    ``"parse_failure"`` (no answer text: not a string, no ``answer``/``text``, blank),
    ``"budget_stop"`` (partial, with a limit note), ``"refusal"`` (a trace step finished with
    ``refusal``/``content_filter``, or a refused result), ``"not_in_document"`` (an answer was
    expected and the reader said the document lacks it), ``"wrong"``. Before these, as in the
    exact scorer (seed 000): an output carrying its own ``failure_kind`` keeps it, and a failed
    result (``ok=False``) is ``"error"``. Following the seed's order, a reply with no text is a
    ``parse_failure`` even when a step reports a content filter or a note reports a limit
    (cases H10d and H13e, where the seed's order hides the refusal or the stop; the trace
    still records it).

    What it does not catch (seed 001 makes containment the rule, so this is kept, not
    changed): a reply that mentions an accepted answer is right whatever it
    says about it. A hedge listing candidates (``"It could be Paris, Lima, N'Djamena or
    Suva."`` is right for each of the four labels), a negation (``"It is not Paris."``) and a
    reply holding both ``"yes"`` and ``"no"`` are right when the label is among their words;
    the scorer sees one item's label, not the others'. Where an arm could hedge or negate,
    score with :func:`~hrbench.scoring.exact_scorer`, :func:`hrbench.reading.squad_scorer`
    (official EM), :func:`hrbench.reading.tatqa_scorer`, :func:`hrbench.scoring.choice_scorer`
    or :func:`hrbench.scoring._judge.judge_scorer`, with ``answer_contains`` as a side metric.

    A stopped or refused run that still found an accepted answer is right (H13c). A not-found
    answer from a stopped or refused run is that stop, on an unanswerable item as well: a
    reader that ran out of budget did not look. An item with no label is scored
    ``correct=None``, with a stop or refusal kept as its failure kind.

    Outputs may be a string; a dict (``answer``/``text``, ``notes``, ``partial``,
    ``steps``/``trace`` of ``{finish_reason}``, ``refused``, ``failure_kind``, ``ok``,
    ``error``); an :class:`~hrbench.records.Answer`; or a :class:`~hrbench.records.Result`.
    The outcome is the answer's folded text.

    Returns:
        A :class:`~hrbench.scoring.Scorer` named ``"answer_contains"``.

    Example:
        >>> from hrbench.reading import example_document
        >>> s = answer_scorer()
        >>> item = {"question": "How many units?", "document": example_document()}
        >>> s(item, "Sheffield produced 12,400 units.", "12400").correct
        True
        >>> s(item, "NOT_IN_DOCUMENT", "12400").failure_kind
        'not_in_document'
        >>> s(item, "NOT_IN_DOCUMENT", "NOT_IN_DOCUMENT").correct
        True
    """
    return Scorer(_answer_contains, "answer_contains", {"seed": "001", "version": "2"}, reads_reply=True)
