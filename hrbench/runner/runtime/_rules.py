"""What every runtime's requests share.

The providers whose requests carry an output limit, whom advice is for, and why an unpriced model
cannot run under a USD cap.
"""

from __future__ import annotations

import contextvars
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the daemon imports these rules at start; the run context only when it runs
    from hrbench.arm import Context as Context

__all__ = ["HTTP_PROVIDERS", "explicit_usd_cap", "unpriced_message"]


HTTP_PROVIDERS = frozenset({"openai", "anthropic"})
"""Providers whose requests carry an output limit under a USD or token cap."""


ADVICE: contextvars.ContextVar[str] = contextvars.ContextVar("hrbench_advice", default="python")
"""Whom hrbench's advice is for: ``"python"`` (a library caller) or ``"spec"`` (a TOML spec or
``hrb`` flags, through the daemon, which sets it for its benchmarks). Advice names what the caller
can change."""


def explicit_usd_cap(governor: Any) -> tuple[str, float] | None:
    """The USD cap the caller set, as ``(field, USD)``, or ``None`` when only the defaults' is set.

    The benchmark's ``max_usd`` unless it came from the defaults (``hrbench.runner._limits.max_usd``
    is not enforced on a model with no price), else each run's ``max_usd_per_run``. Either one
    refuses a model with no price before the first call (case R04a).

    Example:
        >>> from hrbench.runner import Governor
        >>> explicit_usd_cap(Governor(max_usd_per_run=0.5))
        ('max_usd_per_run', 0.5)
    """
    if governor.max_usd is not None and not getattr(governor, "from_defaults", False):
        return "max_usd", governor.max_usd
    per_run = getattr(governor, "per_run", None) or {}
    usd = per_run.get("max_usd_per_run")
    return None if usd is None else ("max_usd_per_run", usd)


def unpriced_message(
    model: str, max_usd: float | None, who: str = "client", cap: str = "max_usd", hint: str = ""
) -> str:
    """Why a model with no price cannot run under a USD cap, and how to give it one (case R04a).

    ``who``: ``"client"`` or ``"judge"`` (a judge scorer's model: the advice names the judge's
    own client table and ``judge_scorer(..., pricing=...)``; a higher cap cannot help). ``cap``:
    the cap's field, ``"max_usd"`` or ``"max_usd_per_run"`` (:func:`explicit_usd_cap`). ``hint``:
    what follows "has no price", e.g. ``" (did you mean gpt-4o-mini?)"``
    (:meth:`~hrbench.models.Pricing.did_you_mean`).

    Only an explicit USD cap refuses an unpriced model; the default cap
    (``hrbench.runner._limits.max_usd``) is not enforced on it. The advice fits
    :data:`ADVICE`: Python for the library, the spec's fields and ``hrb`` flags for the daemon.

    Example:
        >>> "pricing=hrbench.Pricing(overrides=" in unpriced_message("m", 1.0)
        True
    """
    head = (
        f"unpriced_model: {'the judge' + chr(39) + 's ' if who == 'judge' else ''}model {model!r} has no "
        f"price{hint}, so the explicit USD cap ({cap}={max_usd}) cannot be enforced; "
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
            f"daemon's environment (see the README), or run without a USD cap: leave {cap} out of "
            f"[governor] and --{cap.replace('_', '-')} off (the default cap is not enforced on a model with no price)"
        )
    return head + (
        f"give it one with pricing=hrbench.Pricing(overrides={{{model!r}: {{'input': USD_PER_M, "
        "'output': USD_PER_M}}) (USD per million tokens), or a price table file named by the "
        f"HRBENCH_PRICES environment variable, or run with Governor({cap}=None)"
    )
