"""A griffe extension for the API reference: a Google ``Example:`` section is read as ``Examples:``.

Google style allows both titles, but griffe parses only ``Examples:`` as examples (``>>>``
lines rendered as code); under ``Example:`` a doctest's output such as ``[True, False]`` would
be read as a Markdown link.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_TITLE = re.compile(r"^(\s*)Example:\s*$", re.M)


class ExampleSections(griffe.Extension):
    """Rename ``Example:`` to ``Examples:`` in every docstring griffe loads."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _TITLE.sub(r"\1Examples:", obj.docstring.value)
