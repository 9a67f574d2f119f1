"""What a provider's reply headers say of its rate limits, OpenAI's and Anthropic's.

OpenAI's ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``
(https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers) and Anthropic's
``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}``
(https://docs.anthropic.com/en/api/rate-limits#response-headers) read into limits (:class:`Limit`):
a limit per minute, what remains, and the seconds until it is whole again (OpenAI writes a
duration, ``"6m0s"``; Anthropic a time, RFC 3339).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = ["Limit", "parse_limits", "parse_reset"]


@dataclass(frozen=True)
class Limit:
    """One limit a provider states in a reply's headers.

    Attributes:
        per_minute: the limit (requests or tokens per minute).
        remaining: what is left now, or ``None`` when not stated.
        reset_s: seconds until the limit is whole again, or ``None`` when not stated.

    Example:
        >>> lim = Limit(2400, 5, 0.375)
        >>> lim.rate, lim.capacity()
        (40.0, 20.0)
    """

    per_minute: float
    remaining: float | None = None
    reset_s: float | None = None

    @property
    def rate(self) -> float:
        """The refill rate, per second."""
        return self.per_minute / 60.0

    def capacity(self) -> float:
        """What the bucket holds when whole: ``remaining + rate * reset_s``, else the minute's limit."""
        if self.remaining is None or self.reset_s is None:
            return self.per_minute
        return min(self.per_minute, max(1.0, self.remaining + self.rate * self.reset_s))


_DIMS = {
    "requests": ("x-ratelimit-{}-requests", "anthropic-ratelimit-requests-{}"),
    "tokens": ("x-ratelimit-{}-tokens", "anthropic-ratelimit-tokens-{}"),
    "input_tokens": (None, "anthropic-ratelimit-input-tokens-{}"),
    "output_tokens": (None, "anthropic-ratelimit-output-tokens-{}"),
}
"""Each limit and its header names (OpenAI's, Anthropic's), ``{}`` standing for limit, remaining, reset."""

_DURATION = re.compile(r"(?:\d+(?:\.\d*)?(?:ms|us|µs|ns|h|m|s))+")
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?)(ms|us|µs|ns|h|m|s)")
_UNIT_S = {"h": (3600.0, 1.0), "m": (60.0, 1.0), "s": (1.0, 1.0), "ms": (1.0, 1e3), "us": (1.0, 1e6)}
_UNIT_S.update({"µs": (1.0, 1e6), "ns": (1.0, 1e9)})
"""A duration unit's seconds as (multiplier, divisor): ``59ms`` is exactly 0.059."""


def parse_reset(text: str, now: float | None = None) -> float | None:
    """Seconds until a limit resets, from an OpenAI duration, plain seconds or an RFC 3339 time.

    Args:
        text: ``"1s"``, ``"6m0s"``, ``"59ms"``, ``"1h2m3.5s"`` (OpenAI), ``"2.5"`` (seconds), or
            ``"2026-11-30T12:00:05Z"`` (Anthropic: when the limit is whole again).
        now: the current POSIX time in seconds, for a timestamp (default: now).

    Returns:
        Seconds (a time in the past is 0), or ``None`` when unreadable or past any float (``"9...9h"``).

    Example:
        >>> parse_reset("6m0s"), parse_reset("59ms"), parse_reset("2.5")
        (360.0, 0.059, 2.5)
        >>> parse_reset("2015-10-21T07:28:30Z", now=1445412500.0)
        10.0
        >>> parse_reset("soon") is None
        True
    """
    text = text.strip()
    if _DURATION.fullmatch(text):
        total = sum(float(n) * _UNIT_S[u][0] / _UNIT_S[u][1] for n, u in _DURATION_PART.findall(text))
        return total if math.isfinite(total) else None
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _number(raw: Any) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _states_limits(headers: Mapping[str, str]) -> bool:
    """Whether a header's name holds ``ratelimit`` (any case): the names of every limit read here do."""
    raw = getattr(headers, "raw", None)  # the HTTP library's headers: the names as received, undecoded
    if isinstance(raw, list):  # one search of the names joined: most replies state no limit
        return b"ratelimit" in b"\n".join([name for name, _ in raw]).lower()
    return any("ratelimit" in str(name).lower() for name in headers)


def parse_limits(headers: Mapping[str, str], now: float | None = None) -> dict[str, Limit]:
    """The limits a reply's headers state, OpenAI's or Anthropic's.

    Anthropic's ``tokens`` limit is the most restrictive of its input and output token limits,
    so it is left out when those are given.

    Args:
        headers: the reply's headers (a case-insensitive mapping, or lower-case names).
        now: the current POSIX time in seconds, for an RFC 3339 reset (default: now).

    Returns:
        ``{"requests" | "tokens" | "input_tokens" | "output_tokens": Limit}``; empty when the
        reply states none (a limit of 0 or an unreadable one is left out).

    Example:
        >>> parse_limits({"x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "9",
        ...               "x-ratelimit-reset-requests": "100ms"})
        {'requests': Limit(per_minute=600.0, remaining=9.0, reset_s=0.1)}
        >>> sorted(parse_limits({"anthropic-ratelimit-input-tokens-limit": "40000",
        ...                      "anthropic-ratelimit-output-tokens-limit": "8000",
        ...                      "anthropic-ratelimit-tokens-limit": "8000"}))
        ['input_tokens', 'output_tokens']
    """
    out: dict[str, Limit] = {}
    if not _states_limits(headers):
        return out  # most replies state none: one pass over the names, not a lookup per header
    for dim, forms in _DIMS.items():
        for form in forms:
            if form is None:
                continue
            limit = _number(headers.get(form.format("limit")))
            if not limit:
                continue
            reset_raw = headers.get(form.format("reset"))
            out[dim] = Limit(
                limit,
                _number(headers.get(form.format("remaining"))),
                None if reset_raw is None else parse_reset(str(reset_raw), now),
            )
            break
    if "input_tokens" in out or "output_tokens" in out:
        out.pop("tokens", None)
    return out
