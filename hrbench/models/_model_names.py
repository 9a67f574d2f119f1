"""When a price listed under one name may price a model asked for by another, and the name meant.

A price table lists a model under its name; a request may name a dated snapshot or a release of
it (``gpt-4o-2024-08-06``, ``claude-sonnet-4-20250514``, ``claude-3-5-sonnet-latest``,
``gemini-2.0-flash-001``, Vertex's ``claude-sonnet-4@20250514``, Bedrock's ``-v2:0``), which
providers bill at the listed model's price. Any other name that merely starts with a listed one
(``gpt-4o-mni``, ``gpt-4o-miniature``) is another model, or a typo: it has no price, and the
listed name closest to it is suggested (``docs/guides/prices.md``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

__all__ = ["SNAPSHOT", "closest", "is_snapshot_of"]

SNAPSHOT = re.compile(
    r"(?:[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{2}-\d{2}|\d{3,4}|latest|preview|exp|v\d+(?::\d+)?))+",
    re.IGNORECASE,
)
"""What may follow a listed name in a name priced as it: dates (``-2024-08-06``, ``-20240806``,
``@20250514``, ``-0613``, ``-06-05``), versions (``-001``, ``-v2:0``) and release tags
(``-latest``, ``-preview``, ``-exp``), one or more."""


def is_snapshot_of(model: str, listed: str) -> bool:
    """Whether ``model`` is ``listed`` itself or a dated snapshot or release of it (:data:`SNAPSHOT`).

    Case is ignored, as providers and genai-prices ignore it.

    Example:
        >>> is_snapshot_of("gpt-4o-2024-08-06", "gpt-4o"), is_snapshot_of("claude-3-5-sonnet-latest", "claude-3-5-sonnet")
        (True, True)
        >>> is_snapshot_of("gpt-4o-mni", "gpt-4o"), is_snapshot_of("gpt-4o-mini", "gpt-4o")
        (False, False)
    """
    model, listed = model.lower(), listed.lower()
    if model == listed:
        return True
    return model.startswith(listed) and SNAPSHOT.fullmatch(model, len(listed)) is not None


def closest(model: str, names: Iterable[str]) -> str | None:
    """The name in ``names`` closest to ``model`` (difflib's ratio, at least 0.75), or ``None``.

    Example:
        >>> closest("gpt-4o-mni", ["gpt-4o", "gpt-4o-mini", "o3"])
        'gpt-4o-mini'
        >>> closest("local-model", ["gpt-4o", "gpt-4o-mini"]) is None
        True
    """
    bare = model.split("/", 1)[-1].lower()
    by_lower = {n.lower(): n for n in names if n}
    found = difflib.get_close_matches(bare, list(by_lower), n=1, cutoff=0.75)
    return by_lower[found[0]] if found else None
