"""The tool loop: a model's tool calls run as local Python functions until it answers.

Each turn is one ``ctx.call`` (``ctx.acall`` in :func:`tool_loop_async`): draw-keyed with the
run's draw index, cached, governed (the benchmark's caps and the run's own), recorded and
traced like any request of the run, so a replay reproduces the whole trajectory with the
provider down (the tools are local and run again). Each tool's run is a trace step of its own
(``kind="tool"``): the trajectory scorers (:mod:`hrbench.scoring._trajectory`) read them.
The rules: ``docs/guides/tools.md``.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread

from hrbench.errors import ConfigError, HrbenchError
from hrbench.models import normalise_messages
from hrbench.records import Result, Step, ToolCall
from hrbench.tools._definitions import tool_definitions

__all__ = ["ToolLoop", "tool_loop", "tool_loop_async", "tool_result_messages", "turn_message"]

MAX_OUTPUT_CHARS = 20_000
"""The most characters of a tool's output sent back to the model (the rest is cut, and said)."""


@dataclass
class ToolLoop:
    """What a tool loop ended with.

    Attributes:
        result: the last reply.
        messages: the whole conversation, the last reply's message included.
        calls: every tool call the model made, in order.
        turns: the model's turns (requests sent through ``ctx``).
        stopped: ``"max_steps"`` when the model still asked for tools after ``max_steps``
            turns (the loop stopped it; :attr:`text` is then ``None``), else ``None``.
    """

    result: Result
    messages: list[dict[str, Any]] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    turns: int = 0
    stopped: str | None = None

    @property
    def text(self) -> str | None:
        """The model's answer: the last reply's text, or ``None`` when the loop was stopped.

        Raises:
            ModelError: the last call failed (its run is then an ``error``).
            ReasoningExhausted: the last reply was all reasoning (``reasoning_exhausted``).
        """
        if self.stopped is not None:
            return None
        return self.result.text


def _tools_by_name(tools: Any) -> dict[str, Callable[..., Any]]:
    if isinstance(tools, Mapping):
        fns = {str(k): v for k, v in tools.items()}
    elif isinstance(tools, (list, tuple)):
        fns = {getattr(f, "__name__", ""): f for f in tools}
    else:
        raise ConfigError("tools", tools, "expected a mapping of name to function, or a list of functions")
    for name, fn in fns.items():
        if not callable(fn):
            raise ConfigError(f"tools.{name}", fn, "a tool of the loop must be a Python function")
    return fns


def _check_steps(max_steps: Any) -> int:
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise ConfigError("max_steps", max_steps, "expected a whole number of turns >= 1")
    return max_steps


def _as_text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f" [cut: {len(text) - MAX_OUTPUT_CHARS} more characters]"
    return text


def turn_message(result: Result, provider: str) -> dict[str, Any]:
    """The assistant message of a reply, to send back: the provider's own, else rebuilt from its calls."""
    if result.message is not None:
        return dict(result.message)
    calls = result.tool_calls or []
    if provider == "anthropic":
        blocks: list[dict[str, Any]] = [{"type": "text", "text": result.raw_text}] if result.raw_text else []
        blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in calls]
        return {"role": "assistant", "content": blocks}
    return {
        "role": "assistant",
        "content": result.raw_text,
        "tool_calls": [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in calls
        ],
    }


def tool_result_messages(
    calls: list[ToolCall], outputs: list[tuple[str, bool]], provider: str
) -> list[dict[str, Any]]:
    """The messages that give the model its tools' results, in the provider's form.

    OpenAI: one ``{"role": "tool", "tool_call_id", "content"}`` message per call; Anthropic: one
    user message of ``tool_result`` blocks (``is_error`` set for a tool that failed).

    Example:
        >>> c = [ToolCall(id="t1", name="add")]
        >>> tool_result_messages(c, [("3", False)], "openai")
        [{'role': 'tool', 'tool_call_id': 't1', 'content': '3'}]
        >>> tool_result_messages(c, [("3", False)], "anthropic")[0]["content"][0]["type"]
        'tool_result'
    """
    if provider == "anthropic":
        blocks = []
        for c, (text, failed) in zip(calls, outputs, strict=True):
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": c.id, "content": text}
            if failed:
                block["is_error"] = True
            blocks.append(block)
        return [{"role": "user", "content": blocks}]
    return [
        {"role": "tool", "tool_call_id": c.id, "content": text}
        for c, (text, _) in zip(calls, outputs, strict=True)
    ]


