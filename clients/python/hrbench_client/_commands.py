"""The ``hrb`` commands behind :func:`hrbench_client.cli.main` (see that module for usage)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys

from hrbench_client import _paths
from hrbench_client._scorers import SCORERS
from hrbench_client.cli import EXIT_PIPE, closed_output, output_closed
from hrbench_client.errors import (
    BenchmarkCancelled,
    ConfigError,
    DaemonError,
    DaemonStopped,
    HrbenchError,
    InvalidParams,
    NotFound,
    RequestCancelled,
    ScorerError,
    TooFewRunsError,
)

# Start-up time matters for one-liners: `typing`, `argparse`, `pathlib` and msgspec are imported
# where they are used, and `hrb score OUTPUT` takes the fast path of _fast.py.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import Any, NoReturn

__all__ = [
    "EXIT_BUDGET",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "EXIT_WRONG",
    "USAGE_ERRORS",
    "exit_code",
    "run",
]

EXIT_OK, EXIT_WRONG, EXIT_USAGE, EXIT_ERROR, EXIT_BUDGET, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130

# Errors about the caller's input (exit 2): the ConfigError family (ConfigError,
# ReferenceValueError, SignatureError), -32602 invalid params, a report asked of too few runs, and
# NotFound: an id, name or id prefix that names nothing stored (decided, newcomer finding: it was
# exit 3 for rows/report/cancel/view and 2 for rm; SPEC section 6, "2 on bad input").
# Everything else the daemon reports (and a daemon that cannot be reached) is exit 3.
USAGE_ERRORS: tuple[type[HrbenchError], ...] = (ConfigError, InvalidParams, TooFewRunsError, NotFound)

EXIT_CODES_HELP = """\
exit codes:
  0    ok: every run was scored (right or wrong)
  1    an output scored wrong (`hrb score --check`); an arm's accuracy (`hrb bench`) or the
       mean score (`hrb eval`) under --fail-under, or NA there (nothing was measured); no
       daemon runs (`hrb daemon status`)
  2    usage or invalid input: bad arguments, an invalid spec or JSON line, an unknown or
       ambiguous benchmark id, id prefix or name (NotFound, with the closest ones), and the
       daemon's ConfigError, ReferenceValueError, SignatureError, InvalidParams (-32602) and
       TooFewRunsError (a report of fewer than 5 runs: use --descriptive); under `hrb score`,
       a ScorerError too (the scorer cannot read the label or output given)
  3    runs ended in errors (a failed model call, an arm that raised: stderr says how many,
       by arm and cause; `hrb bench --resume ID --retry-errors` runs them again); the daemon
       died or was stopped (`hrb daemon stop`) while `hrb bench` ran, or `hrb cancel ID` cancelled
       the benchmark under `hrb bench` (stderr names it, the runs saved and the resume command);
       a daemon or transport error: no daemon could be reached or started,
       ModelError, BudgetRefused, ReplayMiss, ScorerError, InternalError, ...
  4    a budget stopped the benchmark (the default 400-call cap included): stderr prints the
       command that resumes it with higher limits
  130  interrupted by Ctrl-C (the benchmark is cancelled; `hrb bench --resume ID` finishes it)
  141  the output closed before the command finished (`| head`), under every command and
       format: nothing more is printed; `hrb bench`'s benchmark is cancelled (unless --detach)
       and stderr prints the command that resumes it
