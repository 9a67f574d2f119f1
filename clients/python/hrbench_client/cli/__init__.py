"""``hrb``: the hrbench shell client.

Every command talks to the shared daemon of the state directory (``--home``, else
``$HRBENCH_HOME``, else the user state dir), starting one when none runs (``--no-autostart``
to refuse); these global options may come before or after the command. Results are JSON lines
on stdout; a progress bar goes to stderr only when stderr is a terminal. ``hrb --version``
prints the version.

Commands::

    hrb score [--scorer exact] [--label L]... [--check] OUTPUT   one output; or JSON lines on stdin
                                                   (--check needs a label: exit 2 without one)
    hrb bench FILE.toml | --resume ID                               rows as JSON lines, then the result
    hrb bench FILE.toml | --resume ID --detach                      submit, print the id, exit 0 (it runs on)
    hrb bench FILE.toml --batch                                     through the provider's batch API, at its rate
    hrb cancel BENCH_ID...                                          cancel running benchmarks (resumable)
    hrb batches [BENCH_ID] [--all] [--text]                         live provider batches (batch mode)
    hrb cancel BATCH_ID...                                          cancel provider batches
    hrb eval FILE.toml                                              evaluate() from a spec
    hrb ref put NAME FILE | get NAME | list                         stored references
    hrb grades put BENCH_ID FILE | next BENCH_ID [-k 20] [-o F.csv] | list BENCH_ID   human grades
    hrb ls [--text]                                                 stored benchmarks, newest first
    hrb rows BENCH_ID [--traces] [--item I] [--arm A]               stored rows of a benchmark
    hrb report BENCH_ID [--descriptive] [--text] [--plot F.png]     the statistical report
    hrb report BENCH_ID --html F.html                               the benchmark page, one file
    hrb view [BENCH_ID] [--no-browser]                              a local web view (hrbench[view])
    hrb rm BENCH_ID... | hrb gc --older-than 30d                    delete benchmarks; prune and VACUUM
    hrb gate BENCH_ID --baseline BENCH_ID|FILE [--max-drop 0.02]     exit 1 only on a real regression
    hrb prices MODEL... [--text]                                    prices, with their source and date
    hrb export BENCH_ID --format inspect [-o DIR] [--log-format eval]  Inspect eval logs, one per arm

BENCH_ID is a benchmark's id (the ``id`` of ``hrb bench``'s last line, or ``hrb ls``), a unique
prefix of it (4+ characters), or its name (the newest of that name; ``hrb bench FILE`` names a
benchmark after its file unless the spec sets ``name``).
    hrb cache stats | hrb recording import FILE [--name N] | export NAME FILE
    hrb daemon start [--tcp 127.0.0.1:PORT] | stop | status
    hrb serve --stdio                                               a private server on stdin/stdout

Exit codes (also in ``hrb --help``)::

    0    ok
    1    an output scored wrong (``hrb score --check``); no daemon runs (``hrb daemon status``)
    2    usage or invalid input: bad arguments, an invalid spec or JSON line, an unknown or
         ambiguous id, id prefix or name (NotFound, naming the closest), and the daemon's
         ConfigError, ReferenceValueError, SignatureError, InvalidParams (-32602) and
         TooFewRunsError; under ``hrb score``, a ScorerError too (a label it cannot read)
    3    a daemon, transport or run error (no daemon reachable, ModelError, ...)
    130  interrupted (a benchmark is cancelled; its finished rows are kept and
         ``hrb bench --resume ID`` finishes it)
    141  the output closed before the command finished (``| head``), under every command and
         output format: nothing more is printed. ``hrb bench``'s benchmark is then cancelled as
         at 130 (stderr prints the command that resumes it); a ``--detach`` one runs on

A benchmark file is TOML with the fields of ``BenchmarkParams`` (``schema/benchmark.params.
schema.json``); relative paths in it (``reference.path``, an outputs arm's ``path``) are taken
relative to the file, and the file's directory is put on the daemon's import path for
``import`` arms and mock functions.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from hrbench_client.cli.exit_codes import EXIT_PIPE, closed_output, output_closed

__all__ = ["EXIT_PIPE", "closed_output", "main", "output_closed", "run"]


def main(argv: list[str] | None = None) -> int:
    """Run ``hrb``; returns the exit code (see the module docstring).

    ``hrb score OUTPUT`` takes a fast path that imports only ``json`` and ``socket``
    (:mod:`hrbench_client.cli._fast`); everything else goes through ``argparse``
    (:func:`run`, :mod:`hrbench_client.cli.parser`).
    """
    argv = sys.argv[1:] if argv is None else argv
    try:
        rc = None
        if "score" in argv:
            from hrbench_client.cli._fast import try_score

            rc = try_score(argv)
        if rc is None:
            rc = run(argv)
        sys.stdout.flush()  # what print() buffered: a closed reader is seen here, not at exit
        return rc
    except OSError as exc:
        from hrbench_client.cli.exit_codes import closed_output, output_closed

        if not closed_output(exc):
            raise
        return output_closed()
    except SystemExit:  # argparse's --help, --version and usage errors print, then exit
        from hrbench_client.cli.exit_codes import closed_output, output_closed

        try:
            sys.stdout.flush()
        except OSError as exc:
            if not closed_output(exc):
                raise
            return output_closed()
        raise


def run(argv: list[str]) -> int:
    """Run ``hrb`` with ``argv`` on the full path (``argparse``); returns the exit code."""
    from hrbench_client.cli._arguments import ARGV, option_message
    from hrbench_client.cli._common import BadArguments, _err, _Usage
    from hrbench_client.cli.exit_codes import (
        EXIT_ERROR,
        EXIT_INTERRUPTED,
        EXIT_USAGE,
        closed_output,
        exit_code,
        output_closed,
    )
    from hrbench_client.cli.parser import _command, _parser
    from hrbench_client.errors import ConfigError, HrbenchError, InvalidParams

    parser = _parser("score" if _command(argv) == "score" else None)
    try:
        args = parser.parse_args(argv)
    except BadArguments as exc:
        if _command(argv) == "gate":  # its reports are written on every exit, bad arguments too
            from hrbench_client.cli.gate import report_bad_arguments

            report_bad_arguments(argv, exc.message)
        raise
    fn = _command_fn(args.cmd)
    token = ARGV.set(list(argv))  # an error names the option as it was typed
    try:
        rc = fn(args)
        sys.stdout.flush()  # what print() buffered: a closed reader is seen here
        return rc
    except _Usage as exc:
        _err(str(exc))
        return EXIT_USAGE
    except InvalidParams as exc:  # a value out of range is said by the option that gave it
        _err(f"invalid: {option_message(exc, args, parser) or exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except HrbenchError as exc:  # a number an option gave, refused, is said by the option, as above
        said = option_message(exc, args, parser, numbers_only=True) if isinstance(exc, ConfigError) else None
        _err(f"invalid: {said}" if said else f"{type(exc).__name__}: {exc}")
        return exit_code(exc, args.cmd)
    except OSError as exc:
        if closed_output(exc):  # `hrb ls | head -1`: the reader is gone; say nothing more
            return output_closed()
        _err(f"{type(exc).__name__}: {exc}")
        return EXIT_ERROR
    finally:
        ARGV.reset(token)


def _command_fn(name: str) -> Callable[[argparse.Namespace], int]:
    """The function that runs ``hrb NAME``; its module is imported only now.

    ``hrb --help`` builds every command's arguments (:mod:`hrbench_client.cli.parser`) but
    imports no command's module; ``hrb score`` imports only :mod:`hrbench_client.cli.score`.
    """
    if name == "score":
        from hrbench_client.cli import score

        return score.cmd_score
    if name in ("bench", "cancel"):
        from hrbench_client.cli import bench

        return bench.cmd_bench if name == "bench" else bench.cmd_cancel
    if name == "eval":
        from hrbench_client.cli import eval as evaluate

        return evaluate.cmd_eval
    if name == "ref":
        from hrbench_client.cli import references

        return references.cmd_ref
    if name == "grades":
        from hrbench_client.cli import grades

        return grades.cmd_grades
    if name in ("rows", "report", "view"):
        from hrbench_client.cli import report

        return {"rows": report.cmd_rows, "report": report.cmd_report, "view": report.cmd_view}[name]
    if name == "gate":
        from hrbench_client.cli import gate

        return gate.cmd_gate
    if name == "prices":
        from hrbench_client.cli import prices

        return prices.cmd_prices
    if name == "export":
        from hrbench_client.cli import interop

        return interop.cmd_export
    if name == "batches":
        from hrbench_client.cli import batches

        return batches.cmd_batches
    if name in ("ls", "rm", "gc"):
        from hrbench_client.cli import housekeeping as h

        return {"ls": h.cmd_ls, "rm": h.cmd_rm, "gc": h.cmd_gc}[name]
    if name in ("cache", "recording"):
        from hrbench_client.cli import cache

        return cache.cmd_cache if name == "cache" else cache.cmd_recording
    from hrbench_client.cli import daemon  # status, daemon, serve

    return {"status": daemon.cmd_status, "daemon": daemon.cmd_daemon, "serve": daemon.cmd_serve}[name]


def __getattr__(name: str) -> Any:
    """``EXIT_PIPE``, ``closed_output`` and ``output_closed``, imported on first use.

    They live in :mod:`hrbench_client.cli.exit_codes`; the fast path of ``hrb score`` does not
    import it.
    """
    if name in ("EXIT_PIPE", "closed_output", "output_closed"):
        from hrbench_client.cli import exit_codes

        return getattr(exit_codes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
