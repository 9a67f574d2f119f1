"""The model lm-eval runs the tasks of this folder against: an OpenAI-compatible server on 127.0.0.1.

Two routes, both deterministic:

- ``POST /v1/chat/completions`` (lm-eval's ``local-chat-completions``, the ``hr_arith``
  generation task): the sum, product or difference asked, each product one too many on its
  second call; ``8 - 5`` is answered with no number on its first call (lm-eval's regex filter
  then writes its ``[invalid]`` placeholder: case H4-05, doc 5 repeat 1).
- ``POST /v1/completions`` with ``echo`` and ``logprobs`` (lm-eval's ``local-completions``
  with ``tokenizer_backend=tiktoken``, the loglikelihood tasks): every token gets a
  loglikelihood in (-2.5, 0) from its id alone, and is the greedy one unless its id is a
  multiple of 3; so the choices' loglikelihoods mix ``-0.x`` and ``-1.x`` (as text they sort
  otherwise than as numbers: case H4-04) and some continuations are greedy, some not.

The files of ``tests/unit/interop/data/lmeval_*`` were written by lm-eval 0.4.13 against it
(``make test-interop`` writes them again and checks hrbench reads them as lm-eval scored
them)::

    python -m tests.interop.lmeval.serve 600 &     # prints its base URL
    cd tests/interop/lmeval
    lm_eval --model local-chat-completions --apply_chat_template \\
        --model_args model=loopback,base_url=URL/chat/completions,tokenizer_backend=None \\
        --include_path . --tasks hr_arith --output_path OUT --log_samples
    lm_eval --model local-completions \\
        --model_args model=gpt-4o,base_url=URL/completions,tokenizer_backend=tiktoken \\
        --include_path . --tasks hr_choice_index,hr_choice_text,hr_choice_letter,hr_greedy,hr_rolling \\
        --output_path OUT --log_samples

(``TIKTOKEN_CACHE_DIR`` holding o200k_base, as ``tests/interop/conftest.py`` makes it.)
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def arith_reply(prompt: str, call: int) -> str:
    """The reply to an ``hr_arith`` question on its ``call``-th asking (1-based)."""
    m = re.search(r"Question: (\d+) ([+x-]) (\d+)", prompt)
    if not m:
        return "I do not know."
    a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
    if (a, op, b) == (8, "-", 5) and call == 1:
        return "I would rather not say."
    value = {"+": a + b, "x": a * b, "-": a - b}[op] + (1 if op == "x" and call == 2 else 0)
    return f"The answer is {value}."


def token_logprob(token: int) -> tuple[float, bool]:
    """A token's loglikelihood and whether it is the greedy one, from its id alone."""
    return -((token * 7919) % 1000) / 400.0 - 0.01, token % 3 != 0


def _logprobs(tokens: list[int]) -> dict[str, Any]:
    """OpenAI's legacy ``logprobs`` of an echoed prompt plus one generated token."""
    lps: list[float | None] = [None]
    tops: list[dict[str, float] | None] = [None]
    for t in [*tokens[1:], 0]:
        lp, greedy = token_logprob(t)
        lps.append(lp)
        tops.append({str(t): lp} if greedy else {"other": lp + 0.5})
    return {"token_logprobs": lps, "top_logprobs": tops, "tokens": [str(t) for t in [*tokens, 0]]}


class _Handler(BaseHTTPRequestHandler):
    calls: Counter[str]
    lock: threading.Lock

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        if self.path.endswith("/chat/completions"):
            prompt = str(body["messages"][-1]["content"])
            with self.lock:
                self.calls[prompt] += 1
                call = self.calls[prompt]
            message = {"role": "assistant", "content": arith_reply(prompt, call)}
            out: dict[str, Any] = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
        elif self.path.endswith("/completions"):
            prompts = body["prompt"]
            prompts = prompts if prompts and isinstance(prompts[0], list) else [prompts]
            out = {
                "choices": [
                    {"index": i, "text": "", "logprobs": _logprobs(p), "finish_reason": "length"}
                    for i, p in enumerate(prompts)
                ]
            }
        else:
            self.send_error(404)
            return
        out |= {"model": body.get("model", "loopback"), "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Server:
    """The server in a thread of this process; a context manager giving its base URL (``.../v1``)."""

    def __init__(self) -> None:
        handler = type("Handler", (_Handler,), {"calls": Counter(), "lock": threading.Lock()})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> Server:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


if __name__ == "__main__":
    with Server() as srv:
        print(srv.base_url, flush=True)
        time.sleep(float(sys.argv[1]))