def _failure(call: ToolCall, fns: Mapping[str, Any]) -> str | None:
    if call.name not in fns:
        return f"error: no tool is named {call.name!r} (tools: {', '.join(sorted(fns))})"
    if call.error is not None:
        return f"error: {call.error}"
    return None


def _record(ctx: Any, call: ToolCall, text: str, failed: bool, start: float) -> tuple[str, bool]:
    ctx.trace.append(
        Step(
            ledger_id=ctx.ledger_id,
            kind="tool",
            source="tool",
            model=None,
            tool_calls=[call],
            text=None if failed else text,
            error=text if failed else None,
            usd=0.0,
            seconds=time.perf_counter() - start,
        )
    )
    return text, failed


def _run_tool(ctx: Any, fns: Mapping[str, Any], call: ToolCall) -> tuple[str, bool]:
    start = time.perf_counter()
    why = _failure(call, fns)
    if why is not None:
        return _record(ctx, call, why, True, start)
    try:
        out = fns[call.name](**call.arguments)
        if inspect.isawaitable(out):
            raise ConfigError(
                f"tools.{call.name}", out, "an async tool needs tool_loop_async in an async arm"
            )
    except HrbenchError:  # a budget refusal of a tool that calls a model: the run's, as any request's
        raise
    except Exception as exc:  # the tool failed: the model is told, as an agent framework does
        return _record(ctx, call, f"error: {type(exc).__name__}: {exc}", True, start)
    return _record(ctx, call, _as_text(out), False, start)


async def _arun_tool(ctx: Any, fns: Mapping[str, Any], call: ToolCall) -> tuple[str, bool]:
    start = time.perf_counter()
    why = _failure(call, fns)
    if why is not None:
        return _record(ctx, call, why, True, start)
    fn = fns[call.name]
    try:
        if inspect.iscoroutinefunction(fn):
            out = await fn(**call.arguments)
        else:  # a sync tool runs in a worker thread: it never blocks the event loop
            out = await anyio.to_thread.run_sync(lambda: fn(**call.arguments))
            if inspect.isawaitable(out):
                out = await out
    except HrbenchError:
        raise
    except Exception as exc:
        return _record(ctx, call, f"error: {type(exc).__name__}: {exc}", True, start)
    return _record(ctx, call, _as_text(out), False, start)


def _start(messages: Any, tools: Any, max_steps: Any) -> tuple[list[dict[str, Any]], dict[str, Any], Any]:
    return normalise_messages(messages), _tools_by_name(tools), _check_steps(max_steps)


