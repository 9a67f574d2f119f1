"""How an HTTP model client books an attempt and reads a reply.

A call written or given back, a lost reply, estimated and billed usage, an unusable 200, a server's
error text.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from hrbench.models._tokens import usage_of
from hrbench.records import Request, Result, Usage

SNIPPET = 300
"""Characters of a server's error message kept in ``Result.error``."""


def give_back(before_attempt: Any) -> None:
    """Give the governor back the call of an attempt that was not sent (a Gate's ``unsent``)."""
    unsent = getattr(before_attempt, "unsent", None)
    if unsent is not None:
        unsent()


def book_lost(before_attempt: Any, usage: Usage | None = None, model: str | None = None) -> None:
    """Book an attempt written whole whose reply was lost or unusable (a Gate's ``lost``).

    Rule (README: "one written whole stays a call whatever failed
    after (it may have been billed)"): at the reply's reported cost when it has a usage block,
    else at its reservation, as spend *unknown, at most* that much, at once: a retry reserves
    afresh, so neither the request nor its retries can pass a cap.
    """
    lost = getattr(before_attempt, "lost", None)
    if lost is not None:
        lost(usage, model)


def estimated_usage(request: Request, result: Result) -> Usage:
    """The usage of a reply without a usage block: counted, else bounded from above.

    With ``n`` choices only the first is kept: each of the others is counted at the output
    limit sent (at the first one's size when none was sent).
    """
    from hrbench.models._pricing import output_limit

    limit = output_limit(request)
    usage = usage_of(request.messages, result.raw_text, result.model, limit, request.tools)
    n = request.params.get("n") if request.provider != "anthropic" else 1
    if isinstance(n, int) and not isinstance(n, bool) and n > 1 and usage.provenance == "estimated":
        usage.tokens_out += (n - 1) * (usage.tokens_out if limit is None else limit)
    return usage


def keep_billed(failed: Result, usage: Usage | None, model: str | None) -> Result:
    """A failed result that keeps the usage of the billed reply that failed it (its last attempt).

    Earlier attempts the provider billed are in ``retried_billed``
    (:func:`~hrbench.models._retries.billed_attempt`).
    """
    if usage is not None:
        failed.usage = usage
        failed.model = model or failed.model
    return failed


def unusable_reply(result: Result) -> str | None:
    """Why a well-formed 2xx reply cannot be scored as an answer, or ``None``.

    Rule (SPEC §6 "a failed model call surfaces"): a reply cut at the output limit
    (``finish_reason`` ``"length"``, Anthropic's ``max_tokens``) is not scored ``wrong`` with no
    word, and a reply with no text (``content: null``) that is neither a refusal nor a tool call
    is not a ``parse_failure``. Both are the provider's reply failing, not the
    model's answer, and the run is an ``error`` with this cause, its billed tokens kept. A reply
    with no text is retried as a garbled body is (a provider fault). A cut reply is not: a
    retry with the same output limit is billed again and cut again, and the governor settles
    a failed attempt at no cost, so retries would spend past what it counts; the cause says
    to raise ``max_tokens``. (README's "retry truncated replies" means bodies cut in transfer.)

    Example:
        >>> unusable_reply(Result(text="Par", finish_reason="length"))
        "reply cut at the output limit (finish_reason 'length'): raise max_tokens"
        >>> unusable_reply(Result(text=None, finish_reason="stop"))
        'reply has no text (content null, finish_reason stop)'
        >>> unusable_reply(Result(text="Paris", finish_reason="stop")) is None
        True

    A reply that is all reasoning (``reasoning_exhausted``: cut at the limit with reasoning and
    no text) is not unusable: it is kept, billed and cached, and its run is
    ``reasoning_exhausted``, not an ``error``.
    """
    if result.refused or result.reasoning_exhausted:  # all reasoning: a run of its own kind, kept
        return None
    if result.finish_reason == "length":
        return "reply cut at the output limit (finish_reason 'length'): raise max_tokens"
    if result.text is None and not result.tool_calls and result.finish_reason != "tool_calls":
        return f"reply has no text (content null, finish_reason {result.finish_reason})"
    return None


def error_detail(text: str) -> str:
    """The message of an error reply: ``error.message`` of a JSON body, else the body.

    Not cut here: the caller redacts the whole message first, so a key that straddles the cut
    is never left in part.
    """
    try:
        body = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return text.strip()[: SNIPPET * 8]
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            message = err.get("message")
            kind = err.get("type") or err.get("code")
            if isinstance(message, str):
                return f"{kind}: {message}" if isinstance(kind, str) else message
        if isinstance(err, str):
            return err
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return text.strip()[: SNIPPET * 8]


def as_int(value: Any) -> int:
    """A token count from a usage block: ints and int-valued floats; anything else is 0."""
    if type(value) is int:  # the common case, first (a bool is not one)
        return value if value > 0 else 0
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(0, value)
    if isinstance(value, float) and math.isfinite(value):
        return max(0, int(value))
    return 0
