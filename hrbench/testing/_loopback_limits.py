"""The loopback server's rate limits and latency, as a provider's.

A provider limits a key by token buckets (requests, and tokens, refilled continuously) and says
so in every reply: OpenAI's ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``
(https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers), Anthropic's
``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}``
(https://docs.anthropic.com/en/api/rate-limits#response-headers). A request over a limit gets
HTTP 429 at once, with the wait until it would pass as ``Retry-After`` (whole seconds, rounded
up) and ``retry-after-ms``.

:class:`Limits` keeps the buckets: ``requests`` (one per request), and tokens: OpenAI's one
``tokens`` bucket, Anthropic's ``input_tokens`` and ``output_tokens``. Prompt tokens are taken
when a request is let in, the reply's completion tokens when it is made (a bucket may then run
into debt, as Anthropic's output limit does). The headers state the limit per minute (the
rate times 60), what remains when the request was let in, and when the bucket is whole again.
Not enforced (``enforce=False``), the limits are only stated: a request over them is counted in
:attr:`Limits.over` (what a provider would have refused) and let through.

:func:`latency` draws a reply's delay: lognormal around a median, and a scripted spike.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field

__all__ = ["Bucket", "Limits", "Spike", "latency"]


@dataclass
class Bucket:
    """A token bucket: ``rate`` a second, at most ``burst``; full at first.

    Example:
        >>> b = Bucket(40.0, 20.0, stamp=0.0)
        >>> b.take(20, 0.0), b.take(1, 0.0), round(b.wait_for(1, 0.0), 3)
        (True, False, 0.025)
    """

    rate: float
    burst: float
    stamp: float = field(default_factory=time.monotonic)
    level: float = math.nan

    def __post_init__(self) -> None:
        if not (self.rate > 0 and self.burst >= 1):
            raise ValueError(f"a bucket needs a rate > 0 and a burst >= 1, got {self.rate!r}, {self.burst!r}")
        if math.isnan(self.level):
            self.level = self.burst

    def refill(self, now: float) -> float:
        """The level now."""
        self.level = min(self.burst, self.level + self.rate * max(0.0, now - self.stamp))
        self.stamp = now
        return self.level

    def take(self, cost: float, now: float) -> bool:
        """Take ``cost`` if the bucket holds it (at least one whole token, and never into debt)."""
        if self.refill(now) >= max(min(cost, self.burst), 1e-9):
            self.level -= cost
            return True
        return False

    def charge(self, cost: float, now: float) -> None:
        """Take ``cost`` whatever the level (into debt if need be)."""
        self.refill(now)
        self.level -= cost

    def wait_for(self, cost: float, now: float) -> float:
        """Seconds until the bucket holds ``cost`` (capped at a full bucket)."""
        need = max(min(cost, self.burst), 1e-9) - self.refill(now)
        return max(0.0, need / self.rate)

    def reset_s(self, now: float) -> float:
        """Seconds until the bucket is full."""
        return max(0.0, (self.burst - self.refill(now)) / self.rate)


class Limits:
    """The buckets of a loopback server, their headers and their 429s.

    Args:
        requests: ``(requests per second, burst)``, or ``None`` for no request limit.
        tokens: ``(tokens per second, burst)``, or ``None``: OpenAI's ``tokens`` bucket
            (prompt and completion tokens), Anthropic's input and output buckets (each at this rate).
        enforce: refuse a request over a limit with HTTP 429; ``False``: only state the limits,
            and count such a request in :attr:`over`.
        clock: the time base, monotonic seconds.

    Attributes:
        limited: 429s sent. over: requests over a limit that were let through (not enforced).

    Example:
        >>> lim = Limits((10.0, 2.0), None, clock=lambda: 0.0)
        >>> [lim.admit("openai", 5)[0] for _ in range(3)]
        [True, True, False]
        >>> lim.admit("openai", 5)[2]["retry-after-ms"], lim.limited
        ('100', 2)
    """

    def __init__(
        self,
        requests: tuple[float, float] | None,
        tokens: tuple[float, float] | None,
        *,
        enforce: bool = True,
        clock: object = None,
    ) -> None:
        self.clock = clock if callable(clock) else time.monotonic
        now = self.clock()
        self.buckets: dict[str, Bucket] = {}
        if requests is not None:
            self.buckets["requests"] = Bucket(float(requests[0]), float(requests[1]), now)
        if tokens is not None:
            for dim in ("tokens", "input_tokens", "output_tokens"):
                self.buckets[dim] = Bucket(float(tokens[0]), float(tokens[1]), now)
        self.enforce = enforce
        self.limited = 0
        self.over = 0

    def _dims(self, flavour: str) -> tuple[str, ...]:
        toks = ("tokens",) if flavour == "openai" else ("input_tokens", "output_tokens")
        return tuple(d for d in ("requests", *toks) if d in self.buckets)

    def _costs(self, flavour: str, prompt_tokens: int) -> dict[str, float]:
        costs = {"requests": 1.0, "tokens": float(prompt_tokens), "input_tokens": float(prompt_tokens)}
        costs["output_tokens"] = 1.0  # an output limit in debt lets nothing in
        return {d: costs[d] for d in self._dims(flavour)}

    def admit(self, flavour: str, prompt_tokens: int) -> tuple[bool, float, dict[str, str]]:
        """Let a request in, or refuse it.

        Returns:
            ``(let in, seconds until it would be let in, headers)``: the limit headers of
            ``flavour`` as they stand once the request is in, or the 429's headers with
            ``Retry-After`` and ``retry-after-ms``.
        """
        now = self.clock()
        costs = self._costs(flavour, prompt_tokens)
        wait = max((self.buckets[d].wait_for(c, now) for d, c in costs.items()), default=0.0)
        if wait > 0 and self.enforce:
            self.limited += 1
            headers = self.headers(flavour, now)
            headers["retry-after"] = str(max(1, math.ceil(wait)))
            headers["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
            return False, wait, headers
        if wait > 0:
            self.over += 1
        else:
            for d, c in costs.items():
                if d != "output_tokens":
                    self.buckets[d].take(c, now)
        return True, 0.0, self.headers(flavour, now)

    def charge_output(self, flavour: str, completion_tokens: int) -> None:
        """Take a reply's completion tokens (OpenAI's ``tokens``, Anthropic's ``output_tokens``)."""
        dim = "tokens" if flavour == "openai" else "output_tokens"
        if dim in self.buckets:
            self.buckets[dim].charge(float(completion_tokens), self.clock())

    def headers(self, flavour: str, now: float) -> dict[str, str]:
        """The limit headers of ``flavour`` (OpenAI's or Anthropic's) as the buckets stand at ``now``."""
        out: dict[str, str] = {}
        tightest: tuple[float, str] | None = None
        for dim in self._dims(flavour):
            b = self.buckets[dim]
            limit = str(round(b.rate * 60))
            remaining = str(max(0, math.floor(b.refill(now))))
            reset = b.reset_s(now)
            if flavour == "openai":
                name = dim.replace("_", "-")
                out[f"x-ratelimit-limit-{name}"] = limit
                out[f"x-ratelimit-remaining-{name}"] = remaining
                out[f"x-ratelimit-reset-{name}"] = _go_duration(reset)
            else:
                name = dim.replace("_", "-")
                out[f"anthropic-ratelimit-{name}-limit"] = limit
                out[f"anthropic-ratelimit-{name}-remaining"] = remaining
                out[f"anthropic-ratelimit-{name}-reset"] = _rfc3339(reset)
                if dim != "requests" and (tightest is None or b.level / b.rate < tightest[0]):
                    tightest = (b.level / b.rate, name)
        if tightest is not None:  # Anthropic's tokens-*: the most restrictive token limit now
            for part in ("limit", "remaining", "reset"):
                out[f"anthropic-ratelimit-tokens-{part}"] = out[f"anthropic-ratelimit-{tightest[1]}-{part}"]
        return out


