"""Tiny real Inspect tasks on ``mockllm/model``, run offline with Inspect's own CLI.

``tests/interop`` runs them as (with ``TIKTOKEN_CACHE_DIR`` holding the encoding hrbench ships,
so Inspect's token counting downloads nothing)::

    inspect eval tests/interop/inspect_tasks.py@capitals --model mockllm/model --epochs 2 \\
        --max-samples 1 --log-dir DIR --log-format eval --display none
    inspect eval tests/interop/inspect_tasks.py@retry --model mockllm/model --epochs 2 \\
        --max-samples 1 --retry-on-error=1 --log-dir DIR --log-format eval --display none
    inspect eval tests/interop/inspect_tasks.py@early --model mockllm/model --epochs 4 \\
        --max-samples 1 --log-dir DIR --log-format eval --display none

The Inspect logs in ``tests/unit/interop/data/`` were made by these commands (inspect-ai
0.3.285): ``inspect_capitals.eval`` (and ``inspect_capitals.json``: the same with
``--log-format json``), ``inspect_retry.eval`` and ``inspect_early.eval``.

- ``capitals``: 3 samples; the model answers France and Chile right every time and Peru wrong
  on its first call (``Cusco``), right after.
- ``retry``: as ``capitals`` on samples ``q1`` and ``q2``, but ``q1`` fails on its first attempt
  of epoch 1 and succeeds when Inspect retries it (``--retry-on-error``): its ``error_retries`` holds the
  failure, its ``error`` is null (shared case H4-16).
- ``early``: as ``capitals`` over 4 epochs, with an early stopping manager that skips the
  epochs left of a sample right in both of its first two epochs: samples ``3`` and ``q1`` have
  epochs 1-2 only, ``q2`` (wrong at first) all 4 (shared case H4-17).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, get_model
from inspect_ai.scorer import SampleScore, exact
from inspect_ai.solver import Generate, TaskState, generate, solver
from inspect_ai.util import EarlyStop

SAMPLES = [
    Sample(id="q1", input="Capital of France?", target="Paris"),
    Sample(id="q2", input="Capital of Peru?", target="Lima"),
    Sample(id=3, input="Capital of Chile?", target="Santiago"),
]
RIGHT = {"Capital of France?": "Paris", "Capital of Peru?": "Lima", "Capital of Chile?": "Santiago"}


def _model() -> Any:
    """``mockllm/model`` answering each question right, but Peru wrong the first time."""
    asked: Counter[str] = Counter()

    def reply(messages: list[ChatMessage], tools: Any, choice: Any, config: GenerateConfig) -> ModelOutput:
        question = messages[-1].text
        asked[question] += 1
        wrong = question == "Capital of Peru?" and asked[question] == 1
        return ModelOutput.from_content("mockllm/model", "Cusco" if wrong else RIGHT[question])

    return get_model("mockllm/model", custom_outputs=reply)


@task
def capitals() -> Task:
    """Three capitals; Peru answered wrong once."""
    return Task(dataset=SAMPLES, solver=generate(), scorer=exact(), model=_model(), name="capitals")


_FAILED: set[tuple[Any, int]] = set()


@solver
def _fail_once() -> Any:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        key = (state.sample_id, state.epoch)
        if key == ("q1", 1) and key not in _FAILED:
            _FAILED.add(key)
            raise RuntimeError("the sandbox fell over (first attempt)")
        return state

    return solve


@task
def retry() -> Task:
    """Two capitals; sample q1 fails at its first attempt of epoch 1 and succeeds on retry."""
    return Task(
        dataset=SAMPLES[:2], solver=[_fail_once(), generate()], scorer=exact(), model=_model(), name="retry"
    )


class _RightTwice:
    """An early stopping manager: a sample right in both of its first two epochs skips the epochs left."""

    def __init__(self) -> None:
        self.right: Counter[str] = Counter()

    async def start_task(self, task: Any, samples: Any, epochs: int) -> str:
        return "right_twice"

    async def schedule_sample(self, id: str | int, epoch: int) -> EarlyStop | None:
        if self.right[str(id)] >= 2:
            return EarlyStop(id=id, epoch=epoch, reason="right twice")
        return None

    async def complete_sample(self, id: str | int, epoch: int, scores: dict[str, SampleScore]) -> None:
        if epoch <= 2 and all(s.score.value == "C" for s in scores.values()):
            self.right[str(id)] += 1

    async def complete_task(self) -> dict[str, Any]:
        return {"right": dict(self.right)}


@task
def early() -> Task:
    """Three capitals over 4 epochs; a sample right in epochs 1 and 2 stops early (3 and q1: epochs 1-2 only)."""
    return Task(
        dataset=SAMPLES,
        solver=generate(),
        scorer=exact(),
        model=_model(),
        early_stopping=_RightTwice(),
        name="early",
    )
