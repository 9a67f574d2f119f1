"""A tiny real Inspect eval, offline: 3 samples x 2 epochs on ``mockllm/model``, one reply wrong.

Run as ``python -m tests.interop._inspect_task LOG_DIR FORMAT`` (``eval`` or ``json``) by
``tests/interop`` (with ``TIKTOKEN_CACHE_DIR`` holding the encoding hrbench ships, so Inspect's
token counting downloads nothing). The logs in ``tests/unit/interop/data/`` were made by it.
Prints the log's path.
"""

from __future__ import annotations

import sys

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import exact
from inspect_ai.solver import generate

SAMPLES = [
    Sample(id="q1", input="Capital of France?", target="Paris"),
    Sample(id="q2", input="Capital of Peru?", target="Lima"),
    Sample(id=3, input="Capital of Chile?", target="Santiago"),
]
REPLIES = ["Paris", "Cusco", "Santiago", "Paris", "Lima", "Santiago"]


def main(log_dir: str, fmt: str) -> str:
    """Run the task; return the log's location."""
    outputs = [ModelOutput.from_content("mockllm/model", r) for r in REPLIES]
    model = get_model("mockllm/model", custom_outputs=outputs)
    task = Task(dataset=SAMPLES, solver=generate(), scorer=exact(), name="capitals")
    [log] = inspect_eval(
        task, model=model, epochs=2, log_dir=log_dir, log_format=fmt, display="none", max_samples=1
    )
    if log.status != "success":
        raise SystemExit(f"the Inspect eval ended {log.status}: {log.error}")
    return str(log.location)


if __name__ == "__main__":
    print(main(sys.argv[1], sys.argv[2]))
