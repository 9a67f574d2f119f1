"""The runtime every run of one benchmark shares: client, cache, governor, recorder, checks.

:class:`Runtime` sends a run's requests (``ctx.call`` / ``ctx.acall`` reach it through the run
context); the runner (:mod:`hrbench.runner._benchmark`) and ``evaluate()`` (:mod:`hrbench.evaluation.modules`)
make one. The run context (:mod:`hrbench.arm`) knows it only as a
:class:`~hrbench.arm.Sender` and imports nothing of the runner, so the dependency goes one way.
"""

from __future__ import annotations

from hrbench.runner.runtime._core import Runtime
from hrbench.runner.runtime._drain import DEFAULT_GRACE_S, Drain, cancel_grace_s
from hrbench.runner.runtime._offload import INLINE_CHARS, heavy_scorer_threads, off_loop, offloaded
from hrbench.runner.runtime._rules import ADVICE as ADVICE
from hrbench.runner.runtime._rules import HTTP_PROVIDERS, explicit_usd_cap, unpriced_message

__all__ = [
    "ADVICE",
    "DEFAULT_GRACE_S",
    "Drain",
    "HTTP_PROVIDERS",
    "INLINE_CHARS",
    "Runtime",
    "cancel_grace_s",
    "explicit_usd_cap",
    "heavy_scorer_threads",
    "off_loop",
    "offloaded",
    "unpriced_message",
]
