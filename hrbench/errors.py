"""The exceptions and warnings hrbench raises.

Every error subclasses :class:`HrbenchError`; where the meaning matches a builtin, the error
subclasses it too (a bad configuration is also a ``ValueError``)::

    HrbenchError
    ├── ConfigError (ValueError)      bad arguments: names the field and the value
    │   ├── ReferenceValueError       a malformed reference (wrong lengths, duplicate ids, splits)
    │   ├── SignatureError            a malformed evaluate() signature
    │   └── CodeRefused               an import path (code) where code is not allowed (TCP)
    ├── ReferenceLocked               a locked reference was changed
    ├── ScorerError                   a scorer broke its contract
    ├── BudgetRefused                 the governor refused a request before it was sent
    ├── DuplicateDrawError            an arm's runs were not distinct draws
    ├── ReplayMiss (LookupError)      a strict replay had no recorded reply
    ├── ModelError                    a model client failed after its retries
    │   └── ReasoningExhausted        a reply spent its whole output limit reasoning, no answer
    ├── TooFewRunsError (ValueError)  an interval report on fewer than 5 runs
    ├── NotFound (LookupError)        a stored benchmark, reference or recording does not exist
    └── StoreError                    the database cannot be used; names the file and the fix
        ├── StoreGone                 the file was deleted or replaced under a running process
        ├── StoreFull                 the disk (or the file system's quota) is full
        ├── StoreCorrupt              the file is not a readable SQLite database
        └── StoreReadOnly             the file or its folder cannot be written
    BenchmarkRunning                  a benchmark id that is running now was asked to run again
    BenchmarkCancelled                `hrb cancel` cancelled the benchmark while it ran (resumable)
    DaemonStopped                     the daemon was stopped while the benchmark ran (resumable)

Warnings: :class:`FewRunsWarning` (fewer than 5 runs), :class:`BudgetStoppedWarning` (some
runs were stopped by the governor), :class:`ArmErrorWarning` (runs of an arm raised),
:class:`MetricErrorWarning` (a metric raised in evaluate()), :class:`NoLabelsWarning` (no item
of a benchmark has a label), :class:`UsageEstimatedWarning` (replies with no usage block),
:class:`NotCachedWarning` (replies that cannot be cached), :class:`DrawsUncheckedWarning` (a resume
whose kept runs came without their traces), :class:`ReferenceReboundWarning` (a named reference
that resolves to other content than the previous benchmark of the same name used),
:class:`ResumedNewestWarning` (a resume by a name several benchmarks have: the newest ran).

The helpers that word these errors' messages (a close name, a field's full place under a spec,
a failed call's cause, the limits a refusal names) are in :mod:`hrbench._util.messages`.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = [
    "ArmErrorWarning",
    "BenchmarkCancelled",
    "BenchmarkRunning",
    "DaemonStopped",
    "BudgetRefused",
    "BudgetStoppedWarning",
    "CodeRefused",
    "ConfigError",
    "DrawsUncheckedWarning",
    "DuplicateDrawError",
    "FewRunsWarning",
    "HrbenchError",
    "IntervalMethodWarning",
    "MetricErrorWarning",
    "ModelError",
    "NoLabelsWarning",
    "NotCachedWarning",
    "NotFound",
    "ReasoningExhausted",
    "ReferenceLocked",
    "ReferenceReboundWarning",
    "ReferenceValueError",
    "ReplayMiss",
    "ResumedNewestWarning",
    "ScorerError",
    "SignatureError",
    "StoreCorrupt",
    "StoreError",
    "StoreFull",
    "StoreGone",
    "StoreReadOnly",
    "TooFewRunsError",
    "UsageEstimatedWarning",
]


class HrbenchError(Exception):
    """Raised for every hrbench failure; the base of the tree in this module's docstring.

    Attributes:
        code: a stable JSON-RPC error code the daemon sends for this class.
    """

    code = -32000

    def __init__(self, message: str, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.context = context

    def __str__(self) -> str:
        return self.message


# -- what the caller gave: arguments, specs, references, scorers, names ---------------------------


class ConfigError(HrbenchError, ValueError):
    """Raised when an argument is malformed; the message names the field and the bad value."""

    code = -32001

    def __init__(self, field: str, value: Any, why: str) -> None:
        shown = repr(str(value) if isinstance(value, os.PathLike) else value)
        # a file path is shown whole (a cut path names no file); other values are cut at 80
        limit = 400 if isinstance(value, (str, os.PathLike)) else 80
        if len(shown) > limit:
            shown = shown[: limit - 3] + "..."
        super().__init__(f"{field}: {why} (got {shown})", field=field)
        self.field = field


class ReferenceValueError(ConfigError):
    """Raised when a reference is malformed: wrong lengths, unknown splits, duplicate ids."""

    code = -32002


class SignatureError(ConfigError):
    """Raised when an evaluate() signature cannot be parsed; the message points at the part."""

    code = -32003


class CodeRefused(ConfigError):
    """Raised when a spec names code (``module:function``) where code may not run.

    SPEC §4: an import path is code, run with the daemon user's rights; it is allowed over
    stdio and the 0600 Unix socket, refused over TCP unless the daemon was started with
    ``--allow-code-over-tcp``.
    """

    code = -32020


class TooFewRunsError(HrbenchError, ValueError):
    """Raised when an interval report meets fewer than 5 runs in an arm x item cell, or unequal runs."""

    code = -32010


class NotFound(HrbenchError, LookupError):
    """Raised when a stored benchmark, reference or recording does not exist."""

    code = -32011


class ReferenceLocked(HrbenchError):
    """Raised when a reference is changed after a benchmark started scoring it."""

    code = -32004


class ScorerError(HrbenchError):
    """Raised when a scorer breaks its contract (seed 000: TRUE beside a failure_kind)."""

    code = -32005


# -- a run's requests: the governor, the draws, replays, the model call --------------------------


class BudgetRefused(HrbenchError):
    """Raised when the governor refuses a request before it is sent.

    Attributes:
        limit: which limit refused it: ``"call_cap_reached"``, ``"cost_cap_reached"``,
            ``"token_cap_reached"``, ``"limit_refused"`` (a provider quota refusal),
            ``"reservation_exceeded"`` (an earlier reply cost more than was reserved for it: the
            benchmark was stopped), ``"unpriced_model"`` (a model with no price under a USD
            cap), or ``"run_call_cap_reached"``, ``"run_cost_cap_reached"``,
            ``"run_token_cap_reached"`` (the run's own cap, ``max_*_per_run``: that run stops).
    """

    code = -32006

    def __init__(self, message: str, limit: str, **context: Any) -> None:
        super().__init__(message, limit=limit, **context)
        self.limit = limit


class DuplicateDrawError(HrbenchError):
    """Raised when an arm's runs are not distinct draws (seed 002: ``hr_duplicate_draw``).

    Attributes:
        arm, item, run: the first duplicate run found.
        key: the request key served twice (or the repeated provider response id).
        bench: the finished benchmark (rows included) when the runner raises it at the end.
    """

    code = -32007

    def __init__(
        self,
        message: str,
        *,
        arm: str | None = None,
        item: str | None = None,
        run: int | None = None,
        key: str | None = None,
        reason: str = "duplicate_draw",
    ) -> None:
        super().__init__(message, arm=arm, item=item, run=run, key=key)
        self.arm, self.item, self.run, self.key, self.reason = arm, item, run, key, reason
        self.bench: Any = None


class ReplayMiss(HrbenchError, LookupError):
    """Raised when a strict replay has no recorded reply for a request; names arm, item, run, key."""

    code = -32008


class ModelError(HrbenchError):
    """Raised when a model call failed for good (after retries); never carries an API key.

    Raised by reading ``.text`` of a failed :class:`~hrbench.records.Result`: the
    message holds the provider's message (its status in it), and on HTTP 401/403 the name of
    the environment variable the key is read from.

    Attributes:
        status: the HTTP status of the last attempt, or ``None`` (a network error, a timeout).
        key_env: the key's environment variable name on a 401/403, else ``None``.
        cause: a short label of the failure for summaries (``"HTTP 401"``, ``"cannot connect"``).
    """

    code = -32009
    status: int | None = None
    key_env: str | None = None
    cause: str = ""


class ReasoningExhausted(ModelError):
    """Raised when a reply has no answer because the model spent its whole output limit reasoning.

    OpenAI: ``finish_reason`` ``"length"`` with empty content and reasoning tokens; Anthropic:
    ``stop_reason`` ``"max_tokens"`` with thinking blocks and no text (litellm-docs #559,
    ollama #17561, llama.cpp #25961). Raised by reading ``.text`` of such a
    :class:`~hrbench.records.Result`; the runner ends the run as ``reasoning_exhausted``, costed
    and never scored as a wrong answer. A larger ``max_tokens`` or a lower reasoning effort
    (``reasoning_effort``, ``thinking_budget``) leaves room for the answer.

    Attributes:
        tokens_reasoning: the reasoning tokens the reply reported (0 when not reported apart).
        tokens_out: the output tokens it was billed.
    """

    code = -32029
    tokens_reasoning: int = 0
    tokens_out: int = 0

    @classmethod
    def of(cls, result: Any) -> ReasoningExhausted:
        """The error of a reply whose reasoning used its whole output limit.

        Example:
            >>> from hrbench.records import Result, Usage
            >>> err = ReasoningExhausted.of(Result(usage=Usage(tokens_in=3, tokens_out=64, tokens_reasoning=64)))
            >>> err.cause, err.tokens_out
            ('reasoning_exhausted', 64)
        """
        usage = getattr(result, "usage", None)
        tin = int(getattr(usage, "tokens_reasoning", 0) or 0)
        tout = int(getattr(usage, "tokens_out", 0) or 0)
        said = f"{tin} reasoning token(s) of {tout}" if tin else f"{tout} output token(s), all thinking"
        err = cls(
            f"reasoning_exhausted: the model spent its whole output limit reasoning ({said}) and gave no "
            "answer; raise max_tokens or lower the reasoning effort (reasoning_effort, thinking_budget)"
        )
        err.tokens_reasoning, err.tokens_out, err.cause = tin, tout, "reasoning_exhausted"
        return err


# -- the store: the SQLite file and its disk ------------------------------------------------------


class StoreError(HrbenchError):
    """Raised when the database cannot be used; the message names the file and what to do.

    Attributes:
        path: the database file.
    """

    code = -32021

    def __init__(self, message: str, path: str, **context: Any) -> None:
        super().__init__(message, path=path, **context)
        self.path = path


class StoreGone(StoreError):
    """Raised when the database file was deleted or replaced while the store had it open."""

    code = -32022


class StoreFull(StoreError):
    """Raised when a write failed because the disk (or a quota) is full."""

    code = -32023


class StoreCorrupt(StoreError):
    """Raised when the file is not a readable SQLite database (corrupt, or not a database)."""

    code = -32024


class StoreReadOnly(StoreError):
    """Raised when the database or its folder cannot be written (read-only file or folder)."""

    code = -32025


# -- a benchmark's life: ended or held from outside ----------------------------------------------


class BenchmarkRunning(HrbenchError):
    """Raised when a benchmark id that is running now is asked to run (resume) again.

    Rule (two simultaneous resumes would pay twice): one benchmark id
    runs at most once at a time; the message names the run that holds it.
    """

    code = -32026


class BenchmarkCancelled(HrbenchError):
    """Raised to the caller of a benchmark that ``hrb cancel`` (``benchmark/cancel``) cancelled.

    Rule (not exit 130, the Ctrl-C code, nor only "cancelled", for ``hrb cancel ID`` from
    another shell): the message says it was
    cancelled by ``hrb cancel``, names the benchmark, the runs saved and the command that
    resumes it. ``context``: ``benchmark``, ``done``, ``total``. ``hrb bench`` exits 3, as when
    the daemon is stopped under it: the benchmark was ended from outside, not by a budget.
    """

    code = -32028


class DaemonStopped(HrbenchError):
    """Raised to the caller of a benchmark that ran when its daemon was stopped.

    Rule (never only "cancelled"): the message says the daemon was stopped and how (``hrb daemon stop``, a
    signal), the benchmark's id, how many of its runs are done and saved, and the command that
    resumes it; the benchmark is stored ``interrupted`` (as when a daemon dies) and resumable.
    ``context``: ``benchmark``, ``done``, ``total``. ``hrb`` exits 3, as for a daemon that died
    mid-run: it is not a budget stop.
    """

    code = -32027


# -- warnings: legal, but said ----------------------------------------------------------------------


class FewRunsWarning(UserWarning):
    """Warned when a benchmark has fewer than 5 runs (seed 002: ``hr_few_runs``)."""


class StopUndecidableWarning(UserWarning):
    """Warned when a stop rule can run too few clusters for its test ever to decide a pair.

    With one pair at ``alpha = 0.05`` the exact test needs at least 10 clusters and the
    symmetric one 5 (:meth:`hrbench.stats.StopWhenSure.fewest_to_decide`): on a
    smaller reference (or ``max_clusters``) every cluster runs and nothing is gained.
    """


class StopFewClustersWarning(UserWarning):
    """Warned before a stop rule runs on a reference with fewer clusters than its plan needs.

    No stop rule can save clusters there, and it decides less often than the fixed design's
    test on every cluster (on a 5-cluster reference a stop decided 0.19 of the time where
    :func:`hrbench.compare` rejected 0.61): run without a stop rule
    (:meth:`hrbench.stats.StopWhenSure.few_clusters_warning`).
    """


class StopMethodWarning(UserWarning):
    """Warned when a stop rule asks for a test that may not hold its ``alpha`` on this design.

    ``method="asymptotic"`` on fewer than 30 planned clusters
    (:meth:`hrbench.stats.StopWhenSure.validity_warning`); ``"auto"`` never picks it.
    """


class IntervalMethodWarning(UserWarning):
    """Warned when an interval method asked for may not hold its level on this benchmark.

    ``method="bootstrap"`` on fewer than 30 clusters: a cluster bootstrap's resamples hold too
    few distinct clusters and its intervals are too narrow (Cameron, Gelbach & Miller 2008,
    "Bootstrap-based improvements for inference with clustered errors", Rev. Econ. Stat.
    90:414-427); ``method="cluster"`` (the default) holds its level there.
    """


class BudgetStoppedWarning(UserWarning):
    """Warned when the governor stopped some runs (seed 002: ``hr_budget_stopped``)."""


class MetricErrorWarning(UserWarning):
    """Warned when a metric raised during evaluate() (seed 003)."""


class ArmErrorWarning(UserWarning):
    """Warned when runs of an arm raised (or its scorer did on their outputs).

    Those runs are recorded ``"error"`` and counted wrong (seed 002); the warning says so, so
    a broken arm (a typo in a template) does not pass silently for a bad one.
    """


class NoLabelsWarning(UserWarning):
    """Warned when no item a benchmark runs on has a label.

    Every run is then ``correct=None`` (seed 002: an item with no label is NA) and accuracy is
    NA. Rule (a ``"labl"`` typo never ends "done" with accuracy NA and no word): legal (outputs
    may be collected to label later), but said.
    """


class UnlabelledItemsWarning(UserWarning):
    """Warned when some, not all, of the items a benchmark runs on have no label.

    Their runs are ``correct=None`` (seed 002: an item with no label is NA) and accuracy
    averages the labelled items only. Rule (a ``labels`` table that leaves an item out is
    never silent): legal, but counted,
    with the first ids named.
    """


class UnpricedModelWarning(UserWarning):
    """Warned once at the start of a benchmark whose client's model has no price (and no USD cap refuses it).

    Rule (seed 002: usd is NA when a model has no price): its runs' USD is unknown, shown as NA
    (``null`` in JSON) in the rows, the summary, the report, the progress line and ``hrb ls``;
    never as 0. Giving the model a price (a spec client's ``price``, ``Pricing(overrides=...)``,
    ``HRBENCH_PRICES``) ends the warning.
    """


class UsageEstimatedWarning(UserWarning):
    """Warned when live replies came without a usage block, so their tokens and USD are not the provider's.

    Rule (tokens and USD an endpoint did not report never look reported): the tokens are counted with the model's tokenizer
    (``usd_provenance`` ``"counted"``) or estimated from above at one token per UTF-8 byte (``"estimated"``);
    the benchmark says how many runs per arm.
    """


class NotCachedWarning(UserWarning):
    """Warned once when a client's replies cannot be cached safely.

    A mock whose function cannot be fingerprinted: the benchmark then sends every request
    (SPEC section 6).
    """


class CachedDrawsWarning(UserWarning):
    """Warned when a benchmark with a seed of its own got every reply from the cache.

    The seed starts the arms' own random stream (``ctx.rng``); it does not choose the model's
    draws, which the cache keys by request and draw index (seed 002), so a changed seed
    reruns from the cache entirely. Rule: legal (a rerun of the same seed is served so too),
    but said, with how to get new draws.
    """


class DrawsUncheckedWarning(UserWarning):
    """Warned when a resume runs runs again but kept runs came without their traces.

    Seed 002: an arm whose runs are not distinct draws is refused. Across a resume the check
    is seeded with the request keys and provider response ids in the kept runs' traces
    (``done_traces``), so a run made again that repeats a kept run's draw is refused again
    (else ``--retry-errors`` would accept one more duplicate per retry). A kept run
    whose trace is not given cannot be checked against (loud, never silent): the
    resume goes on and says how many kept runs were not checked.
    """


class ResumedNewestWarning(UserWarning):
    """Warned when a resume names a benchmark by a name several benchmarks have: the newest was resumed.

    Rule (:meth:`hrbench.store.Store.benchmark_resolve`: a name means its newest benchmark): a
    resume by name never picks one of several in silence; the warning names the id and start
    time of the one resumed, and how many share the name.
    """


class ReferenceReboundWarning(UserWarning):
    """Warned when a benchmark's named reference resolves to other content than the last benchmark of its name used.

    Rule (``hrb ref put caps`` rebinding the name to new labels never changes the score of a
    rerun of a spec with ``reference = "caps"`` with no notice): the
    daemon says which content hash it used and which the previous benchmark used.
    """