def tool_loop(
    ctx: Any,
    messages: str | list[dict[str, Any]] | dict[str, Any],
    tools: Mapping[str, Callable[..., Any]] | list[Callable[..., Any]],
    max_steps: int = 8,
    **params: Any,
) -> ToolLoop:
    """Ask the model, run the tools it calls, send it their results, until it answers.

    For a sync arm (:func:`tool_loop_async` is the async twin). Each turn is ``ctx.call`` with
    the tools' definitions (:func:`~hrbench.tools.tool_definitions`, from each function's
    signature); each call the reply asks for runs ``tools[name](**arguments)`` here, and its
    result goes back as the provider's tool-result message (a value that is not a string as
    JSON). A tool that raises, an unknown tool or arguments that are not a JSON object are
    sent back as ``"error: ..."`` (and kept in the trace step's ``error``): the model may try
    again. A budget refusal ends the run as ``budget_stop`` with its partial trace.

    Args:
        ctx: the run's context.
        messages: the first prompt (a string or chat messages).
        tools: name -> Python function, or a list of functions (named by ``__name__``).
        max_steps: the most model turns; when the model still asks for tools at the last one,
            the loop stops (``stopped="max_steps"``, no answer).
        **params: sent with every turn (``max_tokens``, ``temperature``, ``tool_choice``...).

    Returns:
        A :class:`ToolLoop`; its ``text`` is the answer.

    Raises:
        ConfigError: tools that are not functions, or a bad ``max_steps``.
        BudgetRefused: a turn the governor refused.

    Example:
        >>> import hrbench as hb
        >>> def add(a: int, b: int) -> int:
        ...     return a + b
        >>> def model(messages, params):
        ...     if messages[-1]["role"] == "tool":
        ...         return f"The sum is {messages[-1]['content']}"
        ...     return hb.Result(tool_calls=[hb.ToolCall(id="c1", name="add", arguments={"a": 2, "b": 3})],
        ...                      finish_reason="tool_calls")
        >>> arm = hb.Arm("adder", lambda item, ctx: hb.tool_loop(ctx, item, {"add": add}).text)
        >>> bench = hb.benchmark(arm, hb.Reference({"q1": "2+3?"}, labels=["The sum is 5"]), runs=5,
        ...                      client=hb.MockClient(model))
        >>> bench.rows[0].correct, [s.kind for s in bench.traces[bench.rows[0].ledger_id]]
        (True, ['request', 'tool', 'request', 'note'])
    """
    conv, fns, steps = _start(messages, tools, max_steps)
    defs = tool_definitions(fns)
    provider = getattr(ctx.client, "provider", "")
    calls: list[ToolCall] = []
    result = Result()
    for turn in range(1, steps + 1):
        result = ctx.call(conv, tools=defs, **params)
        if not result.ok or not result.tool_calls:
            return ToolLoop(result, conv, calls, turn)
        conv = [*conv, turn_message(result, provider)]
        outputs = [_run_tool(ctx, fns, c) for c in result.tool_calls]
        calls += result.tool_calls
        conv += tool_result_messages(result.tool_calls, outputs, provider)
    return _stopped(ctx, result, conv, calls, steps)


async def tool_loop_async(
    ctx: Any,
    messages: str | list[dict[str, Any]] | dict[str, Any],
    tools: Mapping[str, Callable[..., Any]] | list[Callable[..., Any]],
    max_steps: int = 8,
    **params: Any,
) -> ToolLoop:
    """The async twin of :func:`tool_loop`, for an ``async def`` arm (same arguments).

    An ``async def`` tool is awaited; a sync tool runs in a worker thread, so a slow tool never
    blocks the event loop.
    """
    conv, fns, steps = _start(messages, tools, max_steps)
    defs = tool_definitions(fns)
    provider = getattr(ctx.client, "provider", "")
    calls: list[ToolCall] = []
    result = Result()
    for turn in range(1, steps + 1):
        result = await ctx.acall(conv, tools=defs, **params)
        if not result.ok or not result.tool_calls:
            return ToolLoop(result, conv, calls, turn)
        conv = [*conv, turn_message(result, provider)]
        outputs = [await _arun_tool(ctx, fns, c) for c in result.tool_calls]
        calls += result.tool_calls
        conv += tool_result_messages(result.tool_calls, outputs, provider)
    return _stopped(ctx, result, conv, calls, steps)


def _stopped(
    ctx: Any, result: Result, conv: list[dict[str, Any]], calls: list[ToolCall], steps: int
) -> ToolLoop:
    ctx.trace.append(
        Step(
            ledger_id=ctx.ledger_id,
            kind="note",
            source="tool_loop",
            text=f"max_steps: the model still asked for tools after {steps} turn(s); the loop stopped it",
            usd=0.0,
        )
    )
    return ToolLoop(result, conv, calls, steps, stopped="max_steps")
