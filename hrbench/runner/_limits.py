"""Defaults that apply when no governor is passed (the seed's ``gr_options()``).

They are sized for one run of a reader (400 calls), as in the R original; a benchmark of two arms
on 300 items for 5 runs needs thousands of calls, so pass a :class:`~hrbench.Governor` sized for
it. Change them for the process with ``hrbench.runner._limits.max_calls = 1000``, or with the
environment variables ``HRBENCH_MAX_CALLS``, ``HRBENCH_MAX_USD`` and ``HRBENCH_MAX_TOKENS``
(which win when set). Through the daemon, the variables of the shell that submits the benchmark
count first (``hrb`` and ``hrbench_client`` send them with the request), then the daemon's own; a spec's ``[governor]`` and the ``--max-*`` flags win over
both (:func:`hrbench.runner.default_governor`).

Example:
    >>> import hrbench as hb
    >>> hb.options.max_calls
    400
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from hrbench.errors import ConfigError

__all__ = ["LIMITS", "Options", "check_limit", "options"]


LIMITS = {"max_calls": int, "max_usd": float, "max_tokens": int}
"""The governor's limits and their kinds: calls and tokens are whole numbers, USD any number."""


def check_limit(field: str, value: Any, kind: type = float) -> int | float | None:
    """A budget limit, checked: a finite number >= 0 (whole for calls and tokens), or ``None``.

    The one validator every way a limit comes in shares (``nan`` passes ``value < 0``, so it
    is refused by name, as ``inf`` is): :class:`Governor`, the
    environment overrides (:func:`default_governor`, the daemon at start and the variables a
    request brings from the caller's shell), :data:`hrbench.runner._limits` and a spec's
    ``[governor]``. README: "A value that is not a number is refused (exit 2)"; NaN and
    infinity are not numbers a cap can hold to (rule: no cap is ``None``, never ``inf``).

    Args:
        field: the name shown in the error (``"max_usd"``, ``"HRBENCH_MAX_USD"``).
        value: a number, a string from the environment (``"0.5"``), or ``None``.
        kind: ``int`` (calls, tokens: a whole number) or ``float`` (USD).

    Returns:
        The limit as ``kind``, or ``None`` for ``None``.

    Raises:
        ConfigError: naming ``field`` and ``value``: not a number, NaN, infinite, negative, or
            not whole for an ``int`` limit.

    Example:
        >>> check_limit("HRBENCH_MAX_USD", "0.5"), check_limit("max_calls", 50, int)
        (0.5, 50)
        >>> check_limit("HRBENCH_MAX_USD", "nan")
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: HRBENCH_MAX_USD: expected a finite number >= 0, not NaN or infinity (got 'nan')
        >>> check_limit("HRBENCH_MAX_USD", "-3")
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: HRBENCH_MAX_USD: expected a number >= 0 (leave it unset for no limit) (got '-3')
    """
    import math

    if value is None:
        return None
    number: float
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise ConfigError(field, value, "expected a number") from None
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(field, value, "a limit must be a number >= 0 or None")
    else:
        number = value
    if not math.isfinite(number):
        raise ConfigError(field, value, "expected a finite number >= 0, not NaN or infinity")
    if number < 0:  # a string is a shell variable's or a flag's: "None" means nothing there
        why = "expected a number >= 0 (leave it unset for no limit)" if isinstance(value, str) else None
        raise ConfigError(field, value, why or "a limit must be a number >= 0 or None")
    if kind is int:
        if number != int(number):
            raise ConfigError(field, value, "expected a whole number")
        return int(number)
    return float(number) if isinstance(value, str) else value


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
        """Refuse a limit that is not a finite number >= 0 at once (:func:`check_limit`).

        ``hb.options.max_usd = float("nan")`` was accepted and ran with no USD cap; the check
        is :func:`check_limit`, the one every limit shares.

        Raises:
            ConfigError: naming ``hrbench.options.<name>`` and the value.
        """
        if name in LIMITS:
            value = check_limit(f"hrbench.options.{name}", value, LIMITS[name])
        super().__setattr__(name, value)

    def as_dict(self) -> dict[str, Any]:
        """The options as a dict."""
        return asdict(self)


options = Options()
"""The process-wide options."""
