"""A batch line and the hold its run's governor gate keeps on it.

A line is one request waiting for its reply in a batch. The first line of a ``custom_id`` holds
the request's reservation (its client's ``before_attempt``: the runtime's
:class:`~hrbench.runner._governor.Gate`, wrapped by :func:`~hrbench.runner._room.reserve_first`, a
clean cancel's :class:`~hrbench.runner.runtime._drain.Draining` and the ledger's
:class:`~hrbench.runner.runtime._billing.Paying`); other runs waiting on the same ``custom_id``
hold none and are served its reply as a cache hit. The helpers here reach the gate and the
drain through those wrappers, to settle a line whose run is gone.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from hrbench.records import Request, Result

__all__ = ["BatchInfo", "Line", "draining_of", "gate_of", "settle_gone"]


@dataclass(eq=False)
class Line:
    """One request of a run waiting in (or for) a batch.

    Attributes:
        custom_id: the request's draw-keyed key (:func:`~hrbench.runner._cache.cache_key`).
        request: the request; ``body`` the client's body of it.
        before: the client's ``before_attempt`` holding the request's reservation, or ``None``
            (a line that holds none: another run's identical request, or a line of a batch an
            earlier run uploaded).
        future: where the run awaits its reply.
        run: the run (its :class:`~hrbench.arm.RunInfo`), for the collector's quiescence.
        usd: the reservation's worst case (USD), for the batch's ledger.
        first: whether its run is served the reply as paid (``source`` ``"live"``); the
            others are served it as a cache hit.
        tries: how many batches the line went in (an expired line goes in another).
    """

    custom_id: str
    request: Request
    body: dict[str, Any] | None
    before: Any
    future: asyncio.Future[Result]
    run: Any
    usd: float = 0.0
    first: bool = True
    tries: int = 0


@dataclass
class BatchInfo:
    """A batch as progress shows it.

    Attributes:
        tag: hrbench's tag of it; ``id`` the provider's batch id (``None`` until known).
        state: ``"preparing"`` (kept, not yet uploaded) or one of the provider's states.
        lines, done, failed: its lines, and those done and failed so far.
        created: when it was kept (Unix seconds).
        usd_reserved: the reservations its lines hold (USD, at the batch rate).
        provider: the provider.
    """

    tag: str
    state: str
    lines: int
    created: float
    usd_reserved: float = 0.0
    provider: str = ""
    id: str | None = None
    done: int = 0
    failed: int = 0
    cids: list[str] = field(default_factory=list)


def _chain(before: Any) -> list[Any]:
    out, seen = [], set()
    node = before
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        out.append(node)
        node = getattr(node, "inner", None) or getattr(node, "gate", None)
    return out


def gate_of(before: Any) -> Any:
    """The :class:`~hrbench.runner._governor.Gate` under a client's ``before_attempt``, or ``None``."""
    for node in _chain(before):
        if hasattr(node, "hold") and hasattr(node, "settle") and hasattr(node, "usd"):
            return node
    return None


def draining_of(before: Any) -> Any:
    """The clean cancel's ``Draining`` wrapper in a client's ``before_attempt``, or ``None``."""
    for node in _chain(before):
        if hasattr(node, "drain") and hasattr(node, "run"):
            return node
    return None


def settle_gone(line: Line, result: Result | None) -> None:
    """Settle the reservation of a line whose run is gone (cancelled): at its bill, or nothing.

    A reply the provider billed is booked as a billed reply the run could not use (the ledger
    keeps it as paid for that run: a resume's run carries it; :meth:`Gate.lost
    <hrbench.runner._governor.Gate.lost>`); a line never answered is settled at no cost.
    """
    if line.before is None:
        return
    usage = None if result is None else result.usage
    if usage is not None and usage.provenance == "reported" and (result is not None and result.usd):
        lost = getattr(line.before, "lost", None)
        if lost is not None:
            lost(usage, result.model)
            return
    gate = gate_of(line.before)
    if gate is not None:
        gate.settle(0.0, 0)
