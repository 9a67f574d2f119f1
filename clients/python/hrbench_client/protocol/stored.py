"""What the daemon stores: references, recordings, the response cache, benchmarks, gc and report.

Benchmarks are read (``benchmark/rows``, ``benchmark/list``), deleted and cancelled here.
"""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import Meta, Struct, field

from hrbench_client.protocol._base import Name, _Spec
from hrbench_client.protocol.records import Row, Step
from hrbench_client.protocol.specs import ReferenceSpec

__all__ = [
    "BenchmarkCancelParams",
    "BenchmarkCancelResult",
    "BenchmarkDeleteParams",
    "BenchmarkDeleteResult",
    "BenchmarkInfo",
    "BenchmarkListParams",
    "BenchmarkListResult",
    "BenchmarkListing",
    "BenchmarkRowsParams",
    "BenchmarkRowsResult",
    "CacheClearParams",
    "CacheClearResult",
    "CacheStatsParams",
    "CacheStatsResult",
    "GcParams",
    "GcResult",
    "RecordingExportParams",
    "RecordingExportResult",
    "RecordingImportParams",
    "RecordingImportResult",
    "ReferenceGetParams",
    "ReferenceInfo",
    "ReferenceListParams",
    "ReferenceListResult",
    "ReferencePutParams",
    "ReportParams",
    "ReportResult",
]


class ReferencePutParams(_Spec):
    """Params of ``reference/put``: store a reference under a name (and its content hash)."""

    reference: ReferenceSpec
    name: Name | None = None


class ReferenceInfo(Struct, kw_only=True):
    """A stored reference: name, content hash, size, when it was put (ISO 8601, UTC).

    ``new`` (``reference/put`` only, else ``None``): ``True`` when this content was not stored
    before, ``False`` when it was (only the name was added). ``replaced`` (``reference/put``
    only): the content hash the name pointed at before this put, when it was another one (a
    put rebinding a name is never silent); ``hrb ref put`` says ``old -> new`` on stderr.
    """

    hash: str
    name: str | None = None
    n_items: int = 0
    created: str | None = None
    new: bool | None = None
    replaced: str | None = None


class ReferenceGetParams(_Spec):
    """Params of ``reference/get``: a stored reference by name or hash."""

    ref: Name


class ReferenceListParams(_Spec):
    """Params of ``reference/list`` (none)."""


class ReferenceListResult(Struct, kw_only=True):
    """Stored references, newest first."""

    references: list[ReferenceInfo]


class RecordingImportParams(_Spec):
    """Params of ``recording/import``: load recordings from a JSON-lines file the daemon reads."""

    path: str
    name: Name | None = None


class RecordingImportResult(Struct, kw_only=True):
    """How many recorded replies were imported, under which recording name."""

    name: str | None
    n: int


class RecordingExportParams(_Spec):
    """Params of ``recording/export``: write a recording to a JSON-lines file, or return it.

    With ``path`` (absolute) the daemon writes the file. Over TCP it writes only inside the
    ``exports`` folder of its state folder (a TCP client may not be the daemon's user); leave
    ``path`` out to get the entries in the result and write them where you like.
    """

    name: Name
    path: str | None = None


class RecordingExportResult(Struct, kw_only=True):
    """How many recorded replies were exported, and where (or the entries, without a path)."""

    name: str
    n: int
    path: str | None = None
    entries: list[dict[str, Any]] | None = None


class CacheStatsParams(_Spec):
    """Params of ``cache/stats`` (none)."""


class CacheStatsResult(Struct, kw_only=True):
    """Response-cache statistics as the store reports them."""

    stats: dict[str, Any]


class CacheClearParams(_Spec):
    """Params of ``cache/clear``: delete response-cache entries.

    With no filter every entry goes; ``model`` (the model asked for), ``arm`` (the arm's name)
    and ``older_than_s`` (created more than that many seconds ago) keep only the matching ones
    for deletion, all of them holding. Recordings and benchmarks are never touched (``gc`` is
    for those). The next benchmark then sends fresh requests for what was deleted.
    """

    model: str | None = None
    arm: str | None = None
    older_than_s: Annotated[float, Meta(ge=0)] | None = None


