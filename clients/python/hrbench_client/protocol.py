"""The hrbench wire protocol: every JSON-RPC method's params, result and notification.

This module imports only :mod:`msgspec`, so the daemon (``hrbench_server``) and every client
(``hrbench_client``, the ``hrb`` command) decode and encode the same Structs without pulling in
the core library. The JSON Schema in ``schema/`` is generated from these Structs::

    python -m hrbench_client.protocol schema/

Arms and clients cross the wire as *specs*, never code (SPEC §4). Each spec is a tagged union
on ``kind``:

- arms: ``{"kind": "prompt", ...}``, ``{"kind": "reading", ...}``, ``{"kind": "outputs", ...}``,
  ``{"kind": "import", "path": "package.module:function"}``;
- clients: ``{"kind": "openai" | "anthropic" | "replay" | "mock", ...}``. A model client names
  the environment variable holding its API key (``api_key_env``); the key itself is never sent,
  stored or logged.

Methods (``METHODS``) map a name to its params and result Structs; ``NOTIFICATIONS`` maps the
server-to-client notifications to theirs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct, field

__all__ = [
    "ERROR_CODES",
    "METHODS",
    "NOTIFICATIONS",
    "PROTOCOL_VERSION",
    "AnthropicClientSpec",
    "ArmInfo",
    "ArmSpec",
    "ArmSummary",
    "ArmView",
    "AuthParams",
    "AuthResult",
    "BenchmarkCancelParams",
    "BenchmarkCancelResult",
    "BenchmarkCellParams",
    "BenchmarkCellResult",
    "BenchmarkCompareParams",
    "BenchmarkCompareResult",
    "BenchmarkDeleteParams",
    "BenchmarkDeleteResult",
    "BenchmarkInfo",
    "BenchmarkListParams",
    "BenchmarkListResult",
    "BenchmarkListing",
    "BenchmarkMatrixParams",
    "BenchmarkMatrixResult",
    "BenchmarkParams",
    "BenchmarkResult",
    "BenchmarkRowsParams",
    "BenchmarkRowsResult",
    "BenchmarkViewParams",
    "BenchmarkViewResult",
    "CacheStatsParams",
    "CacheStatsResult",
    "CellRun",
    "ClientSpec",
    "Difference",
    "ErrorData",
    "EvalMetricSpec",
    "EvalModuleSpec",
    "EvaluateParams",
    "EvaluateResult",
    "GcParams",
    "GcResult",
    "GovernorSpec",
    "HrbenchCapabilities",
    "ImportArmSpec",
    "InitializeParams",
    "InitializeResult",
    "MatrixCell",
    "MatrixItem",
    "MockClientSpec",
    "OpenAIClientSpec",
    "OutputsArmSpec",
    "PriceSpec",
    "ProgressNotification",
    "PromptArmSpec",
    "RayExecutorSpec",
    "ReadingArmSpec",
    "RecordingExportParams",
    "RecordingExportResult",
    "RecordingImportParams",
    "RecordingImportResult",
    "ReferenceGetParams",
    "ReferenceInfo",
    "ReferenceListParams",
    "ReferenceListResult",
    "ReferencePutParams",
    "ReferenceSpec",
    "ReplayClientSpec",
    "ReportParams",
    "ReportResult",
    "Row",
    "RowsNotification",
    "ScoreParams",
    "ScoreResult",
    "ServerCapabilities",
    "ServerExperimental",
    "ServerInfo",
    "ShutdownParams",
    "ShutdownResult",
    "StatusParams",
    "StatusResult",
    "Step",
    "Usage",
    "schemas",
    "unknown_field_hint",
]

PROTOCOL_VERSION = 2
"""Bumped when a method's params or result (or a notification) change incompatibly: 2 streams rows
as ``hrbench/rows`` batches instead of one ``hrbench/row`` notification per row (issue 15)."""

ImportPath = Annotated[
    str,
    Meta(
        pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$",
        description="`package.module:attribute`, loaded by the daemon.",
        examples=["mypkg.arms:ask"],
    ),
]
EnvName = Annotated[
    str,
    Meta(
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="The NAME of an environment variable of the daemon holding the key; never the key.",
    ),
]
Name = Annotated[str, Meta(min_length=1, max_length=200)]
CallerEnv = Annotated[
    dict[EnvName, str],
    Meta(
        description="Values of the environment variables the spec names (API keys), sent by the client "
        "from the caller's environment over the same-user local channel: used for this request only "
        "(before the daemon's own environment), never stored, logged or echoed."
    ),
]
ItemId = str


class _Spec(Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of every params Struct: unknown fields are errors, so typos are caught."""


# --------------------------------------------------------------------------------------------
# Records on the wire (mirror hrbench.records; the daemon converts)


class Usage(Struct, kw_only=True):
    """Token counts of one reply: ``tokens_out`` includes reasoning, ``tokens_in`` cached."""

    tokens_in: int = 0
    tokens_out: int = 0
    tokens_reasoning: int = 0
    tokens_cached: int = 0
    provenance: str | None = "reported"
    tokens_cache_write_5m: int = 0
    tokens_cache_write_1h: int = 0


class Step(Struct, kw_only=True):
    """One step of a run's trace (mirrors ``hrbench.records.Step``)."""

    ledger_id: str
    kind: str = "request"
    key: str | None = None
    model: str | None = None
    source: str = "live"
    draw_index: int | None = None
    messages: list[dict[str, Any]] | None = None
    text: str | None = None
    finish_reason: str | None = None
    response_id: str | None = None
    usage: Usage | None = None
    usd: float | None = 0.0
    usd_nominal: float | None = None
    seconds: float = 0.0
    error: str | None = None


