"""The stored benchmarks listed, and each one's status and banner (``hrb ls``, the view's index).

A benchmark's header (:meth:`Store.benchmark_headers`) becomes a ``BenchmarkListing``; a budget
stop or runs that ended in errors become its ``stop_note``, with the one ``hrb`` command that
resumes it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from hrbench._util.timefmt import iso_seconds as _iso
from hrbench.errors import NotFound
from hrbench.records import Row
from hrbench.runner import unknown_of, unknown_sentence
from hrbench.stats import reported_rows
from hrbench.store import Store

__all__ = [
    "ENDED_EARLY",
    "benchmark_list",
    "benchmark_status",
    "budget_note",
    "ended_note",
    "resume_flag",
    "stop_limits",
]


def _record(store: Store, benchmark_id: str, field: str = "id") -> dict[str, Any]:
    rec = store.benchmark_get(benchmark_id)
    if rec is None:
        raise NotFound(
            f"no stored benchmark has the id {benchmark_id!r}", benchmark=benchmark_id, field=field
        )
    return rec


def _head(store: Store, rec: dict[str, Any], n_rows: int) -> dict[str, Any]:
    """One benchmark's header, shaped as :meth:`Store.benchmark_headers` gives each."""
    spec = rec.get("spec") or {}
    params = spec.get("params") or {}
    caps = spec.get("limits") or params.get("governor") or {}  # the limits in force
    ledger = store.ledger_get(rec["id"]) or {}
    return {
        "id": rec["id"],
        "name": params.get("name"),
        "created": rec["created"],
        "status": rec["status"],
        "arms": [a["name"] for a in spec.get("arms", [])],
        "rows": n_rows,
        "total": spec.get("total"),
        "summary": rec.get("summary"),
        "runs": params.get("runs"),
        "reference_hash": rec.get("reference_hash"),
        "max_usd": caps.get("max_usd"),
        "max_calls": caps.get("max_calls"),
        "default_limits": caps.get("default"),
        "max_tokens": caps.get("max_tokens"),
        "tokens": ledger.get("tokens"),
        "usd": ledger.get("usd"),
        "calls": ledger.get("calls"),
        "unknown_usd": ledger.get("unknown_usd"),
        "unknown_calls": ledger.get("unknown_calls"),
        "stop_reason": (spec.get("stop") or {}).get("reason"),
    }


def benchmark_status(
    rec: dict[str, Any],
    rows: int,
    running: Collection[str] = (),
    used: dict[str, Any] | None = None,
    stopped_by: Collection[str] = (),
) -> dict[str, Any]:
    """A stored benchmark's status as shown, and its budget banner.

    Args:
        rec: its record (:meth:`Store.benchmark_get`): ``id``, ``status``, ``summary``.
        rows: its stored rows.
        running: as for :func:`benchmark_list`.
        used: its ledger (``calls``, ``usd``, ``tokens``; a header has them), to name the cap
            that stopped it when ``stopped_by`` does not.
        stopped_by: the refusals that stopped its runs (:meth:`Store.stop_limits`).

    Returns:
        ``{"status": ..., "stop_note": ...}``: ``interrupted`` for a ``running`` record no task
        runs, ``errors`` for a ``done`` one whose summary counts runs that ended in errors;
        ``stop_note`` as :func:`budget_note` gives it, after :func:`ended_note` for a
        benchmark that ended early (:data:`ENDED_EARLY`).

    Example:
        >>> benchmark_status({"id": "b1", "status": "running", "summary": None}, 3)["status"]
        'interrupted'
        >>> benchmark_status({"id": "b1", "status": "done", "summary": [{"errors": 2, "error_causes": {"RuntimeError": 2}}]}, 5)["status"]
        'errors'
    """
    from hrbench.runner import error_causes

    status = rec.get("status") or "interrupted"
    if status == "running" and rec.get("id") not in running:
        status = "interrupted"
    if status == "done" and sum(error_causes(rec.get("summary"))[0].values()):
        status = "errors"
    spec = rec.get("spec") or {}
    caps = spec.get("limits") or (spec.get("params") or {}).get("governor") or rec  # a header has them
    note = budget_note(str(rec.get("id")), rec.get("summary"), rows, caps, used, stopped_by)
    if status in ENDED_EARLY:  # what ended it and how to go on come first
        ended = ended_note(str(rec.get("id")), status, rows, spec.get("total", rec.get("total")))
        note = ended if note is None else f"{ended}; {note}"
    return {"status": status, "stop_note": note}


ENDED_EARLY = ("cancelled", "interrupted")
"""The statuses of a benchmark that ended before its last run and is resumed by ``hrb bench --resume ID``."""

_ENDED_HOW = {
    "cancelled": "was cancelled",
    "interrupted": "was interrupted (its daemon stopped before it finished)",
}


