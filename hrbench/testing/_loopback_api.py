"""The loopback server's ASGI app.

One request read, its fault chosen, and an OpenAI- or Anthropic-shaped reply (or error) written,
with its bill kept.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import time
import uuid
from typing import Any

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.types import Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - only without the dev extras
    raise ImportError(
        f"hrbench.testing._loopback needs starlette and uvicorn (pip install 'hrbench[dev]'): {exc}"
    ) from exc
from hrbench.testing._loopback_faults import (
    LOG,
    MARKER,
    REPLY,
    Bill,
    Drop,
    Fault,
    ReceivedRequest,
    State,
    echo,
)
from hrbench.testing._loopback_limits import latency
from hrbench.testing._loopback_script import read_script, reshape


def _prompt_of(body: Any) -> str:
    messages = body.get("messages") if isinstance(body, dict) else None
    parts: list[str] = []
    if isinstance(body, dict) and isinstance(body.get("system"), str):
        parts.append(body["system"])
    for m in messages if isinstance(messages, list) else []:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "\n".join(parts)


def _prompt_tokens(how: str, body: dict[str, Any], prompt: str) -> int:
    """Prompt tokens billed: words, UTF-8 bytes, or the model's own tokenizer (bytes without one)."""
    if how == "tiktoken":
        from hrbench.models import count_messages

        counted = count_messages(body.get("messages") or [], str(body.get("model") or ""))
        if counted is not None:
            return counted
        how = "bytes"
    if how == "bytes":
        return len(prompt.encode())
    return len(prompt.split())


def _retry_after(seconds: float, form: str | None) -> str:
    """A ``Retry-After`` value: seconds, or an HTTP-date that many seconds ahead in ``form``."""
    if form is None:
        return f"{seconds:g}"
    t = time.gmtime(math.ceil(time.time() + seconds))
    day, mon = _DAYS[t.tm_wday], _MONTHS[t.tm_mon - 1]
    hms = f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
    if form == "asctime":
        return f"{day[:3]} {mon} {t.tm_mday:2d} {hms} {t.tm_year}"
    if form == "rfc850":
        return f"{day}, {t.tm_mday:02d}-{mon}-{t.tm_year % 100:02d} {hms} GMT"
    zone = "-0000" if form == "minus0000" else "GMT"
    return f"{day[:3]}, {t.tm_mday:02d} {mon} {t.tm_year} {hms} {zone}"