class CacheClearResult(Struct, kw_only=True):
    """How many response-cache entries were deleted."""

    deleted: int


class BenchmarkRowsParams(_Spec):
    """Params of ``benchmark/rows``: stored rows of an earlier benchmark, a page at a time.

    ``item`` and ``arm`` keep only the rows of that item and/or arm (paging applies after).
    ``outputs`` adds each row's output text (what its arm returned, as its scorer received it),
    cut to ``output_chars`` characters when given.
    """

    id: str
    offset: Annotated[int, Meta(ge=0)] = 0
    limit: Annotated[int, Meta(ge=1, le=1_000_000)] | None = None
    traces: bool = False
    item: str | None = None
    arm: str | None = None
    outputs: bool = False
    output_chars: (
        Annotated[int, Meta(ge=0, description="cut each output text to this many characters")] | None
    ) = None


class BenchmarkInfo(Struct, kw_only=True):
    """A stored benchmark's header.

    ``scorer`` is the name of the scorer that scored its rows (``exact_normalised``,
    ``answer_contains``, a judge's or a function's name), which ``hrb rows`` writes in every
    format beside each row; ``None`` from a daemon that does not say.
    """

    id: str
    status: str
    n_rows: int
    total: int | None = None
    created: str | None = None
    name: str | None = None
    scorer: str | None = None


class BenchmarkRowsResult(Struct, kw_only=True):
    """Rows of a stored benchmark in the seed's order, and the traces and output texts when asked.

    ``outputs`` maps each row's ``ledger_id`` to its output text, ``null`` for a run with none
    (it failed before its arm returned, or was stored before outputs were kept).
    """

    benchmark: BenchmarkInfo
    rows: list[Row]
    traces: dict[str, list[Step]] | None = None
    outputs: dict[str, str | None] | None = None


class BenchmarkListParams(_Spec):
    """Params of ``benchmark/list``: stored benchmarks, newest first.

    ``limit`` keeps the newest ones; ``search`` those whose name or id contains it
    (case-insensitive; applied before ``limit``).
    """

    limit: Annotated[int, Meta(ge=1)] | None = None
    search: str | None = None


class BenchmarkListing(Struct, kw_only=True):
    """One stored benchmark as ``hrb ls`` and ``hrb view`` show it.

    ``status`` is ``running``, ``done``, ``budget_stopped`` (the governor stopped runs, which
    count as wrong: ``stop_note`` says how many and how to resume), ``errors`` (runs ended in
    errors, all or some, counted wrong: ``stop_note`` says how many, the commonest cause, and
    that ``hrb bench --resume ID --retry-errors`` runs them again), ``cancelled``, ``failed``,
    ``refused``, or ``interrupted`` (stored as running but no task of the daemon runs it, or
    the daemon was stopped while it ran). ``rows`` are stored,
    ``total`` expected; ``accuracy`` per arm, ``best_arm``/``best_accuracy`` come from the stored
    summary (empty/``None`` until the benchmark ends). ``n_items`` and ``runs`` come from the
    spec, but for a benchmark run with a stop rule (stop when sure) ``n_items`` counts the items
    reported (those of the clusters it committed, as its report counts them) and ``n_items_of``
    the items a full run has (``None`` without a stop rule). ``created`` is ISO 8601 UTC. ``usd`` and ``calls`` (requests sent, retries included;
    an attempt that could not connect is none) are the governor's use as stored
    (kept per call: reservations in flight, or left open by a crash, counted as spent; ``None``
    before the first call; ``usd`` ``None`` too when a model had no price, as in the report,
    seed 002), ``tokens`` the tokens counted against the token cap likewise, ``max_usd``,
    ``max_calls`` and ``max_tokens`` the caps in force (``None``: no cap), ``default_limits`` ``True`` when they are the defaults
    (no governor in the spec, seed 002: 400 calls, $5, no token cap unless
    ``HRBENCH_MAX_TOKENS`` sets one; ``None`` for a benchmark stored before the limits were kept). ``unknown_usd`` and
    ``unknown_calls``: the part of that use that was in flight when a run of it crashed or was
    cancelled (counted at the cancel), so unknown, at most that much (0 or ``None``
    when none); ``unknown_note`` says it in words, telling what a cancel
    left ("cancelled in flight") from what a crash left ("in flight at a crash").
    ``reserved_calls``, ``reserved_usd`` and ``reserved_tokens``: for a running benchmark, the
    calls in flight and the worst case the governor reserved for them (counted against the caps
    until each reply settles it, but not use): ``calls``, ``usd`` and ``tokens`` of a running
    benchmark leave them out (``None`` when none is in flight).
    """

    id: str
    name: str | None = None
    created: str | None = None
    status: str
    arms: list[str]
    rows: int
    total: int | None = None
    accuracy: dict[str, float | None] = field(default_factory=dict)
    n_items: int | None = None
    n_items_of: int | None = None
    runs: int | None = None
    best_arm: str | None = None
    best_accuracy: float | None = None
    reference_hash: str = ""
    usd: float | None = None
    max_usd: float | None = None
    calls: int | None = None
    max_calls: int | None = None
    tokens: int | None = None
    max_tokens: int | None = None
    unknown_usd: float | None = None
    unknown_calls: int | None = None
    unknown_note: str | None = None
    default_limits: bool | None = None
    stop_note: str | None = None
    reserved_calls: int | None = None
    reserved_usd: float | None = None
    reserved_tokens: int | None = None