class Row(Struct, kw_only=True):
    """One run of one arm on one item: the seed-002 columns (mirrors ``hrbench.records.Row``).

    ``None`` plays R's ``NA``. ``usd`` is in US dollars, ``seconds`` is wall-clock time.
    """

    cluster: str
    item: str
    arm: str
    run: int
    split: str
    correct: bool | None
    outcome: str | None
    failure_kind: str | None
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_reasoning: int = 0
    tokens_cached: int = 0
    usd: float | None = 0.0
    usd_provenance: str | None = "none"
    seconds: float = 0.0
    draw_index: int = 0
    ledger_id: str = ""
    reportable: bool = True


# --------------------------------------------------------------------------------------------
# Specs: arms, clients, references, governor


class PromptArmSpec(_Spec, tag="prompt", tag_field="kind"):
    """An arm that sends one prompt per run and answers with the reply.

    The template is formatted with ``{item}`` (the item's payload) and, when the payload is a
    mapping, with each of its keys (``{question}``, ``{document}``). Write ``{{`` for a brace.
    """

    name: Name
    template: Annotated[str, Meta(description="Prompt template, e.g. `Capital of {item}?`")]
    system: str | None = None
    model: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    version: Annotated[
        str,
        Meta(
            description=(
                "The arm's version: recorded with the benchmark and part of the arm's hash (a resume "
                "refuses a changed arm), not of the cache key, which is the request as sent, the arm's "
                "name and the draw index (SPEC section 6): a version bump that sends the same request is "
                "served the cached replies; change the request, or run with `cache = false`, for fresh ones"
            )
        ),
    ] = "1"


class ReadingArmSpec(_Spec, tag="reading", tag_field="kind"):
    """A reading recipe (``direct``, ``chunked``, ``retrieve``) with its settings."""

    recipe: Name
    name: Name | None = None
    model: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)


class OutputsArmSpec(_Spec, tag="outputs", tag_field="kind"):
    """An arm that answers from fixed outputs: scores outputs produced elsewhere.

    Give either ``outputs`` (item id to one output, or a list: one output per run, run 1 first)
    or ``path`` (a JSON object of the same shape, or JSON lines ``{"item", "output", "run"?}``)
    readable by the daemon. A file of predictions made elsewhere, one per item, is read with
    ``id_field`` and ``prediction_field`` (``hrbench.reading.outputs_arm``: JSON lines, a JSON
    list, or a SQuAD-style ``{id: prediction}`` object), with ``scale_field`` naming the rows'
    scale word (each output then also carries the stored prediction and its scale, which the
    ``tatqa`` scorer reads), or with ``format = "tatqa"`` as a TAT-QA run file
    (``hrbench.reading.tatqa_outputs``, prediction and ``pred_scale`` kept).

    Every run must have an output: an id that matches no item of the reference, an item run
    without one, or fewer outputs than runs is refused before the first run (exit 2), unless
    ``missing = "error"`` (a legitimately partial file): each run of an item without an
    output is then an ``error`` run, counted on stderr (``hrbench.reading.check_outputs``).
    """

    name: Name
    outputs: dict[ItemId, str | list[str | None] | None] | None = None
    path: str | None = None
    id_field: str | None = None
    prediction_field: str | None = None
    scale_field: str | None = None
    format: Literal["outputs", "tatqa"] = "outputs"
    missing: Literal["refuse", "error"] = "refuse"


class ImportArmSpec(_Spec, tag="import", tag_field="kind"):
    """An arm the daemon imports: an ``Arm``, a function ``fn(item, ctx)``, or a factory.

    When ``settings`` is given, the attribute is called with them as keyword arguments and must
    return an ``Arm`` or a function.
    """

    path: ImportPath
    name: Name | None = None
    settings: dict[str, Any] | None = None


ArmSpec = PromptArmSpec | ReadingArmSpec | OutputsArmSpec | ImportArmSpec


MAX_FINITE = 1.7976931348623157e308
"""The largest finite float: an upper bound that refuses ``inf`` (NaN fails ``ge=0`` already).

Newcomer finding 7: a TOML ``max_usd = inf`` passed ``ge=0`` and was sent as JSON ``null``
(JSON has no infinity), so it ran with no USD cap; it is refused here, naming the field. So is
an infinite price (finding 15)."""


class PriceSpec(_Spec):
    """A model's price in USD per million tokens (``cached_input`` defaults to ``input``)."""

    input: Annotated[float, Meta(ge=0, le=MAX_FINITE)]
    output: Annotated[float, Meta(ge=0, le=MAX_FINITE)]
    cached_input: Annotated[float, Meta(ge=0, le=MAX_FINITE)] | None = None


Prices = Annotated[
    dict[Name, PriceSpec],
    Meta(
        description="Prices of other models, by name (a `billed_as` model, a model an arm asks for), "
        "in USD per million tokens, over the daemon's price table."
    ),
]


BilledAs = Annotated[
    list[Name],
    Meta(
        description="Other models a reply may be billed as (a router, an alias of a dearer model): "
        "the governor reserves at the dearest of them and `model`."
    ),
]


