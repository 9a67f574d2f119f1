"""Docstrings in users' words: the seed files and shared cases a rule cites, said for the site.

A docstring states a rule and its public source: a seed rule ("seed 002") or a shared case id
("case S12a"), which the people who keep hrbench can look up; the site shows users the rule
itself (a user-facing text never names a seed file or a case). Plain text rules, without
griffe, so that ``make test`` checks them on a machine without the docs extra;
:class:`griffe_examples.UsersWords` applies them to the API pages and ``check_site.py`` looks
for what is left in the built site. Issue numbers and findings are not rewritten: the code
names none (``tests/test_no_history.py``), and ``check_site.py`` fails a site that shows one.
"""

from __future__ import annotations

import re

# A rule's public source, as the docstrings cite it ("seed 002", "case S12a", "cases H14b and
# H14d"): dropped in parentheses, dropped at a sentence's start, said in words elsewhere.
_TOKEN = r"(?:[Ss]eeds? 00\d(?:[-/]00\d)?|[Cc]ases? [A-Z]\d+[a-z]?(?:(?:, | and )[A-Z]\d+[a-z]?)*)"
_IN_PARENS = re.compile(r"\s?\((?:[^()]*?\b)?" + _TOKEN + r"[^()]*\)")
_LEAD = re.compile(r"(^\s*|\.\s+)" + _TOKEN + r"(?:[,;] " + _TOKEN + r")*:\s+(\w)", re.M)
_WORDS = {
    "seed": "hrbench's rule",
    "case": "a shared case",
}
_BARE = re.compile(r"\b" + _TOKEN)


def in_users_words(text: str) -> str:
    """``text`` without seed and case references: parenthesised ones dropped, leading ones too, bare ones in words.

    Example:
        >>> in_users_words("Rule (case S12a): a scorer runs off the loop.")
        'Rule: a scorer runs off the loop.'
        >>> in_users_words("seed 001: a number is matched whole; see seed 002.")
        "A number is matched whole; see hrbench's rule."
    """
    text = _IN_PARENS.sub("", text)
    # "seed 001: a number ..." at a sentence's start: the sentence starts with what followed
    text = _LEAD.sub(lambda m: m.group(1) + m.group(2).upper(), text)
    return _BARE.sub(lambda m: _WORDS[m.group(0).split()[0].lower().rstrip("s")], text)
