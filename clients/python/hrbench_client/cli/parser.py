"""``hrb``'s command line: the global options, each command group's arguments, their help."""

from __future__ import annotations

import re
import sys

from hrbench_client._scorers import SCORERS
from hrbench_client.cli._admin_args import CACHE_STATS as CACHE_STATS
from hrbench_client.cli._admin_args import ID_HELP as _ID_HELP
from hrbench_client.cli._admin_args import add_cache, add_housekeeping
from hrbench_client.cli._common import BadArguments
from hrbench_client.cli._grades_args import add_grades
from hrbench_client.cli.batch_flags import add_batch_flag
from hrbench_client.cli.daemon_args import add_daemon_commands
from hrbench_client.cli.exit_codes import EXIT_CODES_HELP
from hrbench_client.cli.metric_flags import add_metric_flags
from hrbench_client.cli.stop_flags import add_stop_flags

# `argparse` is imported where the parser is built: the fast path of `hrb score` needs none.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any, NoReturn

__all__ = ["CACHE_STATS", "NEGATIVE_NUMBER", "SCORER_HELP"]

SCORER_HELP = (
    "a scorer name: "
    + "; ".join(f"{name} ({what})" for name, what in SCORERS.items())
    + "; or package.module:function (default exact, settings with --settings)"
)
"""``hrb score --scorer``'s help: every scorer of the registry (``hrbench.specs.SCORERS``, through
the generated :mod:`hrbench_client._scorers`), never a list written by hand."""


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

    The same rule as the library's ``hrbench.runner._governor.check_limit`` (this client imports no
    hrbench); ``nan`` and ``inf`` are refused with exit 2 (sent as JSON ``null``, the $5 default would apply).

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
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected {what}, not NaN or infinity; got {text!r}")
        if value < 0 or (kind is int and value != int(value)):
            raise argparse.ArgumentTypeError(f"expected {what}; got {text!r}")
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


def _command(argv: list[str]) -> str | None:
    """The subcommand named in ``argv`` (skipping the global options), if any."""
    args = iter(argv)
    for a in args:
        if a == "--home":
            next(args, None)
        elif not a.startswith("-"):
            return a
    return None


def _version() -> str:
    from hrbench_client import protocol as p

    try:
        from importlib.metadata import version

        v = version("hrbench")
    except Exception:  # not installed as a distribution (a source checkout on sys.path)
        v = "unknown"
    return f"hrb {v} (protocol {p.PROTOCOL_VERSION})"


def _version_action() -> type[argparse.Action]:
    """``--version``, looked up only when it is given.

    Reading the installed version (``importlib.metadata``) takes about 50 ms, close to half of
    a quick command's start-up; argparse's own ``version=`` made every ``hrb`` command pay it.
    """
    import argparse

    class Version(argparse.Action):
        def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
            super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

        def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
            parser._print_message(_version() + "\n", sys.stdout)
            parser.exit()

    return Version


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
    141 quietly as for every other output.
    """
    import argparse

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # `hrb score -22.22%` needs no `--`: a negative number or
            # percent (digit groups, a decimal point, an exponent) is a value, never an option
            self._negative_number_matcher = NEGATIVE_NUMBER

        def _print_message(self, message: str, file: Any = None) -> None:
            if message:
                (file or sys.stderr).write(message)
                (file or sys.stderr).flush()

        def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
            from hrbench_client.cli._arguments import ARGV, unrecognized

            argv = list(sys.argv[1:] if args is None else args)
            token = ARGV.set(argv)
            try:
                ns, extras = self.parse_known_args(argv, namespace)
                if extras:  # the option meant, or `--` for a value starting with '-'
                    self.error(unrecognized(self, ns, extras))
                return ns
            finally:
                ARGV.reset(token)

        def error(self, message: str) -> NoReturn:
            from hrbench_client.cli._arguments import dash_value_after

            if (advice := dash_value_after(message, self)) is not None:
                message += f" ({advice})"
            if not message.startswith("argument "):  # a value refused names its option and what it takes:
                self.print_usage(sys.stderr)  # the usage (15 lines for `hrb bench`) is for the other errors
            self._print_message(f"{self.prog}: error: {message}\n", sys.stderr)
            raise BadArguments(message)

    return Parser


NEGATIVE_NUMBER = re.compile(r"^-(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?%?$")
"""What ``hrb`` reads as a value, not an option, when it starts with ``-``.

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
    """``hrb``'s parser; ``only="score"`` builds ``hrb score`` alone (start-up time)."""
    import argparse

    parser = _parser_class()(
        prog="hrb",
        description="hrbench from the shell: JSON lines on stdout (see `hrb COMMAND --help`).",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _global_options(parser, None)
    parser.add_argument("--version", action=_version_action(), help="print the version and exit")
    # The same options after the subcommand (`hrb score --home H ...`): SUPPRESS keeps a value
    # given before the subcommand unless it is given again after it.
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, argparse.SUPPRESS)
    sub = parser.add_subparsers(
        dest="cmd", required=True, metavar="COMMAND", parser_class=_sub_parser(common)
    )

    _add_score(sub)
    if only == "score":  # `hrb score ...`: the other commands are not built (start-up time)
        return parser
    _add_bench(sub)
    _add_eval(sub)
    _add_ref(sub)
    add_grades(sub)  # hrb grades put|next|list
    _add_reading(sub)
    _add_gate(sub)
    _add_prices(sub)
    _add_export(sub)
    add_housekeeping(sub)
    add_cache(sub)
    add_daemon_commands(sub)
    return parser


