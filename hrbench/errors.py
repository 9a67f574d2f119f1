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
that resolves to other content than the previous benchmark of the same name used).
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = [
    "NO_OUTPUT",
    "REFUSAL_LIMITS",
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
    "MetricErrorWarning",
    "ModelError",
    "NoLabelsWarning",
    "NotCachedWarning",
    "NotFound",
    "ReferenceLocked",
    "ReferenceReboundWarning",
    "ReferenceValueError",
    "ReplayMiss",
    "ScorerError",
    "SignatureError",
    "StoreCorrupt",
    "StoreError",
    "StoreFull",
    "StoreGone",
    "StoreReadOnly",
    "TooFewRunsError",
    "UsageEstimatedWarning",
    "failure_cause",
    "field_under",
    "refusal_limits",
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


def did_you_mean(name: str, known: Sequence[str], n: int = 1, shown: Mapping[str, str] | None = None) -> str:
    """A hint naming the closest of ``known`` to ``name`` (``""`` when none is close), for messages.

    Args:
        name: what was given.
        known: the names it could have been.
        n: at most this many are named, the closest first.
        shown: how a known name is said, when not as itself (an id prefix said as its whole id).

    Example:
        >>> did_you_mean("labl", ["id", "item", "label"])
        "did you mean 'label'? "
        >>> did_you_mean("zzz", ["id"])
        ''
        >>> did_you_mean("3f2b", ["3f2a", "9c10"], shown={"3f2a": "3f2a77c0d1e2f3a4"})
        "did you mean '3f2a77c0d1e2f3a4'? "
    """
    close = difflib.get_close_matches(name, list(known), n=n)
    said = list(dict.fromkeys((shown or {}).get(c, c) for c in close))
    return f"did you mean {', '.join(map(repr, said))}? " if said else ""


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


_HEADS = ("arm.", "reference.", "client.")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+")


@contextlib.contextmanager
def field_under(prefix: str, head: str | None = None) -> Iterator[None]:
    """Name every spec error raised inside by its full dotted path under ``prefix``.

    A builder names the field it knows (``path``, ``arm.path``, ``reference.path``); the
    caller that knows where the spec sits (``arms[0]``, ``reference``) puts it in front,
    replacing a generic head (``arm.``, ``reference.``, ``client.``), so that an error says
    ``arms[0].path: cannot import module 'm'`` rather than ``path: ...``. A field already under
    ``prefix`` is kept, and so is an environment variable's name (``HRBENCH_IMPORT_MAX_BYTES``),
    which is no place in the spec.

    Args:
        prefix: the spec's place, e.g. ``"arms[1]"`` or ``"reference"``.
        head: the head the builder inside names its fields by, replaced by ``prefix``
            (``field_under("client.fallback", head="client")``: a replay's fallback client,
            whose builder says ``client.base_url``); by default the generic heads above.

    Raises:
        ConfigError: the error raised inside, its ``field`` and message rewritten.

    Example:
        >>> try:
        ...     with field_under("arms[0]"):
        ...         raise ConfigError("arm.path", "m:f", "cannot import module 'm'")
        ... except ConfigError as exc:
        ...     print(exc)
        arms[0].path: cannot import module 'm' (got 'm:f')
    """
    try:
        yield
    except ConfigError as exc:
        old = exc.field
        if (
            old == prefix
            or old.startswith((f"{prefix}.", f"{prefix}[", f"{prefix} "))
            or _ENV_NAME.fullmatch(old)
        ):
            raise
        rest = old
        if head is not None and (old == head or old.startswith(f"{head}.")):
            rest = old[len(head) + 1 :]
        for generic in _HEADS if head is None else ():
            if rest.startswith(generic) and (generic != "client." or prefix == "client"):
                rest = rest[len(generic) :]
                break
        new = f"{prefix}.{rest}" if rest else prefix
        if exc.message.startswith(old):
            exc.message = new + exc.message[len(old) :]
            exc.args = (exc.message,)
        exc.field = new
        exc.context["field"] = new
        raise


class ReferenceValueError(ConfigError):
    """Raised when a reference is malformed: wrong lengths, unknown splits, duplicate ids."""

    code = -32002


class SignatureError(ConfigError):
    """Raised when an evaluate() signature cannot be parsed; the message points at the part."""

    code = -32003


class ReferenceLocked(HrbenchError):
    """Raised when a reference is changed after a benchmark started scoring it."""

    code = -32004


class ScorerError(HrbenchError):
    """Raised when a scorer breaks its contract (seed 000: TRUE beside a failure_kind)."""

    code = -32005


class BudgetRefused(HrbenchError):
    """Raised when the governor refuses a request before it is sent.

    Attributes:
        limit: which limit refused it: ``"call_cap_reached"``, ``"cost_cap_reached"``,
            ``"token_cap_reached"``, ``"limit_refused"`` (a provider quota refusal),
            ``"reservation_exceeded"`` (an earlier reply cost more than was reserved for it: the
            benchmark was stopped) or ``"unpriced_model"`` (a model with no price under a USD
            cap).
    """

    code = -32006

    def __init__(self, message: str, limit: str, **context: Any) -> None:
        super().__init__(message, limit=limit, **context)
        self.limit = limit


REFUSAL_LIMITS = (
    "call_cap_reached",
    "cost_cap_reached",
    "token_cap_reached",
    "limit_refused",
    "reservation_exceeded",
    "unpriced_model",
)
"""Every ``limit`` a :class:`BudgetRefused` names."""


def refusal_limits(error: str | None) -> list[str]:
    """The :data:`REFUSAL_LIMITS` a refusal's message names (a trace step's ``error``).

    What stopped a run is kept in its trace as the refusal's message; the stop note of a
    stored benchmark reads the caps that stopped it from there (newcomer finding).

    Example:
        >>> refusal_limits("the governor refused a request: token_cap_reached (Governor(...))")
        ['token_cap_reached']
        >>> refusal_limits(None)
        []
    """
    return [n for n in REFUSAL_LIMITS if error and n in error]


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

    Raised by reading ``.text`` of a failed :class:`~hrbench.records.Result` (issue 12): the
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

    @classmethod
    def of(cls, result: Any) -> ModelError:
        """The error of a failed result."""
        error = getattr(result, "error", None) or "unknown error"
        status = getattr(result, "status", None)
        key_env = getattr(result, "key_env", None)
        err = cls(f"the model call failed, so it has no text: {error}", status=status, key_env=key_env)
        err.status, err.key_env, err.cause = status, key_env, failure_cause(error, status)
        return err


NO_OUTPUT = re.compile(r"LookupError: (no output for item (?:'[^']*'|\"[^\"]*\"))")
"""An outputs arm's error for an item its outputs leave out (``missing = "error"``), as a trace
keeps it; group 1 is the run's cause (:func:`failure_cause`)."""


def failure_cause(error: str, status: int | None = None) -> str:
    """A short label of a failed call's message, to group failed runs by cause.

    Example:
        >>> failure_cause("openai: HTTP 401: invalid API key (key from OPENAI_API_KEY)", 401)
        'openai: HTTP 401'
        >>> failure_cause("openai: cannot connect to http://127.0.0.1:9/v1 (ConnectError: refused)")
        'openai: cannot connect to http://127.0.0.1:9/v1'
        >>> failure_cause("openai: quota exhausted (HTTP 429): insufficient_quota: ...", 429)
        'openai: quota exhausted'
        >>> failure_cause("openai: reply cut at the output limit (finish_reason 'length'): raise max_tokens")
        'openai: reply cut at the output limit'
        >>> failure_cause("LookupError: no output for item 'q3': the outputs of arm 'a' leave it out")
        "no output for item 'q3'"
    """
    import re

    missing = NO_OUTPUT.match(error)
    if missing is not None:  # decided (TAT-QA demo): the cause names the item, not "LookupError"
        return missing.group(1)
    m = re.match(
        r"(\w+: (?:HTTP \d+|quota exhausted|cannot connect to \S+|no reply within [\d.]+ s|malformed reply"
        r"|transport error|reply cut at the output limit|reply has no text))",
        error,
    )
    if m:
        return m.group(1)
    if status is not None:
        return f"HTTP {status}"
    return error.split(":", 1)[0][:60] if ":" in error else error[:60]


class TooFewRunsError(HrbenchError, ValueError):
    """Raised when an interval report meets fewer than 5 runs in an arm x item cell, or unequal runs."""

    code = -32010


class NotFound(HrbenchError, LookupError):
    """Raised when a stored benchmark, reference or recording does not exist."""

    code = -32011


class CodeRefused(ConfigError):
    """Raised when a spec names code (``module:function``) where code may not run.

    SPEC §4: an import path is code, run with the daemon user's rights; it is allowed over
    stdio and the 0600 Unix socket, refused over TCP unless the daemon was started with
    ``--allow-code-over-tcp``.
    """

    code = -32020


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


class BenchmarkRunning(HrbenchError):
    """Raised when a benchmark id that is running now is asked to run (resume) again.

    Decided, issue 13 (two simultaneous resumes paid about 270 calls twice): one benchmark id
    runs at most once at a time; the message names the run that holds it.
    """

    code = -32026


class BenchmarkCancelled(HrbenchError):
    """Raised to the caller of a benchmark that ``hrb cancel`` (``benchmark/cancel``) cancelled.

    Decided (newcomer finding: ``hrb cancel ID`` from another shell made the streaming
    ``hrb bench`` exit 130, the Ctrl-C code, saying only "cancelled"): the message says it was
    cancelled by ``hrb cancel``, names the benchmark, the runs saved and the command that
    resumes it. ``context``: ``benchmark``, ``done``, ``total``. ``hrb bench`` exits 3, as when
    the daemon is stopped under it: the benchmark was ended from outside, not by a budget.
    """

    code = -32028


class DaemonStopped(HrbenchError):
    """Raised to the caller of a benchmark that ran when its daemon was stopped.

    Decided (newcomer finding: ``hrb daemon stop`` during ``hrb bench`` said only
    "cancelled"): the message says the daemon was stopped and how (``hrb daemon stop``, a
    signal), the benchmark's id, how many of its runs are done and saved, and the command that
    resumes it; the benchmark is stored ``interrupted`` (as when a daemon dies) and resumable.
    ``context``: ``benchmark``, ``done``, ``total``. ``hrb`` exits 3, as for a daemon that died
    mid-run: it is not a budget stop.
    """

    code = -32027


class FewRunsWarning(UserWarning):
    """Warned when a benchmark has fewer than 5 runs (seed 002: ``hr_few_runs``)."""


class StopUndecidableWarning(UserWarning):
    """Warned when a stop rule can run too few clusters for its test ever to decide a pair.

    With one pair at ``alpha = 0.05`` the exact test needs at least 10 clusters and the
    symmetric one 5 (:meth:`hrbench.stats.sequential.StopWhenSure.fewest_to_decide`): on a
    smaller reference (or ``max_clusters``) every cluster runs and nothing is gained.
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
    NA. Decided (seed silent; a newcomer's ``"labl"`` typo ended "done" with accuracy NA and no
    word): legal (outputs may be collected to label later), but said.
    """


class UnlabelledItemsWarning(UserWarning):
    """Warned when some, not all, of the items a benchmark runs on have no label.

    Their runs are ``correct=None`` (seed 002: an item with no label is NA) and accuracy
    averages the labelled items only. Decided (seed silent; newcomer finding: a ``labels``
    table that left an item out made it unlabelled with no count shown): legal, but counted,
    with the first ids named.
    """


class UsageEstimatedWarning(UserWarning):
    """Warned when live replies came without a usage block, so their tokens and USD are not the provider's.

    Decided (newcomer finding: an endpoint that sends no ``usage`` gave rows whose tokens and
    USD looked reported, with no word): the tokens are counted with the model's tokenizer
    (``usd_provenance`` ``"counted"``) or estimated from above at one token per UTF-8 byte (``"estimated"``; newcomer finding 14);
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
    reruns from the cache entirely. Decided (seed silent; newcomer finding: changing ``seed``
    reran from the cache with no note): legal (a rerun of the same seed is served so too),
    but said, with how to get new draws.
    """


class DrawsUncheckedWarning(UserWarning):
    """Warned when a resume runs runs again but kept runs came without their traces.

    Seed 002: an arm whose runs are not distinct draws is refused. Across a resume the check
    is seeded with the request keys and provider response ids in the kept runs' traces
    (``done_traces``), so a run made again that repeats a kept run's draw is refused again
    (newcomer finding: ``--retry-errors`` accepted one more duplicate per retry). A kept run
    whose trace is not given cannot be checked against; decided (loud, never silent): the
    resume goes on and says how many kept runs were not checked.
    """


class ReferenceReboundWarning(UserWarning):
    """Warned when a benchmark's named reference resolves to other content than the last benchmark of its name used.

    Decided (newcomer finding 18: ``hrb ref put caps`` rebound the name to new labels, and the
    rerun of a spec with ``reference = "caps"`` scored 1.000 -> 0.500 with no notice): the
    daemon says which content hash it used and which the previous benchmark used.
    """
