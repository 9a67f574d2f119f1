"""A run's output kept with it: the text its scorer received, as a note step of its trace.

``hrb rows`` exports it as the ``output`` column (:func:`hrbench.records.run_output` reads it
back). It travels with the trace wherever the trace goes (the store, the daemon, a Ray worker,
a resume), so a row's output is always the one its own run produced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from hrbench.records import OUTPUT_SOURCE, Answer, Result, Step
from hrbench.scoring import output_text

__all__ = ["output_note", "output_shown"]

_json = msgspec.json.Encoder(enc_hook=repr)


def output_shown(output: Any) -> str | None:
    """The text of an arm's output as a row shows it: what the scorer read of it.

    A string is itself; an output with an ``answer`` or ``text`` (an :class:`~hrbench.records.Answer`,
    a :class:`~hrbench.records.Result`, a mapping or object holding one) is that text, as the
    scorers read it (seed 000; ``None`` when it has none, a failed call included); ``None`` is
    ``None``; any other value (a number, a list, a mapping of other fields) is its JSON.

    Example:
        >>> output_shown("Paris"), output_shown({"text": "Lima", "partial": False}), output_shown(42)
        ('Paris', 'Lima', '42')
        >>> output_shown({"sentiment": "positive"}), output_shown(Result(ok=False, error="HTTP 500"))
        ('{"sentiment":"positive"}', None)
    """
    if output is None or isinstance(output, str):
        return output
    textual = isinstance(output, (Answer, Result)) or (
        ("answer" in output or "text" in output)
        if isinstance(output, Mapping)
        else hasattr(output, "answer") or hasattr(output, "text")
    )
    if textual:
        return output_text(output)
    try:
        return _json.encode(output).decode("utf-8")
    except (TypeError, ValueError, msgspec.EncodeError):
        return repr(output)


def output_note(ledger_id: str, output: Any) -> Step | None:
    """The note step that keeps a run's output text in its trace; ``None`` when it has no text.

    Example:
        >>> output_note("b/a/q1/1", "Paris").text, output_note("b/a/q1/1", None)
        ('Paris', None)
    """
    text = output_shown(output)
    if text is None:
        return None
    return Step(ledger_id=ledger_id, kind="note", source=OUTPUT_SOURCE, text=text)
