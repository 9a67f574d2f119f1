"""The OpenAI-compatible chat completions client (OpenAI, vLLM, Ollama, llama.cpp, OpenRouter...)."""

from __future__ import annotations

from typing import Any

import msgspec

from hrbench.models._remote import HttpModelClient
from hrbench.models._replies import as_int
from hrbench.records import Request, Result, ToolCall, Usage

__all__ = ["OpenAIClient", "openai_tool_calls", "openai_usage", "tool_arguments"]

# Request params that are hrbench's, not the API's; never sent.
_NOT_SENT = frozenset({"draw_index", "model", "stream", "messages", "tools"})


class OpenAIClient(HttpModelClient):
    """A client for ``POST {base_url}/chat/completions``.

    Retries, limits and failure handling are described in :mod:`hrbench.models._remote`.

    Usage is read exactly (cases H14b, H14d): ``tokens_in`` is ``prompt_tokens`` (OpenAI counts
    cached tokens inside it), ``tokens_cached`` is ``prompt_tokens_details.cached_tokens``,
    ``tokens_out`` is ``completion_tokens`` (reasoning included) and ``tokens_reasoning`` is
    ``completion_tokens_details.reasoning_tokens``. A reply whose ``finish_reason`` is
    ``content_filter`` is refused with that reason; a reply with a ``refusal`` field is refused
    with ``finish_reason="refusal"`` and the refusal message as its text (case H10c).

    Tool calls (``message.tool_calls``) are read into ``Result.tool_calls`` and the message is
    kept whole in ``Result.message``; a reply cut at the output limit (``finish_reason``
    ``"length"``) with empty content, no tool call and reasoning tokens is
    ``reasoning_exhausted`` (the model reasoned until the limit and never answered).

    Args:
        model: the model asked for, e.g. ``"gpt-4o-mini"``.
        base_url: the API root, default ``"https://api.openai.com/v1"``.
        api_key_env: the environment variable holding the key (default ``OPENAI_API_KEY``),
            read at each attempt and sent as ``Authorization: Bearer``; unset sends no key.
        max_tokens: ``max_tokens`` sent when a request sets neither it nor
            ``max_completion_tokens`` (tokens); ``None`` sends none (the server's default), except
            under a USD or token cap, where the runner always sends an output limit.
        **settings: ``timeout_s``, ``max_connections``, ``max_attempts``, ``max_total_s`` and the
            other settings of :class:`~hrbench.models._remote.HttpModelClient`.

    Example:
        >>> OpenAIClient("llama3", base_url="http://127.0.0.1:8000/v1", api_key_env=None)
        OpenAIClient(model='llama3', base_url='http://127.0.0.1:8000/v1', api_key_env=None)
    """

    provider = "openai"
    path = "/chat/completions"
    default_base_url = "https://api.openai.com/v1"

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key_env: str | None = "OPENAI_API_KEY",
        *,
        max_tokens: int | None = None,
        **settings: Any,
    ) -> None:
        super().__init__(model, base_url, api_key_env, **settings)
        self.max_tokens = None if max_tokens is None else int(max_tokens)

    @property
    def spec(self) -> dict[str, Any]:
        """What rebuilds this client (never the key)."""
        return {**super().spec, "max_tokens": self.max_tokens}

    def body_defaults(self) -> dict[str, Any]:
        """``max_tokens`` when the client has one."""
        return {} if self.max_tokens is None else {"max_tokens": self.max_tokens}

    def build_body(self, request: Request, model: str) -> dict[str, Any]:
        """The chat completions body: model, messages, the request's sampling params, tools."""
        body: dict[str, Any] = {"model": model, "messages": request.messages}
        params = request.params
        if (
            self.max_tokens is not None
            and "max_tokens" not in params
            and "max_completion_tokens" not in params
        ):
            body["max_tokens"] = self.max_tokens
        for k, v in params.items():
            if k not in _NOT_SENT:
                body[k] = v
        if request.tools:
            body["tools"] = request.tools
        return body

    def auth_headers(self, key: str) -> dict[str, str]:
        """``Authorization: Bearer <key>``."""
        return {"authorization": f"Bearer {key}"}

    def parse_reply(self, body: Any) -> Result:
        """Read a chat completion into a ``Result``.

        Raises:
            ValueError: when the body has no choices.
        """
        if not isinstance(body, dict):
            raise ValueError(f"expected a JSON object, got {type(body).__name__}")
        choices = body["choices"]
        if not isinstance(choices, list) or not choices:
            raise ValueError("the reply has no choices")
        choice = choices[0]
        message = choice.get("message") or {}
        if not isinstance(message, dict):
            raise ValueError(f"the choice's message is a {type(message).__name__}, not an object")
        content = message.get("content")
        text = content if content is None or type(content) is str else _content_text(content)
        finish = choice.get("finish_reason")
        refusal = message.get("refusal")
        refused = False
        if finish == "content_filter":
            refused = True
        elif isinstance(refusal, str) and refusal:
            refused, finish = True, "refusal"
            text = text or refusal
        usage = openai_usage(body.get("usage"))
        calls = message.get("tool_calls")
        calls = None if calls is None else openai_tool_calls(calls)
        return Result(
            text=text,
            refused=refused,
            finish_reason=finish,
            usage=usage,
            model=body.get("model"),
            response_id=body.get("id"),
            tool_calls=calls,
            message=message,
            reasoning_exhausted=(
                finish == "length" and not text and not calls and not refused and usage.tokens_reasoning > 0
            ),
        )


