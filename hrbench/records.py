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

__all__ = [
    "FAILURE_KINDS",
    "REFUSAL_REASONS",
    "Answer",
    "Billed",
    "Request",
    "Result",
    "Row",
    "Score",
    "Step",
    "Usage",
    "list_usd",
    "usd_text",
]

FAILURE_KINDS = ("parse_failure", "refusal", "not_in_document", "wrong", "budget_stop", "error")
"""The failure kinds of seed 000, in no particular order."""

REFUSAL_REASONS = frozenset({"refusal", "content_filter"})
"""Finish reasons that mean a provider refused or filtered a reply (seed 001)."""

FailureKind = Literal["parse_failure", "refusal", "not_in_document", "wrong", "budget_stop", "error"]


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


_TEXT = _ResultFields.__dict__["text"]


class Result(_ResultFields, kw_only=True):
    __doc__ = _ResultFields.__doc__

    @property  # type: ignore[misc]
    def text(self) -> str | None:
        """The reply's text; raises :class:`~hrbench.errors.ModelError` when the request failed.

        Raises:
            ModelError: ``ok`` is false (the message carries the status, the provider's message
                and, on 401/403, the key's environment variable name).

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
        return _TEXT.__get__(self, Result)  # type: ignore[no-any-return]

    @text.setter
    def text(self, value: str | None) -> None:
        _TEXT.__set__(self, value)

    @property
    def raw_text(self) -> str | None:
        """The reply's text as stored, ``None`` for a failed request; never raises."""
        return _TEXT.__get__(self, Result)  # type: ignore[no-any-return]


class Step(msgspec.Struct, kw_only=True, gc=False):
    """One step of a run's trace: a request and what answered it.

    Attributes:
        ledger_id: the run's id (``benchmark/arm/item/run``).
        kind: ``"request"``, ``"attempt"`` (an attempt of the next request that failed and
            was retried: its ``error`` says why, and when it was not sent; one whose reply the
            provider billed carries that reply's ``usage`` and ``usd``, which the row counts),
            ``"error"`` or ``"note"``.
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
