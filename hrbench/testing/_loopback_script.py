"""What a loopback reply's prompt scripts beyond its text: reasoning spent and tool calls made.

Markers in the prompt's system and user messages (tool results and earlier replies are not read
for them):

- ``[[reasoning:N]]``: the reply spends ``N`` reasoning tokens (inside its completion tokens;
  OpenAI's ``completion_tokens_details.reasoning_tokens``, Anthropic's thinking block). A value
  per reasoning setting, ``[[reasoning:200:low=20:high=900]]``, picks by the request's
  ``reasoning_effort`` (OpenAI) or thinking ``budget_tokens`` (Anthropic), the bare number being
  the default. When ``N`` reaches the request's ``max_tokens`` (or ``max_completion_tokens``)
  the whole limit is spent reasoning: OpenAI replies ``content: ""`` with ``finish_reason:
  "length"``, Anthropic a thinking block alone with ``stop_reason: "max_tokens"``, and the bill
  is the limit.
- ``[[tool:NAME:{"json": "args"}]]`` (or ``[[tool:NAME]]``, no arguments): a tool call. The
  k-th marker is the reply to the k-th turn (a turn is counted by the assistant messages already
  in the conversation): OpenAI ``message.tool_calls`` with ``finish_reason: "tool_calls"``,
  Anthropic a ``tool_use`` block with ``stop_reason: "tool_use"``. Arguments that are not JSON
  are sent as given (OpenAI's ``arguments`` text). Once every marker is used, the reply is the
  ``[[reply:TEXT]]`` marker's text, else the last tool result's text (the model answers with
  what its last tool returned).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Script", "read_script", "reshape"]

REASONING = re.compile(r"\[\[reasoning:([^\]]+)\]\]")
TOOL = re.compile(r"\[\[tool:([A-Za-z0-9_-]{1,64})(?::(\{.*?\}))?\]\]", re.DOTALL)


@dataclass
class Script:
    """What a request's markers script for its reply."""

    reasoning: int | None = None
    call: tuple[str, str] | None = None  # (tool name, arguments as JSON text)
    turn: int = 0
    last_tool_result: str | None = None


def _texts(body: dict[str, Any]) -> list[str]:
    """The system and user text a request carries (not tool results, not earlier replies)."""
    out = [body["system"]] if isinstance(body.get("system"), str) else []
    for m in body.get("messages") or []:
        if not isinstance(m, dict) or m.get("role") not in ("system", "user"):
            continue
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [
                str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
            ]
    return out


def _setting(body: dict[str, Any]) -> str | None:
    effort = body.get("reasoning_effort")
    if isinstance(effort, str):
        return effort
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("budget_tokens") is not None:
        return str(thinking["budget_tokens"])
    return None


def _reasoning(spec: str, setting: str | None) -> int | None:
    default, by = None, {}
    for part in spec.split(":"):
        key, eq, value = part.partition("=")
        try:
            if eq:
                by[key.strip()] = int(value)
            else:
                default = int(key)
        except ValueError:
            continue
    return by.get(setting or "", default)


def _last_tool_result(messages: list[Any]) -> str | None:
    for m in reversed(messages):
        if not isinstance(m, dict):
            continue
        if m.get("role") == "tool":
            return str(m.get("content"))
        content = m.get("content")
        if m.get("role") == "user" and isinstance(content, list):
            results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if results:
                got = results[-1].get("content")
                if isinstance(got, list):
                    return "".join(str(b.get("text", "")) for b in got if isinstance(b, dict))
                return str(got)
        if m.get("role") in ("user", "assistant"):
            return None
    return None


def read_script(body: dict[str, Any]) -> Script:
    """The reasoning and tool call a request's markers script for its reply."""
    text = "\n".join(_texts(body))
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    script = Script(turn=turn, last_tool_result=_last_tool_result(messages))
    m = REASONING.search(text)
    if m is not None:
        script.reasoning = _reasoning(m.group(1), _setting(body))
    calls = TOOL.findall(text)
    if turn < len(calls):
        name, args = calls[turn]
        script.call = (name, args or "{}")
    return script


def _limit(body: dict[str, Any]) -> int | None:
    limit = body.get("max_tokens") or body.get("max_completion_tokens")
    return limit if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0 else None


def reshape(
    payload: dict[str, Any], flavour: str, body: dict[str, Any], script: Script, rid: str
) -> int | None:
    """Rewrite a reply for its script: all reasoning (the limit spent), or a tool call.

    Returns:
        The completion tokens the reply now bills, or ``None`` when it was left as made.
    """
    limit, reasoning = _limit(body), script.reasoning or 0
    anthropic = flavour == "anthropic"
    if limit is not None and reasoning and reasoning >= limit:  # all reasoning, no answer
        if anthropic:
            payload["content"] = [{"type": "thinking", "thinking": "hmm " * limit, "signature": "sig"}]
            payload["stop_reason"] = "max_tokens"
            payload["usage"]["output_tokens"] = limit
        else:
            for choice in payload["choices"]:
                choice["message"] = {"role": "assistant", "content": "", "refusal": None}
                choice["finish_reason"] = "length"
            _openai_usage(payload, limit, limit)
        return limit
    if script.call is None:
        return None
    name, args = script.call
    try:
        decoded: Any = json.loads(args)
    except ValueError:
        decoded = args
    completion = len(args.split()) + reasoning
    call_id = f"{'toolu' if anthropic else 'call'}_{rid[:16]}_{script.turn}"
    if anthropic:
        blocks = [b for b in payload["content"] if b.get("type") == "thinking"]
        blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": decoded})
        payload["content"], payload["stop_reason"] = blocks, "tool_use"
        payload["usage"]["output_tokens"] = completion
    else:
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
        for choice in payload["choices"]:
            choice["message"] = {"role": "assistant", "content": None, "refusal": None, "tool_calls": [call]}
            choice["finish_reason"] = "tool_calls"
        _openai_usage(payload, completion, reasoning)
    return completion


def _openai_usage(payload: dict[str, Any], completion: int, reasoning: int) -> None:
    usage = payload["usage"]
    n = len(payload["choices"])
    usage["completion_tokens"] = completion * n
    usage["total_tokens"] = usage["prompt_tokens"] + completion * n
    usage["completion_tokens_details"]["reasoning_tokens"] = reasoning