def openai_tool_calls(calls: Any) -> list[ToolCall] | None:
    """Read OpenAI's ``message.tool_calls`` into :class:`~hrbench.records.ToolCall` records.

    Each call is ``{"id", "type": "function", "function": {"name", "arguments"}}`` with
    ``arguments`` a JSON text; text that does not decode to an object gives ``{}`` and the
    reason in ``error`` (the tool loop sends it back to the model as the tool's result).

    Raises:
        ValueError: ``tool_calls`` is not a list of such objects (a malformed reply).

    Example:
        >>> openai_tool_calls([{"id": "c1", "type": "function",
        ...                     "function": {"name": "add", "arguments": '{"a": 1}'}}])
        [ToolCall(id='c1', name='add', arguments={'a': 1}, error=None)]
        >>> openai_tool_calls([{"id": "c2", "function": {"name": "add", "arguments": "{"}}])[0].error
        'arguments are not JSON: {'
    """
    if calls is None or calls == []:
        return None
    if not isinstance(calls, list):
        raise ValueError("tool_calls is not a list")
    out = []
    for c in calls:
        fn = c.get("function") if isinstance(c, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise ValueError("a tool call has no function name")
        raw = fn.get("arguments")
        args, error = tool_arguments(raw)
        out.append(ToolCall(id=str(c.get("id") or ""), name=fn["name"], arguments=args, error=error))
    return out


def tool_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """A tool call's arguments as an object, from JSON text or an object; ``({}, why)`` when unreadable."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None or raw == "":
        return {}, None
    if not isinstance(raw, str):
        return {}, f"arguments are a {type(raw).__name__}, not an object"
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return {}, f"arguments are not JSON: {raw[:200]}"
    if not isinstance(value, dict):
        return {}, f"arguments are not an object: {raw[:200]}"
    return value, None


def _content_text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts, as some compatible servers send
        parts = [
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") in ("text", None)
        ]
        return "".join(parts)
    raise ValueError(f"unexpected message content of type {type(content).__name__}")


def openai_usage(usage: Any) -> Usage:
    """Read an OpenAI-style usage block into :class:`~hrbench.records.Usage`.

    Cached tokens are read from ``prompt_tokens_details.cached_tokens`` (or a top-level
    ``cached_tokens`` / ``prompt_cache_hit_tokens``, as some compatible servers send), reasoning
    tokens from ``completion_tokens_details.reasoning_tokens`` (or a top-level
    ``reasoning_tokens``). Reasoning is inside ``completion_tokens``, so it is counted once
    (case H14b); a server that reports more reasoning than completion tokens evidently counts
    them apart, and then they are added.

    Args:
        usage: the reply's ``usage`` object, or ``None``.

    Returns:
        The usage (provenance ``"reported"``), or zeros with provenance ``None`` when the reply
        has no usage block.

    Example:
        >>> u = openai_usage({"prompt_tokens": 2008, "completion_tokens": 266, "reasoning_tokens": 261})
        >>> (u.tokens_in, u.tokens_out, u.tokens_reasoning, u.total)
        (2008, 266, 261, 2274)
        >>> openai_usage({"prompt_tokens": 2000, "cached_tokens": 1500, "completion_tokens": 50}).tokens_cached
        1500
    """
    if not isinstance(usage, dict):
        return Usage(provenance=None)
    prompt = as_int(usage.get("prompt_tokens"))
    completion = as_int(usage.get("completion_tokens"))
    in_details = usage.get("prompt_tokens_details") or {}
    out_details = usage.get("completion_tokens_details") or {}
    cached = as_int(in_details.get("cached_tokens")) if isinstance(in_details, dict) else 0
    cached = cached or as_int(usage.get("cached_tokens")) or as_int(usage.get("prompt_cache_hit_tokens"))
    reasoning = as_int(out_details.get("reasoning_tokens")) if isinstance(out_details, dict) else 0
    reasoning = reasoning or as_int(usage.get("reasoning_tokens"))
    if reasoning > completion:
        completion += reasoning
    return Usage(
        tokens_in=max(prompt, cached),
        tokens_out=completion,
        tokens_reasoning=reasoning,
        tokens_cached=cached,
        provenance="reported",
    )
