"""A trace with every kind of step, and its encoding with every field (as traces were once stored)."""

from __future__ import annotations

from typing import Any

import msgspec

from hrbench.records import Step, ToolCall, Usage

REFUSAL = "the governor refused a request: token_cap_reached (the next request's worst case)"


def rich_trace(lid: str) -> list[Step]:
    """Steps that between them set every field of ``Step``, and leave each at its default somewhere."""
    return [
        Step(
            ledger_id=lid,
            kind="attempt",
            key="k0",
            model="m-1",
            draw_index=1,
            error="HTTP 500: boom",
            usage=Usage(tokens_in=3, tokens_out=1),
            usd=0.001,
            usd_nominal=0.001,
            seconds=0.5,
            messages=[{"role": "user", "content": "Capital of France?"}],
        ),  # fmt: skip
        Step(
            ledger_id=lid,
            key="k1",
            model="m-1",
            draw_index=1,
            text="Paris",
            finish_reason="stop",
            response_id="resp-1",
            usage=Usage(tokens_in=12, tokens_out=3, provenance="estimated"),
            usd=0.0,
            usd_nominal=None,
            seconds=0.25,
            messages=[{"role": "user", "content": "Capital of France?"}],
            tool_calls=[ToolCall(id="c1", name="lookup", arguments={"city": "Paris"})],
        ),  # fmt: skip
        Step(
            ledger_id=lid,
            kind="tool",
            source="tool",
            text="48.9 N",
            tool_calls=[ToolCall(id="c1", name="lookup", error="bad arguments")],
        ),  # fmt: skip
        Step(
            ledger_id=lid, key="k2", source="cache", usd=None, usd_nominal=0.002, usage=Usage(provenance=None)
        ),
        Step(ledger_id=lid, key="k3", source="refused", error=REFUSAL),
        Step(ledger_id=lid, kind="note", source="output", text="Paris"),
    ]


def full_json(traces: dict[str, list[Step]]) -> bytes:
    """``{ledger_id: steps}`` as JSON with every field of every step, nulls and defaults included."""
    return msgspec.json.encode({k: [_full(s) for s in v] for k, v in traces.items()})


def _full(step: Step) -> dict[str, Any]:
    return msgspec.structs.asdict(step)  # every field; Usage and ToolCall encode every field of their own