class OpenAIClientSpec(_Spec, tag="openai", tag_field="kind"):
    """An OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp, ...).

    The key is read at each attempt from the environment variable ``api_key_env`` names: the
    caller's value, when the client sends it with the request (``hrb`` and the Python client
    send the variables the spec names from the caller's shell), else the daemon's own
    environment. ``null`` (``false`` in a TOML file, which has no null) sends no key (local
    servers). ``max_tokens`` is sent when a request sets
    no output limit; ``billed_as`` names the dearer models a reply may be billed as (a router,
    an alias): a USD cap reserves at the dearest of them and ``model``. ``price`` prices
    ``model`` (a local or unlisted model) over the daemon's price table (the shipped one, or
    the file ``HRBENCH_PRICES`` names in the daemon's environment): a USD cap needs a price.
    ``prices`` prices other models the same way, by name: a ``billed_as`` model, a model an
    arm asks for (newcomer finding 19: only ``HRBENCH_PRICES`` and a daemon restart could).
    """

    model: Name
    base_url: str = "https://api.openai.com/v1"
    api_key_env: EnvName | None = "OPENAI_API_KEY"
    timeout_s: Annotated[float, Meta(gt=0)] = 60.0
    max_connections: Annotated[int, Meta(ge=1)] = 100
    max_attempts: Annotated[int, Meta(ge=1, le=50)] = 5
    max_total_s: Annotated[float, Meta(gt=0)] = 300.0
    max_tokens: Annotated[int, Meta(ge=1)] | None = None
    billed_as: BilledAs = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    price: PriceSpec | None = None
    prices: Prices = field(default_factory=dict)


class AnthropicClientSpec(_Spec, tag="anthropic", tag_field="kind"):
    """The Anthropic Messages API; ``max_tokens`` is sent when a request does not set it.

    ``api_key_env``, ``price`` and ``prices`` as for :class:`OpenAIClientSpec`.
    """

    model: Name
    base_url: str = "https://api.anthropic.com/v1"
    api_key_env: EnvName | None = "ANTHROPIC_API_KEY"
    timeout_s: Annotated[float, Meta(gt=0)] = 60.0
    max_connections: Annotated[int, Meta(ge=1)] = 100
    max_attempts: Annotated[int, Meta(ge=1, le=50)] = 5
    max_total_s: Annotated[float, Meta(gt=0)] = 300.0
    max_tokens: Annotated[int, Meta(ge=1)] = 1024
    anthropic_version: str = "2023-06-01"
    billed_as: BilledAs = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    price: PriceSpec | None = None
    prices: Prices = field(default_factory=dict)


class MockClientSpec(_Spec, tag="mock", tag_field="kind"):
    """An in-daemon mock: a function ``fn(messages, params)`` by import path, or canned replies.

    Exactly one of ``function``, ``reply``, ``replies`` or ``echo`` decides the answer:
    ``replies`` maps a prompt (the last message's content) to its reply, ``default`` answers
    prompts it lacks; ``echo`` answers with the prompt.
    """

    function: ImportPath | None = None
    reply: str | None = None
    replies: dict[str, str] | None = None
    default: str | None = None
    echo: bool = False
    model: str = "mock"
    delay_s: Annotated[float, Meta(ge=0)] = 0.0


class ReplayClientSpec(_Spec, tag="replay", tag_field="kind"):
    """Answers from a stored recording, each arm with the replies it got.

    A reply matches on the arm, the request as sent (provider, endpoint, model, messages, body
    fields, reply-changing headers: as the live cache keys it) and the draw index. The
    endpoint is the recording's own unless ``base_url`` (or the fallback's) is given: a replay
    pointed at a server the recording was not made against is refused (no fallback) or misses.
    ``strict = true`` (the default) raises ``ReplayMiss`` on a missing reply, never calling the
    fallback; ``strict = false`` asks ``fallback`` on a miss and records what it fetches, and
    is refused without a fallback.
    """

    recording: Name
    strict: bool = True
    fallback: OpenAIClientSpec | AnthropicClientSpec | MockClientSpec | None = None
    model: str | None = None
    provider: str | None = None
    base_url: str | None = None


ClientSpec = OpenAIClientSpec | AnthropicClientSpec | ReplayClientSpec | MockClientSpec


class ReferenceSpec(_Spec):
    """A labelled reference given inline, or read by the daemon from ``path``.

    Inline: ``items`` is a mapping id to payload (or a list: ids ``"1"``, ``"2"``, ...);
    ``labels``, ``cluster`` and ``split`` are mappings by id, or (cluster and split) one value
    for all. Beside ``items`` given as a mapping, a list is refused: a JSON object's
    keys have no order (RFC 8259; a Lua table, a Go map or jq sends them in any order), so
    pairing by position could give an item another item's label; key it,
    ``{"labels": {"q1": "Paris", "q2": "Lima"}}``. Lists pair by position only with ``items``
    given as a list. ``hrbench_client`` and ``hrb`` (a Python dict, a TOML file: their order is
    known) send lists beside a mapping keyed by id for you. A label may be a list of accepted
    answers or ``null``.
    From a file: ``path`` with ``format`` ``"rows"`` (JSON lines or a JSON list of
    ``{"id", "item", "label", "cluster", "split"}``, or one ``{"items", "labels", ...}`` object
    under the rule above, as ``hrb ref get`` prints it), ``"squad"`` (SQuAD-style JSON/JSONL,
    read by ``hrbench.reading.qa_reference``) or ``"tatqa"`` (a TAT-QA dataset file, read by
    ``hrbench.reading.tatqa_reference``); ``limit`` keeps the first items of a file. ``ids``
    keeps only the listed item ids; ``ids_from`` keeps only the ids found in a JSON lines file
    (under ``id_field``), e.g. the questions a run of predictions answered, so arms are compared
    on the items they share.
    """

    items: dict[ItemId, Any] | list[Any] | None = None
    labels: dict[ItemId, Any] | list[Any] | None = None
    cluster: dict[ItemId, str] | list[str] | str | None = None
    split: dict[ItemId, str] | list[str] | str = "test"
    path: str | None = None
    format: Literal["rows", "squad", "tatqa"] = "rows"
    limit: Annotated[int, Meta(ge=1)] | None = None
    ids: list[ItemId] | None = None
    ids_from: str | None = None
    id_field: str = "id"


