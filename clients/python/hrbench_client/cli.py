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
    hrb cancel BENCH_ID...                                          cancel running benchmarks (resumable)
    hrb eval FILE.toml                                              evaluate() from a spec
    hrb ref put NAME FILE | get NAME | list                         stored references
    hrb ls [--text]                                                 stored benchmarks, newest first
    hrb rows BENCH_ID [--traces] [--item I] [--arm A]               stored rows of a benchmark
    hrb report BENCH_ID [--descriptive] [--text] [--plot F.png]     the statistical report
    hrb report BENCH_ID --html F.html                               the benchmark page, one file
    hrb view [BENCH_ID] [--no-browser]                              a local web view (hrbench[view])
    hrb rm BENCH_ID... | hrb gc --older-than 30d                    delete benchmarks; prune and VACUUM

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

__all__ = ["EXIT_PIPE", "closed_output", "main", "output_closed"]


def main(argv: list[str] | None = None) -> int:
    """Run ``hrb``; returns the exit code (see the module docstring).

    ``hrb score OUTPUT`` takes a fast path that imports only ``json`` and ``socket``
    (:mod:`hrbench_client._fast`); everything else goes through ``argparse``
    (:mod:`hrbench_client._commands`).
    """
    argv = sys.argv[1:] if argv is None else argv
    try:
        rc = None
        if "score" in argv:
            from hrbench_client._fast import try_score

            rc = try_score(argv)
        if rc is None:
            from hrbench_client._commands import run

            rc = run(argv)
        sys.stdout.flush()  # what print() buffered: a closed reader is seen here, not at exit
        return rc
    except OSError as exc:
        if not closed_output(exc):
            raise
        return output_closed()
    except SystemExit:  # argparse's --help, --version and usage errors print, then exit
        try:
            sys.stdout.flush()
        except OSError as exc:
            if not closed_output(exc):
                raise
            return output_closed()
        raise


def closed_output(exc: BaseException) -> bool:
    """Whether ``exc`` says standard output's reader is gone (``| head``): EPIPE, from any writer.

    ``BrokenPipeError`` from Python's own writes; pyarrow's Parquet writer raises a plain
    ``OSError`` whose message says "Broken pipe" (newcomer finding: ``hrb rows ID --format
    parquet | head`` printed it).

    Example:
        >>> closed_output(BrokenPipeError(32, "Broken pipe")), closed_output(OSError("Broken pipe"))
        (True, True)
        >>> from hrbench_client.errors import DaemonError
        >>> closed_output(PermissionError(13, "Permission denied")), closed_output(DaemonError("broken pipe"))
        (False, False)
    """
    import errno

    from hrbench_client.errors import HrbenchError

    if isinstance(exc, HrbenchError):  # the daemon's connection (a DaemonError), never stdout
        return False
    return (
        isinstance(exc, BrokenPipeError)
        or getattr(exc, "errno", None) == errno.EPIPE
        or (isinstance(exc, OSError) and "broken pipe" in str(exc).lower())
    )


def output_closed() -> int:
    """Exit quietly once standard output's reader is gone: 141, as a shell reports SIGPIPE.

    Decided (newcomer finding): every command and every output format ends the same way when
    its output closes early (``hrb rows ID --format parquet | head``, ``hrb ls | head -1``):
    nothing more is written, no error is printed, the exit code is 141 (128 + SIGPIPE, what
    ``set -o pipefail`` scripts see from ``cat`` or ``grep``). Standard output is pointed at the
    null device so that nothing fails again at exit. ``hrb bench`` says on stderr how to resume
    (or follow, with ``--detach``) the benchmark, as it is not finished.
    """
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_PIPE


EXIT_PIPE = 141
"""The exit code when standard output closed early (128 + SIGPIPE)."""


if __name__ == "__main__":
    sys.exit(main())
