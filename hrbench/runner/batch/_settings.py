"""``hb.Batch``: how a benchmark runs through a provider's batch API."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from hrbench._util.forms import check_one_of
from hrbench.errors import ConfigError

__all__ = ["EXPIRED", "Batch", "batch_of"]

EXPIRED = ("resubmit", "sync", "fail")
"""What becomes of a line that expired (or was cancelled) before the provider answered it:
sent again in the next batch (at most :data:`RESUBMITS` times, then failed), sent at once
through the synchronous API (at list price), or failed (an ``error`` row)."""

RESUBMITS = 2
"""The most times an expired line is sent again in a later batch before it fails."""


@dataclass(frozen=True)
class Batch:
    """Run a benchmark's model calls through the provider's batch API, at its batch rate.

    ``hb.benchmark(..., batch=True)`` takes these defaults; ``batch=hb.Batch(...)`` others.

    Args:
        wave: clusters per wave: a wave's runs go out in one batch (a multi-call arm's later
            calls in later batches), and the next wave starts once every cluster of this one is
            done. ``None``: every cluster in one wave, or with a stop rule an eighth of the
            clusters it may run (a quarter of its plan's), at least its ``min_clusters``.
        poll_s: seconds between two status checks of a batch.
        max_wait_s: the longest a batch is waited for (seconds); it is then cancelled at the
            provider and its lines not answered are handled as expired. Providers give a batch
            24 hours.
        expired: what becomes of an expired line (:data:`EXPIRED`): ``"resubmit"``, ``"sync"``
            or ``"fail"``.
        max_lines: the most lines in one batch; ``None``: the provider's most (OpenAI 50,000,
            Anthropic 100,000).
        gather_s: how long the collector waits for more lines when some runs are busy
            elsewhere (waiting for budget room, another run's identical request) before it sends
            the lines it has (seconds).
        discount: a line's price as a share of the standard price, for a model whose batch
            price the price package does not list (0.5: OpenAI's and Anthropic's documented 50%).

    Raises:
        ConfigError: a setting out of its range, naming it and its value.

    Example:
        >>> Batch(wave=4, poll_s=0.01).wave
        4
        >>> Batch(expired="later")
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: batch.expired: unknown value; expected one of resubmit, sync, fail (got 'later')
    """

    wave: int | None = None
    poll_s: float = 30.0
    max_wait_s: float = 86_400.0
    expired: str = "resubmit"
    max_lines: int | None = None
    gather_s: float = 0.5
    discount: float = 0.5

    def __post_init__(self) -> None:
        checks = (
            ("wave", self.wave, 1, True),
            ("max_lines", self.max_lines, 1, True),
            ("poll_s", self.poll_s, 0.0, False),
            ("max_wait_s", self.max_wait_s, 0.0, False),
            ("gather_s", self.gather_s, 0.0, False),
            ("discount", self.discount, 0.0, False),
        )
        for name, value, low, whole in checks:
            if value is None and name in ("wave", "max_lines"):
                continue
            number = value if isinstance(value, int | float) and not isinstance(value, bool) else math.nan
            high = 1.0 if name == "discount" else math.inf
            if not (math.isfinite(number) and low <= number <= high) or (whole and int(number) != number):
                what = "a whole number >= 1" if whole else "a finite number >= 0"
                raise ConfigError(
                    f"batch.{name}", value, f"expected {what}" + (", at most 1" if name == "discount" else "")
                )
        check_one_of("batch.expired", self.expired, EXPIRED)

    def wave_for(self, clusters: int, rule: Any = None) -> int:
        """The clusters per wave on a reference of ``clusters`` run with stop rule ``rule`` (or none).

        Example:
            >>> Batch().wave_for(40), Batch(wave=5).wave_for(40)
            (40, 5)
        """
        if self.wave is not None:
            return int(self.wave)
        if rule is None:
            return max(1, clusters)
        rule = getattr(rule, "rule", rule)  # a resume's rule
        least = int(getattr(rule, "min_clusters", 1) or 1)
        plan = getattr(rule, "plan", None)
        if plan is not None and getattr(plan, "n_clusters", None):
            return max(least, math.ceil(float(plan.n_clusters) / 4))
        limit = rule.limit(clusters) if callable(getattr(rule, "limit", None)) else clusters
        return max(least, math.ceil(limit / 8))

    def to_dict(self) -> dict[str, Any]:
        """The settings as builtins (as a spec's ``[batch]`` table gives them)."""
        return dict(self.__dict__)


def batch_of(value: Any) -> Batch | None:
    """A benchmark's ``batch=`` as a :class:`Batch`: ``True`` the defaults, ``False``/``None`` none.

    Raises:
        ConfigError: anything else.

    Example:
        >>> batch_of(True) == Batch(), batch_of(None), batch_of({"wave": 2}).wave
        (True, None, 2)
    """
    if value is None or value is False:
        return None
    if value is True:
        return Batch()
    if isinstance(value, Batch):
        return value
    if isinstance(value, dict):
        try:
            return Batch(**value)
        except TypeError as exc:
            raise ConfigError("batch", value, f"unknown setting: {exc}") from None
    raise ConfigError("batch", value, "expected True, an hrbench.Batch(...) or None")