"""


def exit_code(exc: BaseException, command: str | None = None) -> int:
    """The exit code of an error the daemon reported: 2 for invalid input, else 3.

    Decided (newcomer's finding, issue 15): under ``hrb score`` a ``ScorerError`` is about the
    OUTPUT, label or scorer the caller gave (a label the choice scorer cannot read), so it is
    invalid input, exit 2; inside a benchmark it stays a run error, exit 3.

    Example:
        >>> from hrbench_client.errors import ScorerError
        >>> exit_code(ScorerError("label 'Q'"), "score"), exit_code(ScorerError("label 'Q'"))
        (2, 3)
    """
    if command == "score" and isinstance(exc, ScorerError):
        return EXIT_USAGE
    return EXIT_USAGE if isinstance(exc, USAGE_ERRORS) else EXIT_ERROR


# msgspec is imported on first use: `hrb score OUTPUT` answers without it (see _raw.py).


def _msgspec() -> Any:
    import msgspec

    return msgspec


def _out(obj: Any) -> None:
    sys.stdout.buffer.write(_msgspec().json.encode(obj) + b"\n")


def _err(msg: str) -> None:
    print(f"hrb: {msg}", file=sys.stderr)


class _Usage(Exception):
    pass


def _kinds(union: Any) -> str:
    import typing

    return ", ".join(
        t.__struct_config__.tag for t in typing.get_args(union) if hasattr(t, "__struct_config__")
    )


def explain(exc: Exception, typ: Any = None, data: Any = None) -> str:
    """The message of a msgspec validation error, with the valid ``kind`` tags and a ``$`` path.

    ``Invalid value 'promt' - at `$.arms[0].kind``` gets ``(expected one of: prompt, reading,
    outputs, import)``, and likewise a client's ``kind``; a message about the top-level object
    (msgspec gives it no path, e.g. ``Object contains unknown field `rusn```) gets `` - at `$```.
    Given the type decoded (and the data), an unknown field gets the closest field's name
    (:func:`hrbench_client.protocol.unknown_field_hint`).
    """
    import re

    msg = str(exc)
    if " - at `" not in msg:
        msg = f"{msg} - at `$`"
    if typ is not None:
        from hrbench_client.protocol import unknown_field_hint

        msg = unknown_field_hint(msg, typ, data)
    m = re.fullmatch(
        r"Invalid value .* - at `\$(\.arms\[\d+\]|\.client|\.client\.fallback)\.kind`", msg, re.S
    )
    if m is None:
        return msg
    import typing

    from hrbench_client import protocol as p

    if m.group(1) == ".client":
        union = p.ClientSpec
    elif m.group(1) == ".client.fallback":
        union = typing.get_type_hints(p.ReplayClientSpec)["fallback"]  # a client but not replay
    else:
        union = p.ArmSpec
    return f"{msg} (expected one of: {_kinds(union)})"


def _fail_usage(msg: str) -> NoReturn:
    raise _Usage(msg)


def _positive(text: str) -> int:
    """A whole number >= 1 (``--concurrency``)."""
    import argparse

    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return n


def _limit(kind: type) -> Any:
    """The ``--max-*`` flags' type: a finite number >= 0, whole for calls and tokens.

    The same rule as the library's ``hrbench.governor.check_limit`` (this client imports no
    hrbench): newcomer finding 7, ``--max-usd nan`` and ``--max-usd inf`` passed ``float`` and
    were sent as JSON ``null``, so the $5 default applied silently. Refused with exit 2.

    Example:
        >>> _limit(float)("0.5"), _limit(int)("40")
        (0.5, 40)
    """
    import argparse
    import math

    what = "a whole number >= 0" if kind is int else "a finite number >= 0 (USD)"

    def parse(text: str) -> int | float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0 or (kind is int and value != int(value)):
            raise argparse.ArgumentTypeError(f"expected {what}, not NaN or infinity; got {text!r}")
        return int(value) if kind is int else value

    parse.__name__ = "limit"  # argparse names the type in its message
    return parse


def _fraction(text: str) -> float:
    """A number from 0 to 1 (``--fail-under``)."""
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value


def _client(args: argparse.Namespace) -> Any:
    from hrbench_client.client import connect

    return connect(args.home, autostart=not args.no_autostart)


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    return (
        f"{s // 3600}h{s % 3600 // 60:02d}m"
        if s >= 3600
        else f"{s // 60}m{s % 60:02d}s"
        if s >= 60
        else f"{s}s"
    )


def usd_text(usd: float) -> str:
    """A USD amount as ``hrb`` prints it: four decimals, or three significant digits below a cent.

    The library's rule (``hrbench.records.usd_text``; this client imports no hrbench): four
    decimals would print every cheap spend as ``0.0000``.

    Example:
        >>> [usd_text(x) for x in (0.0, 0.1234, 0.00131, 3.7e-06)]
        ['0.0000', '0.1234', '0.00131', '3.7e-06']
    """
    return f"{usd:.4f}" if usd == 0 or abs(usd) >= 0.01 else f"{usd:.3g}"


def progress_line(
    label: str,
    done: int,
    total: int,
    rate: float | None,
    usd: float | None = None,
    max_usd: float | None = None,
    width: int = 30,
) -> str:
    """One line of ``hrb bench``'s progress bar: rows done, rate, ETA, spend against the cap.

    Args:
        label: what runs (``bench``).
        done: rows scored so far (resumed rows included).
        total: rows the benchmark will have.
        rate: rows per second over this session; ``None`` (or 0) before it is known: the rate
            and ETA are left out.
        usd: USD spent so far; ``None`` leaves spend out.
        max_usd: the USD cap; ``None``: spend is shown alone.
        width: the bar's width in characters.

    Returns:
        The line, without a carriage return.

    Example:
        >>> progress_line("bench", 50, 200, 25.0, 0.1234, 2.0, width=10)
        'bench [##........] 50/200 rows  25.0 rows/s  ETA 6s  $0.1234 of $2.00'
        >>> progress_line("bench", 0, 0, None, width=4)
        'bench [####] 0/0 rows'
    """
    filled = min(width, int(width * done / total)) if total else width
    parts = [f"{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} rows"]
    if rate:
        parts.append(f"{rate:.1f} rows/s")
        if done < total:
            parts.append(f"ETA {_duration((total - done) / rate)}")
    if usd is not None:
        parts.append(f"${usd_text(usd)}" + ("" if max_usd is None else f" of ${max_usd:.2f}"))
    return "  ".join(parts)


class _Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal.

    ``stream`` (set once the benchmark is sent) supplies the spend and the cap.
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self.on = sys.stderr.isatty()
        self.last = 0.0
        self.stream: Any = None
        self.start: tuple[float, int] | None = None

    def __call__(self, done: int, total: int) -> None:
        if not self.on:
            return
        import time

        now = time.monotonic()
        if self.start is None:
            self.start = (now, done)  # resumed rows do not count towards the rate
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        t0, d0 = self.start
        rate = (done - d0) / (now - t0) if now > t0 and done > d0 else None
        note = getattr(self.stream, "progress", None)
        usd = None if note is None else note.usd
        max_usd = None if note is None else note.max_usd
        line = progress_line(self.label, done, total, rate, usd, max_usd)
        sys.stderr.write(f"\r{line}\x1b[K")
        sys.stderr.flush()

    def end(self) -> None:
        if self.on:
            sys.stderr.write("\n")


class _Waiting:
    """A plain line on stderr when no row came for ``every`` seconds (newcomer finding).

    Decided: a benchmark whose endpoint never answers left ``hrb bench`` silent for minutes
    (the progress bar is drawn on a terminal only). A thread prints, a terminal or not, at
    most one line per ``every`` seconds while no row arrives: ``hrb: waiting: no row for 10 s
    (3 of 40 runs done; benchmark ID)``, then ``... for 20 s``, ``... for 30 s``: the time since
    the last row, not since the last line (newcomer finding 21: it said 10 s every time). A
    terminal's progress bar is redrawn after it.
    """

    def __init__(self, progress: _Progress, every: float = 10.0) -> None:
        import threading
        import time

        self.progress = progress
        self.every = every
        self.last_row = self.said = time.monotonic()
        self.stop = threading.Event()
        self.done: tuple[int, int] | None = None
        self.thread = threading.Thread(target=self._run, name="hrb-waiting", daemon=True)

    def __enter__(self) -> _Waiting:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=1.0)

    def row(self, now: float | None = None) -> None:
        """A row arrived (at ``now``, :func:`time.monotonic` seconds; now by default)."""
        import time

        self.last_row = self.said = time.monotonic() if now is None else now

    def line_at(self, now: float) -> str | None:
        """The line to print at ``now`` (monotonic seconds), or ``None``; a line printed is remembered.

        Example:
            >>> w = _Waiting(_Progress("bench"))
            >>> w.row(now=0.0)
            >>> [w.line_at(t) is not None for t in (9.0, 10.0, 15.0, 20.0)]
            [False, True, False, True]
        """
        quiet = now - self.last_row
        if quiet < self.every or now - self.said < self.every:
            return None
        self.said = now  # at most one line per `every` seconds
        note = getattr(self.progress.stream, "progress", None)
        done = "" if note is None else f"{note.done} of {note.total} runs done; "
        bench_id = getattr(self.progress.stream, "id", None)
        where = f"benchmark {bench_id}" if bench_id else "the benchmark"
        return f"hrb: waiting: no row for {quiet:.0f} s ({done}{where} is running; Ctrl-C cancels it)"

    def _run(self) -> None:
        import time

        while not self.stop.wait(min(1.0, self.every / 4)):
            line = self.line_at(time.monotonic())
            if line is None:
                continue
            if self.progress.on:
                sys.stderr.write("\r\x1b[K")
            print(line, file=sys.stderr, flush=True)


# -- score -----------------------------------------------------------------------------------------


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
    Decided (newcomer finding: ``echo '{"output":"paris"}' | hrb score --label Paris`` said
    ``correct: null``, and with ``--check`` asked for the ``--label`` it was given).

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
        for n, line in enumerate(sys.stdin.buffer, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
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


# -- bench / eval --------------------------------------------------------------------------------


def _load_toml(path: str) -> tuple[dict[str, Any], Path]:
    import tomllib
    from pathlib import Path

    file = Path(path)
    try:
        with file.open("rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        _fail_usage(f"cannot read {path}: {exc.strerror}")
    except tomllib.TOMLDecodeError as exc:
        _fail_usage(f"{path} is not valid TOML: {exc}")
    try:
        no_key_in_toml(data)
    except InvalidParams as exc:
        raise InvalidParams(f"{path}: {exc}") from None
    return data, file.resolve().parent


_HEAD_VAR = re.compile(r"^\$(?:\{(\w+)\}|(\w+))")
"""An environment variable at the head of a path: ``${HRBENCH_DATA}/...`` or ``$HRBENCH_DATA/...``."""


def no_key_in_toml(data: Any, where: str = "") -> Any:
    """``api_key_env = false`` in a TOML spec sends no key, as ``null`` does on the wire.

    TOML has no null, so a client for a local server that needs no key (vLLM, Ollama) writes
    ``api_key_env = false`` (decided, newcomer finding: ``api_key_env = null`` cannot be
    written in TOML). Every ``api_key_env`` of the spec is read so, at any depth (the client,
    its fallback, a judge's client).

    Raises:
        InvalidParams: ``api_key_env = true``, naming the field.

    Example:
        >>> no_key_in_toml({"client": {"kind": "openai", "api_key_env": False}})
        {'client': {'kind': 'openai', 'api_key_env': None}}
    """
    if isinstance(data, dict):
        for key, value in data.items():
            at = f"{where}.{key}" if where else key
            if key == "api_key_env" and isinstance(value, bool):
                if value:
                    raise InvalidParams(
                        f"{at}: true is not a variable name; give the name of the variable that holds "
                        "the key, or false to send no key"
                    )
                data[key] = None
            else:
                no_key_in_toml(value, at)
    elif isinstance(data, list):
        for n, value in enumerate(data):
            no_key_in_toml(value, f"{where}[{n}]")
    return data


def _resolve(base: Path, value: Any) -> Any:
    """A path of a spec file, made absolute.

    Environment variables are expanded (``${HRBENCH_DATA}/...``), then ``~``; a relative path
    written in the spec is taken from the spec file's folder, but a relative path that a
    variable at the head of the path holds is taken from the shell's working directory, as
    the shell would (decided, newcomer finding: ``cd hrbench && HRBENCH_DATA=../shared/data hrb
    bench examples/squad2-shared-50.toml``, the command in that spec's own header, looked in
    ``examples/../shared/data``). The client resolves both before it sends the spec, so the
    daemon's working directory never matters.

    Raises:
        InvalidParams: a variable the environment does not set (named, so the user can set it).
    """
    if not isinstance(value, str) or not value:
        return value
    head = _HEAD_VAR.match(value)
    if head is not None and os.environ.get(head.group(1) or head.group(2)):
        # decided (newcomer finding): a variable's relative path is the shell's, not the spec's
        here = os.path.abspath(os.path.expanduser(os.environ[head.group(1) or head.group(2)]))
        value = here + value[head.end() :]
    expanded = os.path.expandvars(value)
    if "$" in expanded:
        name = expanded[expanded.index("$") :].split("/")[0]
        raise InvalidParams(f"path {value!r}: the environment variable {name} is not set")
    expanded = os.path.expanduser(expanded)
    return expanded if os.path.isabs(expanded) else str(base / expanded)


def bench_params(path: str) -> Any:
    """The :class:`~hrbench_client.protocol.BenchmarkParams` of a TOML file, paths resolved.

    Raises:
        InvalidParams: the file does not match the schema (msgspec's message names the field).
    """
    from hrbench_client import protocol as p

    data, base = _load_toml(path)
    ref = data.get("reference")
    if isinstance(ref, dict):
        for key in ("path", "ids_from"):
            if key in ref:
                ref[key] = _resolve(base, ref[key])
    for arm in data.get("arms", []) or []:
        if isinstance(arm, dict) and arm.get("kind") == "outputs" and "path" in arm:
            arm["path"] = _resolve(base, arm["path"])
    data["python_path"] = [str(base), *[_resolve(base, x) for x in data.get("python_path", [])]]
    data.setdefault("name", os.path.splitext(os.path.basename(path))[0])  # `hrb report capitals` finds it
    try:
        return _msgspec().convert(data, p.BenchmarkParams)
    except _msgspec().ValidationError as exc:
        raise InvalidParams(f"{path}: {explain(exc, p.BenchmarkParams, data)}") from None


def cmd_bench(args: argparse.Namespace) -> int:
    from hrbench_client import protocol as p

    limits = {
        k: getattr(args, k) for k in ("max_calls", "max_usd", "max_tokens") if getattr(args, k) is not None
    }
    if args.resume:
        if args.file:
            _fail_usage("give a FILE or --resume ID, not both")
        governor = p.GovernorSpec(**limits) if limits else None
        spec: Any = p.BenchmarkParams(
            resume=args.resume,
            stream=not args.no_rows,
            governor=governor,
            detach=args.detach,
            retry_errors=args.retry_errors,
            concurrency=args.concurrency,  # None: the benchmark's own (newcomer finding)
        )
    elif args.retry_errors:
        _fail_usage("--retry-errors runs the runs that ended in errors again: give --resume ID")
    elif args.file:
        spec = bench_params(args.file)
        if args.no_rows:
            spec = _msgspec().structs.replace(spec, stream=False)
        if args.detach:
            spec = _msgspec().structs.replace(spec, detach=True)
        if args.concurrency is not None:
            spec = _msgspec().structs.replace(spec, concurrency=args.concurrency)
        if limits:  # one flag replaces one limit; the others in force stay (newcomer finding)
            kept = p.GovernorSpec(defaults=True) if spec.governor is None else spec.governor
            spec = _msgspec().structs.replace(spec, governor=_msgspec().structs.replace(kept, **limits))
        if (why := uncapped(spec)) is not None:
            _err(f"warning: {why}")
    else:
        _fail_usage("give a benchmark FILE.toml or --resume ID")
    if (said := shell_limits_note(spec)) is not None:
        _err(f"note: {said}")
    if args.detach:
        return _submit_detached(args, spec)
    progress = _Progress("bench")
    with _client(args) as hb:
        stream = hb.benchmark(spec, on_progress=progress)
        progress.stream = stream
        try:
            with _Waiting(progress) as waiting:
                for row in stream:
                    waiting.row()
                    _out(row)
                    sys.stdout.buffer.flush()  # live rows, and a closed reader is seen while it runs
        except KeyboardInterrupt:
            progress.end()
            # decided: as `hrb cancel` does, the daemon lets the requests already sent finish
            # (its grace), saving their rows; a second Ctrl-C leaves at once, the daemon goes on
            _err(
                "cancelling: the requests already sent finish first (the daemon's "
                "HRBENCH_CANCEL_GRACE_S, else 10 s); Ctrl-C again to leave now"
            )
            with contextlib.suppress(KeyboardInterrupt):
                stream.close()
            if stream.id:
                _err(f"cancelled; finished rows are kept. Resume with: hrb bench --resume {stream.id}")
            return EXIT_INTERRUPTED
        except RequestCancelled:
            progress.end()
            _err(f"cancelled; resume with: hrb bench --resume {stream.id}")
            return EXIT_INTERRUPTED
        except (BenchmarkCancelled, DaemonStopped) as exc:  # `hrb cancel ID` from another shell,
            # or `hrb daemon stop` meanwhile: the id, the runs saved, the resume command (newcomer findings)
            progress.end()
            _err(exc.message)
            return EXIT_ERROR
        except DaemonError as exc:  # the daemon died (a kill, a crash): say which benchmark, and how on
            progress.end()
            if not stream.id:
                raise
            _err(
                f"the daemon stopped while benchmark {stream.id} ran ({exc.message}); its saved rows are "
                f"kept (`hrb rows {stream.id}`). Resume it with: hrb bench --resume {stream.id}"
            )
            return EXIT_ERROR
        except OSError as exc:  # `hrb bench spec | head -1`: the submitter goes, so the daemon cancels
            if not closed_output(exc):
                raise
            progress.end()
            output_closed()
            stream.close()
            if stream.id:
                _err(
                    f"the output closed, so benchmark {stream.id} was cancelled; finished rows are kept. "
                    f"Resume with: hrb bench --resume {stream.id}"
                )
            return EXIT_PIPE
        progress.end()
        assert stream.result is not None
        _out(stream.result)
        if sys.stderr.isatty():
            print(stream.result.text, file=sys.stderr)
    return bench_exit(stream.result, args.fail_under)


def shell_limits_note(spec: Any, environ: Any = None) -> str | None:
    """What becomes of the ``HRBENCH_MAX_*`` variables set in this shell, or ``None`` when none is.

    Decided (newcomer finding: ``HRBENCH_MAX_CALLS=50 hrb bench`` ran under the 400 calls of a
    daemon started before, and nothing said so): ``hrb`` sends them with the request
    (:func:`hrbench_client.client.with_caller_env`) and the daemon takes them as the default
    limits, for the limits the spec and the flags do not set; this says which apply and which
    do not (a spec's ``[governor]`` sets every limit itself; a flag replaces its variable; a
    resume keeps the limits in force), so they are never ignored silently.

    Args:
        spec: the request (:class:`~hrbench_client.protocol.BenchmarkParams`).
        environ: the environment to read (``os.environ`` by default).

    Example:
        >>> from hrbench_client import protocol as p
        >>> shell_limits_note(p.BenchmarkParams(), {"HRBENCH_MAX_CALLS": "50"})
        'HRBENCH_MAX_CALLS=50 from this shell is a default limit of this benchmark (the spec has no [governor])'
        >>> shell_limits_note(p.BenchmarkParams(governor=p.GovernorSpec(max_usd=1.0)), {"HRBENCH_MAX_CALLS": "50"})
        "HRBENCH_MAX_CALLS=50 from this shell is not used: the spec's [governor] sets the limits (one it leaves out has no cap)"
        >>> shell_limits_note(p.BenchmarkParams(), {}) is None
        True
    """
    from hrbench_client.client import LIMIT_VARIABLES

    env = os.environ if environ is None else environ
    given = [(n, env[n]) for n in LIMIT_VARIABLES if env.get(n)]
    if not given:
        return None
    shown = ", ".join(f"{n}={v}" for n, v in given)
    gov = spec.governor
    if spec.resume is not None:
        return (
            f"{shown} from this shell is not used: a resume keeps the limits in force (`hrb ls` shows "
            "them); give --max-calls/--max-usd/--max-tokens to change one"
        )
    if gov is not None and not gov.defaults:
        return f"{shown} from this shell is not used: the spec's [governor] sets the limits (one it leaves out has no cap)"
    flagged = {
        f"HRBENCH_{k.upper()}"
        for k in ("max_calls", "max_usd", "max_tokens")
        if gov and getattr(gov, k) is not None
    }
    used = [f"{n}={v}" for n, v in given if n not in flagged]
    replaced = [n for n, _ in given if n in flagged]
    parts = []
    if used:
        parts.append(
            f"{', '.join(used)} from this shell {'is a default limit' if len(used) == 1 else 'are default limits'} "
            "of this benchmark (the spec has no [governor])"
        )
    if replaced:
        parts.append(
            f"{', '.join(replaced)} from this shell {'is' if len(replaced) == 1 else 'are'} replaced by the flag given"
        )
    return "; ".join(parts)


def _submit_detached(args: argparse.Namespace, spec: Any) -> int:
    """``hrb bench --detach``: submit, say the id and how to follow it, exit 0 while it runs.

    Decided (newcomer finding: ``--detach`` still streamed every row and waited for the end): a
    detached benchmark survives its submitter, so ``hrb bench --detach`` waits only until the
    daemon has checked and stored it, then prints one JSON line (``id``, ``status``
    ``"running"``, ``detached``, rows ``done`` and ``total``, and the commands that follow it)
    and exits 0; the daemon runs it to its end. A spec the daemon refuses exits 2 as without
    ``--detach``. ``--fail-under`` needs the result, so it is refused with ``--detach``.
    """
    if args.fail_under is not None:
        _fail_usage("--fail-under needs the benchmark's result: not with --detach (see `hrb report ID`)")
    spec = _msgspec().structs.replace(spec, stream=False, detach=True)
    with _client(args) as hb:
        stream = hb.benchmark(spec)
        bid = stream.started()
    follow = {
        "status": "hrb ls",
        "rows": f"hrb rows {bid}",
        "report": f"hrb report {bid}",
        "cancel": f"hrb cancel {bid}",
    }
    line = {"id": bid, "status": "running", "detached": True, "done": stream.done, "total": stream.total}
    try:
        _out({**line, "follow": follow})
        sys.stdout.flush()
    except OSError as exc:
        if not closed_output(exc):
            raise
        output_closed()
        _err(f"the output closed; benchmark {bid} runs on (detached): `hrb rows {bid}`, `hrb ls`")
        return EXIT_PIPE
    _err(
        f"benchmark {bid} runs on in the daemon (detached, {stream.done}/{stream.total} rows done). "
        f"Follow it: `hrb ls` (status, rows), `hrb rows {bid}` (rows saved so far), "
        f"`hrb report {bid}` (once done); stop it: `hrb cancel {bid}` (resumable)"
    )
    return EXIT_OK


def uncapped(spec: Any) -> str | None:
    """Why a benchmark spec runs a billing model with no limit at all, or ``None`` (newcomer finding).

    Decided (newcomer finding: the real-data example specs shipped an empty ``[governor]``, so a
    copy pointed at a paid model had no cap): an empty ``[governor]`` still means no limits, but
    ``hrb bench`` warns when such a spec's client bills (``openai``, ``anthropic``, or a
    ``replay`` falling back to one) and an arm calls it (not ``outputs`` only).

    Example:
        >>> from hrbench_client import protocol as p
        >>> arms = [p.PromptArmSpec(name="a", template="{item}")]
        >>> uncapped(p.BenchmarkParams(arms=arms, client=p.OpenAIClientSpec(model="m"), governor=p.GovernorSpec()))[:30]
        'openai model m runs with no li'
        >>> uncapped(p.BenchmarkParams(arms=arms, client=p.OpenAIClientSpec(model="m"))) is None
        True
    """

    def kind(x: Any) -> Any:  # a tagged Struct keeps its tag on the class
        return None if x is None else x.__struct_config__.tag

    gov, client = spec.governor, spec.client
    if (
        gov is None
        or gov.defaults
        or any(x is not None for x in (gov.max_calls, gov.max_usd, gov.max_tokens))
    ):
        return None
    billing = client.fallback if kind(client) == "replay" else client
    if kind(billing) not in ("openai", "anthropic") or all(kind(a) == "outputs" for a in spec.arms):
        return None
    return (
        f"{kind(billing)} model {billing.model} runs with no limit at all (an empty [governor] means "
        "no cap); set [governor] max_calls/max_usd/max_tokens, or --max-usd USD, or remove the "
        "table for the defaults (400 calls, $5)"
    )


_CAP_FLAGS = (
    ("call_cap_reached", "--max-calls N"),
    ("cost_cap_reached", "--max-usd USD"),
    ("token_cap_reached", "--max-tokens N"),
)
"""The governor's refusal of each cap, and the flag that raises it (newcomer finding)."""


NOT_RETRIED_CAUSES = ("duplicate_draw", "no output for item ")
"""Causes of error runs that a resume or ``--retry-errors`` fails the same way (the library's
``DUPLICATE_CAUSE`` and ``MISSING_OUTPUT_CAUSE``: a run again draws the same replies, or reads
the same outputs); for them ``hrb bench`` advises no retry."""


def bench_exit(result: Any, fail_under: float | None = None) -> int:
    """The exit code of a finished benchmark, with a plain summary on stderr (SPEC section 6).

    4 when the governor stopped runs (with the command that resumes it, naming the flag of
    the cap that stopped them: a cost stop ``--max-usd``; ``--retry-errors`` too when runs
    ended in errors), else 3 when runs ended in errors, all or some (how many, by arm and
    cause, and ``hrb bench --resume ID --retry-errors`` to run them again once the cause is
    fixed; newcomer finding; no such advice when every such run had a cause a retry cannot fix:
    :data:`NOT_RETRIED_CAUSES`), else 1 when an arm's accuracy is under ``fail_under`` or is NA
    (nothing measured: :func:`_gate`), else 0: every run was scored.

    Decided (newcomer finding: ``NoLabelsWarning`` and ``FewRunsWarning`` lived only in the
    JSON result line, stderr empty, exit 0): every warning the benchmark raised is printed on
    stderr once, a terminal or not, as ``hrb: warning: Class: message``; the warnings of runs
    that ended in errors or were stopped by the budget are printed with that summary instead.
    """
    stopped = sum(s.budget_stop for s in result.summary)
    errors = sum(sum(s.error_causes.values()) or s.errors for s in result.summary)
    retry = " --retry-errors" if errors else ""
    warned = list(dict.fromkeys(result.warnings))
    said = [w.split(": ", 1)[1] for w in warned if w.startswith(("ArmErrorWarning", "BudgetStoppedWarning"))]
    summarised = stopped or errors or result.status == "errors"
    for w in warned:
        if not (w.startswith(("ArmErrorWarning", "BudgetStoppedWarning")) and summarised):
            _err(f"warning: {w}")
    if stopped:
        _err(
            f"budget stop: {stopped} run(s) were stopped by the governor and not run; the rows scored are kept"
        )
        for w in said:
            _err(w)
        note = getattr(result, "stop_note", None)
        if note:  # the daemon's note, the one hrb ls, the report and the view show (newcomer finding)
            _err(f"budget stopped: {note}")
        else:  # a daemon that sends no note: the caps its refusals name
            caps = [f for name, f in _CAP_FLAGS if any(name in w for w in said)]
            how = " ".join(caps) if caps else "--max-calls N (or --max-usd USD, --max-tokens N)"
            _err(f"resume with higher limits: hrb bench --resume {result.id} {how}{retry}")
        return EXIT_BUDGET
    if errors or result.status == "errors":
        _err(f"{errors} run(s) ended in errors and were scored 'error'")
        for w in said:
            _err(w)
        unretried = sum(
            k for s in result.summary for c, k in s.error_causes.items() if c.startswith(NOT_RETRIED_CAUSES)
        )
        if errors and unretried == errors:  # a retry reads the same outputs, or draws the same replies
            _err(
                "a resume or --retry-errors would fail these runs the same way "
                "(the note above says what helps); fix the outputs or the arms and run the benchmark anew"
            )
        else:
            _err(
                f"once the cause is fixed, run them again with: hrb bench --resume {result.id} --retry-errors"
            )
        return EXIT_ERROR
    if fail_under is not None:
        return _gate(result.summary, fail_under)
    return EXIT_OK


def _measured(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == x  # NaN != NaN


def _gate(summary: list[Any], fail_under: float) -> int:
    """``--fail-under``: 1 when an arm's accuracy is under the bar OR was not measured.

    Decided (newcomer finding: ``--fail-under 0.9`` passed, exit 0, on a benchmark whose
    items had no label, accuracy NA): a gate that measured nothing fails, naming the arms whose
    accuracy is NA (no labelled, reportable run: every item unlabelled, or only on ``dev``).
    """
    na = [s.arm for s in summary if not _measured(s.accuracy)]
    low = [s for s in summary if _measured(s.accuracy) and s.accuracy < fail_under]
    if low:
        shown = ", ".join(f"{s.arm} {s.accuracy:.3f}" for s in low)
        _err(f"accuracy under --fail-under {fail_under:g}: {shown}")
    if na or not summary:
        shown = ", ".join(na) or "no arm"
        _err(
            f"accuracy is NA, nothing was measured, so --fail-under {fail_under:g} fails: {shown} "
            "(no labelled run on a reportable split: label the items, or run them off the dev split)"
        )
    return EXIT_WRONG if low or na or not summary else EXIT_OK


def eval_params(path: str) -> Any:
    """The :class:`~hrbench_client.protocol.EvaluateParams` of a TOML file.

    ``data`` may be inline rows or a path (JSON lines, or a JSON list) relative to the file.

    Raises:
        InvalidParams: the file does not match the schema.
    """
    import json

    from hrbench_client import protocol as p

    data, base = _load_toml(path)
    rows = data.get("data")
    if isinstance(rows, str):
        file = base / _resolve(base, rows)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            _fail_usage(f"cannot read data {file}: {exc.strerror}")
        if text.lstrip().startswith("["):
            try:
                data["data"] = json.loads(text)
            except json.JSONDecodeError as exc:
                _fail_usage(f"data {file} is not JSON: {exc}")
        else:  # each line on its own: the error names the file's line (newcomer finding)
            data["data"] = []
            for n, line in enumerate(text.split("\n"), 1):
                if line.strip():
                    try:
                        data["data"].append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        _fail_usage(f"data {file} line {n} is not JSON ({exc.msg} at column {exc.colno})")
    data["python_path"] = [str(base), *[_resolve(base, x) for x in data.get("python_path", [])]]
    try:
        return _msgspec().convert(data, p.EvaluateParams)
    except _msgspec().ValidationError as exc:
        raise InvalidParams(f"{path}: {explain(exc, p.EvaluateParams, data)}") from None


def cmd_eval(args: argparse.Namespace) -> int:
    spec = eval_params(args.file)
    with _client(args) as hb:
        result = hb.evaluate(spec)
    _out(result)
    fields = result if isinstance(result, dict) else {}
    n_errors = fields.get("n_run_errors") or 0
    if n_errors:
        errors = fields.get("run_errors") or []
        _err(f"{n_errors} run(s) ended in errors" + (f"; first: {errors[0]}" if errors else ""))
        return EXIT_ERROR
    mean = fields.get("mean_score")
    if args.fail_under is None:
        return EXIT_OK
    if not _measured(mean):  # decided, as for `hrb bench`: a gate that measured nothing fails
        _err(f"mean score is NA, nothing was scored, so --fail-under {args.fail_under:g} fails")
        return EXIT_WRONG
    if mean < args.fail_under:
        _err(f"mean score {mean:.3f} is under --fail-under {args.fail_under:g}")
        return EXIT_WRONG
    return EXIT_OK


# -- references, rows, reports, cache, recordings --------------------------------------------------


def cmd_ref(args: argparse.Namespace) -> int:
    with _client(args) as hb:
        if args.ref_cmd == "put":
            path = os.path.abspath(args.file)
            if path.endswith(".toml"):
                data, base = _load_toml(path)
                ref = data.get("reference", data)
                if "path" in ref:
                    ref["path"] = _resolve(base, ref["path"])
            else:
                ref = {"path": path, "format": args.format}
            info = hb.references.put(ref, args.name)
            _out(info)
            if info.replaced:  # newcomer finding 18: rebinding a name was silent
                _err(
                    f"reference {args.name!r} now points at {info.hash[:12]} (was {info.replaced[:12]}): "
                    "benchmarks naming it from now on use the new content; earlier ones keep theirs "
                    f"(`hrb ref get {info.replaced[:12]}`)"
                )
        elif args.ref_cmd == "get":
            _out(hb.references.get(args.name))
        else:
            for info in hb.references.list():
                _out(info)
    return EXIT_OK


def cmd_rows(args: argparse.Namespace) -> int:
    from hrbench_client import export, protocol

    fmt = args.format
    if fmt in export.BINARY and args.output is None and sys.stdout.isatty():
        _fail_usage(f"--format {fmt} is binary and stdout is a terminal: give -o FILE (or pipe stdout)")
    try:
        export.check_format(fmt)
    except ImportError as exc:
        _fail_usage(str(exc))
    with _client(args) as hb:
        res = hb.rows(
            args.id, offset=args.offset, limit=args.limit, traces=args.traces, item=args.item, arm=args.arm
        )
    asdict = _msgspec().structs.asdict
    traces = res.traces
    rows = (
        {**asdict(r), "trace": _msgspec().to_builtins(traces.get(r.ledger_id, []))}
        if traces is not None
        else asdict(r)
        for r in res.rows
    )
    if args.output is None:  # a closed reader (`| head`) ends in cli.main: exit 141, quietly
        sys.stdout.flush()
        export.write_rows(rows, protocol.Row, sys.stdout.buffer, fmt)
        sys.stdout.buffer.flush()
        return EXIT_OK
    try:
        with open(os.path.expanduser(args.output), "wb") as f:
            n = export.write_rows(rows, protocol.Row, f, fmt)
    except OSError as exc:
        _fail_usage(f"--output {args.output}: {exc.strerror or exc}")
    _err(f"wrote {n} row(s) to {args.output}")
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    if args.html is not None:
        written = _write_html(args)
        if not (args.text or args.plot or args.compare or args.format != "json"):
            _out({"html": written})
            return EXIT_OK
    settings: dict[str, Any] = {}
    if args.descriptive:
        settings["descriptive"] = True
    if args.level is not None:
        settings["level"] = args.level
    if args.method is not None:
        settings["method"] = args.method
    if args.compare:
        settings["compare_pair"] = list(args.compare)
    plot = None
    if args.plot is not None:
        plot = settings["plot"] = os.path.abspath(os.path.expanduser(args.plot))  # the daemon writes it
    with _client(args) as hb:
        try:
            rep = hb.report(args.id, **settings)
        except TooFewRunsError as exc:
            if "--descriptive" not in exc.message:  # the library's message already says it
                exc.message = f"{exc.message.rstrip()} In hrb: use --descriptive."
            raise
    if plot is not None:
        rep.setdefault("plot", plot)
        _as_callers_file(plot)
    fmt = "text" if args.text else args.format
    note = rep.get("stop_note")
    label = STATUS_LABELS.get(rep.get("status") or "", "Note")
    if fmt == "text":
        text = rep.get("text", "")
        if rep.get("status") not in (None, "done"):
            print(f"Status: {rep['status']}")
        print(text)
        if note:
            print(f"{label}: {note}")
        if rep.get("unknown_note"):
            print(f"Governor: {rep['unknown_note']}")
        if plot is not None and plot not in text:
            print(f"Plot: {plot}")
    elif fmt == "markdown":
        sys.stdout.write(rep.get("markdown", ""))
        if note:
            sys.stdout.write(f"\n> **{label}** ({rep.get('status')}): {note}\n")
    elif args.compare and rep.get("comparisons"):
        _out(rep["comparisons"][0])  # JSON: just the paired difference asked for
    else:
        _out(rep)
    return EXIT_OK


def cmd_view(args: argparse.Namespace) -> int:
    try:
        from hrbench_client.view.server import serve
    except ImportError as exc:
        _fail_usage(f"hrb view needs the view extra: pip install 'hrbench[view]' ({exc})")
    path = "/"
    if args.benchmark is not None:
        with _client(args) as hb:
            path = f"/b/{hb.rows(args.benchmark, limit=1).benchmark.id}"  # an id, id prefix or name
    home, autostart = args.home, not args.no_autostart

    def connect() -> Any:
        from hrbench_client.client import connect as connect_daemon

        return connect_daemon(home, autostart=autostart)

    print("hrb view: open this URL (Ctrl-C stops the server):", file=sys.stderr, flush=True)
    serve(connect, path=path, port=args.port, open_browser=not args.no_browser)
    return EXIT_OK


def _as_callers_file(path: str) -> None:
    """Give a file the daemon wrote for the caller the mode the caller's own files get.

    Decided (newcomer's finding): a ``--plot`` PNG is the user's output, like ``--html``, which
    this process writes under the caller's umask (0644 under the usual 022); the daemon writes
    with umask 077 because its state files are private (0600), so the plot came out 0600.
    """
    mask = os.umask(0)
    os.umask(mask)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o666 & ~mask)


def _write_html(args: argparse.Namespace) -> str:
    from pathlib import Path

    from hrbench_client.view import benchmark_html

    settings: dict[str, Any] = {}
    if args.level is not None:
        settings["level"] = args.level
    if args.method is not None:
        settings["method"] = args.method
    target = Path(os.path.expanduser(args.html)).resolve()
    with _client(args) as hb:
        text = benchmark_html(hb, args.id, **settings)
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        _fail_usage(f"--html: cannot write {args.html!r} ({exc.strerror or exc})")
    return str(target)


def cmd_ls(args: argparse.Namespace) -> int:
    with _client(args) as hb:
        found = hb.benchmarks(args.limit)
    if not args.text:
        for b in found:
            _out(b)
        return EXIT_OK
    print(f"{'id':<16}  {'name':<20}  {'created':<25}  {'status':<14}  {'rows':>11}  arms (accuracy)")
    for b in found:
        rows = f"{b.rows}/{b.total}" if b.total is not None else str(b.rows)
        arms = ", ".join(f"{a} ({b.accuracy[a]:.3f})" if b.accuracy.get(a) is not None else a for a in b.arms)
        print(
            f"{b.id:<16}  {(b.name or '-'):<20}  {b.created or '-':<25}  {b.status:<14}  {rows:>11}  {arms}"
        )
        if b.unknown_note:  # issue 13: spend a crash or a cancel left unknown, counted as spent
            print(f"{'':<16}  {b.unknown_note}")
        if (limits := limits_text(b)) is not None:
            print(f"{'':<16}  {limits}")
        if b.stop_note:  # a budget stop or runs that ended in errors (newcomer findings)
            print(f"{'':<16}  {STATUS_LABELS.get(b.status, 'Note')}: {b.stop_note}")
    return EXIT_OK


STATUS_LABELS = {"budget_stopped": "Budget stopped", "errors": "Runs failed"}
"""The label of a benchmark's ``stop_note`` by its status, in ``hrb ls --text`` and ``hrb report``."""


def limits_text(b: Any) -> str | None:
    """The limits in force of a listed benchmark, each with its use, the defaults marked.

    Decided (newcomer finding: ``max_tokens`` was never shown): the three caps are shown
    alike; ``None`` for a benchmark stored before the limits were kept.

    Example:
        >>> from hrbench_client import protocol as p
        >>> b = p.BenchmarkListing(id="b1", status="done", arms=["a"], rows=5, calls=5, max_calls=400,
        ...                        max_usd=5.0, usd=0.0, default_limits=True)
        >>> limits_text(b)
        'limits (the defaults): calls 5 of 400, usd 0.0000 of 5, tokens - of no cap'
    """
    if b.default_limits is None and b.max_calls is None and b.max_usd is None and b.max_tokens is None:
        return None

    def one(name: str, used: Any, cap: Any, usd: bool = False) -> str:
        shown = "-" if used is None else (usd_text(used) if usd else str(used))
        return f"{name} {shown} of {'no cap' if cap is None else f'{cap:g}'}"

    head = "limits (the defaults)" if b.default_limits else "limits"
    return (
        f"{head}: {one('calls', b.calls, b.max_calls)}, {one('usd', b.usd, b.max_usd, True)}, "
        f"{one('tokens', b.tokens, b.max_tokens)}"
    )


def cmd_cancel(args: argparse.Namespace) -> int:
    """Cancel running benchmarks from any shell (newcomer finding): one JSON line each, then how to resume."""
    with _client(args) as hb:
        for ref in args.ids:
            done = hb.cancel_benchmark(ref, grace_s=args.grace)
            _out(done)
            left = f"; {done.unknown_note}" if done.unknown_note else ""
            _err(
                f"cancelled {done.id} with {done.rows} row(s) kept{left}; resume with: hrb bench --resume {done.id}"
            )
    return EXIT_OK


def cmd_rm(args: argparse.Namespace) -> int:
    """Resolve every id first and delete nothing when one is unknown (decided, newcomer: `rm bad nosuch`).

    Each unknown or ambiguous id is said as every command says it (``hrb: NotFound: id: ...``),
    then that nothing was deleted; exit 2.
    """
    with _client(args) as hb:
        ids: dict[str, None] = {}
        refused: list[HrbenchError] = []
        for ref in args.ids:
            try:
                ids[hb.rows(ref, limit=1).benchmark.id] = None
            except (NotFound, ConfigError) as exc:
                refused.append(exc)
        if refused:
            for error in refused:
                _err(f"{type(error).__name__}: {error}")
            _err("nothing was deleted")
            return EXIT_USAGE
        running = [b.id for b in hb.benchmarks() if b.id in ids and b.status == "running"]
        if running:  # checked before any delete too: `rm done running` deleted `done`, then failed
            _fail_usage(
                f"running now: {', '.join(running)}; cancel first (hrb cancel {' '.join(running)}); "
                "nothing was deleted"
            )
        for bid in ids:
            _out(hb.delete(bid))
    return EXIT_OK


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


def cmd_gc(args: argparse.Namespace) -> int:
    age = parse_age(args.older_than)
    with _client(args) as hb:
        _out(hb.gc(age, cache=not args.keep_cache, recordings=args.recordings, vacuum=not args.no_vacuum))
    return EXIT_OK


SCORER_HELP = (
    "a scorer name: "
    + "; ".join(f"{name} ({what})" for name, what in SCORERS.items())
    + "; or package.module:function (default exact, settings with --settings)"
)
"""``hrb score --scorer``'s help: every scorer of the registry (``hrbench.specs.SCORERS``, through
the generated :mod:`hrbench_client._scorers`), never a list written by hand."""

CACHE_STATS = "entries, requests (distinct), usd_nominal, bytes and recordings"
"""What ``hrb cache stats`` prints (its help says it; a test holds them equal)."""


def cmd_cache(args: argparse.Namespace) -> int:
    filters = {"model": args.model, "arm": args.arm, "older_than_s": None}
    if args.older_than is not None:
        filters["older_than_s"] = parse_age(args.older_than)
    if args.cache_cmd == "stats":
        if any(v is not None for v in filters.values()):
            _fail_usage("--model, --arm and --older-than choose what `hrb cache clear` deletes")
        with _client(args) as hb:
            _out(hb.cache_stats())
        return EXIT_OK
    with _client(args) as hb:  # clear (newcomer finding 20)
        _out({"deleted": hb.cache_clear(**filters)})
    return EXIT_OK


def cmd_recording(args: argparse.Namespace) -> int:
    with _client(args) as hb:
        if args.rec_cmd == "import":
            _out(hb.recording_import(args.file, args.name))
        else:
            _out(hb.recording_export(args.name, args.file))
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    """``{"running": true, "pid": ..., ...}`` and exit 0, or ``{"running": false}`` and exit 1.

    Scripts test ``hrb daemon status >/dev/null`` (it never starts a daemon). The status's list
    of running benchmark ids is printed as ``running_benchmarks``.
    """
    from hrbench_client.client import daemon_status

    status = daemon_status(args.home)
    if status is None:
        _out({"running": False})
        return EXIT_WRONG
    info = _msgspec().structs.asdict(status)
    info["running_benchmarks"] = info.pop("running")
    _out({"running": True, **info})
    return EXIT_OK


def cmd_daemon(args: argparse.Namespace) -> int:
    from hrbench_client.client import daemon_status, start_daemon, stop_daemon

    if args.daemon_cmd == "start":
        if args.tcp:
            _check_tcp(args.tcp)
        idle = None if args.idle_exit is None else parse_age(args.idle_exit, "--idle-exit", bare="s")
        pid = start_daemon(
            args.home, tcp=args.tcp, idle_exit_s=idle or None, allow_code_over_tcp=args.allow_code_over_tcp
        )
        status = daemon_status(args.home)
        try:
            tcp = json.loads(_paths.pid_path(_paths.home(args.home)).read_text()).get("tcp")
        except (OSError, ValueError):
            tcp = None
        if status is not None and status.idle_exit_s is not None and args.idle_exit is None:
            _err(
                f"note: the running daemon was started on demand and stops after {status.idle_exit_s:g} s "
                "without a client; `hrb daemon stop` then `hrb daemon start` keeps one up"
            )
        if args.tcp and not tcp:
            _err("a daemon without --tcp is already running for this state dir; `hrb daemon stop` it first")
            return EXIT_ERROR
        _out(
            {
                "running": True,
                "pid": pid,
                "socket": str(_paths.socket_path(_paths.home(args.home))),
                "transport": status.transport if status else None,
                "idle_exit_s": status.idle_exit_s if status else None,
                "tcp": tcp,
                "token_file": str(_paths.token_path(_paths.home(args.home))) if tcp else None,
            }
        )
        return EXIT_OK
    if args.daemon_cmd == "stop":
        _out({"stopped": stop_daemon(args.home)})
        return EXIT_OK
    return cmd_status(args)


def _check_tcp(value: str) -> None:
    import ipaddress

    host, sep, port = value.rpartition(":")
    host = host.strip("[]")
    try:
        ok = bool(sep) and port.isdigit() and (host == "localhost" or ipaddress.ip_address(host).is_loopback)
    except ValueError:
        ok = False
    if not ok:
        _fail_usage(f"--tcp needs a loopback HOST:PORT such as 127.0.0.1:8765 (got {value!r})")


def cmd_serve(args: argparse.Namespace) -> int:
    from hrbench_client.client import _server_command

    cmd = _server_command()
    if args.home:
        cmd += ["--home", args.home]
    cmd += ["serve", "--stdio"]
    sys.stdout.flush()
    os.execv(cmd[0], cmd)  # the server owns stdin/stdout from here on


# -- main ----------------------------------------------------------------------------------------


def _command(argv: list[str]) -> str | None:
    """The subcommand named in ``argv`` (skipping the global options), if any."""
    args = iter(argv)
    for a in args:
        if a == "--home":
            next(args, None)
        elif not a.startswith("-"):
            return a
    return None


_ID_HELP = "a benchmark's id, a unique prefix of it (4+ characters) or its name (the newest of that name); see `hrb ls`"


def _version() -> str:
    from hrbench_client import protocol as p

    try:
        from importlib.metadata import version

        v = version("hrbench")
    except Exception:  # not installed as a distribution (a source checkout on sys.path)
        v = "unknown"
    return f"hrb {v} (protocol {p.PROTOCOL_VERSION})"


def _global_options(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument(
        "--home",
        default=default,
        help="state directory (default $HRBENCH_HOME, else the user state dir); before or after COMMAND",
    )
    parser.add_argument(
        "--no-autostart",
        action="store_true",
        default=False if default is None else default,
        help="fail instead of starting a daemon when none runs",
    )


def _parser_class() -> type[argparse.ArgumentParser]:
    """``argparse.ArgumentParser`` whose help, usage and version reach a closed output's error.

    argparse drops an ``OSError`` from writing its messages, so ``hrb --help | head -1`` exited 0
    having printed nothing; this one lets it reach :func:`hrbench_client.cli.main`, which exits
    141 quietly as for every other output (newcomer finding).
    """
    import argparse

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # newcomer finding 23: `hrb score -22.22%` needed `--`; a negative number or
            # percent (digit groups, a decimal point, an exponent) is a value, never an option
            self._negative_number_matcher = NEGATIVE_NUMBER

        def _print_message(self, message: str, file: Any = None) -> None:
            if message:
                (file or sys.stderr).write(message)
                (file or sys.stderr).flush()

        def error(self, message: str) -> NoReturn:
            if "unrecognized arguments: -" in message or "expected one argument" in message:
                message += (
                    " (a value that starts with '-' and is not a number goes after `--`: hrb score -- -x)"
                )
            super().error(message)

    return Parser


NEGATIVE_NUMBER = re.compile(r"^-(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?%?$")
"""What ``hrb`` reads as a value, not an option, when it starts with ``-`` (newcomer finding 23).

Example:
    >>> [bool(NEGATIVE_NUMBER.match(t)) for t in ("-22.22%", "-5", "-1,234.5", "-.5", "-1e-3", "-x", "--label")]
    [True, True, True, True, True, False, False]
"""


def _sub_parser(common: argparse.ArgumentParser) -> type[argparse.ArgumentParser]:
    """A parser class whose instances (every subcommand's) also take the global options."""

    class SubParser(_parser_class()):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["parents"] = [*kwargs.get("parents", []), common]
            super().__init__(*args, **kwargs)

    return SubParser


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    import argparse

    parser = _parser_class()(
        prog="hrb",
        description="hrbench from the shell: JSON lines on stdout (see `hrb COMMAND --help`).",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _global_options(parser, None)
    parser.add_argument("--version", action="version", version=_version(), help="print the version and exit")
    # The same options after the subcommand (`hrb score --home H ...`): SUPPRESS keeps a value
    # given before the subcommand unless it is given again after it.
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, argparse.SUPPRESS)
    sub = parser.add_subparsers(
        dest="cmd", required=True, metavar="COMMAND", parser_class=_sub_parser(common)
    )

    s = sub.add_parser("score", help="score outputs against labels")
    s.add_argument("output", nargs="?", help="the output; without it, JSON lines {output, label} on stdin")
    # decided (seed silent): both at once is a usage error (exit 2), not one of them dropped
    labels = s.add_mutually_exclusive_group()
    labels.add_argument(
        "--label",
        action="append",
        help="an accepted answer (repeat for several); on stdin, the label of lines without one",
    )
    labels.add_argument(
        "--label-json",
        help="the label as JSON (a number, a list, null); not with --label; on stdin, as --label",
    )
    s.add_argument("--item", help="the item payload (JSON or text); on stdin, the item of lines without one")
    s.add_argument(
        "--scorer",
        default="exact",
        help=SCORER_HELP,
    )
    s.add_argument("--settings", help="the scorer's settings as a JSON object")
    s.add_argument("--check", action="store_true", help="exit 1 when an output is scored wrong")
    s.set_defaults(fn=cmd_score)
    if only == "score":  # `hrb score ...`: the other commands are not built (start-up time)
        return parser

    b = sub.add_parser("bench", help="run a benchmark from a TOML file")
    b.add_argument("file", nargs="?", help="the benchmark spec (TOML)")
    b.add_argument("--resume", metavar="ID", help="resume an interrupted benchmark: " + _ID_HELP)
    b.add_argument("--no-rows", action="store_true", help="print only the result, not each row")
    b.add_argument(
        "--fail-under",
        type=_fraction,
        metavar="ACC",
        help="exit 1 when an arm's accuracy is under ACC, or is NA (nothing was measured)",
    )
    b.add_argument(
        "--detach",
        action="store_true",
        help="submit the benchmark, print its id and the commands that follow it (hrb ls, hrb rows ID, "
        "hrb report ID) and exit 0 at once; the daemon runs it to its end (without --detach it "
        "cancels a benchmark whose command ends or is killed; `hrb cancel ID` stops a detached one)",
    )
    b.add_argument(
        "--retry-errors",
        action="store_true",
        help="with --resume: run again the runs that ended in errors (a failed model call, an arm "
        "that raised), replacing their rows; what they spent stays spent",
    )
    b.add_argument(
        "--concurrency",
        type=_positive,
        metavar="N",
        help="how many (arm, item) pairs run at once (default: the spec's, else 16; a resume keeps "
        "the benchmark's own unless given)",
    )
    b.add_argument("--max-calls", type=_limit(int), help="the governor's call cap (also with --resume)")
    b.add_argument(
        "--max-usd", type=_limit(float), help="the governor's spend cap in USD (also with --resume)"
    )
    b.add_argument("--max-tokens", type=_limit(int), help="the governor's token cap (also with --resume)")
    b.set_defaults(fn=cmd_bench)

    e = sub.add_parser("eval", help="evaluate() a module from a TOML spec")
    e.add_argument("file", help="the evaluate() spec (TOML; see examples/sentiment.toml)")
    e.add_argument(
        "--fail-under",
        type=_fraction,
        metavar="ACC",
        help="exit 1 when the mean score is under ACC, or is NA (nothing was scored)",
    )
    e.set_defaults(fn=cmd_eval)

    r = sub.add_parser("ref", help="stored references")
    rs = r.add_subparsers(dest="ref_cmd", required=True)
    rp = rs.add_parser(
        "put", help="store a reference file (JSON lines of {id, item, label, cluster, split}, or TOML)"
    )
    rp.add_argument("name", help="the name to store it under")
    rp.add_argument("file", help="the reference file (JSON lines, SQuAD JSON or TOML)")
    rp.add_argument(
        "--format",
        choices=["rows", "squad"],
        default="rows",
        help="rows (JSON lines; default) or squad (SQuAD JSON)",
    )
    rg = rs.add_parser("get", help="a stored reference by name or hash")
    rg.add_argument("name", help="the reference's name, or its hash (8+ characters of it)")
    rs.add_parser("list", help="stored references")
    r.set_defaults(fn=cmd_ref)

    w = sub.add_parser("rows", help="stored rows of a benchmark")
    w.add_argument("id", help=_ID_HELP)
    w.add_argument("--offset", type=int, default=0, help="skip this many rows first (default 0)")
    w.add_argument("--limit", type=int, help="print at most this many rows (default: all)")
    w.add_argument("--traces", action="store_true", help="include each row's trace")
    w.add_argument("--item", help="only the rows of this item")
    w.add_argument("--arm", help="only the rows of this arm")
    w.add_argument(
        "--format",
        choices=["jsonl", "csv", "parquet"],
        default="jsonl",
        help="jsonl (default), csv (a header line; a trace as JSON) or parquet (needs pyarrow: the "
        "pandas extra)",
    )
    w.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    w.set_defaults(fn=cmd_rows)

    rep = sub.add_parser("report", help="the statistical report of a benchmark")
    rep.add_argument("id", help=_ID_HELP)
    rep.add_argument(
        "--descriptive",
        action="store_true",
        help="allow fewer than 5 runs: intervals cover the sampling of items only, and say so",
    )
    rep.add_argument(
        "--level", type=float, help="confidence level of the intervals, between 0 and 1 (default 0.95)"
    )
    rep.add_argument(
        "--method",
        metavar="{cluster,bootstrap}",
        help="interval method: cluster (default; cluster-robust standard errors) or bootstrap",
    )
    rep.add_argument(
        "--compare", nargs=2, metavar=("ARM_A", "ARM_B"), help="the paired difference of two arms (A - B)"
    )
    rep.add_argument(
        "--format",
        choices=["text", "json", "markdown"],
        default="json",
        help="json (default), text (the table for a person) or markdown (a table for a pull-request comment)",
    )
    rep.add_argument("--text", action="store_true", help="the same as --format text")
    rep.add_argument(
        "--plot",
        metavar="FILE.png",
        help="also write a PNG plot of the report (accuracy against USD per run); a relative path "
        "is taken from the current directory",
    )
    rep.add_argument(
        "--html",
        metavar="FILE.html",
        help="write the benchmark's page (arm table, paired differences, cost, item x arm matrix) as one "
        "self-contained HTML file; descriptive benchmarks are labelled, never refused",
    )
    rep.set_defaults(fn=cmd_report)

    vw = sub.add_parser(
        "view",
        help="browse benchmarks in a local web page",
        description="serve a local web view of the stored benchmarks on 127.0.0.1 (a random port and "
        "token; the URL is printed, and a browser, when one is available, is opened on a private page "
        "that lets it in, so the token never shows in the process list). Needs the view "
        "extra: pip install 'hrbench[view]'.",
    )
    vw.add_argument("benchmark", nargs="?", help="open this benchmark (an id or a name) instead of the list")
    vw.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    vw.add_argument("--no-browser", action="store_true", help="print the URL only (open no browser)")
    vw.set_defaults(fn=cmd_view)

    ls = sub.add_parser(
        "ls", help="stored benchmarks, newest first (id, name, created, status, arms, rows, accuracy)"
    )
    ls.add_argument("--limit", type=int, help="show at most this many (default: all)")
    ls.add_argument("--text", action="store_true", help="print a table instead of JSON lines")
    ls.set_defaults(fn=cmd_ls)

    cancel = sub.add_parser(
        "cancel",
        help="cancel running benchmarks (their rows are kept; `hrb bench --resume ID` finishes them)",
    )
    cancel.add_argument("ids", nargs="+", metavar="ID", help=_ID_HELP)
    cancel.add_argument(
        "--grace",
        type=float,
        metavar="SECONDS",
        help="how long the requests already sent may take to finish (their replies are kept and "
        "paid once; default: the daemon's HRBENCH_CANCEL_GRACE_S, else 10)",
    )
    cancel.set_defaults(fn=cmd_cancel)

    rm = sub.add_parser("rm", help="delete stored benchmarks with their rows, traces and lock files")
    rm.add_argument("ids", nargs="+", metavar="ID", help=_ID_HELP)
    rm.set_defaults(fn=cmd_rm)

    gc = sub.add_parser(
        "gc",
        help="delete old benchmarks and cache entries, then shrink the database",
        description="Delete benchmarks (rows, traces, ledgers, lock files) and response-cache entries "
        "created before the given age, then VACUUM the database. Running benchmarks are kept, and so is "
        "a lock file a live process holds; the lock files of benchmarks no longer stored go too; "
        "recordings are kept unless --recordings.",
    )
    gc.add_argument(
        "--older-than",
        required=True,
        metavar="AGE",
        help="an age: 30d, 12h, 90m, 45s, 2w (a bare number is days)",
    )
    gc.add_argument("--keep-cache", action="store_true", help="keep response-cache entries")
    gc.add_argument("--recordings", action="store_true", help="delete recorded replies older than AGE too")
    gc.add_argument("--no-vacuum", action="store_true", help="skip VACUUM (the file keeps its size)")
    gc.set_defaults(fn=cmd_gc)

    c = sub.add_parser(
        "cache",
        help="response cache: stats, or clear it for fresh draws",
        description="stats prints the response cache's statistics; clear deletes its entries (all, or "
        "those matching every filter given), so the next benchmark sends fresh requests for them. "
        "Recordings and benchmarks are kept (hrb gc deletes old benchmarks).",
    )
    c.add_argument(
        "cache_cmd",
        choices=["stats", "clear"],
        help=f"stats: {CACHE_STATS} of the response cache; clear: delete entries, printing how many",
    )
    c.add_argument("--model", help="clear: only the entries of this model (as asked for)")
    c.add_argument("--arm", help="clear: only the entries of this arm")
    c.add_argument(
        "--older-than", metavar="AGE", help="clear: only entries older than AGE (30d, 12h, 90m, 45s, 2w)"
    )
    c.set_defaults(fn=cmd_cache)

    rec = sub.add_parser("recording", help="import or export recordings")
    recs = rec.add_subparsers(dest="rec_cmd", required=True)
    ri = recs.add_parser("import", help="load a recording exported as JSON lines")
    ri.add_argument("file", help="the JSON lines file (an absolute path is sent to the daemon)")
    ri.add_argument("--name", help="the recording's name (default: the file name without extension)")
    rx = recs.add_parser("export", help="write a recording as JSON lines")
    rx.add_argument("name", help="the recording's name")
    rx.add_argument("file", help="the file to write (the daemon writes it)")
    rec.set_defaults(fn=cmd_recording)

    st = sub.add_parser("status", help="the daemon's status")
    st.set_defaults(fn=cmd_status)

    d = sub.add_parser(
        "daemon",
        help="start, stop or query the shared daemon",
        description="start, stop or query the shared daemon; `stop` returns once the daemon has exited, "
        '`status` prints {"running": false} and exits 1 when none runs',
    )
    d.add_argument(
        "daemon_cmd",
        choices=["start", "stop", "status"],
        help="start (a daemon that stays up), stop or status",
    )
    d.add_argument("--tcp", metavar="HOST:PORT", help="also listen on loopback TCP (token in the state dir)")
    d.add_argument(
        "--allow-code-over-tcp",
        action="store_true",
        help="let TCP clients send import-path specs (module:function): code run as you",
    )
    d.add_argument(
        "--idle-exit",
        metavar="AGE",
        help="with start: stop after this long without a client (90s, 10m, 1h); by default a daemon "
        "started this way stays up, while one started on demand by another command stops after "
        "$HRBENCH_IDLE_EXIT seconds (default 600; `never` keeps it)",
    )
    d.set_defaults(fn=cmd_daemon)

    sv = sub.add_parser("serve", help="serve JSON-RPC on stdin/stdout (for editors)")
    sv.add_argument("--stdio", action="store_true", required=True, help="use stdin/stdout (the only mode)")
    sv.set_defaults(fn=cmd_serve)
    return parser


def run(argv: list[str]) -> int:
    """Run ``hrb`` with ``argv`` on the full path; returns the exit code."""
    parser = _parser("score" if _command(argv) == "score" else None)
    args = parser.parse_args(argv)
    fn: Callable[[argparse.Namespace], int] = args.fn
    try:
        rc = fn(args)
        sys.stdout.flush()  # what print() buffered: a closed reader is seen here
        return rc
    except _Usage as exc:
        _err(str(exc))
        return EXIT_USAGE
    except InvalidParams as exc:
        _err(f"invalid: {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except HrbenchError as exc:
        _err(f"{type(exc).__name__}: {exc}")
        return exit_code(exc, args.cmd)
    except OSError as exc:
        if closed_output(exc):  # `hrb ls | head -1`: the reader is gone; say nothing more
            return output_closed()
        _err(f"{type(exc).__name__}: {exc}")
        return EXIT_ERROR
