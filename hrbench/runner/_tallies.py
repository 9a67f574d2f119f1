"""What the runner counts as rows are scored, to warn once at the end of a benchmark.

Moved out of :mod:`hrbench.runner._benchmark` (no change of behaviour): the runs a governor
stopped (:class:`Stops`), the runs that ended in errors (:class:`Errors`), where replies came
from (:class:`Sources`), and replies that came without a usage block (:class:`Unreported`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hrbench._util.messages import refusal_limits
from hrbench._util.warn import warn_at_caller
from hrbench.errors import ArmErrorWarning, BudgetStoppedWarning, CachedDrawsWarning, UsageEstimatedWarning
from hrbench.records import Row, Step
from hrbench.runner._governor import Governor
from hrbench.runner._notes import DUPLICATE_CAUSE, error_of
from hrbench.runner._runcaps import run_cap_of
from hrbench.runner.runtime import ADVICE

__all__ = ["DEFAULT_SEED", "Errors", "Sources", "Stops", "Unreported", "defaults_note"]


@dataclass
class Unreported:
    """Runs whose live replies came without a usage block (:class:`UsageEstimatedWarning`)."""

    bills: bool = True  # the client is a provider that bills (an HTTP API): its replies should say
    per_arm: dict[str, list[int]] = field(default_factory=dict)  # arm -> [counted, estimated]

    def add(self, row: Row) -> None:
        if self.bills and row.usd_provenance in ("counted", "estimated"):
            counts = self.per_arm.setdefault(row.arm, [0, 0])
            counts[row.usd_provenance == "estimated"] += 1

    def warn(self) -> None:
        if not self.per_arm:
            return
        parts = [
            f"arm {arm!r}: {c + e} run(s)"
            + (f" ({e} estimated from above: one token per UTF-8 byte)" if e else "")
            for arm, (c, e) in self.per_arm.items()
        ]
        warn_at_caller(
            "replies came without a usage block, so tokens and USD are counted by hrbench, not "
            f"reported by the provider (rows' usd_provenance): {'; '.join(parts)}",
            UsageEstimatedWarning,
        )


@dataclass
class Sources:
    """Where the requests' replies came from: the cache, or anywhere else (a model, a recording).

    Counted only for a benchmark with a seed of its own (``active``), the one case :meth:`warn`
    speaks of, and only until a reply not from the cache is seen: no work per row otherwise.
    """

    active: bool
    cached: int = 0
    other: int = 0

    def add(self, trace: list[Step]) -> None:
        if not self.active or self.other:
            return
        for s in trace:
            if s.kind == "request":
                if s.source == "cache":
                    self.cached += 1
                else:
                    self.other += 1

    def warn(self, seed: int) -> None:
        if not self.active or not self.cached or self.other:
            return
        warn_at_caller(
            f"all {self.cached} replies came from the cache: the seed ({seed}) starts the arms' own random "
            "stream (ctx.rng) but does not choose the model's draws, which the cache keys by request and "
            "draw index; for new draws run with the cache off (cache = false in a spec, cache=None in "
            "Python) or clear it (hrb cache clear)",
            CachedDrawsWarning,
        )


DEFAULT_SEED = 1
"""The seed of a benchmark that names none."""


@dataclass
class Stops:
    """Runs stopped by the governor, counted as rows are scored."""

    n: int = 0
    counted: int = 0
    first: tuple[int, Row] | None = None
    limits: set[str] = field(default_factory=set)
    unpriced: str | None = None
    why: str | None = None  # the first stopped run's refusal, in the caps' units
    run_capped: dict[str, int] = field(default_factory=dict)  # per-run cap -> runs it stopped

    def add(self, seq: int, row: Row, trace: list[Step]) -> None:
        # a run is stopped when it ended as budget_stop, or when a request of it was refused and
        # its arm caught the refusal (a reading recipe's partial answer)
        if row.failure_kind != "budget_stop":
            for s in trace:  # a plain loop: this runs for every row
                if s.source == "refused":
                    break
            else:
                return
        own = run_cap_of(trace)
        if own is not None:  # the run's own cap: that run stopped, the benchmark did not
            self.run_capped[own] = self.run_capped.get(own, 0) + 1
            return
        self.n += 1
        self.counted += row.reportable and row.correct is not None
        if self.first is None or seq < self.first[0]:
            self.first = (seq, row)
            refused = next((s.error for s in trace if s.source == "refused" and s.error), None)
            self.why = refused.rsplit(")); ", 1)[1] if refused and ")); " in refused else self.why
        self.limits.update(n for s in trace if s.source == "refused" for n in refusal_limits(s.error))
        for s in trace:
            if s.source == "refused" and s.error and "unpriced_model" in s.error:
                self.unpriced = self.unpriced or s.error

    def warn(self, gov: Governor) -> None:
        if self.run_capped:
            caps = ", ".join(f"{k} x {n}" for k, n in sorted(self.run_capped.items()))
            warn_at_caller(
                f"{sum(self.run_capped.values())} run(s) reached their own per-run cap ({caps}; "
                f"{', '.join(f'{k}={v}' for k, v in getattr(gov, 'per_run', {}).items())}) and ended budget_stop with their "
                "partial traces; they count against their arms, and the other runs went on",
                BudgetStoppedWarning,
            )
        if not self.n or self.first is None:
            return
        first = self.first[1]
        msg = (
            f"{self.n} run(s) stopped by the governor ({', '.join(sorted(self.limits or {'limit_refused'}))}); "
            f"{self.counted} of them count against an arm; first: arm {first.arm!r}, item {first.item!r}, run {first.run}"
        )
        if self.why is not None:
            msg += f"; it was refused because {self.why}"
        if gov.halted is not None:
            msg += f"; stopped at once because {gov.halted}"
        if self.unpriced is not None:
            msg += f"; {self.unpriced}"
        if gov.from_defaults:
            msg += "; " + defaults_note(gov)
        warn_at_caller(msg, BudgetStoppedWarning)


@dataclass
class Errors:
    """Runs that ended in errors, counted per arm and cause as rows are scored."""

    per_arm: dict[str, list[int]] = field(default_factory=dict)  # arm -> [errors, runs]
    causes: dict[str, dict[str, int]] = field(default_factory=dict)  # arm -> cause -> runs
    first: dict[str, tuple[int, Row, str]] = field(default_factory=dict)

    def add(self, seq: int, row: Row, trace: list[Step]) -> None:
        counts = self.per_arm.setdefault(row.arm, [0, 0])
        counts[1] += 1
        if row.failure_kind != "error":
            return
        message, cause = error_of(trace)
        if message.startswith(DUPLICATE_CAUSE):
            return  # reported by the DuplicateDrawError the benchmark raises
        counts[0] += 1
        by_cause = self.causes.setdefault(row.arm, {})
        by_cause[cause] = by_cause.get(cause, 0) + 1
        if row.arm not in self.first or seq < self.first[row.arm][0]:
            self.first[row.arm] = (seq, row, message)

    def text(self) -> str | None:
        """Per arm with failed runs: how many, by cause, and the first message; arms alike said once.

        Rule (one cause is said once, not once per arm): arms whose failed runs have the same
        counts, causes and first failed run (an item every arm's outputs leave out) share one
        entry, ``arms 'a', 'b': 1 of 10 run(s) each ...``, with the first arm's message.
        """
        groups: dict[tuple[Any, ...], list[str]] = {}
        for arm, (n, total) in self.per_arm.items():
            if n:
                _, row, _ = self.first[arm]
                causes = ", ".join(
                    f"{k} x {c}" for c, k in sorted(self.causes[arm].items(), key=lambda x: -x[1])
                )
                groups.setdefault((n, total, causes, row.item, row.run), []).append(arm)
        if not groups:
            return None
        parts = []
        for (n, total, causes, item, run), arms in groups.items():
            message = self.first[arms[0]][2]
            who = f"arm {arms[0]!r}" if len(arms) == 1 else f"arms {', '.join(map(repr, arms))}"
            each = "" if len(arms) == 1 else " each"
            parts.append(
                f"{who}: {n} of {total} run(s){each} raised or failed ({causes}); "
                f"first: item {item!r}, run {run}: {message}"
            )
        return "runs ended in errors and are counted wrong as 'error': " + "; ".join(parts)

    def warn(self) -> None:
        text = self.text()
        if text is not None:
            warn_at_caller(text, ArmErrorWarning)


def defaults_note(gov: Governor) -> str:
    """What a stop under the default limits says: the limits, where they come from, what to do.

    The default budget (``hrbench.runner._limits``: 400 calls, $5, no token cap; the
    ``HRBENCH_MAX_*`` variables) is named with its source, and its USD cap is said not to be
    enforced on a model with no price. The advice fits
    :data:`hrbench.runner.runtime.ADVICE`.

    Example:
        >>> defaults_note(Governor(max_calls=400, max_usd=5.0))[:60]
        'limits from the defaults (hrbench.options, HRBENCH_MAX_CALLS'
    """
    limits = ", ".join(f"{k}={v}" for k, v in gov.limits.items())
    how = (
        "set [governor] max_calls/max_usd/max_tokens in the spec, or --max-calls/--max-usd/--max-tokens"
        if ADVICE.get() == "spec"
        else "pass governor=hrbench.Governor(...) sized for the benchmark"
    )
    return (
        f"limits from the defaults (hrbench.options, HRBENCH_MAX_CALLS/HRBENCH_MAX_USD/HRBENCH_MAX_TOKENS): "
        f"{limits}; the default max_usd is not enforced on a model with no price; {how}"
    )
