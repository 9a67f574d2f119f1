"""``hrb score``: one output, or JSON lines on stdin (the full path; see :mod:`._fast`)."""

from __future__ import annotations

import json
import sys

from hrbench_client.cli._common import _client, _fail_usage, _msgspec, _out, _Usage, explain
from hrbench_client.cli.exit_codes import EXIT_OK, EXIT_WRONG
from hrbench_client.errors import DaemonError, HrbenchError
from hrbench_client.utf8 import not_utf8

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator
    from typing import Any


def _label(args: argparse.Namespace) -> Any:
    if args.label_json is not None:
        try:
            return json.loads(args.label_json)
        except ValueError as exc:
            _fail_usage(f"--label-json is not JSON: {exc}")
    if not args.label:
        return None
    return args.label[0] if len(args.label) == 1 else list(args.label)


class _StdinInputs:
    """The ``score`` params of each JSON line on stdin, validated here so that errors name the line.

    The flags are the defaults of the lines: ``--label``/``--label-json`` is the label of a
    line that carries none (no ``"label"``, or ``null``: no label), ``--item`` the item of a
    line without one, as ``--scorer`` and ``--settings`` are; what a line gives itself wins.
    So ``echo '{"output":"paris"}' | hrb score --label Paris`` scores against ``Paris``, and
    ``--check`` does not ask for the ``--label`` it was given.

    Iteration stops at the first bad line and keeps its error in :attr:`error`: the caller
    prints the verdicts of every line before it, then raises it. :attr:`lines` holds the stdin
    line number of each input yielded, to name the line of an error the daemon reports.
    """

    def __init__(self, args: argparse.Namespace, label: Any = None, item: Any = None) -> None:
        self.scorer: str = args.scorer
        self.check: bool = args.check
        self.settings = _settings(args.settings)
        self.label = label
        self.item = item
        self.lines: list[int] = []
        self.error: _Usage | None = None

    def __iter__(self) -> Iterator[Any]:
        from hrbench_client import protocol as p

        msgspec = _msgspec()
        at = 0
        for n, line in enumerate(sys.stdin.buffer, 1):
            at += len(line)
            if not line.strip():
                continue
            try:
                rec = json.loads(line.decode("utf-8-sig" if n == 1 else "utf-8"))
            except UnicodeDecodeError as exc:
                self.error = _Usage(f"stdin is {not_utf8(line, exc, at - len(line), n)}")
                return
            except ValueError as exc:
                self.error = _Usage(f"stdin line {n}: not JSON: {exc}")
                return
            if not isinstance(rec, dict):
                self.error = _Usage(f'stdin line {n}: expected an object {{"output": ..., "label": ...}}')
                return
            if rec.get("label") is None and self.label is not None:
                rec["label"] = self.label
            if rec.get("item") is None and self.item is not None:
                rec["item"] = self.item
            if self.check and rec.get("label") is None:
                self.error = _Usage(f"stdin line {n}: {_CHECK_NEEDS_LABEL}")
                return
            rec.setdefault("scorer", self.scorer)
            if self.settings:
                rec.setdefault("settings", self.settings)
            try:
                params = msgspec.convert(rec, p.ScoreParams)
            except msgspec.ValidationError as exc:
                self.error = _Usage(f"stdin line {n}: {explain(exc, p.ScoreParams, rec)}")
                return
            self.lines.append(n)
            yield params


_CHECK_NEEDS_LABEL = (
    '--check needs a label (--label TEXT or --label-json JSON; a "label" field on stdin): '
    "an output without one is not scored right or wrong"
)


def _settings(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        _fail_usage(f"--settings is not JSON: {exc}")
    if not isinstance(value, dict):
        _fail_usage("--settings must be a JSON object")
    return value


def cmd_score(args: argparse.Namespace) -> int:
    item = None
    if args.item is not None:
        try:
            item = json.loads(args.item)
        except ValueError:
            item = args.item
    if args.output is None and sys.stdin.isatty():
        _fail_usage("give an OUTPUT, or JSON lines on stdin")
    label = _label(args)  # on stdin, the label of the lines that carry none
    if args.check and args.output is not None and label is None:
        _fail_usage(_CHECK_NEEDS_LABEL)
    with _client(args) as hb:
        if args.output is not None:
            r = hb.score(args.output, label, scorer=args.scorer, item=item, settings=_settings(args.settings))
            _out(r)
            return EXIT_WRONG if (args.check and r.correct is False) else EXIT_OK
        inputs = _StdinInputs(args, label, item)
        wrong = False
        done = 0
        try:
            for r in hb.score_many(inputs):
                _out(r)
                done += 1
                wrong = wrong or r.correct is False
        except HrbenchError as exc:  # about the input `done`: name its line
            if done < len(inputs.lines) and not isinstance(exc, DaemonError):
                exc.message = f"stdin line {inputs.lines[done]}: {exc.message}"
            raise
    if inputs.error is not None:
        raise inputs.error
    return EXIT_WRONG if (args.check and wrong) else EXIT_OK
