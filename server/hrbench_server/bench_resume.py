"""A resume of the ``benchmark`` method: the stored spec and rows, its governor, the runs it keeps.

:func:`read_resume` reads a stored benchmark's spec and rows; :func:`check_unchanged` refuses
arms or a reference changed since it started; :func:`resumed_governor` and
:func:`refuse_below_spent` give its limits; :func:`kept_rows` the runs it keeps and
:func:`done_traces` what their traces keep (metric values, causes, draws).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from hrbench import specs
from hrbench.arm import Arm
from hrbench.errors import ConfigError, NotFound
from hrbench.records import Row, Step
from hrbench.reference import Reference
from hrbench.runner import Governor, default_governor, kept, trace_metrics
from hrbench_client import protocol as p

__all__ = [
    "check_unchanged",
    "done_traces",
    "kept_rows",
    "read_resume",
    "refuse_below_spent",
    "resumed_governor",
    "retried_rows",
]


async def read_resume(
    store: Any, args: p.BenchmarkParams, bench_id: str
) -> tuple[p.BenchmarkParams, dict[str, Any] | None, list[Row]]:
    """The params a run uses, the stored spec (``None``: not a resume) and the stored rows.

    A resume runs the stored spec with the request's ``stream``, and its ``concurrency`` when
    it gives one (else the benchmark's own).

    Raises:
        NotFound: no stored benchmark has the id ``bench_id``.
    """
    if args.resume is None:
        return args, None, []
    rec = await anyio.to_thread.run_sync(store.benchmark_get, bench_id)
    if rec is None:
        raise NotFound(f"no stored benchmark has the id {bench_id!r}", benchmark=bench_id)
    stored = rec["spec"]
    params = msgspec.convert(stored["params"], p.BenchmarkParams)
    # the benchmark's own concurrency unless the resume gives one
    concurrency = params.concurrency if args.concurrency is None else args.concurrency
    params = msgspec.structs.replace(params, stream=args.stream, concurrency=concurrency)
    prior = await anyio.to_thread.run_sync(store.rows_get, bench_id)
    return params, stored, prior


def check_unchanged(stored: dict[str, Any], arms: Sequence[Arm], reference: Reference, bench_id: str) -> None:
    """Refuse a resume whose arms or reference changed since the benchmark started (their hashes).

    An arm whose code or settings changed would mix two arms in one table.

    Raises:
        ConfigError: ``resume``, naming the arm that changed, or the reference.
    """
    was = {a["name"]: a["hash"] for a in stored.get("arms", [])}
    for a in arms:
        if was.get(a.name) != a.hash:
            raise ConfigError(
                "resume", bench_id, f"arm {a.name!r} changed since the benchmark started (hash differs)"
            )
    if reference.hash != stored.get("reference_hash"):
        raise ConfigError("resume", bench_id, "the reference changed since the benchmark started")


def kept_rows(prior: Sequence[Row], retry_errors: bool) -> dict[tuple[str, str, int], Row]:
    """The stored rows a resume keeps, by ``(arm, item, run)``; the others are run again.

    A run the governor stopped is run again on resume (a budget stop is resumable);
    one that ended in an error too, when asked (``--retry-errors``): its new
    row replaces the old one, and what its failed attempt spent stays in the ledger.
    """
    again = {"budget_stop", "error"} if retry_errors else {"budget_stop"}
    return kept({(r.arm, r.item, r.run): r for r in prior if r.failure_kind not in again})


def retried_rows(prior: Sequence[Row], retry_errors: bool) -> dict[tuple[str, str, int], Row]:
    """The stored rows of the runs ``--retry-errors`` makes again (those that ended in errors).

    They go to the runner beside the kept rows, with ``retry_errors``, so that the run made
    again replaces its row knowing it (:func:`hrbench.runner._remade.rescored_seconds`).
    """
    if not retry_errors:
        return {}
    return {(r.arm, r.item, r.run): r for r in prior if r.failure_kind == "error"}


def resumed_governor(stored: dict[str, Any], given: p.GovernorSpec | None) -> Any:
    """The governor a resume runs under: the limits in force before, with those given replaced.

    Rule: a resume keeps every limit it does not set (the defaults' included: a
    benchmark started under the default $5 cap keeps it, and so keeps sending the output limit
    a cap requires, so that its requests are the ones the first part sent); a limit given
    (``--max-calls N``) replaces that one only. A limit still from the defaults keeps their
    rule (no refusal of an unpriced model).

    Args:
        stored: the benchmark's stored spec (``limits``, :func:`~hrbench_server.bench_spec.limits_of`; a spec
            stored before them gives the spec's ``governor``, else the defaults).
        given: the resume's ``governor``; its ``None`` fields are not given.

    Returns:
        A fresh :class:`~hrbench.runner.Governor` (its use is restored from the ledger).
    """
    if "limits" in stored:
        limits = dict(stored["limits"])
        from_defaults = bool(limits.pop("default", False))
    else:
        old = specs.build_governor(stored["params"].get("governor")) or default_governor()
        limits, from_defaults = old.limits, old.from_defaults
    changed = (
        {}
        if given is None
        else {k: v for k, v in msgspec.structs.asdict(given).items() if v is not None and k != "defaults"}
    )
    gov = Governor(**{**limits, **changed})
    gov.from_defaults = from_defaults and "max_usd" not in changed
    return gov


def refuse_below_spent(given: p.GovernorSpec, ledger: dict[str, Any] | None, bench_id: str) -> None:
    """Refuse a resume limit below what the benchmark already spent.

    Rule (``--resume ID --max-calls 5`` after 371 calls never stores ``max_calls`` 5 under
    ``calls`` 371 as "all 5 calls are used"): such a limit is a mistake, not a
    stop; it is refused before anything is stored.

    Args:
        given: the resume's ``governor`` (its ``None`` fields are not given).
        ledger: the benchmark's ledger (``calls``, ``usd``, ``tokens``), ``None`` if none.
        bench_id: the benchmark's id, for the message.

    Raises:
        ConfigError: naming the limit, the value given and the amount spent.

    Example:
        >>> refuse_below_spent(p.GovernorSpec(max_calls=5), {"calls": 371}, "b1")
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: governor.max_calls: a resume limit below what benchmark b1 already spent (371 calls); give more (--max-calls) (got 5)
    """
    for key, spent_key, unit, flag in (
        ("max_calls", "calls", " calls", "--max-calls"),
        ("max_usd", "usd", " USD", "--max-usd"),
        ("max_tokens", "tokens", " tokens", "--max-tokens"),
    ):
        value, spent = getattr(given, key), (ledger or {}).get(spent_key) or 0
        if value is not None and value < spent - 1e-12:
            raise ConfigError(
                f"governor.{key}",
                value,
                f"a resume limit below what benchmark {bench_id} already spent ({spent:g}{unit}); give more ({flag})",
            )


def done_traces(
    store: Any, bench_id: str, params: p.BenchmarkParams, done: dict[Any, Row], total: int
) -> tuple[dict[str, dict[str, float]], dict[str, list[Step]]]:
    """What the traces of resumed rows keep: metric values, the traces of errors, and draws.

    A resume keeps the metrics; the runs it keeps that ended in errors keep
    their causes (the ``errors`` status names the commonest); and when runs are made again, the
    other kept runs' draws (request keys, provider response ids: :meth:`Store.trace_draws`)
    seed the distinct-draw check (seed 002), so ``--retry-errors`` cannot accept a run whose
    reply repeats a kept run's.
    """
    want = [r.ledger_id for r in done.values() if params.metrics or r.failure_kind == "error"]
    traces = store.traces_get(bench_id, want) if want else {}
    metrics = (
        {lid: v for lid, trace in traces.items() if (v := trace_metrics(trace)) is not None}
        if params.metrics
        else {}
    )
    errors = {r.ledger_id: traces.get(r.ledger_id, []) for r in done.values() if r.failure_kind == "error"}
    if len(done) < total:  # runs are made again: every kept run's draws (an error's full trace has them)
        others = [r.ledger_id for r in done.values() if r.ledger_id not in errors]
        draws = store.trace_draws(bench_id, others) if others else {}
        errors.update({lid: draws.get(lid, []) for lid in others})
    return metrics, errors
