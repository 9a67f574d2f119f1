"""``hrb bench``'s stop-when-sure flags: ``--stop GOAL``, ``--alpha``, ``--tolerance``, ``--max-clusters``, ``--margin``, ...

They set the spec's ``[stop]`` table (a flag replaces one field of a table the spec has), so
``hrb bench spec.toml --stop rank --alpha 0.05`` ends the benchmark as soon as its comparison
is sure. A resume continues the stored rule: the flags are refused with ``--resume``.
"""

from __future__ import annotations

from hrbench_client.cli._common import _fail_usage, _msgspec

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

__all__ = ["STOP_FLAGS", "add_stop_flags", "apply_stop_flags"]

STOP_FLAGS = {
    "stop": "goal",
    "alpha": "alpha",
    "tolerance": "tolerance",
    "max_clusters": "max_clusters",
    "stop_method": "method",
    "stop_seed": "seed",
    "stop_order": "order",
    "margin": "margin",
}
"""Each flag's ``dest`` and the ``[stop]`` field it sets."""


def _open_fraction(text: str) -> float:
    """A number strictly between 0 and 1 (``--alpha``, ``--tolerance``)."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, got {text!r}")
    return value


def _whole(low: int) -> Any:
    def parse(text: str) -> int:
        import argparse

        try:
            n = int(text)
        except ValueError:
            n = low - 1
        if n < low:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, got {text!r}")
        return n

    return parse


def add_stop_flags(b: argparse.ArgumentParser) -> None:
    """Add the stop-when-sure flags to ``hrb bench``'s parser."""
    g = b.add_argument_group(
        "stop when sure",
        "end the benchmark as soon as its comparison is sure: the clusters run in a seeded random order "
        "and a sequential test looks after each one; what it reports holds however often it looked "
        "(these flags set the spec's [stop] table)",
    )
    g.add_argument(
        "--stop",
        choices=["rank", "tolerance", "rank_or_tolerance", "full_run"],
        metavar="GOAL",
        help="stop when the arms are ranked (rank), each difference is known within --tolerance "
        "(tolerance), either (rank_or_tolerance), or running the rest of this reference could not "
        "change the answer (full_run)",
    )
    g.add_argument(
        "--alpha",
        type=_open_fraction,
        help="the chance of any wrong decision, over every pair and every look (default 0.05)",
    )
    g.add_argument(
        "--tolerance", type=_open_fraction, help="for --stop tolerance: the half-width wanted, e.g. 0.02"
    )
    g.add_argument(
        "--max-clusters",
        type=_whole(1),
        metavar="N",
        help="run at most N clusters (default: twice the plan's, else every cluster)",
    )
    g.add_argument(
        "--stop-method",
        choices=["auto", "exact", "symmetric", "asymptotic", "strict"],
        help="the sequential test (default auto: the symmetric test, exact for any number of clusters)",
    )
    g.add_argument(
        "--stop-seed", type=_whole(0), metavar="N", help="the seed of the clusters' order (default 0)"
    )
    g.add_argument(
        "--stop-order",
        choices=["uniform", "informative"],
        help="the clusters' order: uniform (default) or informative (drawn with known probabilities from "
        "how the difference varied on each in earlier benchmarks of the same reference, each weighted by "
        "the inverse of its probability)",
    )
    g.add_argument(
        "--margin",
        type=float,
        metavar="D",
        help="settle a pair as no different once its confidence sequence lies within +-D (default 1.75 "
        "times the plan's diff; 0: never)",
    )


def apply_stop_flags(args: argparse.Namespace, spec: Any) -> Any:
    """``spec`` with the stop flags given put in its ``stop`` table.

    Raises:
        _Usage: a stop flag with ``--resume``, or a setting flag with no ``--stop`` and no
            ``[stop]`` table in the spec.
    """
    from hrbench_client import protocol as p

    given = {field: v for dest, field in STOP_FLAGS.items() if (v := getattr(args, dest, None)) is not None}
    if not given:
        return spec
    if spec.resume is not None:
        _fail_usage("a resume continues the stored [stop] rule: leave out --stop and its flags")
    if spec.stop is None and "goal" not in given:
        flags = ", ".join("--" + d.replace("_", "-") for d, f in STOP_FLAGS.items() if f in given)
        _fail_usage(f"{flags} set the stop rule: give --stop GOAL too (or a [stop] table in the spec)")
    ms = _msgspec()
    stop = spec.stop if spec.stop is not None else p.StopSpec()
    try:
        stop = ms.convert({**ms.to_builtins(stop), **given}, p.StopSpec)
    except ms.ValidationError as exc:
        _fail_usage(f"stop: {exc}")
    return ms.structs.replace(spec, stop=stop)
