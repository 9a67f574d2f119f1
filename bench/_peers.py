"""Rows per second of DSPy Evaluate and inspect_ai on an instantly answering mock model.

Run by bench/overhead.py in its own virtual environment (.venv-peers), so the peers' pins never
touch hrbench's. Prints one JSON object: {"dspy": rows_per_s, "inspect_ai": rows_per_s}.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
out: dict[str, float | str] = {}
logging.disable(logging.WARNING)

try:
    import dspy
    from dspy.utils import DummyLM

    lm = DummyLM([{"answer": "Paris"}] * (N + 10))
    dspy.configure(lm=lm)
    prog = dspy.Predict("question -> answer")
    dev = [
        dspy.Example(question=f"Capital of France? ({i})", answer="Paris").with_inputs("question")
        for i in range(N)
    ]

    def metric(example, pred, trace=None):
        return example.answer == pred.answer

    ev = dspy.Evaluate(devset=dev, metric=metric, num_threads=16, display_progress=False)
    t = time.perf_counter()
    ev(prog)
    out["dspy"] = N / (time.perf_counter() - t)
except Exception as exc:  # report, do not crash the bench
    out["dspy"] = f"failed: {type(exc).__name__}: {exc}"[:200]

try:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    samples = [
        Sample(input=f"Capital of France? ({i})", target="Default output from mockllm/model")
        for i in range(N)
    ]
    task = Task(dataset=samples, solver=generate(), scorer=match(location="exact"))
    with tempfile.TemporaryDirectory() as logs:
        os.environ["INSPECT_LOG_DIR"] = logs
        t = time.perf_counter()
        inspect_eval(task, model="mockllm/model", display="none", log_dir=logs, max_connections=16)
        out["inspect_ai"] = N / (time.perf_counter() - t)
except Exception as exc:
    out["inspect_ai"] = f"failed: {type(exc).__name__}: {exc}"[:200]

print(json.dumps(out))
