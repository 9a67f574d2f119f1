"""The loopback server's batch APIs: OpenAI's Batch API and Anthropic's Message Batches.

Routes (under ``/v1``): ``POST /files`` (``purpose=batch``, a JSON Lines file), ``GET /files``,
``GET /files/{id}/content``, ``POST /batches``, ``GET /batches``, ``GET /batches/{id}``,
``POST /batches/{id}/cancel``; ``POST /messages/batches``, ``GET /messages/batches``,
``GET /messages/batches/{id}``, ``GET /messages/batches/{id}/results``,
``POST /messages/batches/{id}/cancel``.

A batch follows a :class:`Script`: its states in order, each held so many seconds (minutes
compressed to fractions of a second), then its end: ``completed``, ``expired`` (only
``processed`` of its lines were done), ``cancelled`` or ``failed`` (validation: none done).
Its lines are answered as the synchronous routes answer them (the same text, usage and
``[[reply:...]]`` markers), once, when the batch ends, and billed then in
:attr:`~hrbench.testing.LoopbackServer.bills` at ``discount`` times the server's ``price`` (the
batch rate). A line whose prompt carries ``[[batch:error]]`` is refused (HTTP 400, not billed).
Results come out of order. A cancel ends the batch ``cancelled`` after ``cancel_s``, the lines
done by then billed. Faults: :meth:`Batches.fail_status` answers the next status checks with
an HTTP error (a 500), :meth:`Batches.lose_create` makes the next batch but loses the reply
(HTTP 500 after ``hold_s``).
"""

from __future__ import annotations

import asyncio
import datetime
import json
import random
import threading
import time
import uuid
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hrbench.testing._loopback_api import Api, _prompt_of
from hrbench.testing._loopback_faults import MARKER, State

__all__ = ["Batches", "Script"]

LINE_ERROR = "[[batch:error]]"
"""A prompt marker: the line carrying it is refused (HTTP 400) and not billed."""

_REPLY_KINDS = ("ok", "content_filter", "refusal", "null_content")


@dataclass(frozen=True)
class Script:
    """How one batch goes.

    Args:
        steps: ``(state, seconds)`` before its end, e.g. ``(("validating", 0.01), ("in_progress", 0.05))``.
        end: ``"completed"``, ``"expired"``, ``"cancelled"`` or ``"failed"``.
        processed: the share of lines done when it ends ``expired`` or ``cancelled`` (first lines first).
        error: the message of a ``failed`` batch.
        cancel_done: the share of lines done when it is cancelled; ``None``: the share of its
            ``in_progress`` time gone by then.
    """

    steps: tuple[tuple[str, float], ...] = (("validating", 0.01), ("in_progress", 0.03), ("finalizing", 0.01))
    end: str = "completed"
    processed: float = 0.5
    error: str = "the input file is not valid"
    cancel_done: float | None = None


@dataclass
class _Batch:
    id: str
    flavour: str
    lines: list[dict[str, Any]]
    script: Script
    created: float
    wall: float
    meta: dict[str, Any] = field(default_factory=dict)
    input_file: str | None = None
    cancelled_at: float | None = None
    invalid: str | None = None
    ended: str | None = None
    output: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


