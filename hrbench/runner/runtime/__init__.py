"""The runtime every run of one benchmark shares: client, cache, governor, recorder, checks.

:class:`Runtime` sends a run's requests (``ctx.call`` / ``ctx.acall`` reach it through the run
context); the runner (:mod:`hrbench.runner.benchmark`) and ``evaluate()`` (:mod:`hrbench.evaluation.modules`)
make one. The run context (:mod:`hrbench.arm`) knows it only as a
:class:`~hrbench.arm.Sender` and imports nothing of the runner, so the dependency goes one way.
"""

from __future__ import annotations

from hrbench.runner.runtime.core import Runtime
from hrbench.runner.runtime.drain import DEFAULT_GRACE_S, Drain, cancel_grace_s
from hrbench.runner.runtime.offload import INLINE_CHARS, heavy_scorer_threads, off_loop, offloaded
from hrbench.runner.runtime.rules import ADVICE as ADVICE
from hrbench.runner.runtime.rules import HTTP_PROVIDERS, unpriced_message

__all__ = [
    "DEFAULT_GRACE_S",
    "HTTP_PROVIDERS",
    "INLINE_CHARS",
    "Drain",
    "Runtime",
    "cancel_grace_s",
    "heavy_scorer_threads",
    "off_loop",
    "offloaded",
    "unpriced_message",
]
