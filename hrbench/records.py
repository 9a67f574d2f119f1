"""msgspec Structs that cross a boundary: requests, replies, trace steps, scores and rows.

``None`` plays R's ``NA`` throughout (seed 002). Persisted records carry a ``version`` field
where they are stored on their own.

Every record here is made with ``gc=False`` (msgspec's "Disabling Garbage Collection"): a record
holds strings, numbers, other records and the messages of a request, never itself, so it can form
no reference cycle, and the garbage collector need not track it. A benchmark keeps a row and a
trace step per run; tracked, each full collection walked every one of them.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from hrbench._util.messages import model_error
from hrbench.errors import ReasoningExhausted

__all__ = [
    "FAILURE_KINDS",
    "OUTPUT_SOURCE",
    "REFUSAL_REASONS",
    "Answer",
    "Billed",
    "Grade",
    "Request",
    "Result",
    "Row",
    "Score",
    "Step",
    "ToolCall",
    "Usage",
    "list_usd",
    "run_output",
    "usd_text",
]

FAILURE_KINDS = (
    "parse_failure",
    "refusal",
    "not_in_document",
    "wrong",
    "budget_stop",
    "error",
    "reasoning_exhausted",
)
"""The failure kinds of seed 000, in no particular order, and ``reasoning_exhausted``.

