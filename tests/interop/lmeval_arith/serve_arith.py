"""The model behind ``tests/unit/interop/data/lmeval_real_samples_arith.jsonl``: a real lm-eval run.

Its samples file was recorded once, offline, with lm-eval 0.4.13 on this task (``arith.yaml``:
3 questions, ``repeats: 2``, a regex filter) against hrbench's loopback server, which answers
every other multiplication wrong::

    python tests/interop/lmeval_arith/serve_arith.py 300 &   # prints its base URL
    lm_eval --model local-chat-completions --apply_chat_template \\
        --model_args model=loopback,base_url=URL/chat/completions,tokenizer_backend=None \\
        --include_path tests/interop/lmeval_arith --tasks arith --output_path out --log_samples

(``arith.yaml`` names ``arith.jsonl`` by a path relative to where lm-eval runs.)
``make test-interop`` runs lm-eval itself (``lm-eval[api]``, no torch) on the tasks of
``tests/interop/lmeval``, a generation task like this one among them.
"""

from __future__ import annotations

import re
import sys
import time

from hrbench.testing import LoopbackServer


def reply(prompt: str, seed: object, call: int) -> str:
    """The sum, product or difference asked; every other product one too many."""
    m = re.search(r"Question: (\d+) ([+x-]) (\d+)", prompt)
    if not m:
        return "I do not know."
    a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
    value = {"+": a + b, "x": a * b, "-": a - b}[op] + (1 if op == "x" and call % 2 else 0)
    return f"The answer is {value}."


if __name__ == "__main__":
    with LoopbackServer(reply_fn=reply) as srv:
        print(srv.base_url, flush=True)
        time.sleep(float(sys.argv[1]))
