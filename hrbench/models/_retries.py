"""When an HTTP model client tries again.

The statuses retried or booked as lost, a quota refusal recognised, ``Retry-After`` read, the
failures an attempt raises, and one request's tries (:class:`Tries`).
"""

from __future__ import annotations

import calendar
import email.utils
import math
import random
import re
import time
from collections.abc import Callable
from typing import Any

from hrbench.records import Billed, Result, Usage

# stamina logs each retry at WARNING; with no handler anywhere, Python would print every line
# to stderr. Retries are silent unless the user configures logging.

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 522, 524, 529})
"""Statuses retried besides every other 5xx: timeouts, conflicts, rate limits, overload."""


LOST_STATUS = frozenset({502, 504, 520, 524})
"""A gateway's word that the upstream's reply was lost or garbled (bad gateway, gateway timeout,
Cloudflare's unknown error and timeout): the provider behind it may have generated and billed it,
so the attempt is booked at its worst case as unknown spend (conservative). Other error statuses are the provider's own refusal, which it does not bill."""


QUOTA = re.compile(
    r"insufficient_quota|billing_error|billing_hard_limit|credit balance is too low"
    r"|exceeded your current quota|check your plan and billing|quota_exhausted|payment required",
    re.IGNORECASE,
)
"""What a quota or billing refusal says (OpenAI ``insufficient_quota``, Anthropic's credit)."""


JITTER = random.Random()
"""The retry jitter's own stream: the caller's global random state is never touched."""


