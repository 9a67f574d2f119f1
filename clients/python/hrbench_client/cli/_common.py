"""What every ``hrb`` command shares: JSON lines out, messages on stderr, usage errors, the client.

Start-up time matters for one-liners: `typing`, `argparse`, `pathlib` and msgspec are imported
where they are used, and `hrb score OUTPUT` takes the fast path of :mod:`hrbench_client.cli._fast`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any, NoReturn

# msgspec is imported on first use: `hrb score OUTPUT` answers without it (see _fast.py).


def _msgspec() -> Any:
    import msgspec

    return msgspec


def _out(obj: Any) -> None:
    sys.stdout.buffer.write(_msgspec().json.encode(obj) + b"\n")


def _err(msg: str) -> None:
    print(f"hrb: {msg}", file=sys.stderr)


class _Usage(Exception):
    pass


class BadArguments(SystemExit):
    """Raised (exit 2) when argparse refuses ``hrb``'s arguments; ``message`` is what it printed.

    ``hrb gate`` writes its ``--junit`` and ``--markdown`` reports with it
    (:func:`hrbench_client.cli.gate.report_bad_arguments`).
    """

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message


def explain(exc: Exception, typ: Any = None, data: Any = None) -> str:
    """The message of a msgspec validation error, with the allowed values and a ``$`` path.

    A message about the top-level object (msgspec gives it no path, e.g. ``Object contains
    unknown field `rusn```) gets `` - at `$```. Given the type decoded (and the data), an
    unknown field gets the closest field's name
    (:func:`hrbench_client.protocol.unknown_field_hint`), a value outside a ``Literal`` or a
    ``kind`` no arm or client has the closest value and every value allowed
    (:func:`hrbench_client.protocol.enum_hint`: ``arms[0].kind: unknown value; did you mean
    'prompt'? expected one of prompt, reading, outputs, import (got 'promt')``), and a value
    out of its range is said
    as the field, the value given and the range (:func:`hrbench_client.protocol.plain_range`).
    """
    from hrbench_client.protocol import plain_range

    msg = str(exc)
    if (plain := plain_range(msg, data)) != msg:  # a range broken: `runs = 0: must be at least 1`
        return plain
    if " - at `" not in msg:
        msg = f"{msg} - at `$`"
    if typ is not None:
        from hrbench_client.protocol import enum_hint, unknown_field_hint

        msg = enum_hint(unknown_field_hint(msg, typ, data), typ, data)
    return msg


def _fail_usage(msg: str) -> NoReturn:
    raise _Usage(msg)


def _client(args: argparse.Namespace) -> Any:
    from hrbench_client.client import connect

    return connect(args.home, autostart=not args.no_autostart)


def usd_text(usd: float) -> str:
    """A USD amount as ``hrb`` prints it: four decimals, or three significant digits below a cent.

    The library's rule (``hrbench.records.usd_text``; this client imports no hrbench): four
    decimals would print every cheap spend as ``0.0000``.

    Example:
        >>> [usd_text(x) for x in (0.0, 0.1234, 0.00131, 3.7e-06)]
        ['0.0000', '0.1234', '0.00131', '3.7e-06']
    """
    return f"{usd:.4f}" if usd == 0 or abs(usd) >= 0.01 else f"{usd:.3g}"


def _measured(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == x  # NaN != NaN


STATUS_LABELS = {
    "budget_stopped": "Budget stopped",
    "cancelled": "Cancelled",
    "errors": "Runs failed",
    "interrupted": "Interrupted",
    "running": "Still running",
}
"""The label of a benchmark's ``stop_note`` by its status, in ``hrb ls --text`` and ``hrb report``."""


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str, option: str = "--older-than", bare: str = "d") -> float:
    """Seconds in an age such as ``30d``, ``12h``, ``90m``, ``45s``, ``2w``; a bare number is in ``bare`` units.

    Example:
        >>> parse_age("12h"), parse_age("2"), parse_age("1.5m"), parse_age("90", bare="s")
        (43200.0, 172800.0, 90.0, 90.0)
    """
    t = text.strip().lower()
    unit = t[-1:] if t[-1:] in _UNITS else bare
    number = t[:-1] if t[-1:] in _UNITS else t
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        _fail_usage(f"{option}: expected an age such as 30d, 12h, 90m or 45s (got {text!r})")
    return value * _UNITS[unit]
