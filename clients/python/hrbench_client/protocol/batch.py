"""Batch mode on the wire: the ``[batch]`` table of a spec, and the ``batch/list`` and ``batch/cancel`` methods."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct, field

from hrbench_client.protocol._base import _Spec

__all__ = [
    "BatchCancelParams",
    "BatchCancelResult",
    "BatchListParams",
    "BatchListResult",
    "BatchSpec",
    "BatchState",
]


class BatchSpec(_Spec):
    """``[batch]``: the arms' model calls go through the provider's batch API, at its batch rate.

    OpenAI's Batch API (and an OpenAI-compatible ``base_url`` offering it) or Anthropic's
    Message Batches. ``wave``: clusters per wave (their runs' calls go out in one batch; with a
    ``[stop]`` rule, a wave at a time until it decides; default every cluster at once, or with a
    stop rule an eighth of the clusters it may run); ``poll_s``: seconds between status
    checks; ``max_wait_s``: the longest a batch is waited for before it is cancelled and its
    lines handled as expired; ``expired``: what becomes of an expired line (sent again in a
    later batch, sent at once through the synchronous API at list price, or failed);
    ``max_lines``: the most lines in one batch (default the provider's most); ``gather_s``:
    how long to wait for more lines while some runs are busy elsewhere; ``discount``: a line's
    price as a share of the standard one for a model whose batch price is not listed.
    """

    wave: Annotated[int, Meta(ge=1)] | None = None
    poll_s: Annotated[float, Meta(ge=0, le=86_400)] = 30.0
    max_wait_s: Annotated[float, Meta(ge=0, le=30 * 86_400)] = 86_400.0
    expired: Literal["resubmit", "sync", "fail"] = "resubmit"
    max_lines: Annotated[int, Meta(ge=1, le=100_000)] | None = None
    gather_s: Annotated[float, Meta(ge=0, le=3600)] = 0.5
    discount: Annotated[float, Meta(ge=0, le=1)] = 0.5


class BatchState(Struct, kw_only=True):
    """A provider batch of a benchmark, as ``hrb batches`` and progress show it.

    ``tag``: hrbench's id of it (kept before the upload); ``id``: the provider's batch id
    (``None`` until the provider answered the upload); ``state``: ``preparing`` (kept, not yet
    uploaded), ``validating``, ``in_progress``, ``finalizing``, ``completed``, ``expired``,
    ``cancelling``, ``cancelled`` or ``failed``; ``lines``, ``done``, ``failed``: its lines, and
    those done and failed so far; ``age_s``: seconds since it was kept; ``usd_reserved``: what
    its lines hold of the budget (at the batch rate); ``usd_billed``: what its read lines were
    billed; ``live``: its results are not read yet.
    """

    tag: str
    benchmark: str
    provider: str
    state: str
    lines: int
    id: str | None = None
    done: int = 0
    failed: int = 0
    age_s: float = 0.0
    usd_reserved: float = 0.0
    usd_billed: float = 0.0
    live: bool = True


class BatchListParams(_Spec):
    """Params of ``batch/list``: the batches of one benchmark (id or name), or of all; ``live`` only by default."""

    benchmark: str | None = None
    all: bool = False


class BatchListResult(Struct, kw_only=True):
    """The batches, oldest first."""

    batches: list[BatchState] = field(default_factory=list)


class BatchCancelParams(_Spec):
    """Params of ``batch/cancel``: a batch by hrbench's tag or the provider's batch id.

    The provider is asked to cancel it; the lines it answered before are billed and kept, the
    others come back cancelled (their runs end in errors, run again by ``--retry-errors``).
    """

    id: Annotated[str, Meta(min_length=1, max_length=200)]


class BatchCancelResult(Struct, kw_only=True):
    """What ``batch/cancel`` did: the batch and its state as the provider answered."""

    batch: BatchState
