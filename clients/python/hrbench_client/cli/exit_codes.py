"""``hrb``'s exit codes, and how a closed standard output ends a command (exit 141).

The table is in :data:`EXIT_CODES_HELP` (the epilog of ``hrb --help``).
"""

from __future__ import annotations

import sys

from hrbench_client.errors import (
    ConfigError,
    HrbenchError,
    InvalidParams,
    NotFound,
    ScorerError,
    TooFewRunsError,
)

__all__ = [
    "EXIT_BUDGET",
    "EXIT_CODES_HELP",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PIPE",
    "EXIT_USAGE",
    "EXIT_WRONG",
    "USAGE_ERRORS",
    "closed_output",
    "exit_code",
    "output_closed",
]

EXIT_OK, EXIT_WRONG, EXIT_USAGE, EXIT_ERROR, EXIT_BUDGET, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
EXIT_PIPE = 141
"""The exit code when standard output closed early (128 + SIGPIPE)."""

# Errors about the caller's input (exit 2): the ConfigError family (ConfigError,
# ReferenceValueError, SignatureError), -32602 invalid params, a report asked of too few runs, and
# NotFound: an id, name or id prefix that names nothing stored, for every command alike (SPEC
# section 6, "2 on bad input").
# Everything else the daemon reports (and a daemon that cannot be reached) is exit 3.
USAGE_ERRORS: tuple[type[HrbenchError], ...] = (ConfigError, InvalidParams, TooFewRunsError, NotFound)

EXIT_CODES_HELP = """\
exit codes:
  0    ok: every run was scored (right or wrong)
  1    an output scored wrong (`hrb score --check`); an arm's accuracy (`hrb bench`) or the
       mean score (`hrb eval`) under --fail-under, or NA there (nothing was measured); no
       daemon runs (`hrb daemon status`); `hrb gate`: the candidate is worse than the
       baseline by more than --max-drop with the confidence asked
  2    usage or invalid input: bad arguments, an invalid spec or JSON line, an unknown or
       ambiguous benchmark id, id prefix or name (NotFound, with the closest ones), and the
       daemon's ConfigError, ReferenceValueError, SignatureError, InvalidParams (-32602) and
       TooFewRunsError (a report of fewer than 5 runs: use --descriptive); under `hrb score`,
       a ScorerError too (the scorer cannot read the label or output given)
  3    runs ended in errors (a failed model call, an arm that raised: stderr says how many,
       by arm and cause; `hrb bench --resume ID --retry-errors` runs them again); the daemon
       died or was stopped (`hrb daemon stop`) while `hrb bench` ran, or `hrb cancel ID` cancelled
       the benchmark under `hrb bench` (stderr names it, the runs saved and the resume command);
       `hrb gate` could not compare the two (no labelled item both ran, no interval: stderr
       says why; a baseline holding fewer than half of the candidate's items is exit 2);
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

    Rule: under ``hrb score`` a ``ScorerError`` is about the
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


def closed_output(exc: BaseException) -> bool:
    """Whether ``exc`` says standard output's reader is gone (``| head``): EPIPE, from any writer.

    ``BrokenPipeError`` from Python's own writes; pyarrow's Parquet writer raises a plain
    ``OSError`` whose message says "Broken pipe" (``hrb rows ID --format parquet | head``
    must not print it).

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

    Rule: every command and every output format ends the same way when
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
