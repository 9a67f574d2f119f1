"""``hrb bench --batch`` and the ``hrb batches`` command's arguments (batch mode).

Kept apart from the parser's other commands; like them, building these arguments imports no
command's module (``hrb batches`` runs :mod:`hrbench_client.cli.batches`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

__all__ = ["add_batch_flag", "add_batches_command"]


def add_batch_flag(b: argparse.ArgumentParser) -> None:
    """Add ``--batch`` to ``hrb bench``'s parser."""
    b.add_argument(
        "--batch",
        action="store_true",
        help="send the arms' model calls through the provider's batch API, at its batch rate (half "
        "price at OpenAI and Anthropic), in waves of clusters; the spec's [batch] table sets how "
        "(the defaults when it has none); it runs on whoever listens, `hrb batches` lists its batches",
    )


def add_batches_command(sub: Any, id_help: str, cancel: argparse.ArgumentParser) -> None:
    """Add ``hrb cancel``'s ``ID...`` (a benchmark, or a provider batch) and ``hrb batches [BENCHMARK] [--all] [--text]``.

    ``id_help``: how a benchmark is named; ``cancel``: ``hrb cancel``'s parser.
    """
    cancel.add_argument(
        "ids",
        nargs="+",
        metavar="ID",
        help=id_help + "; or a provider batch's id (batch_..., msgbatch_...) or tag",
    )
    bt = sub.add_parser(
        "batches",
        help="the provider batches of benchmarks in batch mode: state, lines done/failed, age, USD reserved",
        description="List the provider batches (OpenAI's Batch API, Anthropic's Message Batches) of "
        "benchmarks run in batch mode: the live ones (their results not read yet), or every one with "
        "--all. `hrb cancel BATCH_ID` cancels one (its tag, or the provider's batch id).",
    )
    bt.add_argument("benchmark", nargs="?", help="only this benchmark's: " + id_help)
    bt.add_argument("--all", action="store_true", help="every batch, ended ones too")
    bt.add_argument("--text", action="store_true", help="readable lines instead of JSON lines")