def parse_retry_after(headers: Any, now: float | None = None) -> float | None:
    """Read how long a server asks to wait before the next attempt.

    An HTTP-date is read by RFC 9110 (section 5.6.7): IMF-fixdate, the obsolete RFC 850 form
    and asctime are accepted, and every HTTP-date is GMT, so a date with no zone or with
    ``-0000`` is UTC whatever the machine's time zone (cases R01a, R01d).

    Args:
        headers: the reply's headers (a case-insensitive mapping).
        now: the current POSIX time in seconds, for an HTTP-date value (default: now).

    Returns:
        Seconds to wait (``retry-after-ms`` first, then ``Retry-After`` as seconds or an
        HTTP date; a date in the past is 0), or ``None`` when the reply says nothing usable.

    Example:
        >>> parse_retry_after({"retry-after": "2"})
        2.0
        >>> parse_retry_after({"retry-after-ms": "250", "retry-after": "1"})
        0.25
        >>> now = 1445412480.0  # Wed, 21 Oct 2015 07:28:00 GMT
        >>> parse_retry_after({"retry-after": "Wed Oct 21 07:28:30 2015"}, now=now)
        30.0
        >>> parse_retry_after({"retry-after": "Wednesday, 21-Oct-15 07:28:30 GMT"}, now=now)
        30.0
    """
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            ms = float(raw_ms)
        except ValueError:
            ms = math.nan
        if math.isfinite(ms) and ms >= 0:
            return ms / 1000.0
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        when = http_date(raw)
        if when is None:
            return None
        return max(0.0, when - (time.time() if now is None else now))
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def http_date(text: str) -> float | None:
    """The POSIX time of an RFC 9110 HTTP-date, read as GMT when it names no zone; ``None`` if unreadable.

    Example:
        >>> http_date("Wed, 21 Oct 2015 07:28:30 GMT") == http_date("Wed Oct 21 07:28:30 2015") == 1445412510
        True
        >>> http_date("Wed, 21 Oct 2015 09:28:30 +0200")
        1445412510
        >>> http_date("soon") is None
        True
    """
    try:
        parts = email.utils.parsedate_tz(text.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if parts is None:
        return None
    year = parts[0]
    if year < 100:  # RFC 850's two-digit year: RFC 9110 says within 50 years of now
        year += 2000 if year + 2000 <= time.gmtime().tm_year + 50 else 1900
    try:
        stamp = calendar.timegm((year, *parts[1:6], 0, 0, 0))
    except (OverflowError, ValueError):
        return None
    return stamp - (parts[9] or 0)


class RetryableFailure(Exception):
    """Raised inside an attempt when it failed in a way worth another attempt."""

    def __init__(
        self,
        message: str,
        retry_after_s: float | None = None,
        status: int | None = None,
        usage: Usage | None = None,
        model: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after_s = retry_after_s
        self.status = status
        self.usage = usage  # a reply that was billed but is unusable (cut at the output limit)
        self.model = model


class FinalFailure(Exception):
    """Raised inside an attempt when it failed in a way another attempt would not fix.

    ``halts``: ``"quota"`` or ``"auth"`` when no other request of the client would fare
    better, ``"model"`` when none for the same model would (see ``Result.halts``). ``usage``
    and ``model``: a billed reply that cannot be used (cut at the output limit).
    """

    def __init__(
        self,
        message: str,
        status: int | None = None,
        halts: str | None = None,
        usage: Usage | None = None,
        model: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.halts = halts
        self.usage = usage
        self.model = model


def billed_attempt(exc: RetryableFailure) -> Billed | None:
    """What the provider billed for a retried attempt: its reported usage, else ``None`` (unknown).

    The governor books such an attempt at what that usage costs (:meth:`~hrbench.runner._governor.Gate.lost`),
    and the run's trace and row carry the same amount, so the rows add up to the provider's bill.
    """
    if exc.usage is None or exc.usage.provenance != "reported":
        return None
    return Billed(usage=exc.usage, model=exc.model)


class Tries:
    """One request's attempts: which failure is tried again, after how long, and what each left.

    A 429 (rate limit) is bounded by time only (``max_total_s``), every other failure by
    ``max_attempts`` too. A ``Retry-After`` longer than ``max_retry_wait_s``, or than the time
    left, ends the request. ``Retry-After`` is a floor with jitter on top: up to
    ``max(wait_jitter_s, Retry-After / 2)``, so that requests told the same wait do not come back
    in lockstep (case R02a); a 429 gets at most ``min(wait_jitter_s, Retry-After / 2)``, its
    pace spacing the retries (:mod:`hrbench.models._pace`). The time the first attempt waited
    behind other requests (:attr:`queued_s`) is not the request's own.

    Use it as stamina's ``on`` hook: it returns ``False`` (give up), ``True`` (stamina's backoff)
    or the seconds to wait.

    Example:
        >>> tries = Tries(max_attempts=2, max_total_s=60, max_retry_wait_s=30, wait_jitter_s=0, redact=str)
        >>> tries.attempts = 1
        >>> tries(RetryableFailure("HTTP 503", status=503)), tries(RetryableFailure("HTTP 429", 0.5, status=429))
        (True, 0.5)
        >>> tries.attempts = 3; tries(RetryableFailure("HTTP 503", status=503))  # 2 of them not 429s
        False
        >>> tries(RetryableFailure("HTTP 429", 45.0, status=429)), tries.retried
        (False, ['HTTP 503', 'HTTP 429'])
    """

    def __init__(
        self,
        max_attempts: int,
        max_total_s: float,
        max_retry_wait_s: float,
        wait_jitter_s: float,
        redact: Callable[[str], str],
    ) -> None:
        self.max_attempts = max_attempts
        self.max_total_s = max_total_s
        self.max_retry_wait_s = max_retry_wait_s
        self.wait_jitter_s = wait_jitter_s
        self.redact = redact
        self.start = time.perf_counter()
        self.attempts = 0
        self.limited = 0
        self.queued_s = 0.0
        self.retried: list[str] = []
        """Why each attempt retried failed, for the run's trace."""
        self.billed: list[Billed | None] = []
        """What the provider billed for each of them (reported usage)."""

    def elapsed(self) -> float:
        """Seconds of this request's own time so far."""
        return time.perf_counter() - self.start - self.queued_s

    def left_s(self) -> float:
        """Seconds the next attempt may wait for its turn (unbounded for the first)."""
        return math.inf if self.attempts <= 1 else max(0.0, self.max_total_s - self.elapsed())

    def __call__(self, exc: BaseException) -> bool | float:
        """Whether to try ``exc``'s request again: ``False``, ``True`` or the seconds to wait."""
        if not isinstance(exc, RetryableFailure):
            return False
        rate_limited = exc.status == 429
        self.limited += rate_limited
        if not rate_limited and self.attempts - self.limited >= self.max_attempts:
            return False
        elapsed = self.elapsed()
        wait = exc.retry_after_s
        if wait is None:
            again: bool | float = elapsed < self.max_total_s
            if again and rate_limited:
                again = 0.0  # the pace holds every request of the key and model meanwhile
        elif wait > self.max_retry_wait_s or elapsed + wait > self.max_total_s:
            exc.message += f"; Retry-After {wait:g} s is past the retry budget"
            again = False
        elif rate_limited:
            again = wait + JITTER.uniform(0.0, min(self.wait_jitter_s, 0.5 * wait))
        else:
            again = wait + JITTER.uniform(0.0, max(self.wait_jitter_s, 0.5 * wait))
        if again is not False:
            self.retried.append(self.redact(exc.message))
            self.billed.append(billed_attempt(exc))
        return again

    def keep(self, result: Result) -> Result:
        """``result`` with the attempts retried before it (and their bills) in its trace fields."""
        result.retried = self.retried or None
        result.retried_billed = self.billed if any(b is not None for b in self.billed) else None
        return result
