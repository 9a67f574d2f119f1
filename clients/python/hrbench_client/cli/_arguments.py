"""What ``hrb`` says of arguments it cannot take: the option meant, and a value out of range by its option.

Rules (``docs/guides/shell.md``):

- an unknown option gets the closest option of its command (difflib), ``--comapre`` ->
  ``did you mean --compare?``; an option of ``hrb bench`` that is a spec field (``--runs``) says
  so, with the field's range when the value is outside it;
- the advice to put a value that starts with ``-`` after ``--`` (``hrb score -- -x``), or an
  option's after ``=`` (``--label=-x``), comes only when such a value is there;
- a value the daemon refuses as out of range names the option it came from, the value as given
  and the range: ``--alpha 2: must be below 0.5``.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

__all__ = ["ARGV", "DASH_HINT", "chosen", "dash_value_after", "option_message", "unrecognized"]

ARGV: ContextVar[list[str] | None] = ContextVar("hrb_argv", default=None)
"""The arguments ``hrb`` is parsing (set by the parser's ``parse_args``), for its errors."""

DASH_HINT = "a value that starts with '-' and is not a number goes after `--`: hrb score -- -x"
"""The advice given when a value starting with ``-`` was read as an option."""


def chosen(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command's own parser that ``ns`` was parsed by: ``hrb ref put``'s for ``ref put``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(ns, action.dest, None)
            if isinstance(name, str) and name in action.choices:
                return chosen(action.choices[name], ns)
    return parser


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [s for a in parser._actions for s in a.option_strings if s.startswith("--")]


def _takes_values(parser: argparse.ArgumentParser) -> bool:
    """Whether the command takes a positional value (which could start with ``-``)."""
    return any(
        not a.option_strings and not isinstance(a, argparse._SubParsersAction) for a in parser._actions
    )


def _spec_field(command: str, option: str, value: str | None) -> str | None:
    """What to say of ``hrb bench --runs 0``: ``runs`` is set in the spec (with its range when 0 is outside it)."""
    import msgspec

    from hrbench_client import protocol as p

    specs: dict[str, type[msgspec.Struct]] = {"bench": p.BenchmarkParams, "eval": p.EvaluateParams}
    typ = specs.get(command)
    field = option[2:].replace("-", "_")
    if typ is None or field not in {f.encode_name for f in msgspec.structs.fields(typ)}:
        return None
    said = f"{field} is set in the spec, not by an option: {field} = ..."
    if value is None:
        return said
    try:
        given: Any = msgspec.json.decode(value)
    except msgspec.DecodeError:
        given = value
    try:
        msgspec.convert({field: given}, typ)
    except msgspec.ValidationError as exc:
        broken = p.broken_range(str(exc))
        if broken is not None and broken[0] == field:
            return f"{said}; and {field} = {p.shown(given)} is out of range: {broken[1]}"
    return said


def unrecognized(parser: argparse.ArgumentParser, ns: argparse.Namespace, extras: list[str]) -> str:
    """The error for arguments no option of the command takes, with what may have been meant.

    Example:
        >>> from hrbench_client.cli.parser import _parser
        >>> top = _parser()
        >>> ns, extras = top.parse_known_args(["report", "capitals", "--comapre", "ask", "fixed"])
        >>> unrecognized(top, ns, extras)
        'unrecognized arguments: --comapre ask fixed (did you mean --compare?)'
    """
    sub = chosen(parser, ns)
    hints: list[str] = []
    for n, token in enumerate(extras):
        if not token.startswith("-") or token == "-":
            continue
        name, eq, inline = token.partition("=")
        if name.startswith("--"):
            value = inline if eq else next((t for t in extras[n + 1 : n + 2] if not t.startswith("-")), None)
            field = _spec_field(getattr(ns, "cmd", ""), name, value)
            close = difflib.get_close_matches(name, _options(sub), n=1, cutoff=0.6)
            if field is not None:
                hints.append(field)
                continue
            if close:
                hints.append(f"did you mean {close[0]}?")
                continue
        if _takes_values(sub) and DASH_HINT not in hints:
            hints.append(DASH_HINT)
    return f"unrecognized arguments: {' '.join(extras)}" + (f" ({'; '.join(hints)})" if hints else "")


def dash_value_after(message: str, parser: argparse.ArgumentParser) -> str | None:
    """For argparse's "argument OPTION: expected one argument", the advice when a value starting with ``-`` followed it.

    ``None`` when the option was given no value at all, or another option of ``parser`` followed
    it (the advice would not apply).
    """
    argv = ARGV.get() or []
    if "expected one argument" not in message or not message.startswith("argument "):
        return None
    names = message[len("argument ") :].split(":", 1)[0].split("/")
    known = {s for a in parser._actions for s in a.option_strings}
    for n, token in enumerate(argv):
        after = argv[n + 1] if n + 1 < len(argv) else ""
        if token in names and after.startswith("-") and after.partition("=")[0] not in known:
            return f"a value that starts with '-' is given with `=`: {token}={after}"
    return None


def option_message(
    exc: Any, ns: argparse.Namespace, parser: argparse.ArgumentParser, numbers_only: bool = False
) -> str | None:
    """``--alpha 2: must be below 0.5`` for a value the daemon refused as out of range, or ``None``.

    ``exc``: the daemon's ``InvalidParams``, whose data name the field and the rule, or its
    ``ConfigError`` naming the field (``level: must be ... (got 1.5)``; with ``numbers_only``,
    only when the option's value is a number, as a value out of range is); ``None``
    when no option of the command gave that field (a spec's field is said as the daemon says it).
    ``parser``: ``hrb``'s.
    """
    data = getattr(exc, "data", None) or {}
    field, rule = data.get("field"), (data.get("context") or {}).get("rule")
    if isinstance(field, str) and rule is None:  # a ConfigError: "level: must be ... (got 1.5)"
        said = str(exc)
        if said.startswith(f"{field}: "):
            rule = re.sub(r" \(got [^()]*\)$", "", said[len(field) + 2 :])
    if not isinstance(field, str) or not isinstance(rule, str):
        return None
    for action in chosen(parser, ns)._actions:
        if action.dest == field and action.option_strings:
            option = max(action.option_strings, key=len)
            given = _given(action.option_strings, getattr(ns, field, None))
            if numbers_only and not _number(given):  # a file or a name: said as the daemon says it
                return None
            return f"{option} {given}: {rule}"
    return None


def _number(text: str) -> bool:
    """Whether ``text`` reads as a number (``1.5``, ``-2``, ``1e-3``)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _given(options: Sequence[str], parsed: Any) -> str:
    """The value an option was given, as typed (its parsed value when not found)."""
    argv = ARGV.get() or []
    for n, token in enumerate(argv):
        if token in options and n + 1 < len(argv):
            return argv[n + 1]
        name, eq, value = token.partition("=")
        if eq and name in options:
            return value
    from hrbench_client.protocol import shown

    return shown(parsed)