class Batches:
    """The batch endpoints' state and script (one per :class:`~hrbench.testing.LoopbackServer`).

    Attributes:
        discount: a line's bill as a share of the server's ``price`` (0.5, the batch rate).
        cancel_s: how long a cancelled batch stays ``cancelling`` (seconds).
        uploaded: how many times each ``custom_id`` was uploaded in a batch (a :class:`~collections.Counter`).
        created: the ids of the batches made, in order; ``sizes`` their lines, by id.
        states_seen: every state a status check answered, in order, as ``(batch id, state)``.
        results_read: how many times a batch's results were read, by batch id.
    """

    def __init__(self, state: State) -> None:
        self.state = state
        self.apis = {"openai": Api(state, "openai"), "anthropic": Api(state, "anthropic")}
        self.discount = 0.5
        self.cancel_s = 0.02
        self.default = Script()
        self.scripts: deque[Script] = deque()
        self.status_faults: deque[int] = deque()
        self.lost_creates: deque[float] = deque()
        self.uploaded: Counter[str] = Counter()
        self.created: list[str] = []
        self.sizes: dict[str, int] = {}
        self.states_seen: list[tuple[str, str]] = []
        self.results_read: Counter[str] = Counter()
        self._batches: dict[str, _Batch] = {}
        self._files: dict[str, tuple[str, bytes, float]] = {}
        self._lock = threading.Lock()

    # -- scripting (from the test's thread) -------------------------------------------------------
    def script(self, *scripts: Script, default: Script | None = None) -> None:
        """Queue how the next batches go (one script each); ``default`` for those after."""
        with self._lock:
            self.scripts.extend(scripts)
            if default is not None:
                self.default = default

    def fail_status(self, *statuses: int) -> None:
        """Answer the next status checks (``GET .../batches/{id}``) with these HTTP statuses."""
        with self._lock:
            self.status_faults.extend(statuses)

    def lose_create(self, hold_s: float = 0.0) -> None:
        """Make the next batch, then lose its reply: HTTP 500 after ``hold_s`` seconds."""
        with self._lock:
            self.lost_creates.append(hold_s)

    def state_of(self, batch_id: str) -> str:
        """A batch's state now (``"validating"``, ... as a status check would say, in OpenAI's words)."""
        with self._lock:
            return self._state(self._batches[batch_id], time.monotonic())

    def routes(self) -> list[Route]:
        """The Starlette routes of both batch APIs."""
        return [
            Route("/v1/files", self._files_post, methods=["POST"]),
            Route("/v1/files", self._files_list, methods=["GET"]),
            Route("/v1/files/{fid}/content", self._file_content, methods=["GET"]),
            Route("/v1/batches", self._openai_create, methods=["POST"]),
            Route("/v1/batches", self._list("openai"), methods=["GET"]),
            Route("/v1/batches/{bid}", self._get("openai"), methods=["GET"]),
            Route("/v1/batches/{bid}/cancel", self._cancel("openai"), methods=["POST"]),
            Route("/v1/messages/batches", self._anthropic_create, methods=["POST"]),
            Route("/v1/messages/batches", self._list("anthropic"), methods=["GET"]),
            Route("/v1/messages/batches/{bid}", self._get("anthropic"), methods=["GET"]),
            Route("/v1/messages/batches/{bid}/cancel", self._cancel("anthropic"), methods=["POST"]),
            Route("/v1/messages/batches/{bid}/results", self._anthropic_results, methods=["GET"]),
        ]

    # -- the timeline -----------------------------------------------------------------------------
    def _state(self, b: _Batch, now: float) -> str:
        """The batch's state at ``now`` (monotonic seconds); ends it (answers and bills) once."""
        if b.ended is not None:
            return b.ended
        if b.cancelled_at is not None:
            if now - b.cancelled_at < self.cancel_s:
                return "cancelling"
            share = b.script.cancel_done
            return self._end(b, "cancelled", self._done_share(b, b.cancelled_at) if share is None else share)
        elapsed = now - b.created
        for name, seconds in b.script.steps:
            if b.invalid is not None and name != "validating":
                return self._end(b, "failed", 0.0)
            if elapsed < seconds:
                return name
            elapsed -= seconds
        if b.invalid is not None or b.script.end == "failed":
            return self._end(b, "failed", 0.0)
        share = 1.0 if b.script.end == "completed" else b.script.processed
        return self._end(b, b.script.end, share)

    def _done_share(self, b: _Batch, at: float) -> float:
        """The share of lines done by ``at``: those of the ``in_progress`` time gone by."""
        elapsed = at - b.created
        for name, seconds in b.script.steps:
            if name == "in_progress":
                return max(0.0, min(1.0, elapsed / seconds)) if seconds > 0 else 1.0
            if name == "finalizing" and elapsed >= 0:
                return 1.0
            elapsed -= seconds
        return 0.0

    def _end(self, b: _Batch, end: str, share: float) -> str:
        b.ended = end
        n_done = 0 if end == "failed" else round(share * len(b.lines))
        not_done = "batch_expired" if end == "expired" else "batch_cancelled"
        for i, line in enumerate(b.lines):
            if end == "failed":
                continue
            if i >= n_done:
                b.counts["failed"] += 1
                b.errors.append(self._not_done(b, line["custom_id"], not_done))
                continue
            out = self._answer(b, line)
            b.counts["completed" if out.get("ok") else "failed"] += 1
            out.pop("ok", None)
            b.output.append(out)
        rng = random.Random(b.id)  # out of order, as a provider's results come
        rng.shuffle(b.output)
        rng.shuffle(b.errors)
        return end

    def _answer(self, b: _Batch, line: dict[str, Any]) -> dict[str, Any]:
        body = line["body"]
        prompt = _prompt_of(body)
        cid = line["custom_id"]
        if LINE_ERROR in prompt:
            error = {"message": "the line was refused", "type": "invalid_request_error"}
            if b.flavour == "anthropic":
                return {
                    "ok": False,
                    "custom_id": cid,
                    "result": {"type": "errored", "error": {"type": "error", "error": error}},
                }
            return {
                "ok": False,
                "custom_id": cid,
                "response": {"status_code": 400, "body": {"error": error}},
                "error": None,
            }
        m = MARKER.search(prompt)
        kind = m.group(1) if m is not None and m.group(1) in _REPLY_KINDS else "ok"
        bills = self.state.bills
        n = len(bills)
        made = self.apis[b.flavour]._reply(kind, body, prompt, body.get("seed"))
        if len(bills) > n:  # billed at the batch rate
            bill = bills[-1]
            bills[-1] = type(bill)(
                bill.response_id, bill.model, bill.tokens_in, bill.tokens_out, bill.usd * self.discount
            )
        payload = json.loads(bytes(made.body))
        if b.flavour == "anthropic":
            return {"ok": True, "custom_id": cid, "result": {"type": "succeeded", "message": payload}}
        response = {"status_code": 200, "request_id": f"req_{uuid.uuid4().hex[:12]}", "body": payload}
        return {
            "ok": True,
            "id": f"batch_req_{uuid.uuid4().hex[:12]}",
            "custom_id": cid,
            "response": response,
            "error": None,
        }

    def _not_done(self, b: _Batch, cid: str, code: str) -> dict[str, Any]:
        if b.flavour == "anthropic":
            return {
                "custom_id": cid,
                "result": {"type": "expired" if code == "batch_expired" else "canceled"},
            }
        message = "This request could not be executed before the completion window expired."
        if code == "batch_cancelled":
            message = "This request was cancelled before it was executed."
        return {
            "id": f"batch_req_{uuid.uuid4().hex[:12]}",
            "custom_id": cid,
            "response": None,
            "error": {"code": code, "message": message},
        }

    # -- OpenAI ----------------------------------------------------------------------------------------
    async def _files_post(self, request: Request) -> Response:
        if (refused := self._auth(request, "openai")) is not None:
            return refused
        parts = _form(request.headers.get("content-type", ""), await request.body())
        if parts.get("purpose", (None, b""))[1] != b"batch" or "file" not in parts:
            return _error("openai", 400, "expected a multipart form with purpose=batch and a file")
        name, data = parts["file"]
        fid = f"file-{uuid.uuid4().hex[:20]}"
        with self._lock:
            self._files[fid] = (name or "batch.jsonl", data, time.time())
        return JSONResponse(
            {"id": fid, "object": "file", "bytes": len(data), "filename": name, "purpose": "batch"}
        )

    async def _files_list(self, request: Request) -> Response:
        with self._lock:
            data = [
                {
                    "id": fid,
                    "object": "file",
                    "bytes": len(raw),
                    "filename": name,
                    "purpose": "batch",
                    "created_at": int(at),
                }
                for fid, (name, raw, at) in self._files.items()
            ]
        return JSONResponse({"object": "list", "data": data})

    async def _file_content(self, request: Request) -> Response:
        fid = request.path_params["fid"]
        with self._lock:
            if fid in self._files:
                return Response(self._files[fid][1], media_type="application/jsonl")
            for b in self._batches.values():
                for kind, rows in (("out", b.output), ("err", b.errors)):
                    if fid == f"file-{kind}-{b.id}":
                        self.results_read[b.id] += 1
                        return Response(
                            b"".join(json.dumps(r).encode() + b"\n" for r in rows),
                            media_type="application/jsonl",
                        )
        return _error("openai", 404, f"no file {fid}")

    async def _openai_create(self, request: Request) -> Response:
        if (refused := self._auth(request, "openai")) is not None:
            return refused
        try:
            body = json.loads(await request.body())
            fid = body["input_file_id"]
            endpoint = body["endpoint"]
        except (ValueError, KeyError, TypeError):
            return _error("openai", 400, "expected input_file_id and endpoint")
        with self._lock:
            if fid not in self._files:
                return _error("openai", 400, f"no file {fid}")
            raw = self._files[fid][1]
        lines, invalid = _read_jsonl(raw, endpoint)
        b = self._make("openai", lines, invalid, body.get("metadata") or {})
        b.input_file = fid
        return await self._created(b)

    # -- Anthropic ---------------------------------------------------------------------------------
    async def _anthropic_create(self, request: Request) -> Response:
        if (refused := self._auth(request, "anthropic")) is not None:
            return refused
        try:
            requests = json.loads(await request.body())["requests"]
            lines = [{"custom_id": r["custom_id"], "body": r["params"]} for r in requests]
        except (ValueError, KeyError, TypeError):
            return _error("anthropic", 400, "expected requests with custom_id and params")
        ids = [ln["custom_id"] for ln in lines]
        if len(set(ids)) != len(ids) or not ids:
            return _error("anthropic", 400, "custom_id values must be unique and requests not empty")
        return await self._created(self._make("anthropic", lines, None, {}))

    async def _anthropic_results(self, request: Request) -> Response:
        bid = request.path_params["bid"]
        with self._lock:
            b = self._batches.get(bid)
            if b is None or b.flavour != "anthropic":
                return _error("anthropic", 404, f"no batch {bid}")
            if self._state(b, time.monotonic()) not in ("completed", "expired", "cancelled", "failed"):
                return _error("anthropic", 400, "the batch has not ended")
            self.results_read[bid] += 1
            rows = b.output + b.errors
        return Response(
            b"".join(json.dumps(r).encode() + b"\n" for r in rows), media_type="application/x-jsonl"
        )

    # -- shared ------------------------------------------------------------------------------------------
    def _make(
        self, flavour: str, lines: list[dict[str, Any]], invalid: str | None, meta: dict[str, Any]
    ) -> _Batch:
        prefix = "batch_" if flavour == "openai" else "msgbatch_"
        with self._lock:
            script = self.scripts.popleft() if self.scripts else self.default
            b = _Batch(
                id=prefix + uuid.uuid4().hex[:20],
                flavour=flavour,
                lines=lines,
                script=script,
                created=time.monotonic(),
                wall=time.time(),
                meta=dict(meta),
                invalid=invalid,
            )
            self._batches[b.id] = b
            self.created.append(b.id)
            self.sizes[b.id] = len(lines)
            self.uploaded.update(ln["custom_id"] for ln in lines)
        return b

    async def _created(self, b: _Batch) -> Response:
        with self._lock:
            hold = self.lost_creates.popleft() if self.lost_creates else None
        if hold is not None:  # made, but the reply is lost
            if hold > 0:
                await asyncio.sleep(hold)
            return _error(b.flavour, 500, "the server failed while answering")
        with self._lock:
            return JSONResponse(self._object(b, time.monotonic()))

    def _get(self, flavour: str) -> Any:
        async def get(request: Request) -> Response:
            bid = request.path_params["bid"]
            with self._lock:
                if self.status_faults:
                    status = self.status_faults.popleft()
                    return _error(flavour, status, f"server error {status}")
                b = self._batches.get(bid)
                if b is None or b.flavour != flavour:
                    return _error(flavour, 404, f"no batch {bid}")
                now = time.monotonic()  # one moment: the state answered is the state kept
                obj = self._object(b, now)
                self.states_seen.append((bid, self._state(b, now)))
            return JSONResponse(obj)

        return get

    def _list(self, flavour: str) -> Any:
        async def listed(request: Request) -> Response:
            now = time.monotonic()
            with self._lock:
                mine = [b for b in reversed(list(self._batches.values())) if b.flavour == flavour]
                data = [self._object(b, now) for b in mine]
            return JSONResponse(
                {
                    "object": "list",
                    "data": data,
                    "has_more": False,
                    "first_id": data[0]["id"] if data else None,
                    "last_id": data[-1]["id"] if data else None,
                }
            )

        return listed

    def _cancel(self, flavour: str) -> Any:
        async def cancel(request: Request) -> Response:
            bid = request.path_params["bid"]
            now = time.monotonic()
            with self._lock:
                b = self._batches.get(bid)
                if b is None or b.flavour != flavour:
                    return _error(flavour, 404, f"no batch {bid}")
                if (
                    self._state(b, now) not in ("completed", "expired", "cancelled", "failed")
                    and b.cancelled_at is None
                ):
                    b.cancelled_at = now
                return JSONResponse(self._object(b, now))

        return cancel

    def _object(self, b: _Batch, now: float) -> dict[str, Any]:
        state = self._state(b, now)
        n = len(b.lines)
        done, failed = b.counts["completed"], b.counts["failed"]
        if b.flavour == "anthropic":
            status = {"cancelling": "canceling"}.get(state, state)
            if state in ("completed", "expired", "cancelled", "failed"):
                status = "ended"
            elif state != "cancelling":
                status = "in_progress"
            expired = failed if state == "expired" else 0
            canceled = failed if state == "cancelled" else 0
            return {
                "id": b.id,
                "type": "message_batch",
                "processing_status": status,
                "request_counts": {
                    "processing": n - done - failed if b.ended is None else 0,
                    "succeeded": done,
                    "errored": failed - expired - canceled,
                    "canceled": canceled,
                    "expired": expired,
                },
                "created_at": datetime.datetime.fromtimestamp(b.wall, datetime.UTC)
                .isoformat()
                .replace("+00:00", "Z"),
                "cancel_initiated_at": None if b.cancelled_at is None else "2026-01-01T00:00:00Z",
                "ended_at": None if b.ended is None else "2026-01-01T00:00:00Z",
                "results_url": None if b.ended is None else f"/v1/messages/batches/{b.id}/results",
            }
        errors = None
        if state == "failed":
            errors = {
                "object": "list",
                "data": [{"code": "invalid_request", "message": b.invalid or b.script.error, "line": None}],
            }
        return {
            "id": b.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": errors,
            "input_file_id": b.input_file,
            "completion_window": "24h",
            "status": state,
            "output_file_id": f"file-out-{b.id}" if b.ended and b.output else None,
            "error_file_id": f"file-err-{b.id}" if b.ended and b.errors else None,
            "created_at": int(b.wall),
            "request_counts": {"total": n, "completed": done, "failed": failed},
            "metadata": b.meta,
        }

    def _auth(self, request: Request, flavour: str) -> Response | None:
        key = self.state.api_key
        if key is None or self.apis[flavour]._key_of(request) == key:
            return None
        return _error(flavour, 401, "invalid API key")