def ended_note(benchmark_id: str, status: str, rows: int, total: int | None) -> str:
    """The banner of a benchmark that ended early: what ended it, what its report holds, the resume command.

    Rule (docs/guides/shell.md, "A benchmark that ended early"): its report is descriptive of
    the runs finished (their cells may have unequal runs), never refused for them; the command
    is the one ``hrb bench`` prints on Ctrl-C.

    Args:
        benchmark_id: its id.
        status: one of :data:`ENDED_EARLY`.
        rows: its stored rows (runs finished).
        total: the runs of a full run (``None``: not known).

    Example:
        >>> ended_note("b1", "cancelled", 12, 40)
        'benchmark b1 was cancelled with 12 of 40 runs finished: its report is descriptive of those runs; resume it with `hrb bench --resume b1`'
    """
    of = f"{rows} of {total}" if total else f"{rows}"
    return (
        f"benchmark {benchmark_id} {_ENDED_HOW[status]} with {of} runs finished: its report is descriptive of "
        f"those runs; resume it with `hrb bench --resume {benchmark_id}`"
    )


def _items(store: Store, head: dict[str, Any], rows: Sequence[Row] | None) -> tuple[int | None, int | None]:
    """A benchmark's ``n_items`` and ``n_items_of`` (see ``BenchmarkListing``).

    Without a stop record: the items the spec runs (its expected rows over arms x runs), and
    ``None``. With one (a stop rule ran it): the items its reported rows hold (the committed
    clusters' and the dev split's, :func:`~hrbench.stats.reported_rows`: the report's
    own filter, so the page counts what the report counts), of the items the spec runs.
    """
    arms, runs, total = head["arms"], head["runs"], head["total"]
    full = total // (len(arms) * runs) if total is not None and arms and runs else None
    if head.get("stop_reason") is None:
        return full, None
    shown = reported_rows(store.rows_get(head["id"]) if rows is None else rows)
    return len({r.item for r in shown}), full


def _summary(
    head: dict[str, Any], running: Collection[str], store: Store, rows: Sequence[Row] | None = None
) -> dict[str, Any]:
    """A ``BenchmarkListing`` dict from a header (:meth:`Store.benchmark_headers`).

    ``rows``: the benchmark's stored rows when the caller has read them (a benchmark a stop
    rule ran has its reported items counted from them; they are read when not given).
    """
    stopped_by = stop_limits(store, head)
    arms, runs, total = head["arms"], head["runs"], head["total"]
    n_items, n_items_of = _items(store, head, rows)
    status = benchmark_status(head, head["rows"], running)["status"]
    accuracy = {s["arm"]: s.get("accuracy") for s in head["summary"] or []}
    known = {a: v for a, v in accuracy.items() if v is not None}
    best = max(known, key=lambda a: known[a]) if known else None
    reserved = _reserved(store, head) if status == "running" else {}
    if reserved:  # reservations in flight are the most a call may cost, not its use: said apart
        head = {**head, **{k: (head[k] or 0) - reserved[f"reserved_{k}"] for k in ("calls", "usd", "tokens")}}
    if head["calls"] is None and head.get("default_limits") is not None and head["status"] != "running":
        # one that kept its limits keeps a ledger from its first reservation: a finished one with
        # none made no call, every reply came from the cache or a recording (not "-",
        # which reads as unknown)
        head = {**head, "calls": 0, "usd": 0.0, "tokens": 0}
    return {
        "id": head["id"],
        "name": head["name"],
        "created": _iso(head["created"]),
        "status": status,
        "arms": arms,
        "rows": head["rows"],
        "total": total,
        "accuracy": accuracy,
        "n_items": n_items,
        "n_items_of": n_items_of,
        "runs": runs,
        "best_arm": best,
        "best_accuracy": None if best is None else known[best],
        "reference_hash": head["reference_hash"] or "",
        "usd": None if _usd_unknown(store, head, status, rows) else head["usd"],
        "max_usd": head["max_usd"],
        "calls": head["calls"],
        "max_calls": head["max_calls"],
        "unknown_usd": head.get("unknown_usd"),
        "unknown_calls": head.get("unknown_calls"),
        "unknown_note": unknown_sentence(unknown_of(head)),
        "max_tokens": head.get("max_tokens"),
        "tokens": head.get("tokens"),
        "default_limits": None if head.get("default_limits") is None else bool(head["default_limits"]),
        "stop_note": benchmark_status(head, head["rows"], running, head, stopped_by)["stop_note"],
        **reserved,
    }


