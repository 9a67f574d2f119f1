"""Anthropic's Message Batches API.

https://docs.anthropic.com/en/docs/build-with-claude/batch-processing and
https://docs.anthropic.com/en/api/creating-message-batches: ``POST /messages/batches`` takes
``{"requests": [{"custom_id", "params"}]}`` (``params``: a Messages body); ``GET
/messages/batches/{id}`` gives its ``processing_status`` (``in_progress``, ``canceling``,
``ended``) and ``request_counts``; ``GET /messages/batches/{id}/results`` gives one JSON line per
request (``{"custom_id", "result": {"type": "succeeded" | "errored" | "canceled" | "expired"}}``),
in no particular order; ``POST /messages/batches/{id}/cancel`` cancels it. A ``custom_id`` is 1 to
64 letters, digits, ``-`` and ``_``.

The API keeps no metadata on a batch: one whose upload reply was lost is found again in the
list (``GET /messages/batches``, newest first) as the batch made since the upload began with as
many requests, that no other batch of the benchmark already is.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection
from typing import Any

import msgspec

from hrbench.models._batch import BatchApi, BatchLost, BatchStatus, LineResult, jsonl
from hrbench.models._replies import as_int

__all__ = ["AnthropicBatchApi"]


class AnthropicBatchApi(BatchApi):
    """Message Batches at an :class:`~hrbench.models.AnthropicClient`'s ``base_url``.

    Example:
        >>> from hrbench.models import AnthropicClient
        >>> api = AnthropicBatchApi(AnthropicClient("claude-haiku-4-5", base_url="http://127.0.0.1:9/v1"))
        >>> api.line("k1", {"model": "claude-haiku-4-5", "max_tokens": 5, "messages": []})
        b'{"custom_id":"k1","params":{"model":"claude-haiku-4-5","max_tokens":5,"messages":[]}}'
    """

    provider = "anthropic"
    max_lines = 100_000

    def line(self, custom_id: str, body: dict[str, Any]) -> bytes:
        """One request of the batch: ``custom_id`` and the Messages ``params``."""
        return (
            b'{"custom_id":'
            + msgspec.json.encode(custom_id)
            + b',"params":'
            + msgspec.json.encode(body)
            + b"}"
        )

    async def submit(self, tag: str, lines: list[bytes]) -> BatchStatus:
        """``POST /messages/batches`` with every line (``tag`` is not sent: the API keeps none)."""
        body = b'{"requests":[' + b",".join(lines) + b"]}"
        return self._status(await self.once("POST", "/messages/batches", content=body))

    async def find(
        self, tag: str, lines: int, since: float, taken: Collection[str] = ()
    ) -> BatchStatus | None:
        """The oldest batch made since ``since`` (less a minute of clock skew) with ``lines`` requests, not ``taken``."""
        found: list[BatchStatus] = []
        after: str | None = None
        while True:
            params: dict[str, Any] = {"limit": 100}
            if after is not None:
                params["after_id"] = after
            page = await self.call("GET", "/messages/batches", params=params)
            data = page.get("data") if isinstance(page, dict) else None
            if not isinstance(data, list) or not data:
                break
            statuses = [self._status(raw) for raw in data if isinstance(raw, dict)]
            found += [
                s
                for s in statuses
                if s.total == lines and s.id not in taken and (s.created or 0) >= since - 60
            ]
            oldest = min((s.created or 0.0 for s in statuses), default=0.0)
            if not page.get("has_more") or oldest < since - 60:
                break
            after = str(page.get("last_id") or statuses[-1].id)
        return min(found, key=lambda s: s.created or 0.0) if found else None

    async def status(self, batch_id: str) -> BatchStatus:
        """``GET /messages/batches/{id}``."""
        return self._status(await self.call("GET", f"/messages/batches/{batch_id}"))

    async def cancel(self, batch_id: str) -> BatchStatus:
        """``POST /messages/batches/{id}/cancel``."""
        return self._status(await self.call("POST", f"/messages/batches/{batch_id}/cancel"))

    async def results(self, status: BatchStatus) -> list[LineResult]:
        """Every line of ``GET /messages/batches/{id}/results``."""
        data = await self.call("GET", f"/messages/batches/{status.id}/results", raw=True)
        return [r for r in map(self._line, jsonl(data)) if r is not None]

    def _line(self, raw: Any) -> LineResult | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("custom_id"), str):
            return None
        cid = raw["custom_id"]
        result = raw.get("result") or {}
        kind = result.get("type") if isinstance(result, dict) else None
        if kind == "succeeded":
            return LineResult(cid, "done", self.reply(result.get("message"), cid))
        if kind in ("expired", "canceled"):
            state = "expired" if kind == "expired" else "cancelled"
            return LineResult(cid, state, self.failed(f"batch line {state}", None))
        error = result.get("error") if isinstance(result, dict) else None
        inner = error.get("error") if isinstance(error, dict) else None
        detail = inner if isinstance(inner, dict) else error if isinstance(error, dict) else {}
        why = f"{detail.get('type')}: {detail.get('message')}" if detail else "no result"
        return LineResult(cid, "failed", self.failed(f"batch line failed: {why}", None))

    def _status(self, raw: Any) -> BatchStatus:
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
            raise BatchLost(self._say("a batch reply with no batch id"))
        counts = raw.get("request_counts") or {}
        n = {k: as_int(counts.get(k)) for k in ("processing", "succeeded", "errored", "canceled", "expired")}
        state = str(raw.get("processing_status") or "")
        if state == "canceling":
            state = "cancelling"
        elif state == "ended":
            state = (
                "cancelled" if raw.get("cancel_initiated_at") else "expired" if n["expired"] else "completed"
            )
        return BatchStatus(
            id=raw["id"],
            state=state,
            total=sum(n.values()),
            done=n["succeeded"],
            failed=n["errored"] + n["canceled"] + n["expired"],
            results=raw.get("results_url") if isinstance(raw.get("results_url"), str) else None,
            created=_when(raw.get("created_at")),
        )


def _when(value: Any) -> float | None:
    """An RFC 3339 time as Unix seconds, or ``None``."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