def _read_jsonl(raw: bytes, endpoint: str) -> tuple[list[dict[str, Any]], str | None]:
    """The lines of an OpenAI batch file, and why it is invalid (``None`` when it is not)."""
    lines: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, text in enumerate(raw.splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
            cid, url, body = line["custom_id"], line["url"], line["body"]
        except (ValueError, KeyError, TypeError):
            return lines, f"line {i} is not a batch request"
        if url != endpoint or not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return lines, f"line {i}: url {url!r} is not {endpoint!r}, or its body has no messages"
        if cid in seen:
            return lines, f"line {i}: custom_id {cid!r} is not unique"
        seen.add(cid)
        lines.append({"custom_id": cid, "body": body})
    return lines, None if lines else "the file has no lines"


def _form(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """The fields of a ``multipart/form-data`` body: name -> (file name or ``None``, bytes)."""
    from email.parser import BytesParser
    from email.policy import HTTP

    if not content_type.startswith("multipart/form-data"):
        return {}
    message = BytesParser(policy=HTTP).parsebytes(
        b"content-type: " + content_type.encode() + b"\r\n\r\n" + body
    )
    out: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if isinstance(name, str):
            payload = part.get_payload(decode=True)
            out[name] = (part.get_filename(), payload if isinstance(payload, bytes) else b"")
    return out


def _error(flavour: str, status: int, message: str) -> Response:
    if flavour == "anthropic":
        return JSONResponse(
            {"type": "error", "error": {"type": "api_error", "message": message}}, status_code=status
        )
    return JSONResponse(
        {"error": {"message": message, "type": "invalid_request_error", "code": None}}, status_code=status
    )