def _usd_unknown(store: Store, head: dict[str, Any], status: str, rows: Sequence[Row] | None) -> bool:
    """Whether a benchmark's USD is NA (seed 002: a model with no price).

    Its summary says so, or, while it runs or when it ended with no summary (cancelled,
    failed, interrupted) having counted its calls at 0 USD, a stored row does (never the 0 its
    unpriced calls were counted at). An ended benchmark whose calls cost more than 0 reads no
    rows here (a listing and a cell of a large benchmark stay cheap).
    """
    if any(s.get("usd", 0.0) is None for s in head["summary"] or []):
        return True
    if not head["rows"]:
        return False
    if status != "running" and (head["summary"] or not head["calls"] or head["usd"] != 0):
        return False
    return any(r.usd is None for r in (rows if rows is not None else store.rows_get(head["id"])))


def _reserved(store: Store, head: dict[str, Any]) -> dict[str, Any]:
    """A running benchmark's open reservations (``reserved_calls``, ``reserved_usd``, ``reserved_tokens``).

    Rule (docs/guides/budgets.md): the governor counts a call in flight at its worst case
    (its reservation) against the caps until its reply settles it; a listing shows that apart
    from the use, so ``tokens`` is never a reservation shown as tokens used. ``{}`` with none open.
    """
    ledger = store.ledger_get(head["id"]) or {}
    if not ledger.get("open_calls"):
        return {}
    return {
        "reserved_calls": int(ledger["open_calls"]),
        "reserved_usd": float(ledger.get("open_usd") or 0.0),
        "reserved_tokens": int(ledger.get("open_tokens") or 0),
    }


_FLAGS = {
    "max_calls": ("calls", "--max-calls N"),
    "max_usd": ("usd", "--max-usd USD"),
    "max_tokens": ("tokens", "--max-tokens N"),
}


_STOP_FLAGS = {
    "call_cap_reached": "--max-calls N",
    "cost_cap_reached": "--max-usd USD",
    "token_cap_reached": "--max-tokens N",
}
"""The governor's refusal of each cap, and the ``hrb bench`` flag that raises it."""


def stop_limits(store: Store, rec: dict[str, Any]) -> list[str]:
    """The refusals that stopped a stored benchmark's runs (none read when its summary counts no stop)."""
    if not any(int(s.get("budget_stop") or 0) for s in rec.get("summary") or []):
        return []
    return store.stop_limits(str(rec["id"]))


def resume_flag(
    caps: dict[str, Any] | None, used: dict[str, Any] | None, stopped_by: Collection[str] = ()
) -> str:
    """The ``hrb bench --resume`` flag of the cap that stopped a benchmark.

    Rule (a cost stop names ``--max-usd``, a token-cap stop ``--max-tokens``, the same in
    ``hrb ls`` and the report): the caps whose
    refusals stopped its runs (``stopped_by``, kept in their traces: :meth:`Store.stop_limits`)
    name the flags, so every surface that shows the note says the same. Only when no cap
    refusal is known (a store from before, a provider's refusal) is the cap nearest to full
    (use over limit; a call cap reached is full) taken; with no cap known, every flag is named.

    Args:
        caps: the limits in force (``max_calls``, ``max_usd``, ``max_tokens``; ``None``: no cap).
        used: the ledger's use (``calls``, ``usd``, ``tokens``).
        stopped_by: the refusals' limits (``"token_cap_reached"``, ...).

    Example:
        >>> resume_flag({"max_calls": 400, "max_usd": 0.01}, {"calls": 20, "usd": 0.0095})
        '--max-usd USD'
        >>> resume_flag({"max_calls": 10, "max_usd": 5.0}, {"calls": 10, "usd": 0.5})
        '--max-calls N'
        >>> resume_flag(None, None)
        '--max-calls N (or --max-usd USD, --max-tokens N)'
        >>> resume_flag({"max_calls": 1000, "max_tokens": 5000}, {"calls": 990}, ["token_cap_reached"])
        '--max-tokens N'
    """
    named = [flag for limit, flag in _STOP_FLAGS.items() if limit in stopped_by]
    if named:
        return " ".join(named)
    caps, used = caps or {}, used or {}
    full = {
        flag: 1.0 if caps[cap] <= 0 else float(used.get(key) or 0) / caps[cap]
        for cap, (key, flag) in _FLAGS.items()
        if caps.get(cap) is not None
    }
    if not full:
        return "--max-calls N (or --max-usd USD, --max-tokens N)"
    return max(full, key=lambda f: full[f])


