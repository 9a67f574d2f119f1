"""Docstrings in users' words: the keepers' references to issues, seed files, shared cases and newcomer findings.

Plain text rules, without griffe, so that ``make test`` checks them on a machine without the
docs extra; :class:`griffe_examples.UsersWords` applies them to the API pages and
``check_site.py`` looks for what is left in the built site.
"""

from __future__ import annotations

import re

# Where a rule came from, in the words of the people who keep hrbench ("seed 002", "issue 12",
# "case S12a", "newcomer finding 4"), belongs in the code's docstrings for them; the site shows
# users the rule itself (a user-facing text never names an issue or a seed file).
_TOKEN = (
    r"(?:[Ss]eeds? 00\d(?:[-/]00\d)?|[Ii]ssues? #?\d+(?:(?:, | and )#?\d+)*"
    r"|[Cc]ases? [A-Z]\d+[a-z]?(?:(?:, | and )[A-Z]\d+[a-z]?)*|[Nn]ewcomer findings?(?: \d+)?)"
)
_IN_PARENS = re.compile(r"\s?\((?:[^()]*?\b)?" + _TOKEN + r"[^()]*\)")
_LEAD = re.compile(r"(^\s*|\.\s+)" + _TOKEN + r"(?:[,;] " + _TOKEN + r")*:\s+(\w)", re.M)
_WORDS = {
    "seed": "hrbench's rule",
    "issue": "a decided rule",
    "case": "a shared case",
    "newcomer": "a newcomer's finding",
}
_BARE = re.compile(r"\b" + _TOKEN)


def in_users_words(text: str) -> str:
    """``text`` without the keepers' references: parenthesised ones dropped, leading ones too, bare ones in words.

    Example:
        >>> in_users_words("Decided (issue 24, case S12a): a scorer runs off the loop.")
        'Decided: a scorer runs off the loop.'
        >>> in_users_words("seed 001: a number is matched whole; see seed 002.")
        "A number is matched whole; see hrbench's rule."
    """
    text = _IN_PARENS.sub("", text)
    # "seed 001: a number ..." at a sentence's start: the sentence starts with what followed
    text = _LEAD.sub(lambda m: m.group(1) + m.group(2).upper(), text)
    return _BARE.sub(lambda m: _WORDS[m.group(0).split()[0].lower().rstrip("s")], text)
