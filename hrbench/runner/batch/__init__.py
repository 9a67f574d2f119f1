"""Batch mode: a benchmark's model calls through the provider's batch API, at its batch rate.

``hb.benchmark(..., batch=True)`` or ``batch=hb.Batch(...)`` (:class:`Batch`); a spec's ``[batch]``
table; ``hrb bench --batch``. The parts: :mod:`~hrbench.runner.batch._settings` (``Batch``),
:mod:`~hrbench.runner.batch._waves` (the cells in waves, :func:`install`),
:mod:`~hrbench.runner.batch._collector` (lines gathered into batches, polled, answered),
:mod:`~hrbench.runner.batch._client` (the client the runtime sends through),
:mod:`~hrbench.runner.batch._ledger` (the batch ledger, kept before upload) and
:mod:`~hrbench.runner.batch._lines` (a line and the reservation it holds). The provider APIs are
:mod:`hrbench.models._batch_openai` and :mod:`hrbench.models._batch_anthropic`; the batch
prices :mod:`hrbench.models._batch_prices`. The guide: ``docs/guides/batch.md``.
"""

from __future__ import annotations

import typing

from hrbench.runner.batch._lines import BatchInfo
from hrbench.runner.batch._settings import EXPIRED, Batch, batch_of
from hrbench.runner.batch._waves import Batching, install

__all__ = [
    "Batch",
    "BatchInfo",
    "BatchLedger",
    "Batching",
    "Collector",
    "EXPIRED",
    "batch_api",
    "batch_of",
    "install",
]


# -- tools/privatize.py: names other packages use, imported on first use (PEP 562)
if typing.TYPE_CHECKING:
    from hrbench.runner.batch._client import batch_api
    from hrbench.runner.batch._collector import Collector
    from hrbench.runner.batch._ledger import BatchLedger

_LAZY = {
    "BatchLedger": "hrbench.runner.batch._ledger",
    "Collector": "hrbench.runner.batch._collector",
    "batch_api": "hrbench.runner.batch._client",
}

if not typing.TYPE_CHECKING:  # type checkers read the imports above; a typo stays an error
    from hrbench._util.lazy import lazy_names

    __getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)

# -- end of tools/privatize.py's block
