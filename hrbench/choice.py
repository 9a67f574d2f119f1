"""The ``choice`` scorer: the multiple-choice letter a reply picks, against the label's letter.

Models write a choice in many ways; this scorer reads the common ones and refuses to guess
(decided, seed silent; the forms inspect_ai's ``choice()`` and lm-evaluation-harness's
multiple-choice filters accept, made strict):

1. Cued: a letter after the word ``answer`` (``"Answer: B"``, ``"The correct answer is (B)"``,
   ``"**Final answer: B**"``, ``"answer would be B"``); if there is none, a letter after
   ``option`` or ``choice`` (``"Option B"``). When a reply has cued letters, only those of the
   first kind found count, and letters named otherwise are not read: ``"Option A is wrong; the
   answer is B"`` and ``"The answer is B, not A"`` pick B. A cued letter followed by more
   capital letters joined by ``or``, ``and``, ``,``, ``/``, ``&`` or ``+`` (``"The answer is A
   or B"``, ``"Answer: (A), (C)"``, ``"answer: A/B"``, ``"the answer is A or maybe B"``) cues
   them all (decided, newcomer finding: ``"The answer is A or B"`` picked A, a hedge scored
   right); ``", not B"`` is no such join.
2. Otherwise marked letters: the whole reply is a letter, alone or dressed (``"B"``, ``"(B)"``,
   ``"**B**"``, ``"[B]"``, ``"B."``); a line that starts with a letter and ``)``, ``.`` or ``:``
   (``"B) 1918"``, ``"B. Paris"``); a letter in brackets or bold anywhere (``"(B)"``, ``"**B**"``).
3. The reply picks a choice when exactly one distinct letter is found by the first rule that
   finds any; none, or two different letters (``"Answer: A or C"``, ``"(A) ... (C)"``, ``"Answer:
   A. Actually, the answer is C."``), is ``parse_failure``: a reply that picks two letters is
   refused, never counted right because one of them is the label. A letter the rules do not
   read (an undressed capital in prose beside a cued one, as B in ``"The answer is A, not B."``)
   is not a second pick.

Only capital letters count, except a reply that is a single letter alone or dressed
(``"b"``, ``"(b)"``): in prose ``"a"`` is an article and ``"I"`` a pronoun, so lower-case letters
and an undressed ``I`` in a sentence are never read as choices. Letters must be among
``letters`` (default ``"ABCDEFGHIJ"``, ten options as in MMLU-Pro). The label is a letter, or a
list of accepted letters; an empty label is a :class:`~hrbench.errors.ScorerError`.
Full-width letters fold by NFKC. Refusals, failed calls and limit stops keep their failure kinds
as in the exact scorer.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

from hrbench.errors import ConfigError, ScorerError
from hrbench.records import Score
from hrbench.scorer import Scorer, label_answers, screen

__all__ = ["choice_scorer", "read_choice"]

_DRESS = r"[\s*_`\"'()\[\]{}.:,!]*"


def _cue(words: str, cls: str) -> re.Pattern[str]:
    return re.compile(
        rf"(?i:\b(?:{words})(?:\s+(?:is|would\s+be|will\s+be))?\s*[:=]?\s*[*_(\[\s]*)({cls})(?![A-Za-z0-9])"
    )


@lru_cache(maxsize=64)
def _patterns(letters: str) -> tuple[re.Pattern[str], ...]:
    cls = f"[{re.escape(letters)}]"
    alone = re.compile(rf"^{_DRESS}({cls}){_DRESS}$", re.IGNORECASE)
    answer = _cue(r"answer", cls)
    option = _cue(r"option|choice", cls)
    line = re.compile(rf"(?m)^[\s*_#>-]*[(\[]?({cls})[)\].:](?=\s|$)")
    marked = re.compile(rf"(?:\(({cls})\)|\[({cls})\]|\*\*({cls})\*\*)")
    more = re.compile(
        rf"[)\]*_`]*\s*(?:,|/|&|\+|(?i:\bor\b|\band\b))\s*(?:(?i:maybe|perhaps|possibly|either)\s+)?"
        rf"[*_(\[]*(?!I\s+[a-z])({cls})(?![A-Za-z0-9])"  # "and I think": a pronoun
    )
    return alone, answer, option, line, marked, more


def read_choice(text: str, letters: str = "ABCDEFGHIJ") -> set[str]:
    """The distinct letters a reply picks, by the forms of this module's docstring.

    Args:
        text: the reply.
        letters: the option letters, in capitals.

    Returns:
        The set of letters found (one for a clear choice; empty or several otherwise).

    Example:
        >>> read_choice("Answer: (B)"), read_choice("b"), read_choice("I think A or C.")
        ({'B'}, {'B'}, set())
        >>> sorted(read_choice("Either (A) or (C)."))
        ['A', 'C']
    """
    alone, answer, option, line, marked, more = _patterns(letters)
    t = unicodedata.normalize("NFKC", text).strip()
    m = alone.match(t)
    if m:
        return {m.group(1).upper()}
    for cue in (answer, option):
        found = set()
        for m in cue.finditer(t):
            found.add(m.group(1))
            end = m.end()
            while (n := more.match(t, end)) is not None:  # "answer: A or B": both are cued
                found.add(n.group(1))
                end = n.end()
        if found:
            return found
    found = set(line.findall(t))
    for groups in marked.findall(t):
        found.update(g for g in groups if g)
    return found


def choice_scorer(letters: str = "ABCDEFGHIJ") -> Scorer:
    """The ``choice`` scorer: the one letter a reply picks equals the label's letter.

    The forms read and the refusal of two letters are in this module's docstring.

    Args:
        letters: the option letters (capitals, each once), default ``"ABCDEFGHIJ"``.

    Returns:
        A :class:`~hrbench.scorer.Scorer` named ``"choice"``; ``outcome`` is the letter picked,
        or the letters found joined by ``","`` when there are several.

    Raises:
        ConfigError: ``letters`` that are not distinct capital letters.
        ScorerError: (on call) a label that is not one of ``letters``.

    Example:
        >>> s = choice_scorer("ABCD")
        >>> s(None, "**Answer: B) 1918**", "B")
        Score(correct=True, outcome='B', failure_kind=None)
        >>> s(None, "It is (A) or maybe (B).", "A").failure_kind
        'parse_failure'
    """
    if (
        not isinstance(letters, str)
        or not letters
        or len(set(letters)) != len(letters)
        or not all("A" <= c <= "Z" for c in letters)
    ):
        raise ConfigError("letters", letters, "expected distinct capital letters A-Z, e.g. 'ABCD'")

    def fn(item: Any, output: Any, label: Any) -> Score:
        text = screen(output)
        if isinstance(text, Score):
            return text
        found = read_choice(text, letters)
        outcome = ",".join(sorted(found)) or None
        answers = label_answers(label)
        if answers is None:
            return Score(correct=None, outcome=outcome, failure_kind=None)
        want = set()
        for a in answers:
            x = a.strip().strip("()[]*. ").upper()
            if len(x) != 1 or x not in letters:
                raise ScorerError(f"choice scorer: label {a!r} is not one of the letters {letters!r}")
            want.add(x)
        if len(found) != 1:
            return Score(correct=False, outcome=outcome, failure_kind="parse_failure")
        if found <= want:
            return Score(correct=True, outcome=outcome, failure_kind=None)
        return Score(correct=False, outcome=outcome, failure_kind="wrong")

    return Scorer(fn, "choice", {"letters": letters})
