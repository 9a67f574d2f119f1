r"""The ``choice`` scorer: the multiple-choice letter a reply picks, against the label's letter.

Models write a choice in many ways; the scorer reads the common ones (the forms inspect_ai's
``choice()`` and lm-evaluation-harness's multiple-choice filters accept, made strict) and refuses
to guess. In short, the first of these that finds a letter decides: the whole reply is one letter,
alone or dressed (``"B"``, ``"(b)"``, ``"\boxed{B}"``); a final mark (a letter after ``answer``,
in ``\boxed{}`` or in ``<answer>`` tags: ``"Answer: $B"``); a cue with no readable letter refuses
the reply; a letter after ``option`` or ``choice``; a letter marked elsewhere (``"B) 1918"``,
``"(B)"``, ``"**B**"``). Exactly one distinct letter picks a choice; none or two
(``"Answer: A or C"``) is a ``parse_failure``. After a cue, ``I``, ``A`` and ``a`` used as words
are never letters: ``"Answer: I'm not sure, but B"`` picks nothing and ``"Answer: A good answer
is B"`` picks B, while ``"(A)"``, ``"A)"``, ``"A."`` and ``"I because ..."`` are letters (shared
cases S05-S08).

The whole rule book, with every form read and refused: ``docs/rules/choice.md``.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

from hrbench.errors import ConfigError, ScorerError
from hrbench.records import Score
from hrbench.scoring._scorer import Scorer, label_answers, screen

__all__ = ["choice_scorer", "read_choice"]

_COMMANDS = r"\\(?:boxed|text|textbf|textit|texttt|mathrm|mathbf|emph)\b\s*"
_CHARS = r"[\s*_`\"'()\[\]{}.:,!$]*+"
_DRESS = rf"(?:[\s*_`\"'()\[\]{{}}.:,!$]|{_COMMANDS}|</?answer>)*+"
_OPEN = rf"(?:[\s*_`\"'(\[{{$]|{_COMMANDS}|<answer>)*+"
"""Dress before a cued letter: space, bold, quotes, backticks, brackets, ``$``, a box, a tag."""
_CLOSE = r"[)\]}*_`\"'$]*"
_FOLLOWS_A_LETTER = (
    "and|or|nor|but|not|vs|versus|because|since|as|given|so|then|for|with|in|on|here|there|"
    "is|was|has|seems|appears|looks|fits|matches|holds|works|remains|makes|gives|states|says|"
    "describes|explains|satisfies|follows|applies"
)
_WORD = rf"(?<=[AI])(?:['\u2019][a-z]|[^\S\n]+(?!(?:{_FOLLOWS_A_LETTER})\b)[a-z])"
"""After ``A`` or ``I``: a contraction, or a lower-case word no letter is followed by ("I think")."""


def _cue(words: str, cls: str, lower: str) -> re.Pattern[str]:
    return re.compile(
        rf"(?i:\b(?:{words})[*_]*+(?:\s+(?:is|would\s+be|will\s+be))?[*_]*+\s*+[:=]?)"
        rf"(?:{_OPEN}({cls})(?!{_WORD})|[\s*_`\"'$]*+[(\[]?({lower})[)\]])(?![A-Za-z0-9])"
    )


@lru_cache(maxsize=64)
def _patterns(letters: str) -> tuple[re.Pattern[str], ...]:
    cls = f"[{re.escape(letters)}]"
    lower = f"[{re.escape(letters.lower())}]"
    both = f"[{re.escape(letters + letters.lower())}]"
    alone = re.compile(rf"^{_DRESS}({cls}){_DRESS}$", re.IGNORECASE)
    answer = _cue(r"answers?", cls, lower)
    boxed = re.compile(
        rf"\\boxed\s*\{{\s*(?:\\(?:text|textbf|textit|texttt|mathrm|mathbf)\s*\{{\s*)?[(\[]?({both})[)\]]?\.?\s*\}}?\s*\}}"
    )
    tagged = re.compile(rf"<answer>{_CHARS}({both}){_CHARS}</answer>", re.IGNORECASE)
    unread = re.compile(r"(?i:\banswers?[*_]*(?:\s+(?:is|would\s+be|will\s+be)\b|\s*[:=]))")
    option = _cue(r"option|choice", cls, lower)
    line = re.compile(rf"(?m)^[\s*_#>-]*[(\[]?({cls})[)\].:](?=\s|$)")
    marked = re.compile(rf"(?:\(({cls})\)|\[({cls})\]|\*\*({cls})\*\*)")
    more = re.compile(
        rf"{_CLOSE}\s*(?:,|/|&|\+|(?i:\bor\b|\band\b))\s*(?:(?i:maybe|perhaps|possibly|either)\s+)?"
        rf"[*_(\[`\"'$]*({cls})(?![A-Za-z0-9])(?!{_WORD})"  # "and I think": a pronoun
    )
    return alone, answer, boxed, tagged, unread, option, line, marked, more


def _cued(cue: re.Pattern[str], more: re.Pattern[str], t: str) -> set[str]:
    found = set()
    for m in cue.finditer(t):
        found.add((m.group(1) or m.group(2)).upper())
        end = m.end()
        while (n := more.match(t, end)) is not None:  # "answer: A or B": both are cued
            found.add(n.group(1))
            end = n.end()
    return found


def read_choice(text: str, letters: str = "ABCDEFGHIJ") -> set[str]:
    r"""The distinct letters a reply picks, by the rules of ``docs/rules/choice.md``.

    Args:
        text: the reply.
        letters: the option letters, in capitals.

    Returns:
        The set of letters found (one for a clear choice; empty or several otherwise).

    Example:
        >>> read_choice("Answer: (B)"), read_choice("b"), read_choice("I think A or C.")
        ({'B'}, {'B'}, set())
        >>> sorted(read_choice("Either (A) or (C).")), read_choice("I first considered (A).\nAnswer: $B")
        (['A', 'C'], {'B'})
        >>> read_choice("The answer is unclear, but (A) fits")
        set()
    """
    alone, answer, boxed, tagged, unread, option, line, marked, more = _patterns(letters)
    t = unicodedata.normalize("NFKC", text).strip()
    m = alone.match(t)
    if m:
        return {m.group(1).upper()}
    found = _cued(answer, more, t)
    found.update(x.upper() for x in boxed.findall(t))
    found.update(x.upper() for x in tagged.findall(t))
    if found:
        return found
    if unread.search(t):
        return set()
    found = _cued(option, more, t)
    if found:
        return found
    found = set(line.findall(t))
    for groups in marked.findall(t):
        found.update(g for g in groups if g)
    return found


def choice_scorer(letters: str = "ABCDEFGHIJ") -> Scorer:
    """The ``choice`` scorer: the one letter a reply picks equals the label's letter.

    The forms read and the refusal of two letters are in ``docs/rules/choice.md``.

    Args:
        letters: the option letters (capitals, each once), default ``"ABCDEFGHIJ"``.

    Returns:
        A :class:`~hrbench.scoring.Scorer` named ``"choice"``; ``outcome`` is the letter picked,
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

    return Scorer(fn, "choice", {"letters": letters}, reads_reply=True)
