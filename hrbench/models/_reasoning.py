"""Reasoning settings of an arm and how each provider's request carries them.

Two settings, each an arm setting (``Arm(settings={...})``, a spec's arm field, a sweep's axis):

- ``reasoning_effort``: OpenAI's ``reasoning_effort`` body field (``"none"``, ``"minimal"``,
  ``"low"``, ``"medium"``, ``"high"``, ``"xhigh"``), sent as it is to an OpenAI-compatible API;
- ``thinking_budget``: Anthropic's extended thinking, sent as ``thinking = {"type": "enabled",
  "budget_tokens": N}`` (the Messages API requires ``budget_tokens >= 1024`` and below
  ``max_tokens``).

A setting the client's API has no field for is refused rather than dropped (an effort sweep
that changed nothing would compare an arm with itself). A mock client receives both in its
``params``. The rules: ``docs/guides/reasoning.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hrbench._util.forms import check_one_of
from hrbench.errors import ConfigError

__all__ = ["EFFORTS", "REASONING_SETTINGS", "check_reasoning", "reasoning_of", "reasoning_params"]

REASONING_SETTINGS = ("reasoning_effort", "thinking_budget")
"""The arm settings that set how much a model reasons."""

EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
"""The values of OpenAI's ``reasoning_effort``."""

ANTHROPIC_MIN_BUDGET = 1024
"""The smallest ``budget_tokens`` the Messages API accepts (tokens)."""


def check_reasoning(settings: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """The reasoning settings among ``settings``, checked; ``{}`` when there are none.

    Args:
        settings: an arm's settings (other keys are ignored).
        where: what to put before a field's name in an error (``"arms[1]."``).

    Raises:
        ConfigError: a ``reasoning_effort`` that is not one of :data:`EFFORTS`, or a
            ``thinking_budget`` that is not a whole number >= 1, naming the field and value.

    Example:
        >>> check_reasoning({"template": "x", "reasoning_effort": "low"})
        {'reasoning_effort': 'low'}
        >>> check_reasoning({"reasoning_effort": "max"})
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: reasoning_effort: unknown value; expected one of none, minimal, low, medium, high, xhigh (got 'max')
    """
    out: dict[str, Any] = {}
    effort = settings.get("reasoning_effort")
    if effort is not None:
        check_one_of(f"{where}reasoning_effort", effort, EFFORTS)
        out["reasoning_effort"] = effort
    budget = settings.get("thinking_budget")
    if budget is not None:
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise ConfigError(f"{where}thinking_budget", budget, "expected a whole number of tokens >= 1")
        out["thinking_budget"] = budget
    return out


def reasoning_of(settings: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The reasoning settings of an arm's settings, or ``None`` when it has none (unchecked)."""
    if not settings:
        return None
    found = {k: settings[k] for k in REASONING_SETTINGS if settings.get(k) is not None}
    return found or None


def reasoning_params(reasoning: Mapping[str, Any], provider: str, params: dict[str, Any]) -> dict[str, Any]:
    """A request's params with an arm's reasoning settings, in the provider's fields.

    A field the request sets itself (``reasoning_effort``, ``thinking``) wins over the arm's.

    Args:
        reasoning: the arm's reasoning settings (:func:`check_reasoning`).
        provider: the client's provider (``"openai"``, ``"anthropic"``, ``"mock"``, ...).
        params: the request's params (not changed).

    Raises:
        ConfigError: a setting the provider's API has no field for (``thinking_budget`` for
            OpenAI, ``reasoning_effort`` for Anthropic), or a thinking budget below the
            Messages API's 1024 tokens.

    Example:
        >>> reasoning_params({"thinking_budget": 2048}, "anthropic", {"max_tokens": 4096})
        {'max_tokens': 4096, 'thinking': {'type': 'enabled', 'budget_tokens': 2048}}
        >>> reasoning_params({"reasoning_effort": "low"}, "openai", {})
        {'reasoning_effort': 'low'}
    """
    out = dict(params)
    effort, budget = reasoning.get("reasoning_effort"), reasoning.get("thinking_budget")
    if provider == "anthropic":
        if effort is not None:
            raise ConfigError(
                "reasoning_effort",
                effort,
                "the Anthropic Messages API has no reasoning effort: give the arm a thinking_budget (tokens)",
            )
        if budget is not None and "thinking" not in out:
            if budget < ANTHROPIC_MIN_BUDGET:
                raise ConfigError(
                    "thinking_budget",
                    budget,
                    f"the Anthropic Messages API needs at least {ANTHROPIC_MIN_BUDGET}",
                )
            out["thinking"] = {"type": "enabled", "budget_tokens": budget}
        return out
    if provider == "openai" and budget is not None:
        raise ConfigError(
            "thinking_budget",
            budget,
            "an OpenAI-compatible API takes no thinking budget: give the arm a reasoning_effort",
        )
    if effort is not None:
        out.setdefault("reasoning_effort", effort)
    if budget is not None and provider != "openai":
        out.setdefault("thinking_budget", budget)  # a mock or another client reads it as given
    return out
