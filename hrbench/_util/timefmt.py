"""Times as the records and the wire show them."""

from __future__ import annotations

import datetime

__all__ = ["iso_seconds"]


def iso_seconds(ts: float | None) -> str | None:
    """A Unix time in seconds as ISO 8601 in UTC to the second; ``None`` stays ``None``.

    Example:
        >>> iso_seconds(0.0), iso_seconds(None)
        ('1970-01-01T00:00:00+00:00', None)
    """
    if ts is None:
        return None
    return datetime.datetime.fromtimestamp(ts, tz=datetime.UTC).isoformat(timespec="seconds")