def budget_note(
    benchmark_id: str,
    summary: list[dict[str, Any]] | None,
    rows: int,
    caps: dict[str, Any] | None = None,
    used: dict[str, Any] | None = None,
    stopped_by: Collection[str] = (),
) -> str | None:
    """The banner of a benchmark a budget stopped or whose runs ended in errors.

    Args:
        benchmark_id: the benchmark's id (for the resume command).
        summary: its stored per-arm summary (``budget_stop`` and ``error_causes`` per arm),
            ``None`` while it runs.
        rows: its stored rows.
        caps: the limits in force, ``used`` the ledger's use: they name the flag to raise
            (:func:`resume_flag`) when ``stopped_by`` does not.
        used: see ``caps``.
        stopped_by: the refusals that stopped its runs (:meth:`Store.stop_limits`).

    Returns:
        :func:`hrbench.runner.stop_note` and :func:`hrbench.runner.error_note`, each when
        it applies, joined, with the one ``hrb`` command that resumes it: the flag of the cap
        that stopped it, and ``--retry-errors`` when runs ended in errors; ``None`` when no run
        was stopped or ended in an error.

    Example:
        >>> budget_note("b1", [{"arm": "a", "budget_stop": 240}], 250, {"max_usd": 1.0}, {"usd": 0.99})
        '240 of 250 runs were stopped by the budget and count as wrong; resume with `hrb bench --resume b1 --max-usd USD`'
        >>> budget_note("b1", [{"arm": "a", "errors": 20, "error_causes": {"openai: HTTP 401": 20}}], 20)
        "20 of 20 runs ended in errors and count as wrong; commonest cause: openai: HTTP 401 (20 runs, arm 'a'); fix it, then run them again with `hrb bench --resume b1 --retry-errors`"
    """
    from hrbench.runner import DUPLICATE_CAUSE, error_causes, error_note, stop_note

    stopped = sum(int(s.get("budget_stop") or 0) for s in summary or [])
    causes, arms = error_causes(summary)
    if not stopped:
        return error_note(causes, rows, f"`hrb bench --resume {benchmark_id} --retry-errors`", arms=arms)
    retry = any(k for c, k in causes.items() if c != DUPLICATE_CAUSE)  # not for duplicate draws
    failed = error_note(causes, rows, arms=arms)
    note = stop_note(stopped, rows) if failed is None else f"{stop_note(stopped, rows)}; {failed}"
    helps = [_NO_FLAG_HELPS[limit] for limit in sorted(stopped_by) if limit in _NO_FLAG_HELPS]
    if helps and not any(limit in _STOP_FLAGS for limit in stopped_by):  # no cap flag helps: say what does
        return f"{note}; {helps[0]}"
    flags = resume_flag(caps, used, stopped_by) + (" --retry-errors" if retry else "")
    return f"{note}; resume with `hrb bench --resume {benchmark_id} {flags}`"


_NO_FLAG_HELPS = {
    "reservation_exceeded": (
        "a reply cost more than was reserved for it (billed as a dearer model than the client or the "
        "judge declares, or past the output limit sent), so no higher limit helps: declare the model "
        "the replies are billed as with billed_as = [...] in the [client] table (a judge's in "
        "[scorer_settings.client]) and run the spec anew"
    ),
    "unpriced_model": (
        "a model (the client's, a judge's or one a reply was billed as) has no price, so no higher "
        "limit helps: give it one in a price table file named by HRBENCH_PRICES in the daemon's "
        "environment and resume, or with price/prices in the [client] table (a judge's in "
        "[scorer_settings.client]) and run the spec anew"
    ),
}
"""What helps when the governor stopped a benchmark for a reason no cap flag changes."""


def benchmark_list(
    store: Store, search: str | None = None, running: Collection[str] = (), limit: int | None = None
) -> list[dict[str, Any]]:
    """Stored benchmarks, newest first, optionally only those whose name or id contains ``search``.

    Args:
        store: the store to read.
        search: a case-insensitive substring of the benchmark's name or id; ``None`` or ``""``
            for all.
        running: ids of the benchmarks this process runs now (a ``running`` record not among
            them is reported ``interrupted``).
        limit: the most benchmarks to return (the newest); ``None`` for all.

    Returns:
        One ``BenchmarkListing`` dict per benchmark: id, name, created (ISO 8601, UTC), status,
        arms, rows, total, accuracy per arm, n_items, runs, best_arm and best_accuracy (from the
        stored summary; ``None`` until the benchmark ends), reference_hash, the governor's
        use (usd, calls) and caps in force (max_usd, max_calls), and ``stop_note``
        (:func:`budget_note`; status ``budget_stopped``).

    Example:
        >>> s = Store(":memory:")
        >>> s.benchmark_put("b1", {"params": {"name": "capitals", "runs": 5},
        ...                        "arms": [{"name": "ask"}], "total": 20}, "h")
        >>> [(b["name"], b["status"], b["n_items"]) for b in benchmark_list(s, "CAP")]
        [('capitals', 'interrupted', 4)]
        >>> benchmark_list(s, "nope")
        []
    """
    needle = (search or "").casefold()
    out = []
    for head in store.benchmark_headers():
        if needle and needle not in f"{head['name'] or ''}\n{head['id']}".casefold():
            continue
        out.append(_summary(head, running, store))
        if limit is not None and len(out) >= limit:
            break
    return out