def _add_score(sub: Any) -> None:
    """``hrb score``."""
    s = sub.add_parser("score", help="score outputs against labels")
    s.add_argument("output", nargs="?", help="the output; without it, JSON lines {output, label} on stdin")
    # both at once is a usage error (exit 2), not one of them dropped
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


def _add_bench(sub: Any) -> None:
    """``hrb bench``."""
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
    for cap, kind in (("calls", int), ("usd", float), ("tokens", int)):  # a run that would pass one stops
        b.add_argument(f"--max-{cap}-per-run", type=_limit(kind), help=f"each run's own {cap} cap")
    add_batch_flag(b)
    add_stop_flags(b)


def _add_eval(sub: Any) -> None:
    """``hrb eval``."""
    e = sub.add_parser("eval", help="evaluate() a module from a TOML spec")
    e.add_argument("file", help="the evaluate() spec (TOML; see examples/sentiment.toml)")
    e.add_argument(
        "--fail-under",
        type=_fraction,
        metavar="ACC",
        help="exit 1 when the mean score is under ACC, or is NA (nothing was scored)",
    )


def _add_ref(sub: Any) -> None:
    """``hrb ref put|get|list``."""
    r = sub.add_parser("ref", help="stored references")
    rs = r.add_subparsers(dest="ref_cmd", required=True)
    rp = rs.add_parser(
        "put",
        help="store a reference file (JSON lines of {id, item, label, cluster, split}, another "
        "tool's results, or TOML)",
    )
    rp.add_argument("name", help="the name to store it under")
    rp.add_argument(
        "file",
        help="the reference file (JSON lines, SQuAD JSON, TAT-QA JSON, an Inspect log, lm-eval "
        "samples, promptfoo results, or TOML)",
    )
    rp.add_argument(
        "--format",
        choices=["rows", "squad", "tatqa", "inspect", "lm-eval", "promptfoo"],
        default="rows",
        help="rows (JSON lines; default), squad (SQuAD JSON), tatqa (a TAT-QA dataset file), "
        "inspect (an Inspect eval log, .json or .eval), lm-eval (an lm-eval samples_*.jsonl) or "
        "promptfoo (promptfoo's results JSON): the items and labels of the file, as a spec's "
        "[reference] format reads it",
    )
    rp.add_argument(
        "--id-var",
        metavar="VAR",
        help="with --format promptfoo: the test variable holding each item's id (default id)",
    )
    rg = rs.add_parser("get", help="a stored reference by name or hash")
    rg.add_argument("name", help="the reference's name, or its hash (8+ characters of it)")
    rs.add_parser("list", help="stored references")


