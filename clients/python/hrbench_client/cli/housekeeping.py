"""Stored benchmarks: ``hrb ls`` lists them, ``hrb rm`` deletes some, ``hrb gc`` prunes old ones."""

from __future__ import annotations

from hrbench_client.cli._common import (
    STATUS_LABELS,
    _client,
    _err,
    _fail_usage,
    _out,
    parse_age,
    usd_text,
)
from hrbench_client.cli.exit_codes import EXIT_OK, EXIT_USAGE
from hrbench_client.errors import ConfigError, HrbenchError, NotFound

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

__all__ = ["limits_text"]


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
        if b.unknown_note:  # spend a crash or a cancel left unknown, counted as spent
            print(f"{'':<16}  {b.unknown_note}")
        if (limits := limits_text(b)) is not None:
            print(f"{'':<16}  {limits}")
        if b.stop_note:  # a budget stop or runs that ended in errors
            print(f"{'':<16}  {STATUS_LABELS.get(b.status, 'Note')}: {b.stop_note}")
    return EXIT_OK


def limits_text(b: Any) -> str | None:
    """The limits in force of a listed benchmark, each with its use, the defaults marked.

    The three caps are shown alike; ``None`` for a benchmark stored before the limits were kept.

    Example:
        >>> from hrbench_client import protocol as p
        >>> b = p.BenchmarkListing(id="b1", status="done", arms=["a"], rows=5, calls=5, max_calls=400,
        ...                        max_usd=5.0, usd=0.0, default_limits=True)
        >>> limits_text(b)
        'limits (the defaults): calls 5 of 400, usd 0.0000 of 5, tokens - of no cap'
        >>> limits_text(p.BenchmarkListing(id="b1", status="done", arms=["a"], rows=5, calls=5, max_calls=400,
        ...                                usd=None, max_usd=5.0, default_limits=True))
        'limits (the defaults): calls 5 of 400, usd NA of 5, tokens - of no cap'
    """
    if b.default_limits is None and b.max_calls is None and b.max_usd is None and b.max_tokens is None:
        return None

    def one(name: str, used: Any, cap: Any, usd: bool = False) -> str:
        shown = "-" if used is None else (usd_text(used) if usd else str(used))
        if usd and used is None and b.calls:  # calls made, at no price: NA (seed 002), as the report says
            shown = "NA"
        held = getattr(b, f"reserved_{name}", None)
        if held:  # in flight: reserved at its worst case, not used
            shown += f" (+{usd_text(held) if usd else held} reserved)"
        return f"{name} {shown} of {'no cap' if cap is None else f'{cap:g}'}"

    head = "limits (the defaults)" if b.default_limits else "limits"
    return (
        f"{head}: {one('calls', b.calls, b.max_calls)}, {one('usd', b.usd, b.max_usd, True)}, "
        f"{one('tokens', b.tokens, b.max_tokens)}"
    )


def cmd_rm(args: argparse.Namespace) -> int:
    """Resolve every id first and delete nothing when one is unknown (``hrb rm bad nosuch``).

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


def cmd_gc(args: argparse.Namespace) -> int:
    age = parse_age(args.older_than)
    with _client(args) as hb:
        _out(hb.gc(age, cache=not args.keep_cache, recordings=args.recordings, vacuum=not args.no_vacuum))
    return EXIT_OK
