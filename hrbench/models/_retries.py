"""When an HTTP model client tries again.

The statuses retried or booked as lost, a quota refusal recognised, ``Retry-After`` read, and the
failures an attempt raises.
"""

from __future__ import annotations

import calendar
import email.utils
import math
import random
import re
import time
from typing import Any

from hrbench.records import Usage

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
