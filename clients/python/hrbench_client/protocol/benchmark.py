"""The ``benchmark`` method: its params and result, and the notifications that stream rows and progress."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, Struct, field

from hrbench_client.protocol._base import CallerEnv, Name, _Spec
from hrbench_client.protocol.batch import BatchSpec, BatchState
from hrbench_client.protocol.records import Row
from hrbench_client.protocol.specs import ArmSpec, ClientSpec, GovernorSpec, RayExecutorSpec, ReferenceSpec
from hrbench_client.protocol.stopping import StopSpec

__all__ = [
    "ArmInfo",
    "ArmSummary",
    "BenchmarkParams",
    "BenchmarkResult",
    "ProgressNotification",
    "RowsNotification",
]


class BenchmarkParams(_Spec):
    """Params of ``benchmark``: run arms on a reference, streaming rows.

    ``reference`` is inline or the name/hash of a stored reference. ``python_path`` lists
    absolute directories the daemon adds to its import path before loading ``import`` arms and
    mock functions (``hrb bench`` adds the TOML file's directory). To resume an interrupted
    benchmark, send ``{"resume": "<benchmark id>"}`` (other fields may be left out; when given
    they must match the stored spec): finished rows are kept and not run again, finished calls
    are answered from the cache. Runs the governor stopped are run again, and ``governor`` may
    be given with ``resume`` to raise the limits for the rest (a budget stop is resumable):
    a limit it gives replaces that one, every other limit in force before (the defaults'
    included, when the spec had no ``governor``) is kept, so the resumed requests are the ones
    the first part sent. Runs that ended in an error are kept as they are,
    unless ``retry_errors`` is true (with ``resume`` only): they are run again and their new
    rows replace the old ones; what the failed attempts spent stays spent.
    ``concurrency`` is how many (arm, item) pairs run at once: 16 when not given; a resume
    keeps the benchmark's own unless it is given (a spec's 8, not the caller's default 16). A benchmark is cancelled (resumable, its rows kept) when the
    connection that submitted it closes, unless ``detach`` is true: it then runs to its end
    whoever listens (``benchmark/cancel`` stops it).
    ``scorer`` decides each row right or wrong; ``metrics`` names graded scores reported beside
    its accuracy in the summary (``tatqa``: the official TAT-QA EM and F1; ``squad``: SQuAD
    v2.0 EM and F1; ``answer_contains``: seed 001's scorer as a side column; or
    ``package.module:function``). ``executor`` says where the cells run:
    ``"local"`` (the daemon's process) or a Ray cluster (``"ray"`` or a :class:`RayExecutorSpec`).
    ``stop`` (a :class:`StopSpec`, the spec's ``[stop]`` table) ends the benchmark as soon as its
    comparison is sure: the clusters run in a seeded order and a sequential test looks after each.
    ``batch`` (a :class:`BatchSpec`, the spec's ``[batch]`` table) sends the arms' model calls
    through the provider's batch API at its batch rate, in waves of clusters; such a benchmark
    runs to its end whoever listens (as with ``detach``), and a resume after a crash reattaches
    to its batches.
    """

    arms: list[ArmSpec] = field(default_factory=list)
    reference: str | ReferenceSpec | None = None
    client: ClientSpec | None = None
    scorer: str = "exact"
    scorer_settings: dict[str, Any] = field(default_factory=dict)
    metrics: list[str] = field(default_factory=list)
    runs: Annotated[int, Meta(ge=1, le=10_000)] = 5
    split: str | list[str] = "test"
    seed: Annotated[
        int,
        Meta(
            description=(
                "The seed of the arms' private random stream `ctx.rng`, derived per (seed, arm, "
                "item, run): only an arm that uses `ctx.rng` (an import arm) changes with it. It is not sent "
                "to the model and not part of the cache key: a run's reply is selected by its request and "
                "draw index (the run number), so a prompt arm gets the same cached replies under any seed. "
                "To send a provider seed, put `seed` in the arm's `params` (it is then in the key); for "
                "fresh replies, `cache = false` or `hrb cache clear`"
            )
        ),
    ] = 1
    governor: GovernorSpec | None = None
    cache: bool = True
    record: Name | None = None
    concurrency: Annotated[int, Meta(ge=1, le=4096)] | None = None
    resume: str | None = None
    retry_errors: bool = False
    stream: bool = True
    detach: bool = False
    name: str | None = None
    python_path: list[str] = field(default_factory=list)
    env: CallerEnv = field(default_factory=dict)
    executor: Literal["local", "ray"] | RayExecutorSpec = "local"
    stop: StopSpec | None = None
    batch: BatchSpec | None = None


class ArmInfo(Struct, kw_only=True):
    """An arm as stored with its benchmark."""

    name: str
    version: str = "1"
    hash: str = ""
    derived_from: str | None = None


class ArmSummary(Struct, kw_only=True):
    """One arm's line of the summary (``hrbench.Bench.summary()``).

    ``accuracy`` is the mean over runs within each item, then over labelled items, on the
    reportable rows; ``None`` when no item is labelled. ``runs`` counts reportable rows,
    ``wrong`` those scored wrong, ``failed`` those with another failure kind except
    ``budget_stop``, counted apart; ``errors`` those of ``failed`` that ended in an error (a
    failed model call, an arm that raised) and ``reasoning_exhausted`` those of ``failed`` whose
    model spent its whole output limit reasoning and gave no answer; ``run_capped`` those of
    ``budget_stop`` that a run's own cap stopped (``max_*_per_run``: the benchmark went on).
    ``usd`` sums every row (``None`` when a model had
    no price): what was paid, 0 for cache and recording hits; ``usd_list`` the same at list price,
    each reply at what it cost when first paid; ``usd_from_log`` the runs whose tokens and
    list price come from another tool's log (an imported arm), not paid here. ``metrics``: the mean of each benchmark metric (the spec's ``metrics``), averaged
    as ``accuracy``; ``None`` for an arm with resumed rows. ``error_causes``: the runs that
    ended in an error (dev split included) by cause, e.g. ``{"openai: HTTP 401": 20}``.
    """

    arm: str
    accuracy: float | None = None
    dev_accuracy: float | None = None
    runs: int = 0
    wrong: int = 0
    failed: int = 0
    errors: int = 0
    budget_stop: int = 0
    run_capped: int = 0
    reasoning_exhausted: int = 0
    usd: float | None = 0.0
    usd_list: float | None = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    metrics: dict[str, float | None] = field(default_factory=dict)
    error_causes: dict[str, int] = field(default_factory=dict)
    usd_from_log: int = 0


class BenchmarkResult(Struct, kw_only=True):
    """Result of ``benchmark``: the id (for ``benchmark/rows``, ``report``, resume) and summary.

    ``status`` is ``done``, ``budget_stopped`` when the governor stopped runs (each counted
    wrong, seed 002; ``text`` says how many), or ``errors`` when runs ended in errors, all or
    some (counted wrong too; ``text`` says how many and the commonest cause).
    ``stop_note`` says how many and how to resume: the note ``hrb ls``, the report and the view
    show.
    """

    id: str
    summary: list[ArmSummary]
    n_rows: int
    n_resumed: int = 0
    status: str = "done"
    reference_hash: str = ""
    arms: list[ArmInfo] = field(default_factory=list)
    text: str = ""
    warnings: list[str] = field(default_factory=list)
    stop_note: str | None = None


class RowsNotification(Struct, kw_only=True):
    """``hrbench/rows``: scored rows of the benchmark started by request ``request_id``, in order.

    One notification per batch the daemon committed to its store (a row the caller sees is a
    row saved), cut where an ``hrbench/progress`` notification falls between them; the batches'
    rows, in the order they come, are the benchmark's rows in the order they were scored.
    A batch per notification, not a row, so that streaming costs
    the daemon and the client one message per batch (protocol 2; protocol 1 sent ``hrbench/row``
    with one ``row`` each).
    """

    request_id: int | str | None
    benchmark: str
    rows: list[Row]


class ProgressNotification(Struct, kw_only=True):
    """``hrbench/progress``: rows done of the total, for the benchmark of ``request_id``.

    ``usd`` and ``calls`` are the governor's use so far (USD settled, requests sent);
    ``max_usd`` and ``max_calls`` its caps (``None``: no cap). ``usd_known``: ``False`` once a
    row's model has no price (its USD is NA, seed 002), so the spend so far is unknown, not
    ``usd``. ``batches``: in batch mode, the benchmark's provider batches and their states.
    """

    request_id: int | str | None
    benchmark: str
    done: int
    total: int
    usd: float = 0.0
    max_usd: float | None = None
    calls: int = 0
    max_calls: int | None = None
    batches: list[BatchState] = field(default_factory=list)
    usd_known: bool = True
