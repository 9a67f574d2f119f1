"""Defaults that apply when no governor is passed (the seed's ``gr_options()``).

They are sized for one run of a reader (400 calls), as in the R original; a benchmark of two arms
on 300 items for 5 runs needs thousands of calls, so pass a :class:`~hrbench.Governor` sized for
it. Change them for the process with ``hrbench.options.max_calls = 1000``, or with the
environment variables ``HRBENCH_MAX_CALLS``, ``HRBENCH_MAX_USD`` and ``HRBENCH_MAX_TOKENS``
(which win when set). Through the daemon, the variables of the shell that submits the benchmark
count first (``hrb`` and ``hrbench_client`` send them with the request; decided, newcomer
finding), then the daemon's own; a spec's ``[governor]`` and the ``--max-*`` flags win over
both (:func:`hrbench.governor.default_governor`).

Example:
    >>> import hrbench as hb
    >>> hb.options.max_calls
    400
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Options", "options"]


@dataclass
class Options:
    """The default limits of a benchmark with ``governor=None``.

    Attributes:
        max_calls: requests sent, retries included (default 400).
        max_usd: spend in USD (default 5.0).
        max_tokens: input plus output tokens (default ``None``: no limit).
    """

    max_calls: int | None = 400
    max_usd: float | None = 5.0
    max_tokens: int | None = None

    def __setattr__(self, name: str, value: Any) -> None:
        """Refuse a limit that is not a finite number >= 0 at once (newcomer finding 7).

        ``hb.options.max_usd = float("nan")`` was accepted and ran with no USD cap; the check
        is :func:`hrbench.governor.check_limit`, the one every limit shares.

        Raises:
            ConfigError: naming ``hrbench.options.<name>`` and the value.
        """
        from hrbench.governor import LIMITS, check_limit

        if name in LIMITS:
            value = check_limit(f"hrbench.options.{name}", value, LIMITS[name])
        super().__setattr__(name, value)

    def as_dict(self) -> dict[str, Any]:
        """The options as a dict."""
        return asdict(self)


options = Options()
"""The process-wide options."""
