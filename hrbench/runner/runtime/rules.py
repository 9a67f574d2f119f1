"""What every runtime's requests share.

The providers whose requests carry an output limit, whom advice is for, and why an unpriced model
cannot run under a USD cap.
"""

from __future__ import annotations

import contextvars
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the daemon imports these rules at start; the run context only when it runs
    from hrbench.arm import Context as Context

__all__ = ["HTTP_PROVIDERS", "unpriced_message"]


HTTP_PROVIDERS = frozenset({"openai", "anthropic"})
"""Providers whose requests carry an output limit under a USD or token cap."""


ADVICE: contextvars.ContextVar[str] = contextvars.ContextVar("hrbench_advice", default="python")
"""Whom hrbench's advice is for: ``"python"`` (a library caller) or ``"spec"`` (a TOML spec or
``hrb`` flags, through the daemon, which sets it for its benchmarks). Advice names what the caller
can change."""


def unpriced_message(model: str, max_usd: float | None, who: str = "client") -> str:
    """Why a model with no price cannot run under a USD cap, and how to give it one (case R04a).

    ``who``: ``"client"`` or ``"judge"`` (a judge scorer's model: the advice names the judge's
    own client table and ``judge_scorer(..., pricing=...)``; a higher cap cannot help).

    Rule: only an explicit USD cap refuses an unpriced model;
    the default cap (``hrbench.runner.limits.max_usd``) is not enforced on it. The advice fits
    :data:`ADVICE`: Python for the library, the spec's fields and ``hrb`` flags for the daemon.

    Example:
        >>> "pricing=hrbench.Pricing(overrides=" in unpriced_message("m", 1.0)
        True
    """
    head = (
        f"unpriced_model: {'the judge' + chr(39) + 's ' if who == 'judge' else ''}model {model!r} has no "
        f"price, so the explicit USD cap (max_usd={max_usd}) cannot be enforced; "
    )
    if who == "judge":
        if ADVICE.get() == "spec":
            return head + (
                "give it a price in the spec's [scorer_settings.client] table: price = {input = USD_PER_M, "
                f"output = USD_PER_M}} (USD per million tokens), or prices = {{{json.dumps(model)} = {{input = "
                "USD_PER_M, output = USD_PER_M}}, or a price table file named by HRBENCH_PRICES in the "
                "daemon's environment; a higher --max-usd cannot help"
            )
        return head + (
            f"give the judge a price with judge_scorer(client, pricing=hrbench.Pricing(overrides={{{model!r}: "
            "{'input': USD_PER_M, 'output': USD_PER_M}})) (USD per million tokens), or the benchmark's "
            "pricing=..., or a price table file named by the HRBENCH_PRICES environment variable; a "
            "higher max_usd cannot help"
        )
    if ADVICE.get() == "spec":
        return head + (
            f"give it a price in the spec's [client] table: prices = {{{json.dumps(model)} = {{input = USD_PER_M, "
            "output = USD_PER_M}} (USD per million tokens; for the client's own model, price = {input = "
            "USD_PER_M, output = USD_PER_M} does too), or a price table file named by HRBENCH_PRICES in the "
            "daemon's environment (see the README), or run without a USD cap: leave max_usd out of "
            "[governor] and --max-usd off (the default cap is not enforced on a model with no price)"
        )
    return head + (
        f"give it one with pricing=hrbench.Pricing(overrides={{{model!r}: {{'input': USD_PER_M, "
        "'output': USD_PER_M}}) (USD per million tokens), or a price table file named by the "
        "HRBENCH_PRICES environment variable, or run with Governor(max_usd=None)"
    )
