"""Specs, which cross the wire instead of code: arms, prices, model clients, references, the governor, the executor."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, field

from hrbench_client.protocol._base import EnvName, ImportPath, ItemId, Name, _Spec

__all__ = [
    "AnthropicClientSpec",
    "ArmSpec",
    "BilledAs",
    "ClientSpec",
    "GovernorSpec",
    "ImportArmSpec",
    "MAX_FINITE",
    "MockClientSpec",
    "OpenAIClientSpec",
    "OutputsArmSpec",
    "FreePrice",
    "PriceSpec",
    "PriceTierSpec",
    "Prices",
    "PromptArmSpec",
    "RayExecutorSpec",
    "ReadingArmSpec",
    "ReferenceSpec",
    "ReplayClientSpec",
    "SweepSpec",
]


ReasoningEffort = Annotated[
    Literal["none", "minimal", "low", "medium", "high", "xhigh"],
    Meta(description="OpenAI's reasoning_effort, sent with every request of the arm"),
]

ThinkingBudget = Annotated[
    int,
    Meta(
        ge=1,
        description="Anthropic's thinking budget_tokens (tokens; the API needs >= 1024 and < max_tokens)",
    ),
]


class SweepSpec(_Spec):
    """One arm per value (per combination, with both): ``{reasoning_effort = ["low", "high"]}``."""

    reasoning_effort: Annotated[list[ReasoningEffort], Meta(min_length=1)] | None = None
    thinking_budget: Annotated[list[ThinkingBudget], Meta(min_length=1)] | None = None


Sweep = SweepSpec


class PromptArmSpec(_Spec, tag="prompt", tag_field="kind"):
    """An arm that sends one prompt per run and answers with the reply.

    The template is formatted with ``{item}`` (the item's payload) and, when the payload is a
    mapping, with each of its keys (``{question}``, ``{document}``). Write ``{{`` for a brace.
    A template that names none is refused: every item would get the same prompt (``system`` is
    sent as written).

    ``tools`` names Python functions the model may call (tool name -> ``package.module:function``:
    code, refused over TCP as an import arm is); the arm then runs a tool loop of at most
    ``max_steps`` model turns (``hrbench.tool_loop``), every turn draw-keyed, cached, governed
    and traced. ``reasoning_effort`` (OpenAI) and ``thinking_budget`` (Anthropic's thinking
    ``budget_tokens``) are sent with every request; ``sweep`` makes one arm per value of one or
    both, named ``NAME-VALUE``.
    """

    name: Name
    template: Annotated[str, Meta(description="Prompt template, e.g. `Capital of {item}?`")]
    system: str | None = None
    model: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    tools: dict[Annotated[str, Meta(pattern="^[A-Za-z0-9_-]{1,64}$")], ImportPath] | None = None
    max_steps: Annotated[int, Meta(ge=1, le=1000)] = 8
    reasoning_effort: ReasoningEffort | None = None
    thinking_budget: ThinkingBudget | None = None
    sweep: Sweep | None = None
    version: Annotated[
        str,
        Meta(
            description=(
                "The arm's version: recorded with the benchmark and part of the arm's hash (a resume "
                "refuses a changed arm), not of the cache key, which is the request as sent, the arm's "
                "name and the draw index (hrbench's rule): a version bump that sends the same request is "
                "served the cached replies; change the request, or run with `cache = false`, for fresh ones"
            )
        ),
    ] = "1"


class ReadingArmSpec(_Spec, tag="reading", tag_field="kind"):
    """A reading recipe (``direct``, ``chunked``, ``retrieve``) with its settings.

    ``reasoning_effort``, ``thinking_budget`` and ``sweep`` as for a prompt arm.
    """

    recipe: Name
    name: Name | None = None
    model: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    reasoning_effort: ReasoningEffort | None = None
    thinking_budget: ThinkingBudget | None = None
    sweep: Sweep | None = None


class OutputsArmSpec(_Spec, tag="outputs", tag_field="kind"):
    """An arm that answers from fixed outputs: scores outputs produced elsewhere.

    Give either ``outputs`` (item id to one output, or a list: one output per run, run 1 first)
    or ``path`` (a JSON object of the same shape, or JSON lines ``{"item", "output", "run"?}``)
    readable by the daemon. A file of predictions made elsewhere, one per item, is read with
    ``id_field`` and ``prediction_field`` (``hrbench.reading.outputs_arm``: JSON lines, a JSON
    list, or a SQuAD-style ``{id: prediction}`` object), with ``scale_field`` naming the rows'
    scale word (each output then also carries the stored prediction and its scale, which the
    ``tatqa`` scorer reads), or with ``format = "tatqa"`` as a TAT-QA run file
    (``hrbench.reading.tatqa_outputs``, prediction and ``pred_scale`` kept). Another tool's
    results are read with ``format`` ``"inspect"`` (an Inspect eval log, ``.json`` or ``.eval``),
    ``"lm-eval"`` (an lm-eval ``samples_*.jsonl``) or ``"promptfoo"`` (promptfoo's results JSON,
    the item id from the test variable ``id_var`` names, default ``id``; ``id_field`` is read
    the same way); ``source_arm`` picks one
    of the file's arms when it holds several (lm-eval: a filter; promptfoo: ``PROVIDER | PROMPT``).

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
    format: Literal["outputs", "tatqa", "inspect", "lm-eval", "promptfoo"] = "outputs"
    missing: Literal["refuse", "error"] = "refuse"
    source_arm: str | None = None
    id_var: Annotated[str, Meta(min_length=1)] | None = None


class ImportArmSpec(_Spec, tag="import", tag_field="kind"):
    """An arm the daemon imports: an ``Arm``, a function ``fn(item, ctx)``, or a factory.

    When ``settings`` is given, the attribute is called with them as keyword arguments and must
    return an ``Arm`` or a function. ``reasoning_effort``, ``thinking_budget`` and ``sweep`` as
    for a prompt arm: they apply to every request the arm's runs make through ``ctx.call``.
    """

    path: ImportPath
    name: Name | None = None
    settings: dict[str, Any] | None = None
    reasoning_effort: ReasoningEffort | None = None
    thinking_budget: ThinkingBudget | None = None
    sweep: Sweep | None = None


ArmSpec = PromptArmSpec | ReadingArmSpec | OutputsArmSpec | ImportArmSpec


MAX_FINITE = 1.7976931348623157e308
"""The largest finite float: an upper bound that refuses ``inf`` (NaN fails ``ge=0`` already).

A TOML ``max_usd = inf`` passes ``ge=0`` and would be sent as JSON ``null`` (JSON has no
infinity), so it would run with no USD cap; it is refused here, naming the field. So is an
infinite price."""


Rate = Annotated[float, Meta(ge=0, le=MAX_FINITE, description="USD per million tokens")]


class PriceTierSpec(_Spec):
    """The rates of every token of a request whose prompt has more than ``above`` tokens (a long-context price)."""

    above: Annotated[int, Meta(ge=0, description="prompt tokens, e.g. 200000")]
    input: Rate
    output: Rate
    cached_input: Rate | None = None


class PriceSpec(_Spec):
    """A model's price in USD per million tokens (``cached_input`` defaults to ``input``).

    ``tiers``: dearer rates for requests whose prompt passes a size, in ascending ``above``.
    A rate of 0 for a model the daemon's table prices is refused: write ``price = "free"``
    to declare a model free.
    """

    input: Rate
    output: Rate
    cached_input: Rate | None = None
    tiers: list[PriceTierSpec] | None = None


FreePrice = Annotated[
    Literal["free"], Meta(description='"free" declares the model free: every rate 0, never refused')
]

Prices = Annotated[
    dict[Name, PriceSpec | FreePrice],
    Meta(
        description="Prices of other models, by name (a `billed_as` model, a model an arm asks for), "
        'in USD per million tokens, over the daemon\'s price table; "free" declares one free.'
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
    the file ``HRBENCH_PRICES`` names in the daemon's environment): a USD cap needs a price;
    ``price = "free"`` declares the model free (a rate of 0 for a model the table prices is
    refused otherwise). ``prices`` prices other models the same way, by name: a ``billed_as``
    model, a model an arm asks for.
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
    price: PriceSpec | FreePrice | None = None
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
    price: PriceSpec | FreePrice | None = None
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
    ``hrbench.reading.tatqa_reference``), or another tool's results: ``"inspect"``, ``"lm-eval"``
    or ``"promptfoo"`` (the items and targets of the file an outputs arm of that format reads;
    promptfoo's item ids from the test variable ``id_var`` names, default ``id``);
    ``limit`` keeps the first items of a file. ``ids``
    keeps only the listed item ids; ``ids_from`` keeps only the ids found in a JSON lines file
    (under ``id_field``), e.g. the questions a run of predictions answered, so arms are compared
    on the items they share.
    """

    items: dict[ItemId, Any] | list[Any] | None = None
    labels: dict[ItemId, Any] | list[Any] | None = None
    cluster: dict[ItemId, str] | list[str] | str | None = None
    split: dict[ItemId, str] | list[str] | str = "test"
    path: str | None = None
    format: Literal["rows", "squad", "tatqa", "inspect", "lm-eval", "promptfoo"] = "rows"
    limit: Annotated[int, Meta(ge=1)] | None = None
    ids: list[ItemId] | None = None
    ids_from: str | None = None
    id_field: str = "id"
    id_var: Annotated[str, Meta(min_length=1)] | None = None


class GovernorSpec(_Spec):
    """The benchmark's budget; ``None`` means no cap on that quantity.

    ``defaults`` true: a limit left ``None`` is the default's (the daemon's
    ``default_governor``), not no cap; ``hrb bench FILE --max-usd X`` on a spec without a
    ``[governor]`` sends it, so one flag replaces one limit and the default others stay
    An empty governor without it still means no limits at all.

    ``max_calls_per_run``, ``max_usd_per_run`` and ``max_tokens_per_run`` cap each run (one arm
    on one item, one draw) apart, reserved before each request as the benchmark's caps are: a
    run that would pass one ends ``budget_stop`` with its partial trace (a multi-call arm, a
    tool loop), and the other runs go on.
    """

    max_calls: Annotated[int, Meta(ge=0)] | None = None
    max_usd: Annotated[float, Meta(ge=0, le=MAX_FINITE)] | None = None
    max_tokens: Annotated[int, Meta(ge=0)] | None = None
    defaults: bool = False
    max_calls_per_run: Annotated[int, Meta(ge=0, description="the most requests one run sends")] | None = None
    max_usd_per_run: (
        Annotated[float, Meta(ge=0, le=MAX_FINITE, description="the most one run spends, USD")] | None
    ) = None
    max_tokens_per_run: Annotated[int, Meta(ge=0, description="the most tokens one run spends")] | None = None


class RayExecutorSpec(_Spec, tag="ray", tag_field="kind"):
    """Run the benchmark's cells on a Ray cluster (the daemon needs ``hrbench[ray]``).

    ``address`` is ``"auto"`` (a running cluster), ``"local"`` (one started for the run),
    ``"ray://host:port"`` or ``"host:port"``. The daemon stays the driver: it alone writes the
    store and streams rows; one governor actor holds the caps for every worker.
    """

    address: str = "auto"
    num_cpus: Annotated[int, Meta(ge=1)] | None = None
    worker_concurrency: Annotated[int, Meta(ge=1)] | None = None
    batch_size: Annotated[int, Meta(ge=1)] | None = None
    max_retries: Annotated[int, Meta(ge=0)] = 3