def _add_reading(sub: Any) -> None:
    """``hrb rows``, ``hrb report`` and ``hrb view``: reading a stored benchmark."""
    w = sub.add_parser("rows", help="stored rows of a benchmark")
    w.add_argument("id", help=_ID_HELP)
    w.add_argument("--offset", type=int, default=0, help="skip this many rows first (default 0)")
    w.add_argument("--limit", type=int, help="print at most this many rows (default: all)")
    w.add_argument("--traces", action="store_true", help="include each row's trace")
    w.add_argument(
        "--output-chars",
        type=_limit(int),
        metavar="N",
        help="cut each row's output text (the output column: what the arm returned, as the scorer "
        "received it) to N characters",
    )
    w.add_argument(
        "--no-output-text", action="store_true", help="leave the output column out (the seed's columns only)"
    )
    w.add_argument("--item", help="only the rows of this item")
    w.add_argument("--arm", help="only the rows of this arm")
    w.add_argument(
        "--format",
        choices=["jsonl", "csv", "parquet", "inspect-scores"],
        default="jsonl",
        help="jsonl (default), csv (a header line; a trace as JSON), parquet (needs pyarrow: the "
        "pandas extra) or inspect-scores (JSON lines of Inspect sample scores: sample_id, epoch, value C/I)",
    )
    w.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")

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
    add_metric_flags(rep, "report")
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


def _add_export(sub: Any) -> None:
    """``hrb export ID --format inspect``: a stored benchmark in another tool's format."""
    x = sub.add_parser(
        "export",
        help="write a stored benchmark as Inspect eval logs (one per arm), for inspect view and its tools",
    )
    x.add_argument("id", help=_ID_HELP)
    x.add_argument("--format", choices=["inspect"], default="inspect", help="inspect (Inspect eval logs)")
    x.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        default=".",
        help="the folder to write into (default: the current one)",
    )
    x.add_argument("--name", help="the task name in the logs (default: the benchmark's name)")
    x.add_argument(
        "--log-format",
        choices=["json", "eval"],
        default="json",
        help="json (one JSON object per log, the default) or eval (Inspect's zip)",
    )


def _add_gate(sub: Any) -> None:
    """``hrb gate CANDIDATE --baseline BASELINE``: the CI gate."""
    g = sub.add_parser(
        "gate",
        help="fail a CI job only when a benchmark is worse than a baseline by more than a drop",
        description="Compare CANDIDATE with BASELINE on the items both ran, paired. Exit 1 when the "
        "candidate is worse by more than --max-drop with confidence 1 - --alpha, 0 when it is not, "
        "3 when they cannot be compared (no labelled item both ran, no interval: stderr says why), 2 on "
        "bad input (a baseline holding fewer than half of the candidate's items included). Prints one "
        "line: the difference, its interval, on how many of the candidate's items, and the decision.",
    )
    what = (
        "a stored benchmark's id, id prefix (4+ characters) or name (the newest of that name), or a "
        "rows file (`hrb rows ID --format jsonl|csv|parquet -o FILE`)"
    )
    g.add_argument("candidate", help="the benchmark under test: " + what)
    g.add_argument("--baseline", required=True, help="the benchmark to hold CANDIDATE to: " + what)
    g.add_argument("--arm", help="the arm to compare (in both; default: the only one)")
    g.add_argument(
        "--max-drop",
        type=_fraction,
        default=0.02,
        help="the accuracy drop tolerated, a fraction (default 0.02)",
    )
    g.add_argument(
        "--alpha", type=float, default=0.05, help="1 - the confidence a failure needs (default 0.05: 95%%)"
    )
    add_metric_flags(g, "gate")
    g.add_argument(
        "--markdown",
        metavar="FILE",
        help="write a Markdown summary to FILE (on every exit, 2 and 3 included)",
    )
    g.add_argument(
        "--junit",
        metavar="FILE",
        help="write JUnit XML to FILE on every exit: one test case, with a failure on exit 1 and an error "
        "naming the bad input or the trouble on exit 2 or 3",
    )
    g.add_argument("--json", action="store_true", help="print the result as one JSON line instead")


def _add_prices(sub: Any) -> None:
    """``hrb prices MODEL...``: the daemon's prices, with source and date."""
    pr = sub.add_parser(
        "prices",
        help="a model's price in the daemon's table (USD per million tokens), with its source and date",
        description="Print each model's price: input, cache read, cache write (5 minutes, 1 hour) and "
        "output, USD per million tokens, with its long-context tiers (the rates of every token once a "
        "prompt passes a size), the price's source (the genai-prices package and its version, hrbench's "
        "shipped table, HRBENCH_PRICES) and date. Exit 2 when a model has no price or its price is "
        "refused (not a finite number >= 0, or 0 where a price list prices the model).",
    )
    pr.add_argument("models", nargs="+", metavar="MODEL", help="a model name, e.g. gpt-4o-mini")
    pr.add_argument("--text", action="store_true", help="readable lines instead of JSON lines")
