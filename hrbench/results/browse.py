"""Read-only views of stored benchmarks, for ``hrb view`` and the daemon's ``benchmark/*`` reads.

Each function takes a :class:`~hrbench.store.Store` and returns builtins (dicts, lists, numbers)
shaped as the wire Structs of :mod:`hrbench_client.protocol` (``BenchmarkSummary``,
``BenchmarkViewResult``, ``BenchmarkMatrixResult``, ``BenchmarkCellResult``,
``BenchmarkCompareResult``), so the daemon only converts them. Statistics come from
:func:`hrbench.stats.report` and :func:`hrbench.stats.compare`: the numbers a page shows are
the report's numbers.

Rules decided here (issue 16; the seeds are silent):

- a benchmark is reported with ``descriptive=True`` always: with 5 or more runs per item that
  changes nothing, with fewer the report (and so every page) is labelled "descriptive only"
  instead of refused;
- the paired differences against a chosen arm are the report's all-pairs comparisons (Holm-
  adjusted over every pair, as ``report()`` gives them), turned so that ``diff = arm - against``;
- "arms disagree" on an item when the arms that ran it do not all have the same mean
  correctness over runs there;
- a benchmark stored as ``running`` that no task of this daemon runs is ``interrupted``;
- a benchmark a budget stopped has status ``budget_stopped`` and a ``stop_note`` saying how
  many runs count as wrong and how to resume (newcomer finding);
- a benchmark with runs that ended in errors (all or some) has status ``errors`` (a budget stop
  wins when both) and a ``stop_note`` saying how many, the commonest cause, and that
  ``hrb bench --resume ID --retry-errors`` runs them again (newcomer finding: every run failed
  on a dead port and the benchmark showed ``done``); one stored ``done`` by an older version
  with such runs is shown ``errors`` too.
"""

from __future__ import annotations

import shlex
import threading
import weakref
from collections import Counter, OrderedDict
from collections.abc import Collection
from typing import Any

import msgspec

from hrbench._util.timefmt import iso_seconds as _iso
from hrbench.errors import ConfigError, NotFound
from hrbench.results.records import Row, Step
from hrbench.runner.ledger import unknown_of, unknown_sentence
from hrbench.store import Store, _store_error

__all__ = [
    "benchmark_cell",
    "benchmark_compare",
    "benchmark_list",
    "benchmark_matrix",
    "benchmark_status",
    "benchmark_view",
    "budget_note",
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
    caps = spec.get("limits") or params.get("governor") or {}  # the limits in force (newcomer finding)
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
    }


def benchmark_status(
    rec: dict[str, Any],
    rows: int,
    running: Collection[str] = (),
    used: dict[str, Any] | None = None,
    stopped_by: Collection[str] = (),
) -> dict[str, Any]:
    """A stored benchmark's status as shown, and its budget banner (newcomer finding).

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
        ``stop_note`` as :func:`budget_note` gives it.

    Example:
        >>> benchmark_status({"id": "b1", "status": "running", "summary": None}, 3)
        {'status': 'interrupted', 'stop_note': None}
        >>> benchmark_status({"id": "b1", "status": "done", "summary": [{"errors": 2, "error_causes": {"RuntimeError": 2}}]}, 5)["status"]
        'errors'
    """
    from hrbench.runner.benchmark import error_causes

    status = rec.get("status") or "interrupted"
    if status == "running" and rec.get("id") not in running:
        status = "interrupted"
    if status == "done" and sum(error_causes(rec.get("summary"))[0].values()):
        status = "errors"
    spec = rec.get("spec") or {}
    caps = spec.get("limits") or (spec.get("params") or {}).get("governor") or rec  # a header has them
    note = budget_note(str(rec.get("id")), rec.get("summary"), rows, caps, used, stopped_by)
    return {"status": status, "stop_note": note}


