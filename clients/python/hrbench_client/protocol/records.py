"""Records on the wire (mirror ``hrbench.records``; the daemon converts): a row, its steps, their usage."""

from __future__ import annotations

from typing import Any

from msgspec import Struct

__all__ = ["Row", "Step", "ToolCall", "Usage"]


class Usage(Struct, kw_only=True):
    """Token counts of one reply: ``tokens_out`` includes reasoning, ``tokens_in`` cached."""

    tokens_in: int = 0
    tokens_out: int = 0
    tokens_reasoning: int = 0
    tokens_cached: int = 0
    provenance: str | None = "reported"
    tokens_cache_write_5m: int = 0
    tokens_cache_write_1h: int = 0


class ToolCall(Struct, kw_only=True):
    """A tool call a model asked for, one form for both providers (mirrors ``hrbench.records.ToolCall``)."""

    id: str
    name: str
    arguments: dict[str, Any] = {}
    error: str | None = None


class Step(Struct, kw_only=True):
    """One step of a run's trace (mirrors ``hrbench.records.Step``).

    ``kind`` ``"tool"`` is a local tool's run (``tool_calls`` the call, ``text`` its result);
    a request step's ``tool_calls`` are the calls its reply asked for.
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


class Row(Struct, kw_only=True):
    """One run of one arm on one item: the seed-002 columns (mirrors ``hrbench.records.Row``).

    ``None`` plays R's ``NA``. ``usd`` is in US dollars, ``seconds`` is wall-clock time.
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
