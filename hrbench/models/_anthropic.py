"""The Anthropic Messages API client."""

from __future__ import annotations

from typing import Any

from hrbench.models._openai import tool_arguments
from hrbench.models._remote import HttpModelClient
from hrbench.models._replies import as_int
from hrbench.records import Request, Result, ToolCall, Usage

__all__ = ["AnthropicClient", "anthropic_tool", "anthropic_usage"]

# Request params that are hrbench's, or OpenAI's with no Messages API meaning; never sent.
_NOT_SENT = frozenset(
    {
        "draw_index",
        "model",
        "stream",
        "messages",
        "tools",
        "system",
        "seed",
        "n",
        "stop",
        "frequency_penalty",
        "presence_penalty",
        "logprobs",
        "top_logprobs",
        "response_format",
        "max_completion_tokens",
    }
)

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "refusal",
}
"""Anthropic ``stop_reason`` to the OpenAI-style ``finish_reason`` hrbench records."""


class AnthropicClient(HttpModelClient):
    """A client for ``POST {base_url}/messages`` (Anthropic's Messages API).

    System messages are joined into the ``system`` field; ``max_tokens`` (required by the API)
    defaults to ``max_tokens``; ``stop`` becomes ``stop_sequences``; ``seed`` and other
    OpenAI-only params are not sent. The text is the concatenation of the reply's ``text``
    blocks (``thinking`` blocks are left out). ``stop_reason`` is recorded in OpenAI terms:
    ``end_turn`` and ``stop_sequence`` as ``"stop"``, ``max_tokens`` as ``"length"``, and
    ``refusal`` as ``"refusal"`` with ``refused=True``. ``tool_use`` blocks are read into
    ``Result.tool_calls`` and the content is kept whole in ``Result.message`` (thinking blocks
    and their signatures included, as the next turn must send them back); tools given in
    OpenAI's form are sent in the Messages form (:func:`anthropic_tool`). A reply stopped at
    ``max_tokens`` with thinking and no text or tool call is ``reasoning_exhausted``.

    Usage (convention of :class:`~hrbench.records.Usage`): ``tokens_in`` is
    ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens`` (Anthropic reports
    cache reads and writes apart from ``input_tokens``), ``tokens_cached`` is
    ``cache_read_input_tokens``, the cache writes are ``tokens_cache_write_5m`` and
    ``tokens_cache_write_1h`` (priced at their own rates), ``tokens_out`` is ``output_tokens``
    (thinking included).
    Anthropic does not report thinking tokens apart, so ``tokens_reasoning`` is 0.

    Retries, limits and failure handling are described in :mod:`hrbench.models._remote`.

    Args:
        model: the model asked for, e.g. ``"claude-sonnet-4-5"``.
        base_url: the API root, default ``"https://api.anthropic.com/v1"``.
        api_key_env: the environment variable holding the key (default ``ANTHROPIC_API_KEY``),
            read at each attempt and sent as ``x-api-key``.
        anthropic_version: the ``anthropic-version`` header.
        max_tokens: ``max_tokens`` when a request does not set it (tokens).
        **settings: ``timeout_s``, ``max_connections``, ``max_attempts``, ``max_total_s`` and the
            other settings of :class:`~hrbench.models._remote.HttpModelClient`.

    Example:
        >>> AnthropicClient("claude-haiku-4-5")
        AnthropicClient(model='claude-haiku-4-5', base_url='https://api.anthropic.com/v1', api_key_env='ANTHROPIC_API_KEY')
    """

    provider = "anthropic"
    path = "/messages"
    default_base_url = "https://api.anthropic.com/v1"

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.anthropic.com/v1",
        api_key_env: str | None = "ANTHROPIC_API_KEY",
        *,
        anthropic_version: str = "2023-06-01",
        max_tokens: int = 1024,
        **settings: Any,
    ) -> None:
        super().__init__(model, base_url, api_key_env, **settings)
        self.anthropic_version = anthropic_version
        self.max_tokens = int(max_tokens)
        self.extra_headers.setdefault("anthropic-version", anthropic_version)

    @property
    def spec(self) -> dict[str, Any]:
        """What rebuilds this client (never the key)."""
        return {**super().spec, "anthropic_version": self.anthropic_version, "max_tokens": self.max_tokens}

    def body_defaults(self) -> dict[str, Any]:
        """``max_tokens``: the API requires one, so the client always sends one (case R03a)."""
        return {"max_tokens": self.max_tokens}

    def build_body(self, request: Request, model: str) -> dict[str, Any]:
        """The Messages body: system prompt apart, ``max_tokens`` set, OpenAI-only params dropped."""
        system = [m for m in request.messages if m.get("role") == "system"]
        messages = [m for m in request.messages if m.get("role") != "system"]
        params = request.params
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": params.get("max_tokens") or params.get("max_completion_tokens") or self.max_tokens,
            "messages": messages,
        }
        if system:
            body["system"] = "\n\n".join(str(m.get("content", "")) for m in system)
        elif "system" in params:
            body["system"] = params["system"]
        body.update((k, v) for k, v in params.items() if k not in _NOT_SENT and k != "max_tokens")
        stop = params.get("stop")
        if stop:
            body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        if request.tools:
            body["tools"] = [anthropic_tool(t) for t in request.tools]
        return body

    def auth_headers(self, key: str) -> dict[str, str]:
        """``x-api-key: <key>``."""
        return {"x-api-key": key}

    def parse_reply(self, body: Any) -> Result:
        """Read a Messages reply into a ``Result``.

        Raises:
            ValueError: when the body is not a message.
        """
        if not isinstance(body, dict):
            raise ValueError(f"expected a JSON object, got {type(body).__name__}")
        content = body["content"]
        if not isinstance(content, list):
            raise ValueError("the reply's content is not a list of blocks")
        blocks = [b for b in content if isinstance(b, dict)]
        texts = [b["text"] for b in blocks if b.get("type") == "text"]
        calls = [
            ToolCall(id=str(b.get("id") or ""), name=str(b.get("name") or ""), arguments=args, error=error)
            for b in blocks
            if b.get("type") == "tool_use"
            for args, error in [tool_arguments(b.get("input"))]
        ]
        thought = any(b.get("type") in ("thinking", "redacted_thinking") for b in blocks)
        stop = body.get("stop_reason")
        finish = _STOP_REASONS.get(stop, stop) if isinstance(stop, str) else None
        text = "".join(texts) if texts else None
        return Result(
            text=text,
            refused=finish == "refusal",
            finish_reason=finish,
            usage=anthropic_usage(body.get("usage")),
            model=body.get("model"),
            response_id=body.get("id"),
            tool_calls=calls or None,
            message={"role": "assistant", "content": content},
            reasoning_exhausted=finish == "length" and thought and not text and not calls,
        )