class GovernorSpec(_Spec):
    """The benchmark's budget; ``None`` means no cap on that quantity.

    ``defaults`` true: a limit left ``None`` is the default's (the daemon's
    ``default_governor``), not no cap; ``hrb bench FILE --max-usd X`` on a spec without a
    ``[governor]`` sends it, so one flag replaces one limit and the default others stay
    (newcomer finding). An empty governor without it still means no limits at all.
    """

    max_calls: Annotated[int, Meta(ge=0)] | None = None
    max_usd: Annotated[float, Meta(ge=0, le=MAX_FINITE)] | None = None
    max_tokens: Annotated[int, Meta(ge=0)] | None = None
    defaults: bool = False


class RayExecutorSpec(_Spec, tag="ray", tag_field="kind"):
    """Run the benchmark's cells on a Ray cluster (issue 17; the daemon needs ``hrbench[ray]``).

    ``address`` is ``"auto"`` (a running cluster), ``"local"`` (one started for the run),
    ``"ray://host:port"`` or ``"host:port"``. The daemon stays the driver: it alone writes the
    store and streams rows; one governor actor holds the caps for every worker.
    """

    address: str = "auto"
    num_cpus: Annotated[int, Meta(ge=1)] | None = None
    worker_concurrency: Annotated[int, Meta(ge=1)] | None = None
    batch_size: Annotated[int, Meta(ge=1)] | None = None
    max_retries: Annotated[int, Meta(ge=0)] = 3


