"""The batch ledger of one benchmark, as the collector keeps it: every write in a worker thread.

:class:`BatchLedger` writes to the store's batch tables (:mod:`hrbench.store._batches`): a batch
and its lines' ``custom_id`` before the upload (:meth:`BatchLedger.open`), the provider's id and
state as they come (:meth:`BatchLedger.update`), and its lines' results before any run is given
them (:meth:`BatchLedger.results`). :meth:`BatchLedger.load` reads what a resume starts from
(:class:`Resumed`). Without a store (a library run with none) nothing is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread

from hrbench.records import Result

__all__ = ["BatchLedger", "Resumed"]


@dataclass
class Resumed:
    """What a benchmark's earlier runs left in its batch ledger.

    Attributes:
        live: the batches not ended (their results not read), as :meth:`~hrbench.store.Store.batch_list` gives them.
        results: per ``custom_id`` of a line of an ended batch, its state and result.
        paid: the ``custom_id`` (request keys) of the replies the governor's ledger kept as paid.
        batch_ids: the provider ids of every batch of the benchmark.
    """

    live: list[dict[str, Any]] = field(default_factory=list)
    results: dict[str, tuple[str, Result]] = field(default_factory=dict)
    paid: set[str] = field(default_factory=set)
    batch_ids: set[str] = field(default_factory=set)
    uploaded: dict[str, str] = field(default_factory=dict)
    """Per ``custom_id`` in a live batch, that batch's tag."""


class BatchLedger:
    """A benchmark's batches in its store (``store=None``: kept nowhere).

    Args:
        store: the benchmark's :class:`~hrbench.store.Store`, or ``None``.
        benchmark_id: the benchmark.
        provider, base_url, key_env: the provider's name, the API's base URL and the name of its
            key's environment variable (never the key).
    """

    def __init__(
        self, store: Any, benchmark_id: str, provider: str, base_url: str, key_env: str | None
    ) -> None:
        self.store, self.benchmark_id = store, benchmark_id
        self.provider, self.base_url, self.key_env = provider, base_url, key_env

    async def open(self, tag: str, custom_ids: list[str], usd_reserved: float) -> None:
        """Keep a batch about to be uploaded (state ``"preparing"``) and its lines."""
        if self.store is not None:
            await anyio.to_thread.run_sync(
                self.store.batch_open,
                tag,
                self.benchmark_id,
                self.provider,
                self.base_url,
                self.key_env,
                custom_ids,
                usd_reserved,
            )

    async def update(self, tag: str, **fields: Any) -> None:
        """Keep what the provider said of a batch (``batch_id``, ``state``, ``done``, ``failed``)."""
        if self.store is not None:
            await anyio.to_thread.run_sync(lambda: self.store.batch_update(tag, **fields))

    async def results(self, tag: str, lines: list[tuple[str, str, Result]], usd_billed: float) -> None:
        """Keep an ended batch's results ``(custom_id, state, result)``: it is no longer live."""
        if self.store is not None:
            await anyio.to_thread.run_sync(self.store.batch_results, tag, lines, usd_billed)

    async def load(self) -> Resumed:
        """What the benchmark's earlier runs left (nothing without a store)."""
        if self.store is None:
            return Resumed()
        return await anyio.to_thread.run_sync(self._load)

    def _load(self) -> Resumed:
        store, bid = self.store, self.benchmark_id
        batches = store.batch_list(bid)
        out = Resumed(batch_ids={b["batch_id"] for b in batches if b["batch_id"]})
        if not batches:
            return out
        out.live = [b for b in batches if b["ended"] is None]
        for cid, (tag, state, result) in store.batch_line_states(bid).items():
            if result is None:
                out.uploaded[cid] = tag
            else:
                out.results[cid] = (state, result)
        out.paid = {s.key for steps in store.ledger_paid(bid).values() for s in steps if s.key}
        return out