def _summary(head: dict[str, Any], running: Collection[str], store: Store) -> dict[str, Any]:
    """A ``BenchmarkListing`` dict from a header (:meth:`Store.benchmark_headers`)."""
    stopped_by = stop_limits(store, head)
    arms, runs, total = head["arms"], head["runs"], head["total"]
    status = benchmark_status(head, head["rows"], running)["status"]
    accuracy = {s["arm"]: s.get("accuracy") for s in head["summary"] or []}
    known = {a: v for a, v in accuracy.items() if v is not None}
    best = max(known, key=lambda a: known[a]) if known else None
    return {
        "id": head["id"],
        "name": head["name"],
        "created": _iso(head["created"]),
        "status": status,
        "arms": arms,
        "rows": head["rows"],
        "total": total,
        "accuracy": accuracy,
        "n_items": total // (len(arms) * runs) if total is not None and arms and runs else None,
        "runs": runs,
        "best_arm": best,
        "best_accuracy": None if best is None else known[best],
        "reference_hash": head["reference_hash"] or "",
        "usd": None if any(s.get("usd", 0.0) is None for s in head["summary"] or []) else head["usd"],
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
    """The ``hrb bench --resume`` flag of the cap that stopped a benchmark (newcomer finding).

    Decided (newcomer findings: a cost stop said ``--max-calls N``; after a token-cap stop
    ``hrb ls`` said ``--max-calls N`` while the report said ``--max-tokens N``): the caps whose
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
    """The banner of a benchmark a budget stopped or whose runs ended in errors (newcomer findings).

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
        :func:`hrbench.runner.benchmark.stop_note` and :func:`hrbench.runner.benchmark.error_note`, each when
        it applies, joined, with the one ``hrb`` command that resumes it: the flag of the cap
        that stopped it, and ``--retry-errors`` when runs ended in errors; ``None`` when no run
        was stopped or ended in an error.

    Example:
        >>> budget_note("b1", [{"arm": "a", "budget_stop": 240}], 250, {"max_usd": 1.0}, {"usd": 0.99})
        '240 of 250 runs were stopped by the budget and count as wrong; resume with `hrb bench --resume b1 --max-usd USD`'
        >>> budget_note("b1", [{"arm": "a", "errors": 20, "error_causes": {"openai: HTTP 401": 20}}], 20)
        "20 of 20 runs ended in errors and count as wrong; commonest cause: openai: HTTP 401 (20 runs, arm 'a'); fix it, then run them again with `hrb bench --resume b1 --retry-errors`"
    """
    from hrbench.runner.benchmark import DUPLICATE_CAUSE, error_causes, error_note, stop_note

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


def _flip(c: dict[str, Any]) -> dict[str, Any]:
    """``arm_a - arm_b`` as ``arm_b - arm_a``: the same test, the interval mirrored."""
    neg = {k: None if c[k] is None else 0.0 - c[k] for k in ("diff", "ci_low", "ci_high")}  # no -0.0
    return {
        **c,
        "arm_a": c["arm_b"],
        "arm_b": c["arm_a"],
        "accuracy_a": c["accuracy_b"],
        "accuracy_b": c["accuracy_a"],
        "diff": neg["diff"],
        "ci_low": neg["ci_high"],
        "ci_high": neg["ci_low"],
    }


def _difference(c: dict[str, Any]) -> dict[str, Any]:
    return {
        "arm": c["arm_a"],
        "against": c["arm_b"],
        **{
            k: c[k]
            for k in (
                "diff",
                "se",
                "ci_low",
                "ci_high",
                "p_value",
                "p_holm",
                "n_items",
                "n_clusters",
                "accuracy_a",
                "accuracy_b",
                "level",
                "descriptive",
                "note",
            )
        },
    }


def benchmark_view(
    store: Store,
    benchmark_id: str,
    against: str | None = None,
    *,
    level: float = 0.95,
    method: str = "cluster",
    running: Collection[str] = (),
) -> dict[str, Any]:
    """One benchmark's page: its header, the arm table and paired differences against one arm.

    Args:
        store: the store to read.
        benchmark_id: the benchmark.
        against: the arm the others are compared with; ``None`` for the first arm.
        level: the intervals' level, as for :func:`hrbench.stats.report`.
        method: ``"cluster"`` or ``"bootstrap"``, as for :func:`hrbench.stats.report`.
        running: as for :func:`benchmark_list`.

    Returns:
        A ``BenchmarkViewResult`` dict: ``benchmark`` (its summary), ``arms`` (per arm the
        report's accuracy, interval, runs, failures by kind, USD, plus tokens in/out and seconds
        summed over its rows), ``against``, ``differences`` (``arm - against`` for every other
        arm, Holm-adjusted as in the report), ``descriptive``, ``note``, ``text`` and the full
        ``report`` payload; ``metrics`` per arm are the benchmark metrics' means from the stored
        summary (no interval). A benchmark with no rows yet has empty tables and ``report`` None.

    Raises:
        NotFound: no benchmark has that id.
        ConfigError: ``against`` is not an arm of the benchmark, or a bad ``level``/``method``.

    Example:
        >>> s = Store(":memory:")
        >>> rows = [Row(cluster="c", item=f"q{i}", arm=a, run=1, split="test", correct=(i < 2 or a == "b"),
        ...             outcome=None, failure_kind=None if (i < 2 or a == "b") else "wrong")
        ...         for i in range(4) for a in ("a", "b")]
        >>> s.benchmark_put("b1", {"params": {"runs": 1}, "arms": [{"name": "a"}, {"name": "b"}]}, "h")
        >>> s.rows_put("b1", list(enumerate(rows)))
        >>> v = benchmark_view(s, "b1")
        >>> v["descriptive"], [(a["arm"], a["accuracy"], a["failures"]) for a in v["arms"]]
        (True, [('a', 0.5, {'wrong': 2}), ('b', 1.0, {})])
        >>> [(d["arm"], d["against"], d["diff"]) for d in v["differences"]]
        [('b', 'a', 0.5)]
    """
    from hrbench.stats import report

    rec = _record(store, benchmark_id)
    rows = store.rows_get(benchmark_id)
    head = _summary(_head(store, rec, len(rows)), running, store)
    out: dict[str, Any] = {
        "benchmark": head,
        "arms": [],
        "against": against,
        "differences": [],
        "descriptive": (head["runs"] or 0) < 5,
        "level": level,
        "method": method,
        "note": "no rows yet",
        "text": "",
        "report": None,
    }
    if not rows:
        return out
    traces = _price_traces(store, benchmark_id)  # the list price per arm (issue 18)
    rep = report(rows, level, method, True, traces=traces, warn=False, stop=rec["spec"].get("stop"))  # type: ignore[arg-type]
    names = [a.arm for a in rep.arms]
    if against is None:
        against = names[0]
    elif against not in names:
        raise ConfigError("against", against, f"not an arm of benchmark {benchmark_id} (arms: {names})")
    extra: dict[str, dict[str, Any]] = {n: {"tokens_in": 0, "tokens_out": 0, "seconds": 0.0} for n in names}
    for r in rows:
        e = extra[r.arm]
        e["tokens_in"] += r.tokens_in
        e["tokens_out"] += r.tokens_out
        e["seconds"] += r.seconds
    payload = rep.to_dict()
    payload["text"] = str(rep)
    kinds = ("wrong", "not_in_document", "parse_failure", "refusal", "error", "budget_stop")
    metrics = {s["arm"]: s.get("metrics") or {} for s in rec.get("summary") or []}
    for a in payload["arms"]:
        out["arms"].append(
            {
                **{
                    k: a[k]
                    for k in (
                        "arm",
                        "accuracy",
                        "se",
                        "ci_low",
                        "ci_high",
                        "n_items",
                        "n_clusters",
                        "runs",
                        "n_runs",
                        "usd",
                        "usd_list",
                        "usd_unpriced",
                        "usd_per_run",
                        "usd_per_run_low",
                        "usd_per_run_high",
                        "accuracy_per_usd",
                        "accuracy_per_usd_low",
                        "accuracy_per_usd_high",
                        "dev_accuracy",
                    )
                },
                "failures": {k: a[k] for k in kinds if a[k]},
                "metrics": metrics.get(a["arm"], {}),
                **extra[a["arm"]],
            }
        )
    for c in payload["comparisons"]:
        if c["arm_b"] == against:
            out["differences"].append(_difference(c))
        elif c["arm_a"] == against:
            out["differences"].append(_difference(_flip(c)))
    order = {n: i for i, n in enumerate(names)}
    out["differences"].sort(key=lambda d: order[d["arm"]])
    out.update(
        against=against, descriptive=rep.descriptive, note=rep.note, text=payload["text"], report=payload
    )
    return out


def _cells(
    rows: list[Row],
) -> tuple[list[str], dict[str, dict[str, Any]], dict[tuple[str, str], dict[str, Any]]]:
    arms: dict[str, None] = {}
    items: dict[str, dict[str, Any]] = {}
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        arms.setdefault(r.arm)
        items.setdefault(r.item, {"item": r.item, "cluster": r.cluster, "split": r.split})
        c = cells.get((r.item, r.arm))
        if c is None:
            c = cells[(r.item, r.arm)] = {"n": 0, "right": 0, "labelled": 0, "kinds": Counter()}
        c["n"] += 1
        if r.correct is not None:
            c["labelled"] += 1
            c["right"] += bool(r.correct)
        if r.failure_kind is not None:
            c["kinds"][r.failure_kind] += 1
    return list(arms), items, cells


def benchmark_matrix(
    store: Store,
    benchmark_id: str,
    *,
    cluster: str | None = None,
    failure_kind: str | None = None,
    split: str | None = None,
    disagree: bool = False,
    offset: int = 0,
    limit: int | None = None,
) -> dict[str, Any]:
    """The item x arm matrix of mean correctness over runs, filtered.

    Args:
        store: the store to read.
        benchmark_id: the benchmark.
        cluster: keep only the items of this cluster.
        failure_kind: keep only the items where some run of some arm failed with this kind.
        split: keep only the items of this split.
        disagree: keep only the items on which the arms disagree (their mean correctness over
            runs is not the same for every arm that ran the item; unlabelled items never count).
        offset: matching items to skip (paging).
        limit: the most items to return; ``None`` for all.

    Returns:
        A ``BenchmarkMatrixResult`` dict: ``arms``; ``items`` (item, cluster, split, disagree,
        and ``cells`` aligned with ``arms``: ``{"mean", "n", "failure_kinds"}`` or ``None`` when
        the arm did not run the item; ``mean`` is ``None`` for an unlabelled item);
        ``n_items`` matching the filters, ``n_items_total``, and the ``clusters``, ``splits``
        and ``failure_kinds`` present (for the filter menus).

    Raises:
        NotFound: no benchmark has that id.
        ConfigError: a negative ``offset`` or ``limit``.

    Example:
        >>> s = Store(":memory:")
        >>> rows = [Row(cluster="c", item=f"q{i}", arm=a, run=r, split="test", correct=(i < 2 or a == "b"),
        ...             outcome=None, failure_kind=None if (i < 2 or a == "b") else "wrong")
        ...         for i in range(4) for a in ("a", "b") for r in (1, 2)]
        >>> s.benchmark_put("b1", {}, "h")
        >>> s.rows_put("b1", list(enumerate(rows)))
        >>> m = benchmark_matrix(s, "b1", disagree=True)
        >>> [i["item"] for i in m["items"]], m["n_items_total"], m["items"][0]["cells"][0]
        (['q2', 'q3'], 4, {'mean': 0.0, 'n': 2, 'failure_kinds': {'wrong': 2}})
    """
    if offset < 0:
        raise ConfigError("offset", offset, "must be 0 or more")
    if limit is not None and limit < 0:
        raise ConfigError("limit", limit, "must be 0 or more (or None for all)")
    _record(store, benchmark_id)
    arms, items, cells = _cells(store.rows_get(benchmark_id))
    kinds: set[str] = set()
    matched = []
    for info in items.values():
        row_cells: list[dict[str, Any] | None] = []
        means = set()
        item_kinds: set[str] = set()
        for arm in arms:
            c = cells.get((info["item"], arm))
            if c is None:
                row_cells.append(None)
                continue
            mean = c["right"] / c["labelled"] if c["labelled"] else None
            if mean is not None:
                means.add(mean)
            item_kinds.update(c["kinds"])
            row_cells.append({"mean": mean, "n": c["n"], "failure_kinds": dict(sorted(c["kinds"].items()))})
        kinds |= item_kinds
        entry = {**info, "disagree": len(means) > 1, "cells": row_cells}
        if cluster is not None and info["cluster"] != cluster:
            continue
        if split is not None and info["split"] != split:
            continue
        if failure_kind is not None and failure_kind not in item_kinds:
            continue
        if disagree and not entry["disagree"]:
            continue
        matched.append(entry)
    page = matched[offset : None if limit is None else offset + limit]
    return {
        "arms": arms,
        "items": page,
        "n_items": len(matched),
        "n_items_total": len(items),
        "clusters": sorted({i["cluster"] for i in items.values()}),
        "splits": sorted({i["split"] for i in items.values()}),
        "failure_kinds": sorted(kinds),
    }


def reproduce_command(benchmark_id: str, item: str, arm: str) -> str:
    """The shell command that prints one cell's rows with their traces.

    Example:
        >>> reproduce_command("0123abcd", "q 1", "ask")
        "hrb rows 0123abcd --traces --item 'q 1' --arm ask"
    """
    return shlex.join(["hrb", "rows", benchmark_id, "--traces", "--item", item, "--arm", arm])


class _CellKey(msgspec.Struct):
    """What the cell index reads of a stored row (its other fields are skipped when decoding)."""

    arm: str
    item: str


class _RefParts(msgspec.Struct):
    """What a cell reads of a stored reference: payloads and labels, each left undecoded."""

    items: dict[str, msgspec.Raw]
    labels: dict[str, msgspec.Raw] | None = None


class _PriceStep(msgspec.Struct):
    """What a run's list price reads of a trace step (:func:`hrbench.results.records.list_usd`), as in ``Step``."""

    kind: str = "request"
    source: str = "live"
    usd_nominal: float | None = None


_dec_cell_keys = msgspec.json.Decoder(list[_CellKey])
_dec_price_steps = msgspec.json.Decoder(list[_PriceStep])
_dec_rows = msgspec.json.Decoder(list[Row])
_dec_row = msgspec.json.Decoder(Row)
_dec_steps = msgspec.json.Decoder(list[Step])
_dec_trace_map = msgspec.json.Decoder(dict[str, msgspec.Raw])
_dec_ref_parts = msgspec.json.Decoder(_RefParts)


class _CellIndex:
    """Which row batches of one benchmark hold the rows of each ``(arm, item)``.

    Decided (a cell of a 100,000-row benchmark took 11-18 s in ``hrb view``): the rows are
    stored a batch per SQLite row (:meth:`Store.row_batch_put`), so no SQL index reaches one
    cell's rows; reading a cell decoded every row and every trace. The index is built from the
    batches' keys the first time a benchmark's cell is read, extended with the batches written
    since at every read (their ids only grow), and rebuilt when a batch it knew is gone; a
    cell then reads and decodes only its own batches (a few milliseconds).
    """

    __slots__ = ("bare", "cells", "ids")

    def __init__(self) -> None:
        self.ids: list[int] = []
        """The batch ids indexed, ascending."""
        self.cells: dict[tuple[str, str], list[int]] = {}
        """``(arm, item) -> ids`` of the batches holding its rows, ascending."""
        self.bare: list[int] = []
        """Ids of batches with traces and no rows (read for every cell)."""


_CELL_INDEXES: weakref.WeakKeyDictionary[Store, OrderedDict[str, _CellIndex]] = weakref.WeakKeyDictionary()
_REF_PARTS: weakref.WeakKeyDictionary[Store, OrderedDict[str, _RefParts]] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()
_KEEP = 4
"""Benchmarks (and references) whose cell index a store keeps, the least recently read dropped."""


def _cached(table: weakref.WeakKeyDictionary[Store, OrderedDict[str, Any]], store: Store, key: str) -> Any:
    with _CACHE_LOCK:
        entries = table.get(store)
        if entries is None or key not in entries:
            return None
        entries.move_to_end(key)
        return entries[key]


def _keep(
    table: weakref.WeakKeyDictionary[Store, OrderedDict[str, Any]], store: Store, key: str, value: Any
) -> None:
    with _CACHE_LOCK:
        entries = table.setdefault(store, OrderedDict())
        entries[key] = value
        entries.move_to_end(key)
        while len(entries) > _KEEP:
            entries.popitem(last=False)


def _in_chunks(ids: list[int]) -> list[list[int]]:
    return [ids[i : i + 500] for i in range(0, len(ids), 500)]  # well under SQLite's bound-parameter limit


def _cell_index(store: Store, benchmark_id: str, ids: list[int]) -> _CellIndex:
    """The cell index of a benchmark whose batches are ``ids`` (ascending), brought up to date."""
    index = _cached(_CELL_INDEXES, store, benchmark_id)
    if index is None or index.ids != ids[: len(index.ids)]:
        index = _CellIndex()  # new, or a batch it knew is gone (deleted, collected): rebuilt
    new = ids[len(index.ids) :]
    if new:
        grown = _CellIndex()
        grown.ids, grown.bare = [*index.ids, *new], list(index.bare)
        grown.cells = {k: list(v) for k, v in index.cells.items()}
        for chunk in _in_chunks(new):
            marks = ",".join("?" * len(chunk))
            got = store._all(f"SELECT id, n, rows FROM row_batches WHERE id IN ({marks}) ORDER BY id", chunk)
            for batch_id, n, body in got:
                if not n:
                    grown.bare.append(batch_id)
                    continue
                try:
                    keys = _dec_cell_keys.decode(body)
                except msgspec.DecodeError as exc:
                    raise _store_error(exc, store.path) from None
                for k in keys:
                    held = grown.cells.setdefault((k.arm, k.item), [])
                    if not held or held[-1] != batch_id:
                        held.append(batch_id)
        index = grown
        _keep(_CELL_INDEXES, store, benchmark_id, index)
    return index


def _price_traces(store: Store, benchmark_id: str) -> dict[str, list[_PriceStep]]:
    """Every trace of a benchmark as its list price reads it: kind, source and nominal USD of each step.

    Decided (a benchmark's page of 100,000 rows took 3.5 s, and held the store for as long,
    so every other page waited): the messages and replies are skipped, and the batches are
    read a few at a time, each read its own short hold of the store, decoded outside it. The
    last written trace of each run counts, as in :meth:`Store.traces_get`.
    """
    try:
        raws: dict[str, Any] = dict(
            store._all("SELECT ledger_id, steps FROM traces WHERE benchmark_id=?", [benchmark_id])
        )
        ids = [
            i
            for (i,) in store._all(
                "SELECT id FROM row_batches WHERE benchmark_id=? ORDER BY id", [benchmark_id]
            )
        ]
        for k in range(0, len(ids), 8):
            some = ids[k : k + 8]
            marks = ",".join("?" * len(some))
            for (blob,) in store._all(
                f"SELECT traces FROM row_batches WHERE id IN ({marks}) ORDER BY id", some
            ):
                raws.update(_dec_trace_map.decode(blob))
        return {lid: _dec_price_steps.decode(raw) for lid, raw in raws.items()}
    except msgspec.DecodeError as exc:
        raise _store_error(exc, store.path) from None


def _cell_runs(
    store: Store, benchmark_id: str, item: str, arm: str
) -> tuple[list[Row], dict[str, list[Step]]]:
    """One cell's rows (by run; the last written of each run) and their traces, read through indexes.

    The same rows and traces as :meth:`Store.rows_get` and :meth:`Store.traces_get` give for
    the cell, from the rows and traces of schema 4 (by primary key) and the cell's batches.
    """
    try:
        old = store._all(
            "SELECT seq, row FROM rows WHERE benchmark_id=? AND arm=? AND item=?", [benchmark_id, arm, item]
        )
        ids = [
            i
            for (i,) in store._all(
                "SELECT id FROM row_batches WHERE benchmark_id=? ORDER BY id", [benchmark_id]
            )
        ]
        index = _cell_index(store, benchmark_id, ids)
        wanted = sorted({*index.cells.get((arm, item), ()), *index.bare})
        batches = []
        for chunk in _in_chunks(wanted):
            marks = ",".join("?" * len(chunk))
            batches += store._all(
                f"SELECT id, rows, traces FROM row_batches WHERE id IN ({marks}) ORDER BY id", chunk
            )
        latest: dict[int, Row] = {}
        for _, text in sorted(old):
            r = _dec_row.decode(text)
            latest[r.run] = r
        raw_traces: dict[str, Any] = {}
        for _, body, _ in batches:  # ascending ids: the last written of each run wins
            for r in _dec_rows.decode(body):
                if r.arm == arm and r.item == item:
                    latest[r.run] = r
        mine = [latest[run] for run in sorted(latest)]
        lids = {r.ledger_id for r in mine}
        if lids:
            listed = sorted(lids)
            for i in range(0, len(listed), 500):
                named = listed[i : i + 500]
                marks = ",".join("?" * len(named))
                raw_traces.update(
                    store._all(
                        f"SELECT ledger_id, steps FROM traces WHERE benchmark_id=? AND ledger_id IN ({marks})",
                        [benchmark_id, *named],
                    )
                )
            for _, _, traces in batches:
                raw_traces.update((k, v) for k, v in _dec_trace_map.decode(traces).items() if k in lids)
        return mine, {k: _dec_steps.decode(v) for k, v in raw_traces.items()}
    except msgspec.DecodeError as exc:
        raise _store_error(exc, store.path) from None


def _item_parts(store: Store, reference_hash: str, item: str) -> tuple[Any, Any] | None:
    """An item's ``(payload, label)`` in a stored reference; ``None`` when either is not stored.

    Only the item's own values are decoded (the reference is kept undecoded, by hash: stored
    references never change), not the whole :class:`~hrbench.reference.Reference`.
    """
    parts = _cached(_REF_PARTS, store, reference_hash)
    if parts is None:
        row = store._one("SELECT body FROM reference_sets WHERE hash=?", [reference_hash])
        if row is None:
            return None
        try:
            parts = _dec_ref_parts.decode(row[0])
        except msgspec.DecodeError as exc:
            raise _store_error(exc, store.path) from None
        _keep(_REF_PARTS, store, reference_hash, parts)
    if item not in parts.items:
        return None
    label = (parts.labels or {}).get(item)
    return msgspec.json.decode(parts.items[item]), None if label is None else msgspec.json.decode(label)


def benchmark_cell(store: Store, benchmark_id: str, item: str, arm: str) -> dict[str, Any]:
    """One cell: every run of ``arm`` on ``item`` with its trace, the item's payload and label.

    Args:
        store: the store to read.
        benchmark_id: the benchmark.
        item: the item id.
        arm: the arm's name.

    Returns:
        A ``BenchmarkCellResult`` dict: ``benchmark`` (its summary), item, arm, cluster, split,
        ``payload`` and ``label`` (from the stored reference; ``None`` when it is not stored),
        ``runs`` (``{"row": Row, "trace": [Step, ...]}`` by run; the trace holds each request
        and reply, finish reason, usage, USD and source: live, cache or recording) and
        ``command``, the ``hrb rows`` line that prints the same rows.

    Raises:
        NotFound: no benchmark has that id, or the arm never ran the item.

    Example:
        >>> s = Store(":memory:")
        >>> s.benchmark_put("b1", {}, "h")
        >>> s.rows_put("b1", [(0, Row(cluster="c", item="q1", arm="a", run=1, split="test",
        ...                           correct=False, outcome="x", failure_kind="wrong"))])
        >>> c = benchmark_cell(s, "b1", "q1", "a")
        >>> [r["row"].outcome for r in c["runs"]], c["command"]
        (['x'], 'hrb rows b1 --traces --item q1 --arm a')
    """
    rec = _record(store, benchmark_id)
    mine, traces = _cell_runs(store, benchmark_id, item, arm)
    if not mine:
        raise NotFound(
            f"arm {arm!r} has no run on item {item!r} in benchmark {benchmark_id}",
            benchmark=benchmark_id,
            item=item,
            arm=arm,
        )
    parts = _item_parts(store, rec["reference_hash"], item) if rec.get("reference_hash") else None
    payload, label = parts if parts is not None else (None, None)
    return {
        "benchmark": _summary(_head(store, rec, store.rows_count(benchmark_id)), (), store),
        "item": item,
        "arm": arm,
        "cluster": mine[0].cluster,
        "split": mine[0].split,
        "payload": payload,
        "label": label,
        "runs": [{"row": r, "trace": traces.get(r.ledger_id, [])} for r in mine],
        "command": reproduce_command(benchmark_id, item, arm),
    }


def _holm(p: list[float | None]) -> list[float | None]:
    known = sorted((v, i) for i, v in enumerate(p) if v is not None)
    out: list[float | None] = [None] * len(p)
    run = 0.0
    for rank, (v, i) in enumerate(known):
        run = max(run, min(1.0, (len(known) - rank) * v))
        out[i] = run
    return out


def benchmark_compare(
    store: Store,
    a: str,
    b: str,
    *,
    level: float = 0.95,
    method: str = "cluster",
    running: Collection[str] = (),
) -> dict[str, Any]:
    """Two benchmarks on the same reference: per arm they share, the paired difference ``b - a``.

    Each arm name present in both is compared item by item (:func:`hrbench.stats.compare` on
    the union of the two benchmarks' rows, the arm renamed ``a:NAME`` and ``b:NAME``), so
    ``diff > 0`` means the arm scored higher in ``b``. The p-values are Holm-adjusted over the
    arms compared (``p_holm``). Descriptive when either benchmark has fewer than 5 runs.

    Args:
        store: the store to read.
        a: the first benchmark's id.
        b: the second benchmark's id.
        level: as for :func:`hrbench.stats.compare`.
        method: as for :func:`hrbench.stats.compare`.
        running: as for :func:`benchmark_list`.

    Returns:
        A ``BenchmarkCompareResult`` dict: ``a`` and ``b`` (their summaries), ``reference_hash``,
        ``differences`` (one per shared arm; ``arm`` and ``against`` are the arm's name),
        ``only_a`` and ``only_b`` (arms in one benchmark only) and ``descriptive``.

    Raises:
        NotFound: no benchmark has id ``a`` or ``b``.
        ConfigError: the two benchmarks do not share a reference hash.

    Example:
        >>> s = Store(":memory:")
        >>> for bid, right in (("b1", 2), ("b2", 3)):
        ...     s.benchmark_put(bid, {"params": {"runs": 1}, "arms": [{"name": "ask"}]}, "h")
        ...     s.rows_put(bid, [(i, Row(cluster=f"c{i}", item=f"q{i}", arm="ask", run=1, split="test",
        ...                              correct=i < right, outcome=None, failure_kind=None))
        ...                      for i in range(4)])
        >>> d = benchmark_compare(s, "b1", "b2")["differences"][0]
        >>> d["arm"], d["diff"], d["n_items"]
        ('ask', 0.25, 4)
    """
    from msgspec.structs import replace

    from hrbench.stats import compare

    rec_a, rec_b = _record(store, a, "a"), _record(store, b, "b")
    if rec_a.get("reference_hash") != rec_b.get("reference_hash"):
        raise ConfigError(
            "b",
            b,
            f"does not share the reference of benchmark {a} (reference hashes "
            f"{(rec_a.get('reference_hash') or '')[:12]} and {(rec_b.get('reference_hash') or '')[:12]})",
        )
    rows_a, rows_b = store.rows_get(a), store.rows_get(b)
    arms_a = list(dict.fromkeys(r.arm for r in rows_a))
    arms_b = list(dict.fromkeys(r.arm for r in rows_b))
    shared = [n for n in arms_a if n in arms_b]
    both = [replace(r, arm=f"a:{r.arm}") for r in rows_a] + [replace(r, arm=f"b:{r.arm}") for r in rows_b]
    diffs = []
    for name in shared:
        c = compare(both, f"b:{name}", f"a:{name}", level=level, method=method, descriptive=True, warn=False)  # type: ignore[arg-type]
        d = _difference({k: getattr(c, k) for k in c.__struct_fields__} | {"arm_a": name, "arm_b": name})
        diffs.append(d)
    for d, adj in zip(diffs, _holm([d["p_value"] for d in diffs]), strict=True):
        d["p_holm"] = adj if len(diffs) > 1 else None
    return {
        "a": _summary(_head(store, rec_a, len(rows_a)), running, store),
        "b": _summary(_head(store, rec_b, len(rows_b)), running, store),
        "reference_hash": rec_a.get("reference_hash") or "",
        "differences": diffs,
        "only_a": [n for n in arms_a if n not in arms_b],
        "only_b": [n for n in arms_b if n not in arms_a],
        "descriptive": any(d["descriptive"] for d in diffs),
    }