# --------------------------------------------------------------------------------------------
# Methods


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
    the first part sent (newcomer finding). Runs that ended in an error are kept as they are,
    unless ``retry_errors`` is true (with ``resume`` only): they are run again and their new
    rows replace the old ones; what the failed attempts spent stays spent (newcomer finding).
    ``concurrency`` is how many (arm, item) pairs run at once: 16 when not given; a resume
    keeps the benchmark's own unless it is given (newcomer finding: a resume took the caller's
    default 16 instead of the spec's 8). A benchmark is cancelled (resumable, its rows kept) when the
    connection that submitted it closes, unless ``detach`` is true: it then runs to its end
    whoever listens (``benchmark/cancel`` stops it; newcomer finding).
    ``scorer`` decides each row right or wrong; ``metrics`` names graded scores reported beside
    its accuracy in the summary (``tatqa``: the official TAT-QA EM and F1; ``squad``: SQuAD
    v2.0 EM and F1; ``answer_contains``: seed 001's scorer as a side column; or
    ``package.module:function``). ``executor`` says where the cells run:
    ``"local"`` (the daemon's process) or a Ray cluster (``"ray"`` or a :class:`RayExecutorSpec`).
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
                "The seed of the arms' private random stream `ctx.rng` (seed 002), derived per (seed, arm, "
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
    failed model call, an arm that raised). ``usd`` sums every row (``None`` when a model had
    no price): what was paid, 0 for cache and recording hits; ``usd_list`` the same at list price,
    each reply at what it cost when first paid (issue 18). ``metrics``: the mean of each benchmark metric (the spec's ``metrics``), averaged
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
    usd: float | None = 0.0
    usd_list: float | None = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    metrics: dict[str, float | None] = field(default_factory=dict)
    error_causes: dict[str, int] = field(default_factory=dict)


class BenchmarkResult(Struct, kw_only=True):
    """Result of ``benchmark``: the id (for ``benchmark/rows``, ``report``, resume) and summary.

    ``status`` is ``done``, ``budget_stopped`` when the governor stopped runs (each counted
    wrong, seed 002; ``text`` says how many), or ``errors`` when runs ended in errors, all or
    some (counted wrong too; ``text`` says how many and the commonest cause; newcomer finding).
    ``stop_note`` says how many and how to resume: the note ``hrb ls``, the report and the view
    show (newcomer finding).
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
    Decided (issue 15, point 6): a batch per notification, not a row, so that streaming costs
    the daemon and the client one message per batch (protocol 2; protocol 1 sent ``hrbench/row``
    with one ``row`` each).
    """

    request_id: int | str | None
    benchmark: str
    rows: list[Row]


class ProgressNotification(Struct, kw_only=True):
    """``hrbench/progress``: rows done of the total, for the benchmark of ``request_id``.

    ``usd`` and ``calls`` are the governor's use so far (USD settled, requests sent);
    ``max_usd`` and ``max_calls`` its caps (``None``: no cap).
    """

    request_id: int | str | None
    benchmark: str
    done: int
    total: int
    usd: float = 0.0
    max_usd: float | None = None
    calls: int = 0
    max_calls: int | None = None


class ScoreParams(_Spec):
    """Params of ``score``: score one output against a label with a named scorer.

    ``scorer`` is a built-in name (``exact``, ``answer_contains``) or ``package.module:function``.
    """

    output: str | None
    label: Any = None
    item: Any = None
    scorer: str = "exact"
    settings: dict[str, Any] = field(default_factory=dict)


class ScoreResult(Struct, kw_only=True):
    """A scorer's verdict (seed 000)."""

    correct: bool | None
    outcome: str | None = None
    failure_kind: str | None = None
    scorer: str = ""


class EvalModuleSpec(_Spec):
    """The module of ``evaluate``: a signature, and a model or a function.

    A model module has ``instructions`` and sampling ``params``; a plain-function module has
    ``fn``, a ``package.module:function`` the daemon imports.
    """

    signature: Annotated[str, Meta(description="e.g. `text -> sentiment: enum('positive', 'negative')`")]
    instructions: str | None = None
    fn: ImportPath | None = None
    params: dict[str, Any] = field(default_factory=dict)
    name: str | None = None


class EvalMetricSpec(_Spec):
    """The metric of ``evaluate``: a built-in name or an import path.

    Built-ins: ``exact_match``, ``f1``, ``contains``, ``field_match``, ``tatqa_exact_match``,
    ``tatqa_f1`` (the official TAT-QA metric); ``threshold`` turns the metric into a pass mark.
    """

    name: str = "exact_match"
    field: str | None = None
    column: str | None = None
    fields: list[str] | None = None
    normalise: Annotated[
        bool | Literal["squad", "numbers"],
        Meta(
            description='`true`/`"squad"`: SQuAD v2.0 (drops signs, points, articles); `"numbers"`: keeps them'
        ),
    ] = True
    threshold: float | None = None


class EvaluateParams(_Spec):
    """Params of ``evaluate`` (seed 003): a module, data rows, a metric, epochs.

    Mirrors ``hrbench.evaluate.EvaluateSpec``; ``client`` answers a model module's calls;
    ``python_path`` as for ``benchmark``.
    """

    module: EvalModuleSpec
    data: list[dict[str, Any]]
    metric: str | EvalMetricSpec = "exact_match"
    client: ClientSpec | None = None
    epochs: Annotated[int, Meta(ge=1)] = 1
    concurrency: Annotated[int, Meta(ge=1)] = 8
    return_format: Literal["structured", "simple"] = "structured"
    cache: bool = True
    trace_context: Any = None
    python_path: list[str] = field(default_factory=list)
    env: CallerEnv = field(default_factory=dict)


class EvaluateResult(Struct, kw_only=True):
    """The seed-003 result fields, as JSON."""

    result: dict[str, Any]


class ReferencePutParams(_Spec):
    """Params of ``reference/put``: store a reference under a name (and its content hash)."""

    reference: ReferenceSpec
    name: Name | None = None


class ReferenceInfo(Struct, kw_only=True):
    """A stored reference: name, content hash, size, when it was put (ISO 8601, UTC).

    ``new`` (``reference/put`` only, else ``None``): ``True`` when this content was not stored
    before, ``False`` when it was (only the name was added) (decided, newcomer: put said
    ``created: null``). ``replaced`` (``reference/put`` only): the content hash the name
    pointed at before this put, when it was another one (newcomer finding 18: a put rebinding a
    name was silent); ``hrb ref put`` says ``old -> new`` on stderr.
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
    """Params of ``cache/clear``: delete response-cache entries (newcomer finding 20).

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
    """

    id: str
    offset: Annotated[int, Meta(ge=0)] = 0
    limit: Annotated[int, Meta(ge=1, le=1_000_000)] | None = None
    traces: bool = False
    item: str | None = None
    arm: str | None = None


class BenchmarkInfo(Struct, kw_only=True):
    """A stored benchmark's header."""

    id: str
    status: str
    n_rows: int
    total: int | None = None
    created: str | None = None
    name: str | None = None


class BenchmarkRowsResult(Struct, kw_only=True):
    """Rows of a stored benchmark in the seed's order, and the traces when asked."""

    benchmark: BenchmarkInfo
    rows: list[Row]
    traces: dict[str, list[Step]] | None = None


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
    spec. ``created`` is ISO 8601 UTC. ``usd`` and ``calls`` (requests sent, retries included;
    an attempt that could not connect is none) are the governor's use as stored
    (kept per call: reservations in flight, or left open by a crash, counted as spent; ``None``
    before the first call; ``usd`` ``None`` too when a model had no price, as in the report,
    seed 002), ``tokens`` the tokens counted against the token cap likewise, ``max_usd``,
    ``max_calls`` and ``max_tokens`` the caps in force (``None``: no cap; newcomer finding:
    ``max_tokens`` was never shown), ``default_limits`` ``True`` when they are the defaults
    (no governor in the spec, seed 002: 400 calls, $5, no token cap unless
    ``HRBENCH_MAX_TOKENS`` sets one; ``None`` for a benchmark stored before the limits were kept). ``unknown_usd`` and
    ``unknown_calls``: the part of that use that was in flight when a run of it crashed or was
    cancelled (counted at the cancel), so unknown, at most that much (issue 13, newcomer
    finding; 0 or ``None`` when none); ``unknown_note`` says it in words, telling what a cancel
    left ("cancelled in flight") from what a crash left ("in flight at a crash").
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


# --------------------------------------------------------------------------------------------
# Browsing stored benchmarks (``hrb view``): read-only, built by ``hrbench.browse``


Level = Annotated[float, Meta(gt=0, lt=1, description="confidence level of the intervals, e.g. 0.95")]


class BenchmarkViewParams(_Spec):
    """Params of ``benchmark/view``: one benchmark's arm table and paired differences.

    ``against`` names the arm the others are compared with (default: the first arm).
    """

    id: str
    against: str | None = None
    level: Level = 0.95
    method: Literal["cluster", "bootstrap"] = "cluster"


class ArmView(Struct, kw_only=True):
    """One arm's line of the arm table: the report's numbers plus tokens and seconds.

    ``accuracy``/``ci_low``/``ci_high``/``se`` as in ``hrbench.stats.ArmReport``; ``failures``
    counts labelled reportable runs by failure kind (kinds with no run left out); ``usd`` in US
    dollars (``None`` when a run had no price, as in the report), ``usd_list`` the same at list
    price (each reply at what it cost when first paid: cache and recording hits included; issue
    18); ``usd_per_run`` (with its interval) and ``accuracy_per_usd`` are at that list price, so
    arms compare by cost whatever the cache held. ``seconds`` wall-clock summed over the arm's
    rows, tokens summed over its rows.
    ``metrics``: the benchmark metrics' means from the stored summary (the spec's ``metrics``,
    e.g. SQuAD EM and F1; no interval; empty until the benchmark ends or without metrics).
    """

    arm: str
    accuracy: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    n_clusters: int
    runs: int
    n_runs: int
    failures: dict[str, int]
    tokens_in: int
    tokens_out: int
    usd: float | None
    usd_unpriced: int
    usd_per_run: float | None
    usd_per_run_low: float | None
    usd_per_run_high: float | None
    seconds: float
    dev_accuracy: float | None = None
    metrics: dict[str, float | None] = field(default_factory=dict)
    usd_list: float | None = None
    accuracy_per_usd: float | None = None
    accuracy_per_usd_low: float | None = None
    accuracy_per_usd_high: float | None = None


class Difference(Struct, kw_only=True):
    """A paired difference ``diff = arm - against`` on the items both ran.

    ``p_holm`` is Holm-adjusted over the pairs compared together (``None`` for a single one);
    ``descriptive``: fewer than 5 runs per item, the interval covers the sampling of items only;
    ``note``: how to read it, or why there is no interval (``hrbench.stats.Comparison.note``).
    """

    arm: str
    against: str
    diff: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_holm: float | None
    n_items: int
    n_clusters: int
    accuracy_a: float | None
    accuracy_b: float | None
    level: float
    descriptive: bool
    note: str | None = None


class BenchmarkViewResult(Struct, kw_only=True):
    """One benchmark: header, arm table, differences against ``against``, the full report payload.

    ``report`` is ``hrbench.stats.report_payload``'s dict with ``descriptive=True`` (``None``
    while the benchmark has no rows); ``note`` and ``text`` are its note and text.
    """

    benchmark: BenchmarkListing
    arms: list[ArmView]
    against: str | None
    differences: list[Difference]
    descriptive: bool
    level: float
    method: str
    note: str
    text: str
    report: dict[str, Any] | None


class BenchmarkMatrixParams(_Spec):
    """Params of ``benchmark/matrix``: the item x arm matrix, filtered and paged.

    ``disagree`` keeps the items where the arms' mean correctness over runs differs;
    ``failure_kind`` those where some run failed with that kind.
    """

    id: str
    cluster: str | None = None
    failure_kind: str | None = None
    split: str | None = None
    disagree: bool = False
    offset: Annotated[int, Meta(ge=0)] = 0
    limit: Annotated[int, Meta(ge=0)] | None = None


class MatrixCell(Struct, kw_only=True):
    """One arm on one item: mean correctness over runs (``None`` if unlabelled), runs, kinds."""

    mean: float | None
    n: int
    failure_kinds: dict[str, int]


class MatrixItem(Struct, kw_only=True):
    """One item's line of the matrix; ``cells`` align with the result's ``arms`` (``None``: not run)."""

    item: str
    cluster: str
    split: str
    disagree: bool
    cells: list[MatrixCell | None]


class BenchmarkMatrixResult(Struct, kw_only=True):
    """The matrix page, ``n_items`` matching of ``n_items_total``, and the filters' choices."""

    arms: list[str]
    items: list[MatrixItem]
    n_items: int
    n_items_total: int
    clusters: list[str]
    splits: list[str]
    failure_kinds: list[str]


class BenchmarkCellParams(_Spec):
    """Params of ``benchmark/cell``: every run of one arm on one item, with traces."""

    id: str
    item: str
    arm: str


class CellRun(Struct, kw_only=True):
    """One run and its trace (each request and reply, finish reason, usage, source)."""

    row: Row
    trace: list[Step]


class BenchmarkCellResult(Struct, kw_only=True):
    """One cell: the item's payload and label, every run, and the ``hrb rows`` line printing it."""

    benchmark: BenchmarkListing
    item: str
    arm: str
    cluster: str
    split: str
    payload: Any = None
    label: Any = None
    runs: list[CellRun]
    command: str


class BenchmarkCompareParams(_Spec):
    """Params of ``benchmark/compare``: two benchmarks on the same reference (hash), per arm."""

    a: str
    b: str
    level: Level = 0.95
    method: Literal["cluster", "bootstrap"] = "cluster"


class BenchmarkCompareResult(Struct, kw_only=True):
    """Per arm name in both benchmarks, the paired difference ``b - a`` (Holm over the arms)."""

    a: BenchmarkListing
    b: BenchmarkListing
    reference_hash: str
    differences: list[Difference]
    only_a: list[str]
    only_b: list[str]
    descriptive: bool


class StatusParams(_Spec):
    """Params of ``status`` (none)."""


class StatusResult(Struct, kw_only=True):
    """The daemon's state.

    ``cancel_grace_s``: how long a cancel, Ctrl-C in ``hrb bench``, a closed connection or the
    daemon's stop lets the requests already sent finish (``HRBENCH_CANCEL_GRACE_S`` of the
    daemon, else 10 s); ``hrb daemon stop`` waits that long more when benchmarks run.
    """

    protocol_version: int
    version: str
    pid: int
    uptime_s: float
    connections: int
    running: list[str]
    home: str
    transport: str
    idle_exit_s: float | None = None
    cancel_grace_s: float | None = None


class ShutdownParams(_Spec):
    """Params of ``shutdown`` (none; ``null`` is accepted as none).

    Without ``initialize`` on the connection, the daemon stops after answering
    (:class:`ShutdownResult`). After ``initialize`` (an LSP client), it is LSP's ``shutdown``:
    the answer is ``null``, later requests are refused, and the ``exit`` notification ends the
    connection (over stdio, the process).
    """


class ShutdownResult(Struct, kw_only=True):
    """Acknowledges ``shutdown`` (``null`` instead, after ``initialize``)."""

    ok: bool = True


class InitializeParams(Struct, kw_only=True):
    """Params of ``initialize``: LSP's ``InitializeParams``; every field is optional and unread.

    Sending ``initialize`` is optional for hrbench's own clients; LSP clients send it first.
    """

    processId: int | None = None  # noqa: N815 - LSP's spelling
    clientInfo: dict[str, Any] | None = None  # noqa: N815
    capabilities: dict[str, Any] = field(default_factory=dict)


class HrbenchCapabilities(Struct, kw_only=True):
    """What the server offers, under ``capabilities.experimental.hrbench`` of ``initialize``."""

    protocolVersion: int  # noqa: N815 - LSP's spelling
    methods: list[str] = field(default_factory=list)
    notifications: list[str] = field(default_factory=list)


class ServerExperimental(Struct, kw_only=True):
    """``capabilities.experimental``: hrbench's own capabilities."""

    hrbench: HrbenchCapabilities


class ServerCapabilities(Struct, kw_only=True):
    """The LSP ``ServerCapabilities`` hrbench announces (no document features; custom requests)."""

    experimental: ServerExperimental


class ServerInfo(Struct, kw_only=True):
    """LSP ``serverInfo``."""

    name: str
    version: str


class InitializeResult(Struct, kw_only=True):
    """LSP's ``InitializeResult``: the server's name and version, and its methods."""

    capabilities: ServerCapabilities
    serverInfo: ServerInfo  # noqa: N815 - LSP's spelling


class AuthParams(_Spec):
    """Params of ``auth``: the first message on a TCP connection, carrying the token file's content."""

    token: str


class AuthResult(Struct, kw_only=True):
    """Acknowledges ``auth``."""

    ok: bool = True


class ErrorData(Struct, kw_only=True, omit_defaults=True):
    """``error.data`` of every hrbench JSON-RPC error: the exception's class name and context."""

    name: str
    field: str | None = None
    limit: str | None = None
    context: dict[str, Any] | None = None


METHODS: dict[str, tuple[type[Struct], type[Struct]]] = {
    "benchmark": (BenchmarkParams, BenchmarkResult),
    "score": (ScoreParams, ScoreResult),
    "evaluate": (EvaluateParams, EvaluateResult),
    "reference/put": (ReferencePutParams, ReferenceInfo),
    "reference/get": (ReferenceGetParams, ReferenceSpec),
    "reference/list": (ReferenceListParams, ReferenceListResult),
    "recording/import": (RecordingImportParams, RecordingImportResult),
    "recording/export": (RecordingExportParams, RecordingExportResult),
    "cache/stats": (CacheStatsParams, CacheStatsResult),
    "cache/clear": (CacheClearParams, CacheClearResult),
    "benchmark/rows": (BenchmarkRowsParams, BenchmarkRowsResult),
    "benchmark/list": (BenchmarkListParams, BenchmarkListResult),
    "benchmark/delete": (BenchmarkDeleteParams, BenchmarkDeleteResult),
    "benchmark/cancel": (BenchmarkCancelParams, BenchmarkCancelResult),
    "gc": (GcParams, GcResult),
    "report": (ReportParams, ReportResult),
    "benchmark/view": (BenchmarkViewParams, BenchmarkViewResult),
    "benchmark/matrix": (BenchmarkMatrixParams, BenchmarkMatrixResult),
    "benchmark/cell": (BenchmarkCellParams, BenchmarkCellResult),
    "benchmark/compare": (BenchmarkCompareParams, BenchmarkCompareResult),
    "status": (StatusParams, StatusResult),
    "shutdown": (ShutdownParams, ShutdownResult),
    "auth": (AuthParams, AuthResult),
    "initialize": (InitializeParams, InitializeResult),
}
"""Every request method: ``name -> (params Struct, result Struct)``."""

NOTIFICATIONS: dict[str, type[Struct]] = {
    "hrbench/rows": RowsNotification,
    "hrbench/progress": ProgressNotification,
}
"""Every server-to-client notification: ``name -> params Struct``."""

ERROR_CODES: dict[str, int] = {
    "ParseError": -32700,
    "InvalidRequest": -32600,
    "MethodNotFound": -32601,
    "InvalidParams": -32602,
    "InternalError": -32603,
    "Unauthorized": -32098,
    "RequestCancelled": -32800,
    "HrbenchError": -32000,
    "ConfigError": -32001,
    "ReferenceValueError": -32002,
    "SignatureError": -32003,
    "ReferenceLocked": -32004,
    "ScorerError": -32005,
    "BudgetRefused": -32006,
    "DuplicateDrawError": -32007,
    "ReplayMiss": -32008,
    "ModelError": -32009,
    "TooFewRunsError": -32010,
    "NotFound": -32011,
    "CodeRefused": -32020,
    "StoreError": -32021,
    "StoreGone": -32022,
    "StoreFull": -32023,
    "StoreCorrupt": -32024,
    "StoreReadOnly": -32025,
    "BenchmarkRunning": -32026,
    "BenchmarkCancelled": -32028,
    "DaemonStopped": -32027,
}
"""Stable JSON-RPC error codes by error name (library codes match ``hrbench.errors``)."""


# --------------------------------------------------------------------------------------------
# Errors of decoding


def _walk(typ: Any) -> list[Any]:
    """The types ``typ`` may be: ``Annotated`` and unions unwrapped."""
    import typing

    origin = typing.get_origin(typ)
    if origin is Annotated:
        return _walk(typing.get_args(typ)[0])
    if origin is typing.Union or type(typ).__name__ == "UnionType":
        return [t for arg in typing.get_args(typ) for t in _walk(arg)]
    return [typ]


def _fields_at(typ: Any, path: str, data: Any) -> list[str]:
    """The field names of the Structs at a msgspec error path (``.client``, ``.arms[1]``)."""
    import re
    import typing

    types, at = _walk(typ), data
    for name, index in re.findall(r"\.(\w+)|\[([^\]]*)\]", path):
        step: list[Any] = []
        for t in types:
            if name and isinstance(t, type) and issubclass(t, Struct):
                step += [f.type for f in msgspec.structs.fields(t) if f.encode_name == name]
            elif index and typing.get_origin(t) in (list, dict):
                step.append(typing.get_args(t)[-1])
        types = [t for s in step for t in _walk(s)]
        if name:
            at = at.get(name) if isinstance(at, dict) else None
        else:
            at = at[int(index)] if index.isdigit() and isinstance(at, list) and int(index) < len(at) else None
    structs = [t for t in types if isinstance(t, type) and issubclass(t, Struct)]
    kind = at.get("kind") if isinstance(at, dict) else None
    tagged = [t for t in structs if kind is not None and t.__struct_config__.tag == kind]
    names: list[str] = []
    for t in tagged or structs:
        tag_field = t.__struct_config__.tag_field
        for n in ([tag_field] if tag_field else []) + [f.encode_name for f in msgspec.structs.fields(t)]:
            if n not in names:
                names.append(n)
    return names


def unknown_field_hint(message: str, typ: Any, data: Any = None) -> str:
    """A msgspec error message, with the closest field name when it is about an unknown field.

    Decided (newcomer finding: unchecked fields failed late): msgspec says ``Object contains
    unknown field `base_ur` - at `$.client```; this adds ``(did you mean `base_url`?)`` from the
    fields of the Struct there (of the ``kind`` the object gives, when ``data`` holds it).
    ``hrb`` and the daemon both say it.

    Args:
        message: the error's message.
        typ: the type that was decoded (``BenchmarkParams``).
        data: what was decoded (a dict or JSON bytes), to tell a tagged union's member.

    Example:
        >>> unknown_field_hint("Object contains unknown field `rusn`", BenchmarkParams)
        'Object contains unknown field `rusn` (did you mean `runs`?)'
    """
    import difflib
    import re

    m = re.fullmatch(r"Object contains unknown field `([^`]*)`(?: - at `\$(.*)`)?", message, re.S)
    if m is None:
        return message
    if isinstance(data, (bytes, bytearray, memoryview, msgspec.Raw)):
        try:
            data = msgspec.json.decode(bytes(data))
        except msgspec.DecodeError:
            data = None
    close = difflib.get_close_matches(m.group(1), _fields_at(typ, m.group(2) or "", data), n=1)
    return f"{message} (did you mean `{close[0]}`?)" if close else message


# --------------------------------------------------------------------------------------------
# JSON Schema


def _file_stem(method: str) -> str:
    return method.replace("/", ".")


def schemas() -> dict[str, bytes]:
    """Build the JSON Schema files of every method and notification.

    Returns:
        ``file name -> pretty-printed JSON``: ``<method>.params.schema.json``,
        ``<method>.result.schema.json``, ``<notification>.schema.json`` and a bundle
        ``hrbench.schema.json`` holding every definition under ``$defs``.
    """
    dialect = "https://json-schema.org/draft/2020-12/schema"
    out: dict[str, bytes] = {}

    def dump(obj: Any) -> bytes:
        return msgspec.json.format(msgspec.json.encode(obj), indent=2) + b"\n"

    for method, (params, result) in METHODS.items():
        for part, typ in (("params", params), ("result", result)):
            schema = {"$schema": dialect, "title": f"{method} {part}", **msgspec.json.schema(typ)}
            out[f"{_file_stem(method)}.{part}.schema.json"] = dump(schema)
    for name, typ in NOTIFICATIONS.items():
        schema = {"$schema": dialect, "title": name, **msgspec.json.schema(typ)}
        out[f"{_file_stem(name)}.schema.json"] = dump(schema)
    types: list[Any] = [t for pair in METHODS.values() for t in pair] + list(NOTIFICATIONS.values())
    types.append(ErrorData)
    refs, defs = msgspec.json.schema_components(types, ref_template="#/$defs/{name}")
    bundle = {
        "$schema": dialect,
        "title": "hrbench JSON-RPC protocol",
        "description": f"protocol version {PROTOCOL_VERSION}",
        "methods": {m: {"params": refs[i * 2], "result": refs[i * 2 + 1]} for i, m in enumerate(METHODS)},
        "notifications": {n: refs[2 * len(METHODS) + i] for i, n in enumerate(NOTIFICATIONS)},
        "errors": {"codes": ERROR_CODES, "data": refs[-1]},
        "$defs": defs,
    }
    out["hrbench.schema.json"] = dump(bundle)
    return out


def _main(argv: list[str] | None = None) -> int:
    import sys
    from pathlib import Path

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python -m hrbench_client.protocol SCHEMA_DIR", file=sys.stderr)
        return 2
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    files = schemas()
    for stale in out.glob("*.schema.json"):
        if stale.name not in files:
            stale.unlink()
    for name, data in files.items():
        (out / name).write_bytes(data)
    print(f"wrote {len(files)} schema files to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
