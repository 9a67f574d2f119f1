"""Mock functions and arms the test daemon imports (via ``python_path``)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any


def _log(messages: list[dict[str, Any]], params: dict[str, Any], env: str = "HRB_CALLS_FILE") -> None:
    path = os.environ.get(env)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps([messages[-1]["content"], params.get("draw_index")]) + "\n")


async def answer(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """Answer 'answer <prompt>' after HRB_MOCK_DELAY_S seconds; log each finished call.

    With HRB_STARTED_FILE, each call is also logged when it starts (a provider bills a call
    that was sent, even when the caller dies before the reply).
    """
    _log(messages, params, "HRB_STARTED_FILE")
    delay = float(os.environ.get("HRB_MOCK_DELAY_S", "0"))
    if delay:
        await asyncio.sleep(delay)
    _log(messages, params)
    return f"answer {messages[-1]['content']}"


def noisy_arm(item: Any, ctx: Any) -> str:
    """An arm that prints to stdout and stderr (the stdio transport must stay clean)."""
    print("NOISE on stdout from an arm")
    print("NOISE on stderr from an arm", file=sys.stderr)
    return f"answer {item}"


def broken_factory(**settings: Any) -> Any:
    """A factory that fails with an unexpected error (an internal error for the daemon)."""
    raise RuntimeError("/secret/path/in/a/message boom")


def same(item: Any, output: Any, label: Any) -> dict[str, Any]:
    """A scorer by import path: the output equals the label."""
    return {"correct": output == label, "outcome": None, "failure_kind": None}


_GATED_CALLS = [0]


async def gated(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """Answer 'x' once the file HRB_GATE_FILE exists (a test opens the gate when it is ready).

    The first HRB_GATE_FREE_CALLS calls (default 0) answer at once.
    """
    _GATED_CALLS[0] += 1
    if _GATED_CALLS[0] <= int(os.environ.get("HRB_GATE_FREE_CALLS", "0")):
        return "x"
    gate = os.environ["HRB_GATE_FILE"]
    while not os.path.exists(gate):  # noqa: ASYNC110, ASYNC240 - another process makes the file
        await asyncio.sleep(0.01)
    return "x"
