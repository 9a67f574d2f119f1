"""The code states its rules, not the history of how they were decided.

Docstrings, comments and messages in ``hrbench/``, ``server/``, ``clients/``, ``tests/``,
``bench/`` and ``tools/`` give a rule (or the behaviour a test guards) and its public source (a
seed rule, an official metric, a peer's issue link, a shared case id such as H4-07 or S12a); the
story behind it ("issue 13", "Decided (...)", "newcomer finding 4", "turn 3", "found by ...")
belongs in commit messages. Every comment and every string of every ``.py`` file there is read
with :mod:`tokenize` (identifiers such as ``self.decided`` are code, not words) and must name
none of :data:`HISTORY`; only the files of :data:`EXAMPLES` are left out.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREES = ("hrbench", "server", "clients", "tests", "bench", "tools")
EXAMPLES = frozenset({"tests/test_no_history.py", "tests/docs/test_user_text.py"})
"""Checks whose examples must name the words: this file, and the user-text check's pattern cases."""

HISTORY = re.compile(
    r"\b[Ii]ssues?\s*#\s*\d+|\b[Ii]ssues?\s+\d+"  # "issue 13", "issues 8, 14", "issue #4" (not .../issues/4)
    r"|\b[Nn]ewcomer"  # "newcomer finding", "a newcomer's ..."
    r"|\b[Ff]indings?\s+\d+"  # "finding 13"
    r"|\bDecided\s*[(,:]"  # "Decided (issue 12):", "Decided, issue 13", "Decided:"
    r"|[(;#]\s*decided\s*(?:[,)]|:(?!\s*[\w-]+\s+better\b))"  # "(decided, seed silent", "# decided:"
    r"|,\s*decided\s*\)"  # "(case H13a, decided)"; not the report's "; decided: good better"
    r"|\b[Tt]urn\s+\d+\b"  # "turn 3" (not "return 0")
    r"|\breview\s+[A-Z]\d"  # "review B2"
    r"|\bfound\s+by\b"
    r"|\ba\s+new\s+user\s+saw\b"
)
"""Words that tell how a rule was decided rather than the rule."""


def history_words(source: str) -> list[tuple[int, str]]:
    """``(line, excerpt)`` of each history word in the comments and strings of ``source``.

    Example:
        >>> history_words('x = 1  # keep it (issue 13)\\n')
        [(1, '# keep it (issue 13)')]
        >>> history_words("x = 1  # rule: case S12a; https://github.com/o/r/issues/12\\n")
        []
    """
    found: list[tuple[int, str]] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in (tokenize.COMMENT, tokenize.STRING):
            continue
        for m in HISTORY.finditer(tok.string):
            line = tok.start[0] + tok.string.count("\n", 0, m.start())
            found.append((line, tok.string[max(0, m.start() - 30) : m.end() + 30].replace("\n", " ")))
    return found


def _files() -> list[Path]:
    return sorted(
        p
        for tree in TREES
        for p in (ROOT / tree).rglob("*.py")
        if ".venv" not in p.parts and p.relative_to(ROOT).as_posix() not in EXAMPLES
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('"""Decided (issue 12): a 401 fails the run."""', ["Decided (", "issue 12"]),
        ('"""Rule (seed 002): each run is a draw (issues 8, 14)."""', ["issues 8"]),
        ("# decided, newcomer finding 4: booked at its worst case", ["# decided,", "newcomer", "finding 4"]),
        ('"""Rule (case H13a, decided): reserve first."""', [", decided)"]),
        ('"""A cell took 11 s (found by a view test)."""', ["found by"]),
        ('"""As of turn 3 the house had 42 rooms."""', ["turn 3"]),
        ('"""Kept since review B2."""', ["review B2"]),
        ('"""Decided (a new user saw 0.0000 twice)."""', ["Decided (", "a new user saw"]),
        ('raise ValueError("bad label (issue #7)")', ["issue #7"]),
    ],
)
def test_history_words_are_found(text: str, words: list[str]) -> None:
    assert [m.group(0) for m in HISTORY.finditer(text)] == words
    assert history_words(text + "\n")


@pytest.mark.parametrize(
    "text",
    [
        "return 0.0, 0, None, False\n",  # "turn 0" inside "return 0"
        "self.decided: list[str] = []\n",  # code, not words
        'msg = f"Not decided: cancelled {where}"\n',
        'REASONS = ("decided", "tolerance")\n',
        '"""What the gate concluded; every pair decided, or one arm best."""\n',
        '"""Matches inspect_ai (https://github.com/UKGovernmentBEIS/inspect_ai/issues/1234)."""\n',
        '"""A peer\'s issue link, a shared case id (H4-07, S12a), seed 002."""\n',
        '"""The difference worth finding, e.g. 0.05."""\n',
        'assert "; decided: good better" in text\n',  # the report's words for a decided pair
    ],
)
def test_rules_and_public_sources_are_not_history(text: str) -> None:
    assert history_words(text) == []


def test_no_history_in_code() -> None:
    """One test over every file (a test item each would cost more than the check)."""
    hits = {
        str(p.relative_to(ROOT)): h for p in _files() if (h := history_words(p.read_text(encoding="utf-8")))
    }
    assert hits == {}, f"these tell how a rule was decided; state the rule instead: {hits}"


HISTORY_NAME = re.compile(r"newcomer", re.I)
"""A name (a test's, a file's, a constant's) that tells who met a fault rather than what is tested."""


def history_names(source: str) -> list[tuple[int, str]]:
    """``(line, name)`` of each identifier of ``source`` that :data:`HISTORY_NAME` matches.

    Example:
        >>> history_names("def test_the_newcomers_refusals():\\n    pass\\n")
        [(1, 'test_the_newcomers_refusals')]
        >>> history_names("def test_refusals_name_no_amount_of_zero():\\n    pass\\n")
        []
    """
    return [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.NAME and HISTORY_NAME.search(tok.string)
    ]


def test_no_history_in_file_names() -> None:
    named = [str(p.relative_to(ROOT)) for p in _files() if HISTORY_NAME.search(p.name)]
    assert named == [], f"name these files by what they test: {named}"


def test_no_history_in_names() -> None:
    hits = {
        str(p.relative_to(ROOT)): h for p in _files() if (h := history_names(p.read_text(encoding="utf-8")))
    }
    assert hits == {}, f"name these by what they test: {hits}"
