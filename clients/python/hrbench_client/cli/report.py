"""Reading a stored benchmark: ``hrb rows``, ``hrb report`` (text, markdown, a plot, a page) and ``hrb view``."""

from __future__ import annotations

import contextlib
import os
import sys

from hrbench_client.cli._common import STATUS_LABELS, _client, _err, _fail_usage, _msgspec, _out
from hrbench_client.cli.exit_codes import EXIT_OK
from hrbench_client.errors import TooFewRunsError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any


def cmd_rows(args: argparse.Namespace) -> int:
    from hrbench_client import export, protocol

    fmt = args.format
    if fmt in export.BINARY and args.output is None and sys.stdout.isatty():
        _fail_usage(f"--format {fmt} is binary and stdout is a terminal: give -o FILE (or pipe stdout)")
    try:
        export.check_format(fmt)
    except ImportError as exc:
        _fail_usage(str(exc))
    if args.no_output_text and args.output_chars is not None:
        _fail_usage("give --output-chars N or --no-output-text, not both")
    with _client(args) as hb:
        res = hb.rows(
            args.id,
            offset=args.offset,
            limit=args.limit,
            traces=args.traces,
            item=args.item,
            arm=args.arm,
            outputs=not args.no_output_text,
            output_chars=args.output_chars,
        )
    scorer = res.benchmark.scorer  # every format names the scorer of each row
    rows = (_row_dict(r, scorer, res.outputs, res.traces) for r in res.rows)
    if args.output is None:  # a closed reader (`| head`) ends in cli.main: exit 141, quietly
        sys.stdout.flush()
        export.write_rows(rows, protocol.Row, sys.stdout.buffer, fmt)
        sys.stdout.buffer.flush()
        return EXIT_OK
    from hrbench_client.files import atomic_file, why_not_written

    try:
        with atomic_file(os.path.expanduser(args.output)) as f:  # whole or not at all
            n = export.write_rows(rows, protocol.Row, f, fmt)
    except OSError as exc:
        _fail_usage(f"--output {args.output}: cannot write the file: {why_not_written(exc)}")
    _err(f"wrote {n} row(s) to {args.output}")
    return EXIT_OK


def _row_dict(
    row: Any, scorer: str | None, outputs: dict[str, str | None] | None, traces: dict[str, Any] | None
) -> dict[str, Any]:
    """One row of ``hrb rows``: the seed's columns, ``scorer``, then ``output`` and ``trace`` when asked for."""
    out = _msgspec().structs.asdict(row)
    out["scorer"] = scorer
    if outputs is not None:
        out["output"] = outputs.get(row.ledger_id)
    if traces is not None:
        out["trace"] = _msgspec().to_builtins(traces.get(row.ledger_id, []))
    return out


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
    if args.metric is not None:
        if not args.compare:
            _fail_usage("--metric chooses what --compare compares: give --compare ARM_A ARM_B too")
        settings["metric"] = args.metric
    if args.pass_k is not None:
        settings["pass_k"] = args.pass_k
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
    if fmt == "text":  # a budget stop's or failed runs' note right under the header, before any number
        text = rep.get("text", "")
        if rep.get("status") not in (None, "done"):
            print(f"Status: {rep['status']}")
        head, _, rest = text.partition("\n")
        print(head)
        if note:
            print(f"{label}: {note}")
        if rest:
            print(rest)
        if rep.get("unknown_note"):
            print(f"Governor: {rep['unknown_note']}")
        if plot is not None and plot not in text:
            print(f"Plot: {plot}")
    elif fmt == "markdown":
        head, _, rest = rep.get("markdown", "").partition("\n")
        sys.stdout.write(head + "\n")
        if note:
            sys.stdout.write(f"\n> **{label}** ({rep.get('status')}): {note}\n")
        sys.stdout.write(rest)
    elif args.compare and rep.get("comparisons"):
        _out(rep["comparisons"][0])  # JSON: just the paired difference asked for
    else:  # the status and its note first, as the text and Markdown put them
        first = {k: rep[k] for k in ("status", "stop_note") if k in rep}
        _out({**first, **rep})
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

    Rule: a ``--plot`` PNG is the user's output, like ``--html``, which this process writes
    under the caller's umask (0644 under the usual 022); the daemon writes with umask 077
    because its state files are private (0600), so the plot would come out 0600.
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
    from hrbench_client.files import atomic_file, why_not_written

    try:
        with atomic_file(target) as f:  # whole or not at all
            f.write(text.encode("utf-8"))
    except OSError as exc:
        _fail_usage(f"--html {args.html}: cannot write the file: {why_not_written(exc)}")
    return str(target)