``reasoning_exhausted``: the model spent the whole output limit reasoning and returned no
answer (OpenAI ``finish_reason: length`` with empty content and reasoning tokens; Anthropic
``stop_reason: max_tokens`` with thinking and no text). Like ``error`` it counts against the
arm's accuracy (seed 002 counts failed runs as not correct), and like ``error`` no scorer sees
it: it is never ``wrong``. Its tokens and USD are the row's (litellm-docs #559, ollama #17561).
"""

REFUSAL_REASONS = frozenset({"refusal", "content_filter"})
"""Finish reasons that mean a provider refused or filtered a reply (seed 001)."""

FailureKind = Literal[
    "parse_failure", "refusal", "not_in_document", "wrong", "budget_stop", "error", "reasoning_exhausted"
]


class Usage(msgspec.Struct, kw_only=True, omit_defaults=False, gc=False):
    """Token counts of one model reply, normalised to one convention.

    Convention (cases H14b and H14d): ``tokens_out`` includes the reasoning tokens and
    ``tokens_in`` includes the cached input tokens, so each token is counted once;
    ``tokens_reasoning`` and ``tokens_cached`` say how many of them were of that kind.

    Attributes:
        tokens_in: prompt tokens, cached ones included (tokens).
        tokens_out: completion tokens, reasoning included (tokens).
        tokens_reasoning: reasoning tokens among ``tokens_out``.
        tokens_cached: provider prompt-cache hits among ``tokens_in``.
        tokens_cache_write_5m: prompt tokens among ``tokens_in`` written to the provider's
            prompt cache for 5 minutes (Anthropic bills them at 1.25x the input rate).
        tokens_cache_write_1h: prompt tokens among ``tokens_in`` written to the provider's
            prompt cache for 1 hour (Anthropic bills them at 2x the input rate).
        provenance: ``"reported"`` (by the provider), ``"counted"`` (with the model's
            tokenizer), ``"estimated"``, ``"log"`` (as another tool's log records them), or
            ``None`` when unknown.
    """

    tokens_in: int = 0
    tokens_out: int = 0
    tokens_reasoning: int = 0
    tokens_cached: int = 0
    provenance: str | None = "reported"
    tokens_cache_write_5m: int = 0
    tokens_cache_write_1h: int = 0

    @property
    def total(self) -> int:
        """Tokens charged: input plus output, each counted once (case H14b: 2008 + 266 = 2274)."""
        return self.tokens_in + self.tokens_out


class Request(msgspec.Struct, kw_only=True, gc=False):
    """One model request as the cache and recordings key it.

    Attributes:
        messages: chat messages, ``[{"role": ..., "content": ...}, ...]``.
        params: sampling parameters (temperature, max_tokens, seed, ...), as sent.
        tools: tool definitions, if any.
        model: the model asked for; filled from the client when empty.
        provider: ``"openai"``, ``"anthropic"``, ``"mock"``, ...; filled from the client.
        base_url: the endpoint's base URL; filled from the client.
        draw_index: the run's draw index, or ``None`` when the arm left it out.
        wire: what the client adds to the request on the wire, filled by the runner from
            ``client.wire(request)`` before the request is keyed: ``endpoint`` (the URL
            posted to), ``defaults`` (body fields the client sets when the request does not,
            e.g. the Anthropic client's ``max_tokens``), ``headers`` (headers that change the
            reply, e.g. ``anthropic-version``; never a credential), ``responder`` (a mock's
            fingerprint). Part of the cache and recording key.
    """

    messages: list[dict[str, Any]]
    params: dict[str, Any] = msgspec.field(default_factory=dict)
    tools: list[dict[str, Any]] | None = None
    model: str = ""
    provider: str = ""
    base_url: str = ""
    draw_index: int | None = None
    wire: dict[str, Any] | None = None


class Billed(msgspec.Struct, kw_only=True, gc=False):
    """What the provider billed for a reply hrbench could not use (a retried attempt).

    Attributes:
        usage: the tokens the provider reported for it.
        model: the model it was billed as, or ``None`` for the model asked for.
    """

    usage: Usage
    model: str | None = None


class ToolCall(msgspec.Struct, kw_only=True, gc=False):
    """One tool call a model asked for, in one form whatever the provider.

    OpenAI sends ``message.tool_calls[]`` (``{"id", "type": "function", "function": {"name",
    "arguments": JSON text}}``); Anthropic sends ``tool_use`` content blocks (``{"id", "name",
    "input": object}``). Both become this; the reply as the provider sent it stays in
    :attr:`Result.message`.

    Attributes:
        id: the provider's id of the call, which the tool's result names.
        name: the tool's name.
        arguments: the arguments, decoded (``{}`` when they could not be).
        error: why the arguments could not be decoded (OpenAI's JSON text malformed, or not an
            object), else ``None``.

    Example:
        >>> ToolCall(id="call_1", name="lookup", arguments={"city": "Paris"}).arguments["city"]
        'Paris'
    """

    id: str
    name: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    error: str | None = None


class _ResultFields(msgspec.Struct, kw_only=True, gc=False):
    """A model reply (the seed's ``gr_result``).

    Reading ``text`` of a failed reply (``ok`` false) raises
    :class:`~hrbench.errors.ModelError` with the status, the provider's message and, on HTTP
    401/403, the name of the key's environment variable (never the key): a 401 or a network
    error must not pass for an empty answer. ``raw_text`` reads it
    without raising.

    Attributes:
        text: the reply's text, or ``None`` when there is none; raises ``ModelError`` when
            the request failed.
        ok: ``False`` when the request failed (the exact scorer counts it as ``"error"``).
        refused: ``True`` when the provider refused or filtered the reply.
        finish_reason: ``"stop"``, ``"length"``, ``"refusal"``, ``"content_filter"``, ...
        error: the failure's message when ``ok`` is ``False`` (never an API key).
        usage: the reply's token counts.
        model: the model as served.
        response_id: the provider's id of the reply.
        usd: the reply's nominal cost in USD, ``None`` when the model has no price.
        seconds: wall-clock seconds of the request.
        source: ``"live"``, ``"cache"`` or ``"recording"``.
        draw_keyed: ``False`` when a recording served it without its own draw key.
        note: a limit note (``"limit_refused"``) when a provider refused on quota.
        status: the HTTP status of a failed request's last attempt, when it had one.
        key_env: the environment variable the client reads its API key from, on a 401/403.
        halts: why no later request should be sent, on a failure that every one would share:
            ``"quota"`` (the provider's quota or credit is exhausted) or ``"auth"`` (the key
            was refused) for the client, ``"model"`` (403/404) for the model.
        retried: why each attempt before the last failed (one that was not sent says so), in
            order, or ``None``: the run's trace keeps one ``attempt`` step each.
        retried_billed: for each of ``retried``, the provider's bill for that attempt's reply
            when it reported one (a reply with no text is billed, then retried), else
            ``None``; the attempt's trace step carries its usage and USD, and so does the row.
        tool_calls: the tool calls the reply asks for (:class:`ToolCall`, in order), or
            ``None`` when it asks for none.
        message: the reply's assistant message as the provider sent it (OpenAI's
            ``choices[0].message``; Anthropic's ``{"role": "assistant", "content": blocks}``,
            thinking blocks included), to send back in the next turn of a conversation; ``None``
            for a client that keeps none (a mock).
        reasoning_exhausted: ``True`` when the model spent the whole output limit reasoning and
            gave no answer: OpenAI ``finish_reason`` ``"length"`` with empty content and
            reasoning tokens, Anthropic ``stop_reason`` ``"max_tokens"`` with thinking and no
            text. Reading ``text`` then raises
            :class:`~hrbench.errors.ReasoningExhausted` and the run is ``reasoning_exhausted``
            (litellm-docs #559, ollama #17561, llama.cpp #25961).
    """

    text: str | None = None
    ok: bool = True
    refused: bool = False
    finish_reason: str | None = None
    error: str | None = None
    usage: Usage = msgspec.field(default_factory=Usage)
    model: str | None = None
    response_id: str | None = None
    usd: float | None = None
    seconds: float = 0.0
    source: str = "live"
    draw_keyed: bool = True
    note: str | None = None
    status: int | None = None
    key_env: str | None = None
    halts: str | None = None
    retried: list[str] | None = None
    retried_billed: list[Billed | None] | None = None
    tool_calls: list[ToolCall] | None = None
    message: dict[str, Any] | None = None
    reasoning_exhausted: bool = False


_TEXT = _ResultFields.__dict__["text"]


class Result(_ResultFields, kw_only=True):
    __doc__ = _ResultFields.__doc__

    @property  # type: ignore[misc]
    def text(self) -> str | None:
        """The reply's text; raises :class:`~hrbench.errors.ModelError` when the request failed.

        Raises:
            ModelError: ``ok`` is false (the message carries the status, the provider's message
                and, on 401/403, the key's environment variable name).
            ReasoningExhausted: the model spent its whole output limit reasoning and gave no
                answer (``reasoning_exhausted``); the run is then ``reasoning_exhausted``.

        Example:
            >>> Result(text="Paris").text
            'Paris'
            >>> Result(ok=False, error="openai: HTTP 500: boom", status=500).text
            Traceback (most recent call last):
            ...
            hrbench.errors.ModelError: the model call failed, so it has no text: openai: HTTP 500: boom
        """
        if not self.ok:
            raise model_error(self)
        if self.reasoning_exhausted:
            raise ReasoningExhausted.of(self)
        return _TEXT.__get__(self, Result)  # type: ignore[no-any-return]

    @text.setter
    def text(self, value: str | None) -> None:
        _TEXT.__set__(self, value)

    @property
    def raw_text(self) -> str | None:
        """The reply's text as stored, ``None`` for a failed request; never raises."""
        return _TEXT.__get__(self, Result)  # type: ignore[no-any-return]


class Step(msgspec.Struct, kw_only=True, gc=False, omit_defaults=True):
    """One step of a run's trace: a request and what answered it.

    Encoded without the fields that hold their defaults (msgspec's ``omit_defaults``): a
    decoder of ``Step`` fills them back, so a trace reads the same whether it was stored in
    this compact form or with every field; a mock's request step and its output note take
    ~500 bytes instead of ~800, the larger part of a stored row. The client's
    ``hrbench_client.protocol.Step`` (``hrb rows --traces``, the exports, the view) keeps every
    field.

    Attributes:
        ledger_id: the run's id (``benchmark/arm/item/run``).
        kind: ``"request"``, ``"attempt"`` (an attempt of the next request that failed and
            was retried: its ``error`` says why, and when it was not sent; one whose reply the
            provider billed carries that reply's ``usage`` and ``usd``, which the row counts),
            ``"tool"`` (a local tool's run), ``"error"`` or ``"note"`` (its ``source`` says of what:
            ``"metrics"``, the run's benchmark metrics; ``"output"``, the arm's output text,
            :func:`run_output`).
        key: the request's cache key (sha256 hex, draw index included).
        model: the model asked for.
        source: ``"live"``, ``"cache"``, ``"recording"``, or ``"refused"`` (never sent).
        draw_index: the draw index the request carried.
        messages: the request's messages (traces may hold prompts).
        text: the reply's text.
        finish_reason: the reply's finish reason.
        response_id: the provider's reply id.
        usage: the reply's tokens.
        usd: what the step was charged (0 for cache and recording hits).
        usd_nominal: what the reply cost when it was first fetched.
        seconds: wall-clock seconds.
        error: an error message, if the step failed.
        tool_calls: on a request step, the tool calls its reply asked for; on a ``"tool"``
            step (a local tool run by :func:`hrbench.tool_loop`, source ``"tool"``), the one
            call it ran, its result in ``text`` (or why it failed in ``error``).
    """

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
    tool_calls: list[ToolCall] | None = None


OUTPUT_SOURCE = "output"
"""The ``source`` of the note step that keeps a run's output text in its trace (:func:`run_output`)."""


def run_output(trace: Any) -> str | None:
    """The text of what a run's arm returned, as its scorer received it; ``None`` when it returned none.

    The runner keeps it in the run's trace as a step of kind ``"note"`` and source
    :data:`OUTPUT_SOURCE` (the reply text of a prompt arm, the text of a function arm's answer,
    a number or other value as JSON); ``hrb rows`` exports it as the ``output`` column. A run
    that failed before its arm returned, and a trace stored before outputs were kept, have none.

    Args:
        trace: the run's steps (:class:`Step`).

    Example:
        >>> run_output([Step(ledger_id="r", text="Paris"),
        ...             Step(ledger_id="r", kind="note", source=OUTPUT_SOURCE, text="Paris.")])
        'Paris.'
        >>> run_output([Step(ledger_id="r", text="Paris")]) is None
        True
    """
    for s in reversed(trace):
        if s.kind == "note" and s.source == OUTPUT_SOURCE:
            return s.text
    return None


def list_usd(trace: Any) -> float | None:
    """What a run's requests cost at list price: each reply at what it cost when first paid.

    Rule: a row's ``usd`` is what was paid (0 for a cache or recording hit, seed
    002); its list price sums every request step's ``usd_nominal`` instead, the cost the cache
    entry or recording kept from when the reply was first fetched, so comparing arms by cost
    does not depend on what happened to be cached. A refused step (never sent) costs 0; a step
    whose reply has no price makes the whole ``None`` (NA), as for ``usd``.

    Args:
        trace: the run's steps (:class:`Step`), in any order.

    Returns:
        USD, or ``None`` when a reply has no price.

    Example:
        >>> list_usd([Step(ledger_id="r", source="cache", usd=0.0, usd_nominal=0.002),
        ...           Step(ledger_id="r", source="live", usd=0.001, usd_nominal=0.001),
        ...           Step(ledger_id="r", source="refused", usd=0.0)])
        0.003
        >>> list_usd([Step(ledger_id="r", source="live", usd=None, usd_nominal=None)]) is None
        True
    """
    total = 0.0
    for s in trace:
        if s.kind != "request" or s.source == "refused":
            continue
        if s.usd_nominal is None:
            return None
        total += s.usd_nominal
    return total


def usd_text(usd: float | None, na: str = "NA") -> str:
    """A USD amount as printed: four decimals, or three significant digits below a cent.

    Rule (two cheap arms never both print ``0.0000`` per run): four decimals hide
    everything below $0.00005, so an amount under $0.01 is printed to three significant digits
    instead (``0.00131``, ``3.7e-06``), which tells two cheap arms apart; 0 stays ``0.0000``,
    as a benchmark's printout shows it for a model that costs nothing.

    Args:
        usd: the amount, or ``None`` (no price).
        na: what ``None`` prints as.

    Example:
        >>> [usd_text(x) for x in (0.0, 1.5, 0.0123, 0.00131, 3.7e-06, 4.1e-06, None)]
        ['0.0000', '1.5000', '0.0123', '0.00131', '3.7e-06', '4.1e-06', 'NA']
    """
    if usd is None or usd != usd:
        return na
    if usd == 0 or abs(usd) >= 0.01:
        return f"{usd:.4f}"
    return f"{usd:.3g}"


class Answer(msgspec.Struct, kw_only=True):
    """What a reading recipe returns (the seed's ``gr_answer``).

    Attributes:
        text: the answer text (``answer`` is an alias).
        partial: ``True`` when a limit stopped the recipe before it finished.
        notes: limit notes: ``"cost_cap_reached"``, ``"call_cap_reached"``, ``"limit_refused"``.
        trace: the steps the recipe took.
    """

    text: str | None = None
    partial: bool = False
    notes: list[str] = msgspec.field(default_factory=list)
    trace: list[Step] = msgspec.field(default_factory=list)

    @property
    def answer(self) -> str | None:
        """The answer text (the seed's ``answer`` element)."""
        return self.text


class Score(msgspec.Struct, kw_only=True, gc=False):
    """A scorer's verdict on one output (seed 000).

    Attributes:
        correct: ``True``, ``False``, or ``None`` when the item cannot be scored (no label).
        outcome: what the scorer saw, as one string, or ``None``.
        failure_kind: why a wrong output was wrong (one of ``FAILURE_KINDS``); ``None`` when right.
    """

    correct: bool | None
    outcome: str | None = None
    failure_kind: str | None = None


class Row(msgspec.Struct, kw_only=True, gc=False):
    """One run of one arm on one item: a row of the seed-002 benchmark table.

    Attributes:
        cluster, item, arm, run, split: which run of which arm on which item.
        correct: ``True``/``False``, ``None`` on every run of an item with no label.
        outcome: what the scorer saw.
        failure_kind: why a wrong run was wrong; ``None`` when it was right.
        tokens_in, tokens_out, tokens_reasoning, tokens_cached: summed over the run's requests.
        usd: the run's cost in USD (0 for cache and recording hits); ``None`` when a model has
            no price.
        usd_provenance: ``"reported"``, ``"counted"``, ``"estimated"``, ``"none"``, ``"log"``
            (an imported run: its tokens and list price are from another tool's log, not paid
            here, so ``usd`` is 0) or ``None``.
        seconds: the run's wall-clock time.
        draw_index: the run's draw index, its run number.
        ledger_id: the id of the run's trace.
        reportable: ``False`` for rows on the dev split.
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


ROW_COLUMNS: tuple[str, ...] = Row.__struct_fields__
"""The seed's columns, in the seed's order."""


class Grade(msgspec.Struct, frozen=True, kw_only=True):
    """One human grade of one row: did a person judge the arm's output on the item right?

    Attributes:
        item, arm, run: the row graded (its key: a rerun of the same spec from the cache has
            the same rows, so the grades stay theirs).
        correct: the person's verdict.
        grader: who graded (``"human"`` when not said).
        pi: the probability the row had of being drawn, for a row :func:`hrbench.next_grades`
            drew; ``None`` for a row chosen otherwise.
    """

    item: str
    arm: str
    run: int
    correct: bool
    grader: str = "human"
    pi: float | None = None
