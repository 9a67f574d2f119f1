"""A griffe extension for the API reference: a Google ``Example:`` section is read as ``Examples:``.

Google style allows both titles, but griffe parses only ``Examples:`` as examples (``>>>``
lines rendered as code); under ``Example:`` a doctest's output such as ``[True, False]`` would
be read as a Markdown link.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import griffe

sys.path.insert(0, str(Path(__file__).resolve().parent))
from users_words import in_users_words  # noqa: E402

_TITLE = re.compile(r"^(\s*)Example:\s*$", re.M)


class ExampleSections(griffe.Extension):
    """Rename ``Example:`` to ``Examples:`` in every docstring griffe loads."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _TITLE.sub(r"\1Examples:", obj.docstring.value)


class UsersWords(griffe.Extension):
    """Show every docstring griffe loads in users' words (:func:`in_users_words`)."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = in_users_words(obj.docstring.value)
