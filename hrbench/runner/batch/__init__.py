"""Batch mode: a benchmark's model calls through the provider's batch API, at its batch rate.

``hb.benchmark(..., batch=True)`` or ``batch=hb.Batch(...)`` (:class:`Batch`); a spec's ``[batch]``
table; ``hrb bench --batch``. The parts: :mod:`~hrbench.runner.batch.settings` (``Batch``),
:mod:`~hrbench.runner.batch.waves` (the cells in waves, :func:`install`),
:mod:`~hrbench.runner.batch.collector` (lines gathered into batches, polled, answered),
:mod:`~hrbench.runner.batch.client` (the client the runtime sends through),
:mod:`~hrbench.runner.batch.ledger` (the batch ledger, kept before upload) and
:mod:`~hrbench.runner.batch.lines` (a line and the reservation it holds). The provider APIs are
:mod:`hrbench.models._batch_openai` and :mod:`hrbench.models._batch_anthropic`; the batch
prices :mod:`hrbench.models.batch_prices`. The guide: ``docs/guides/batch.md``.
"""

from __future__ import annotations

from hrbench.runner.batch.lines import BatchInfo
from hrbench.runner.batch.settings import EXPIRED, Batch, batch_of
from hrbench.runner.batch.waves import Batching, install

__all__ = ["EXPIRED", "Batch", "BatchInfo", "Batching", "batch_of", "install"]
