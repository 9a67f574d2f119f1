"""What the ``benchmark`` method says about a benchmark: a rebound name, its stop note, an end not stored.

Moved out of :mod:`hrbench_server.bench` (no change of behaviour).
"""

from __future__ import annotations

from typing import Any

from hrbench.errors import StoreError
from hrbench.results import browse
from hrbench_client import protocol as p

__all__ = ["not_finished_error", "rebound_note", "stop_note"]


def rebound_note(store: Any, params: p.BenchmarkParams, ref_hash: str) -> str | None:
    """What to say when a named reference resolves to other content than the last benchmark of this name used.

    Said, not refused: a name is a history of puts.
    ``None`` for an inline reference, a benchmark with no name or no earlier one, or the same
    content.
    """
    if not isinstance(params.reference, str) or not params.name:
        return None
    earlier = store.benchmark_named(params.name)
    rec = store.benchmark_get(earlier) if earlier is not None else None
    if rec is None:
        return None
    was = rec.get("reference_hash")
    if not was or was == ref_hash:
        return None
    return (
        f"reference {params.reference!r} resolves to {ref_hash[:12]} now, but the previous benchmark "
        f"named {params.name!r} ({earlier}) used {str(was)[:12]}: the name was rebound (`hrb ref put`), "
        "so the two are scored against different items or labels"
    )


def stop_note(store: Any, bench_id: str) -> str | None:
    """A finished benchmark's stop note, as ``hrb ls`` and ``hrb report`` show it."""
    rec = store.benchmark_get(bench_id) or {}
    return browse.benchmark_status(
        rec, store.rows_count(bench_id), (), store.ledger_get(bench_id), browse.stop_limits(store, rec)
    )["stop_note"]


def not_finished_error(exc: StoreError, bench_id: str, done: int, total: int) -> StoreError:
    """The store's error for a benchmark whose end (status, summary) could not be stored.

    Its rows are saved; the store still has it running, so it is never reported done: a
    resume, once the store can be written, stores its end without calling again what is saved.

    Example:
        >>> from hrbench.errors import StoreFull
        >>> e = not_finished_error(StoreFull("The disk is full. Free space.", "/s/db"), "b1", 6, 6)
        >>> type(e).__name__, e.context["benchmark"], e.path
        ('StoreFull', 'b1', '/s/db')
        >>> print(e)
        The disk is full. Free space. Benchmark b1: its end could not be stored, so it is not done; 6 of 6 runs are saved and kept. Once fixed, resume it with {"resume": "b1"} (`hrb bench --resume b1`), which stores its end without calling again what is saved
    """
    return type(exc)(
        f"{exc.message} Benchmark {bench_id}: its end could not be stored, so it is not done; {done} "
        f'of {total} runs are saved and kept. Once fixed, resume it with {{"resume": "{bench_id}"}} '
        f"(`hrb bench --resume {bench_id}`), which stores its end without calling again what is saved",
        exc.path,
        benchmark=bench_id,
        done=done,
        total=total,
    )
