"""Tools a model calls: definitions (:mod:`~hrbench.tools._definitions`) and the tool loop (:mod:`~hrbench.tools._loop`).

``ctx.call(prompt, tools=...)`` sends tool definitions (OpenAI's or Anthropic's form, or Python
functions) and returns the calls the model asks for in ``Result.tool_calls`` (one form for
both providers) beside the provider's own message (``Result.message``);
:func:`tool_loop` runs local Python tools until the model answers.
"""

from __future__ import annotations

from hrbench.tools._definitions import TOOL_NAME, function_definition, tool_definitions
from hrbench.tools._loop import (
    ToolLoop,
    tool_loop,
    tool_loop_async,
    tool_result_messages,
    turn_message,
)

__all__ = [
    "TOOL_NAME",
    "ToolLoop",
    "function_definition",
    "tool_definitions",
    "tool_loop",
    "tool_loop_async",
    "tool_result_messages",
    "turn_message",
]