def anthropic_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool definition in the Messages API's form (``name``, ``description``, ``input_schema``).

    A definition in OpenAI's form (``{"type": "function", "function": {"name", "description",
    "parameters"}}``, the form :func:`hrbench.tool_loop` makes) is converted; one already in
    Anthropic's form is sent as given.

    Example:
        >>> anthropic_tool({"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}})
        {'name': 'add', 'input_schema': {'type': 'object'}}
    """
    fn = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(fn, dict):
        return tool
    out: dict[str, Any] = {"name": fn.get("name")}
    if fn.get("description"):
        out["description"] = fn["description"]
    out["input_schema"] = fn.get("parameters") or {"type": "object", "properties": {}}
    return out


def anthropic_usage(usage: Any) -> Usage:
    """Read an Anthropic usage block into :class:`~hrbench.records.Usage`.

    Args:
        usage: the reply's ``usage`` object, or ``None``.

    Cache writes: the newer ``cache_creation`` block splits them into
    ``ephemeral_5m_input_tokens`` and ``ephemeral_1h_input_tokens``; without it,
    ``cache_creation_input_tokens`` are 5-minute writes (the default lifetime). When both are
    given, ``cache_creation_input_tokens`` is the total and any part the split leaves out counts
    as 5-minute writes.

    Returns:
        The usage (provenance ``"reported"``), or zeros with provenance ``None`` when the reply
        has no usage block.

    Example:
        >>> u = anthropic_usage({"input_tokens": 500, "cache_read_input_tokens": 1500, "output_tokens": 50})
        >>> (u.tokens_in, u.tokens_cached, u.tokens_out, u.total)
        (2000, 1500, 50, 2050)
        >>> u = anthropic_usage({"input_tokens": 10, "cache_creation_input_tokens": 300, "output_tokens": 5,
        ...     "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200}})
        >>> (u.tokens_in, u.tokens_cache_write_5m, u.tokens_cache_write_1h)
        (310, 100, 200)
    """
    if not isinstance(usage, dict):
        return Usage(provenance=None)
    read = as_int(usage.get("cache_read_input_tokens"))
    written = as_int(usage.get("cache_creation_input_tokens"))
    split = usage.get("cache_creation")
    w5 = w1 = 0
    if isinstance(split, dict):
        w5 = as_int(split.get("ephemeral_5m_input_tokens"))
        w1 = as_int(split.get("ephemeral_1h_input_tokens"))
    written = max(written, w5 + w1)
    w5 = written - w1  # what the split leaves out is a 5-minute write
    return Usage(
        tokens_in=as_int(usage.get("input_tokens")) + read + written,
        tokens_out=as_int(usage.get("output_tokens")),
        tokens_reasoning=0,
        tokens_cached=read,
        provenance="reported",
        tokens_cache_write_5m=w5,
        tokens_cache_write_1h=w1,
    )
