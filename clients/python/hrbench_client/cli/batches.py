"""``hrb batches``: the provider batches of benchmarks run in batch mode; and ``hrb cancel`` of one.

``hrb batches [BENCHMARK] [--all] [--text]`` lists the live batches (their results not read
yet), or every batch with ``--all``: state, lines done and failed, age, USD reserved.
``hrb cancel ID`` cancels a batch when ``ID`` is a batch's tag or provider id
(``batch_...``, ``msgbatch_...``) rather than a benchmark's.
"""

from __future__ import annotations

from hrbench_client.cli._common import _client, _out
from hrbench_client.cli.exit_codes import EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

__all__ = ["PROVIDER_IDS", "batches_note", "cmd_batches", "is_batch_id"]

PROVIDER_IDS = ("batch_", "msgbatch_")
"""How the providers' batch ids begin (OpenAI's, Anthropic's)."""


def is_batch_id(ref: str) -> bool:
    """Whether ``ref`` is a provider's batch id (not a benchmark's id or name).

    Example:
        >>> is_batch_id("batch_6f1a"), is_batch_id("msgbatch_01"), is_batch_id("3fa2c1d0")
        (True, True, False)
    """
    return ref.startswith(PROVIDER_IDS)


def _age(seconds: float) -> str:
    s = int(seconds)
    return (
        f"{s // 3600}h{s % 3600 // 60:02d}m"
        if s >= 3600
        else f"{s // 60}m{s % 60:02d}s"
        if s >= 60
        else f"{s}s"
    )


def batches_note(batches: Any) -> str | None:
    """The batches of a benchmark in a few words (progress shows it), or ``None`` when there are none.

    Example:
        >>> from hrbench_client import protocol as p
        >>> b = [p.BatchState(tag="t1", benchmark="b", provider="openai", state="in_progress", lines=40, done=12),
        ...      p.BatchState(tag="t2", benchmark="b", provider="openai", state="completed", lines=40, done=40, live=False)]
        >>> batches_note(b)
        'batches: in_progress 12/40, completed 40/40'
    """
    if not batches:
        return None
    return "batches: " + ", ".join(f"{b.state} {b.done}/{b.lines}" for b in batches[-4:])


def _line(b: Any) -> str:
    where = b.id or f"(tag {b.tag})"
    failed = f", {b.failed} failed" if b.failed else ""
    return (
        f"{where}  {b.provider}  {b.state}  {b.done}/{b.lines} lines done{failed}  age {_age(b.age_s)}  "
        f"${b.usd_reserved:.4f} reserved  benchmark {b.benchmark}"
    )


def cmd_batches(args: argparse.Namespace) -> int:
    """``hrb batches``: one JSON line per batch (``--text``: one readable line each)."""
    with _client(args) as hb:
        listed = hb.batches(args.benchmark, all=args.all)
    for b in listed.batches:
        if args.text:
            print(_line(b))
        else:
            _out(b)
    return EXIT_OK


def cancel_batch(hb: Any, ref: str) -> Any:
    """Cancel batch ``ref`` (a tag or a provider id): its state as the provider answered."""
    return hb.cancel_batch(ref).batch