def _go_duration(seconds: float) -> str:
    """A duration as OpenAI writes it: ``"59ms"``, ``"1.5s"``, ``"6m0s"``."""
    if seconds < 1:
        return f"{math.ceil(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60.0)
    return f"{int(minutes)}m{rest:.3f}s" if minutes else f"{rest:.3f}s"


def _rfc3339(seconds: float) -> str:
    """The RFC 3339 time ``seconds`` from now, in UTC with milliseconds."""
    t = time.time() + seconds
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
    return f"{stamp}.{int((t % 1) * 1000):03d}Z"


@dataclass
class Spike:
    """A scripted rise of latency: from the ``after``-th request on, ``factor`` times for ``seconds``.

    Attributes:
        after: the request (counted from 1 since the server started or was reset) that starts it.
        seconds: how long it lasts.
        factor: what the latency is multiplied by meanwhile.
        started: when it started (monotonic seconds), once it has.
        during: the requests that arrived while it lasted.
    """

    after: int
    seconds: float
    factor: float
    started: float | None = None
    during: int = 0

    def __post_init__(self) -> None:
        if self.after < 0 or self.seconds < 0 or self.factor < 0:
            raise ValueError(f"a latency spike needs after, seconds and factor >= 0, got {self}")

    def factor_at(self, arrivals: int, now: float) -> float:
        """The latency factor for the ``arrivals``-th request, arriving at ``now``."""
        if self.started is None:
            if arrivals < self.after:
                return 1.0
            self.started = now
        if now < self.started + self.seconds:
            self.during += 1
            return self.factor
        return 1.0


def latency(median_s: float, sigma: float, rng: random.Random, factor: float = 1.0) -> float:
    """A reply's delay: lognormal with median ``median_s`` and shape ``sigma`` (0: always the median), times ``factor``.

    Example:
        >>> latency(0.3, 0.0, random.Random(0))
        0.3
    """
    if median_s <= 0:
        return 0.0
    drawn = median_s if sigma <= 0 else median_s * math.exp(sigma * rng.gauss(0.0, 1.0))
    return drawn * factor