_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class Api:
    """The ASGI endpoint for one API flavour (raw ASGI, so that it can drop a connection)."""

    def __init__(self, state: State, flavour: str) -> None:
        self.state = state
        self.flavour = flavour

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        st = self.state
        request = Request(scope, receive)
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        prompt = _prompt_of(body)
        seed = body.get("seed") if isinstance(body, dict) else None
        fault = self._fault(prompt, seed)
        counted = fault.kind not in ("hang", "late")  # it outlives its client; it is not load
        if counted:
            st.in_flight += 1  # one event loop serves every request: no lock needed
            st.max_in_flight = max(st.max_in_flight, st.in_flight)
        try:
            if counted and st.gather > 0:
                await self._gather()
            await self._serve(scope, receive, send, request, body, prompt, seed, fault)
        finally:
            if counted:
                st.in_flight -= 1

    async def _gather(self) -> None:
        """Wait until ``gather`` requests are in flight at once (a latch: it opens once).

        A client that never gets that many in flight is let through after
        ``gather_timeout_s``, so that its test fails on its assertion instead of hanging.
        """
        st = self.state
        if st.gather_skipped < st.gather_skip:  # the first requests pass (a slow start's probe)
            st.gather_skipped += 1
            return
        if st.gathered is None:
            st.gathered = asyncio.Event()
        gathered = st.gathered
        if st.in_flight >= st.gather:
            gathered.set()
        if gathered.is_set():
            return
        try:
            await asyncio.wait_for(gathered.wait(), st.gather_timeout_s)
        except TimeoutError:
            LOG.warning("only %d of %d requests in flight; gave up gathering", st.max_in_flight, st.gather)
            gathered.set()

    async def _serve(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        request: Request,
        body: Any,
        prompt: str,
        seed: Any,
        fault: Fault,
    ) -> None:
        st = self.state
        if st.record:
            st.requests.append(
                ReceivedRequest(
                    path=scope["path"],
                    headers={k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]},
                    body=body,
                    at=time.monotonic(),
                    prompt=prompt,
                    fault=fault.kind,
                )
            )
        st.arrivals += 1
        limited, limit_headers = self._admit(body, prompt, fault)
        if limited is not None:  # over a rate limit: HTTP 429 at once
            if st.record:
                st.requests[-1].fault = "429"
            await limited(scope, receive, send)
            return
        spike = st.spike.factor_at(st.arrivals, time.monotonic()) if st.spike is not None else 1.0
        delay = latency(st.latency_s, st.latency_sigma, st.rng, spike)
        if delay > 0:
            await asyncio.sleep(delay)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            await self._error(400, "invalid_request_error", "expected a JSON body with messages")(
                scope, receive, send
            )
            return
        if st.api_key is not None and fault.kind not in ("echo_key",):
            if self._key_of(request) != st.api_key:
                await self._error(401, "authentication_error", "invalid API key")(scope, receive, send)
                return
        response = await self._respond(fault, body, prompt, seed, request, receive)
        if response is None:  # drop: start the reply, then close the connection mid-body
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"400")]}
            )
            await send({"type": "http.response.body", "body": b'{"id": "cut', "more_body": True})
            raise Drop("dropped on purpose")
        response.headers.update(limit_headers)
        await response(scope, receive, send)

    def _admit(self, body: Any, prompt: str, fault: Fault) -> tuple[Response | None, dict[str, str]]:
        """Let a request in under the rate limits: ``(None, limit headers)``, or ``(the 429, {})``.

        A scripted fault other than ``ok`` is served as scripted, outside the limits.
        """
        st = self.state
        if st.limits is None or fault.kind != "ok":
            return None, {}
        tokens = _prompt_tokens(st.prompt_tokens, body, prompt) if isinstance(body, dict) else 0
        ok, _, headers = st.limits.admit(self.flavour, max(1, tokens))
        if ok:
            return None, headers
        return self._error(429, "rate_limit_error", "Rate limit reached; please retry", headers), {}

    def _key_of(self, request: Request) -> str | None:
        if self.flavour == "anthropic":
            return request.headers.get("x-api-key")
        auth = request.headers.get("authorization", "")
        return auth[7:] if auth.lower().startswith("bearer ") else None

    def _fault(self, prompt: str, seed: Any) -> Fault:
        st = self.state
        with st.lock:
            if st.queue:
                return st.queue.popleft()
            m = MARKER.search(prompt)
            if m is None:
                return Fault("ok")
            opts = dict(o.split("=", 1) for o in m.group(2).split(":") if o)
            key = (self.flavour, prompt, seed)
            n = st.seen.get(key, 0)
            st.seen[key] = n + 1
        if "n" in opts and n >= int(opts["n"]):
            return Fault("ok")
        return Fault(
            m.group(1),
            retry_after_s=float(opts["retry_after"]) if "retry_after" in opts else None,
            hang_s=float(opts.get("hang", 30.0)),
            encoding=opts.get("enc", "plain"),
            date=opts.get("date"),
        )

    def _error(
        self,
        status: int,
        kind: str,
        message: str,
        headers: dict[str, str] | None = None,
        code: str | None = None,
    ) -> Response:
        if self.flavour == "anthropic":
            payload: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            payload = {"error": {"message": message, "type": kind, "code": code or kind, "param": None}}
        return JSONResponse(payload, status_code=status, headers=headers)

    async def _respond(
        self, fault: Fault, body: dict[str, Any], prompt: str, seed: Any, request: Request, receive: Receive
    ) -> Response | None:
        kind = fault.kind
        ra = fault.retry_after_s
        if kind == "429":
            return self._error(
                429,
                "rate_limit_error",
                "Rate limit reached; please retry",
                {"retry-after": _retry_after(1.0 if ra is None else ra, fault.date)},
            )
        if kind in ("500", "503", "529", "504"):
            headers = {"retry-after": _retry_after(ra, fault.date)} if ra is not None else None
            kinds = {
                "500": "api_error",
                "503": "overloaded_error",
                "529": "overloaded_error",
                "504": "timeout",
            }
            return self._error(int(kind), kinds[kind], f"server error {kind}", headers)
        if kind == "hang":
            await self._hang(fault, receive)
            return self._error(504, "timeout", "hung")
        if kind in ("late", "garbled"):  # the whole reply is generated and billed, then lost
            made = self._reply("ok", body, prompt, seed)
            if kind == "garbled":
                return Response(bytes(made.body)[: len(made.body) // 2], media_type="application/json")
            await self._hang(fault, receive)
            return made
        if kind == "malformed":
            return Response(
                b'{"id": "chatcmpl-broken", "choices": [{"message": {"content": "Par',
                media_type="application/json",
            )
        if kind == "drop":
            return None
        if kind == "quota":
            return self._error(
                402,
                "insufficient_quota",
                "You exceeded your current quota, please check your plan and billing details.",
            )
        if kind == "quota429":
            return self._error(
                429,
                "insufficient_quota",
                "You exceeded your current quota, please check your plan and billing details.",
                code="insufficient_quota",
            )
        if kind == "unauthorized":
            return self._error(401, "authentication_error", "invalid API key")
        if kind == "echo_key":
            key = self._key_of(request) or ""
            return self._error(401, "authentication_error", echo(key, fault.encoding))
        return self._reply(kind, body, prompt, seed)

    async def _hang(self, fault: Fault, receive: Receive) -> None:
        """Wait until ``hang_s`` passes, the client disconnects, or the server stops."""
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(_disconnected(receive))]
        if self.state.stopping is not None:
            waits.append(asyncio.ensure_future(self.state.stopping.wait()))
        try:
            await asyncio.wait(waits, timeout=fault.hang_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    def _reply(self, kind: str, body: dict[str, Any], prompt: str, seed: Any) -> Response:
        st = self.state
        script = read_script(body)  # [[reasoning:N]] and [[tool:NAME:{...}]] markers
        text, truncated = self._text(body, prompt, seed)
        if script.last_tool_result is not None and REPLY.search(prompt) is None and st.reply_fn is None:
            text = script.last_tool_result  # the model answers with what its last tool returned
        prompt_tokens = max(1, _prompt_tokens(st.prompt_tokens, body, prompt))
        cached = int(prompt_tokens * st.cached_fraction)
        reasoning = st.reasoning_tokens if script.reasoning is None else script.reasoning
        text, truncated = _room(st.honour_max_tokens, body, text, truncated, reasoning)
        model = st.serve_model or str(body.get("model") or st.model)
        # a provider that gives one response id per prompt (not distinct draws), or a fresh one
        rid = hashlib.sha256(prompt.encode()).hexdigest()[:24] if st.same_ids else uuid.uuid4().hex[:24]
        if kind in ("content_filter", "refusal", "null_content"):
            reply_text: str | None = "I can't help with that." if kind == "refusal" else None
        else:
            reply_text = text
        n = body.get("n") if self.flavour == "openai" else 1
        n = n if isinstance(n, int) and n >= 1 else 1
        completion = ((len(reply_text.split()) if reply_text else 0) + reasoning) * n
        tokens = (prompt_tokens, cached, completion)
        written = hour = 0
        if self.flavour == "anthropic":
            written = min(st.cache_creation_tokens, prompt_tokens - cached)
            hour = min(st.cache_write_1h_tokens, written)
            split = bool(st.cache_write_1h_tokens)  # the newer split of the writes by lifetime
            payload = _anthropic_payload(
                kind, rid, model, reply_text, reasoning, tokens, (written, hour, split), truncated
            )
        else:
            finish = "length" if truncated else "stop"
            payload = _openai_payload(kind, rid, model, reply_text, reasoning, n, tokens, finish)
        if script.call is not None or script.reasoning:
            shaped = reshape(payload, self.flavour, body, script, rid)
            if shaped is not None:
                completion = shaped * n
                tokens = (prompt_tokens, cached, completion)
        if st.omit_usage:  # like servers that send no usage block
            payload.pop("usage", None)
        if st.limits is not None:
            st.limits.charge_output(self.flavour, completion)
        usd = _bill_usd(st.price, tokens, written - hour, hour)
        st.bills.append(  # one event loop serves every request: no lock needed
            Bill(
                response_id=payload["id"],
                model=model,
                tokens_in=prompt_tokens,
                tokens_out=completion,
                usd=usd,
            )
        )
        return JSONResponse(payload)

    def _text(self, body: dict[str, Any], prompt: str, seed: Any) -> tuple[str, bool]:
        """The reply's text (a ``REPLY:`` marker's, the reply function's, or a hash), and whether it was cut."""
        st = self.state
        call = next(st.calls)
        m = REPLY.search(prompt)
        if m is not None:
            text = m.group(1)
        elif st.reply_fn is not None:
            text = st.reply_fn(prompt, seed, call)
        else:
            basis = f"{prompt}|{seed}|{call}" if st.vary else f"{prompt}|{seed}"
            text = "reply-" + hashlib.sha256(basis.encode()).hexdigest()[:12]
        if st.reply_words > 0:
            text = " ".join(f"w{i}" for i in range(st.reply_words))
        limit = body.get("max_tokens") or body.get("max_completion_tokens")
        if st.honour_max_tokens and isinstance(limit, int) and limit >= 0:
            words = text.split()
            if len(words) > limit:  # the provider stops at max_tokens (a token is a word here)
                return " ".join(words[:limit]), True
        return text, False


def _room(honour: bool, body: dict[str, Any], text: str, truncated: bool, reasoning: int) -> tuple[str, bool]:
    """The reply's text within what its reasoning left of ``max_tokens`` (a token is a word here)."""
    limit = body.get("max_tokens") or body.get("max_completion_tokens")
    if not honour or not reasoning or not isinstance(limit, int) or reasoning >= limit:
        return text, truncated
    words = text.split()
    if len(words) > limit - reasoning:
        return " ".join(words[: limit - reasoning]), True
    return text, truncated


def _anthropic_payload(
    kind: str,
    rid: str,
    model: str,
    reply_text: str | None,
    reasoning: int,
    tokens: tuple[int, int, int],
    writes: tuple[int, int, bool],
    truncated: bool,
) -> dict[str, Any]:
    """An Anthropic Messages reply.

    ``tokens`` is (prompt, cache reads, completion); ``writes`` is (prompt tokens written to the
    cache, how many of them for an hour, whether to split them by lifetime).
    """
    prompt_tokens, cached, completion = tokens
    written, hour, split = writes
    blocks: list[dict[str, Any]] = []
    if reasoning:
        blocks.append({"type": "thinking", "thinking": "hmm " * reasoning, "signature": "sig"})
    if reply_text is not None:
        blocks.append({"type": "text", "text": reply_text})
    payload: dict[str, Any] = {
        "id": f"msg_{rid}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": "refusal"
        if kind in ("content_filter", "refusal")
        else ("max_tokens" if truncated else "end_turn"),
        "stop_sequence": None,
        "usage": {
            "input_tokens": prompt_tokens - cached - written,
            "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": written,
            "output_tokens": completion,
        },
    }
    if split:
        payload["usage"]["cache_creation"] = {
            "ephemeral_5m_input_tokens": written - hour,
            "ephemeral_1h_input_tokens": hour,
        }
    return payload


def _openai_payload(
    kind: str,
    rid: str,
    model: str,
    reply_text: str | None,
    reasoning: int,
    n: int,
    tokens: tuple[int, int, int],
    finish: str,
) -> dict[str, Any]:
    """An OpenAI chat completion with ``n`` choices: ``tokens`` is (prompt, cached, completion)."""
    prompt_tokens, cached, completion = tokens
    message: dict[str, Any] = {"role": "assistant", "content": reply_text, "refusal": None}
    if kind == "refusal":
        message = {"role": "assistant", "content": None, "refusal": reply_text}
    return {
        "id": f"chatcmpl-{rid}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_loopback",
        "choices": [
            {
                "index": i,
                "message": message,
                "finish_reason": "content_filter" if kind == "content_filter" else finish,
                "logprobs": None,
            }
            for i in range(n)
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0},
        },
    }


def _bill_usd(
    price: tuple[float, float] | dict[str, float] | None,
    tokens: tuple[int, int, int],
    write_5m: int,
    write_1h: int,
) -> float:
    """What a reply costs, in USD, at ``price``.

    ``price`` is ``(input, output)`` USD per million tokens, or a table with cache reads and
    writes at their own rates; ``tokens`` is (prompt, cached, completion).
    """
    prompt_tokens, cached, completion = tokens
    if isinstance(price, dict):  # a price table: cache reads and writes at their own rates
        plain = prompt_tokens - cached - write_5m - write_1h
        return (
            plain * price["input"]
            + cached * price.get("cached_input", price["input"])
            + write_5m * price.get("cache_write_5m", price["input"])
            + write_1h * price.get("cache_write_1h", price["input"])
            + completion * price["output"]
        ) / 1e6
    pin, pout = price or (0.0, 0.0)
    return prompt_tokens * pin / 1e6 + completion * pout / 1e6