class BenchmarkListResult(Struct, kw_only=True):
    """Stored benchmarks, newest first."""

    benchmarks: list[BenchmarkListing]


class BenchmarkDeleteParams(_Spec):
    """Params of ``benchmark/delete``: a benchmark (id, unique id prefix or name) with its rows and traces."""

    id: str


class BenchmarkDeleteResult(Struct, kw_only=True):
    """What ``benchmark/delete`` removed (``locks``: its lock file, 0 or 1)."""

    id: str
    rows: int
    traces: int
    locks: int = 0


class BenchmarkCancelParams(_Spec):
    """Params of ``benchmark/cancel``: a running benchmark (id, unique id prefix or name).

    ``grace_s``: how long the requests already sent may take to finish before the benchmark
    is cancelled (seconds; ``None``: the daemon's ``HRBENCH_CANCEL_GRACE_S``, else 10). Their
    replies are settled at their real cost and their runs saved; what is still in flight
    after it is counted "cancelled in flight: unknown, at most" its reservation.
    """

    id: str
    grace_s: Annotated[float, Meta(ge=0, le=3600)] | None = None


class BenchmarkCancelResult(Struct, kw_only=True):
    """What ``benchmark/cancel`` did: the benchmark is ``cancelled`` (resumable) and its rows so far kept.

    ``in_flight``: runs whose request was still unanswered after the grace (their calls are
    counted "cancelled in flight: unknown, at most"); ``unknown_note``: the benchmark's spend
    left unknown, in the sentence ``hrb ls`` shows (``None`` when none).
    """

    id: str
    status: str
    rows: int
    in_flight: int = 0
    unknown_note: str | None = None


class GcParams(_Spec):
    """Params of ``gc``: delete what is older than ``older_than_s`` seconds, then VACUUM.

    Benchmarks (rows, traces, ledgers) always; running ones never. ``cache``: response-cache
    entries too (default). ``recordings``: recorded replies too (off by default).
    """

    older_than_s: Annotated[float, Meta(ge=0)]
    cache: bool = True
    recordings: bool = False
    vacuum: bool = True


class GcResult(Struct, kw_only=True):
    """Counts deleted and the database's size (bytes, with its WAL) before and after.

    ``locks``: benchmark lock files removed (of the benchmarks deleted, and of benchmarks no
    longer stored), never one a live holder holds.
    """

    benchmarks: int
    rows: int
    traces: int
    locks: int = 0
    cache: int
    recordings: int
    bytes_before: int
    bytes_after: int
    vacuumed: bool


class ReportParams(_Spec):
    """Params of ``report``: the statistical report of a stored benchmark."""

    id: str
    settings: dict[str, Any] = field(default_factory=dict)


class ReportResult(Struct, kw_only=True):
    """The report payload as ``hrbench.stats.report_payload`` builds it."""

    report: dict[str, Any]
