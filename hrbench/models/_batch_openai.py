"""OpenAI's Batch API, and any OpenAI-compatible ``base_url`` that offers it.

https://platform.openai.com/docs/guides/batch and https://platform.openai.com/docs/api-reference/batch:
the lines are a JSON Lines file (``{"custom_id", "method": "POST", "url", "body"}``) uploaded
to ``POST /files`` with ``purpose=batch``; ``POST /batches`` makes the batch
(``completion_window`` ``24h``) with the metadata ``hrbench_tag``; ``GET /batches/{id}`` says its
status; its output and error files (``GET /files/{id}/content``) hold each line's reply
(``{"custom_id", "response": {"status_code", "body"}, "error"}``), in no particular order;
``POST /batches/{id}/cancel`` cancels it. A file or batch whose upload reply was lost is found
again by its file name (``hrbench-<tag>.jsonl``) and its metadata tag (``GET /files``,
``GET /batches``).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

import msgspec

from hrbench.models._batch import BatchApi, BatchLost, BatchStatus, LineResult, jsonl
from hrbench.models._replies import as_int

__all__ = ["OpenAIBatchApi"]

_ERRORS = {"batch_expired": "expired", "batch_cancelled": "cancelled"}
"""OpenAI's per-line error codes of lines never processed, and the line state they mean."""


class OpenAIBatchApi(BatchApi):
    r"""The Batch API at an :class:`~hrbench.models.OpenAIClient`'s ``base_url``.

    Example:
        >>> from hrbench.models import OpenAIClient
        >>> api = OpenAIBatchApi(OpenAIClient("gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key_env=None))
        >>> api.line("k1", {"model": "gpt-4o-mini", "messages": []})
        b'{"custom_id":"k1","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini","messages":[]}}\n'
    """

    provider = "openai"
    max_lines = 50_000

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.endpoint = urlsplit(client.url).path or "/v1/chat/completions"
        self._head = b'{"custom_id":'
        self._mid = b',"method":"POST","url":' + msgspec.json.encode(self.endpoint) + b',"body":'

    def line(self, custom_id: str, body: dict[str, Any]) -> bytes:
        """One JSONL line: ``custom_id``, ``POST`` to the chat completions path, ``body``."""
        return self._head + msgspec.json.encode(custom_id) + self._mid + msgspec.json.encode(body) + b"}\n"

    async def submit(self, tag: str, lines: list[bytes]) -> BatchStatus:
        """Upload the lines as a file, then make the batch (see the module docstring)."""
        file_id = await self._upload(tag, b"".join(lines))
        body = {
            "input_file_id": file_id,
            "endpoint": self.endpoint,
            "completion_window": "24h",
            "metadata": {"hrbench_tag": tag},
        }
        return self._status(await self.once("POST", "/batches", content=msgspec.json.encode(body)))

    async def _upload(self, tag: str, data: bytes) -> str:
        name = f"hrbench-{tag}.jsonl"
        try:
            got = await self.once(
                "POST", "/files", files={"file": (name, data, "application/jsonl")}, data={"purpose": "batch"}
            )
        except BatchLost:  # the file may be there: use it, else upload it again (a file is no batch)
            found = await self._file_named(name)
            if found is not None:
                return found
            got = await self.once(
                "POST", "/files", files={"file": (name, data, "application/jsonl")}, data={"purpose": "batch"}
            )
        file_id = got.get("id") if isinstance(got, dict) else None
        if not isinstance(file_id, str):
            raise BatchLost(self._say("POST /files: a reply with no file id"))
        return file_id

    async def _file_named(self, name: str) -> str | None:
        listed = await self.call("GET", "/files", params={"purpose": "batch"})
        for f in listed.get("data") or [] if isinstance(listed, dict) else []:
            if isinstance(f, dict) and f.get("filename") == name and isinstance(f.get("id"), str):
                return str(f["id"])
        return None

    async def find(
        self, tag: str, lines: int, since: float, taken: Collection[str] = ()
    ) -> BatchStatus | None:
        """The batch whose metadata ``hrbench_tag`` is ``tag``, listed newest first back to ``since``."""
        after: str | None = None
        while True:
            params: dict[str, Any] = {"limit": 100}
            if after is not None:
                params["after"] = after
            page = await self.call("GET", "/batches", params=params)
            data = page.get("data") if isinstance(page, dict) else None
            if not isinstance(data, list) or not data:
                return None
            for raw in data:
                status = self._status(raw) if isinstance(raw, dict) else None
                if status is not None and status.tag == tag:
                    return status
            last = self._status(data[-1]) if isinstance(data[-1], dict) else None
            if not page.get("has_more") or last is None or (last.created or 0.0) < since - 600:
                return None
            after = last.id

    async def status(self, batch_id: str) -> BatchStatus:
        """``GET /batches/{id}``."""
        return self._status(await self.call("GET", f"/batches/{batch_id}"))

    async def cancel(self, batch_id: str) -> BatchStatus:
        """``POST /batches/{id}/cancel``."""
        return self._status(await self.call("POST", f"/batches/{batch_id}/cancel"))

    async def results(self, status: BatchStatus) -> list[LineResult]:
        """Every line of the output and error files (none when the batch failed whole)."""
        out: list[LineResult] = []
        for file_id in (status.results, status.errors):
            if file_id:
                data = await self.call("GET", f"/files/{file_id}/content", raw=True)
                out.extend(r for r in map(self._line, jsonl(data)) if r is not None)
        return out

    def _line(self, raw: Any) -> LineResult | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("custom_id"), str):
            return None
        cid = raw["custom_id"]
        error = raw.get("error")
        if isinstance(error, dict):
            code = str(error.get("code") or "")
            state = _ERRORS.get(code, "failed")
            why = "batch line expired" if state == "expired" else "batch line cancelled"
            if state == "failed":
                why = f"batch line failed: {code}: {error.get('message')}"
            return LineResult(cid, state, self.failed(why, None))
        response = raw.get("response")
        if not isinstance(response, dict):
            return LineResult(cid, "failed", self.failed("batch line with no response", None))
        status = as_int(response.get("status_code"))
        if 200 <= status < 300:
            return LineResult(cid, "done", self.reply(response.get("body"), cid))
        return LineResult(cid, "failed", self.refused(status, response.get("body")))

    def _status(self, raw: Any) -> BatchStatus:
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
            raise BatchLost(self._say("a batch reply with no batch id"))
        counts = raw.get("request_counts") or {}
        errors = raw.get("errors") or {}
        error = None
        if isinstance(errors, dict) and isinstance(errors.get("data"), list) and errors["data"]:
            first = errors["data"][0]
            if isinstance(first, dict):
                error = f"{first.get('code')}: {first.get('message')}" + (
                    f" (line {first['line']})" if first.get("line") is not None else ""
                )
        meta = raw.get("metadata") or {}
        state = str(raw.get("status") or "")
        return BatchStatus(
            id=raw["id"],
            state="cancelling" if state == "canceling" else "cancelled" if state == "canceled" else state,
            total=as_int(counts.get("total")),
            done=as_int(counts.get("completed")),
            failed=as_int(counts.get("failed")),
            results=raw.get("output_file_id") if isinstance(raw.get("output_file_id"), str) else None,
            errors=raw.get("error_file_id") if isinstance(raw.get("error_file_id"), str) else None,
            error=error,
            tag=meta.get("hrbench_tag") if isinstance(meta, dict) else None,
            created=float(raw["created_at"]) if isinstance(raw.get("created_at"), int | float) else None,
        )
