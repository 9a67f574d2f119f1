"""Reading stored benchmarks: ``benchmark/rows``, ``report`` and the views ``hrb view`` shows.

:mod:`hrbench.results.browse` builds the views; here they are converted to their wire Structs.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

import msgspec

from hrbench._util.messages import did_you_mean, not_an_arm
from hrbench._util.timefmt import iso_seconds as _iso
from hrbench.errors import ConfigError, NotFound
from hrbench_client import protocol as p
from hrbench_server.app import App
from hrbench_server.methods._handlers import async_handler, resolve, running, to_thread

__all__ = ["register_views"]

S = TypeVar("S", bound=msgspec.Struct)


def register_views(feature: Callable[[str], Any], app: App) -> None:
    """Register ``benchmark/rows``, ``report`` and ``benchmark/list|view|matrix|cell|compare``."""
    _register_rows(feature, app)
    _register_report(feature, app)
    _register_browse(feature, app)


def _register_rows(feature: Callable[[str], Any], app: App) -> None:
    """``benchmark/rows``: a stored benchmark's rows (a page, or one item's or arm's), with traces and outputs if asked."""

    async def benchmark_rows(args: p.BenchmarkRowsParams) -> p.BenchmarkRowsResult:
        def load() -> p.BenchmarkRowsResult:
            bid = resolve(app, args.id)
            rec = app.store.benchmark_get(bid)
            if rec is None:
                raise NotFound(f"no stored benchmark has the id {bid!r}", benchmark=bid)
            arms = [a["name"] for a in (rec.get("spec") or {}).get("arms") or []]
            if args.arm is not None and arms and args.arm not in arms:  # as report's compare_pair does
                raise not_an_arm("arm", args.arm, arms)
            if args.item is None and args.arm is None:
                n = app.store.rows_count(bid)
                rows = app.store.rows_get(bid, args.offset, args.limit)
            else:
                rows = [
                    r
                    for r in app.store.rows_get(bid)
                    if args.item in (None, r.item) and args.arm in (None, r.arm)
                ]
                if args.item is not None and not rows and rec.get("reference_hash"):
                    ids = app.store.reference_get(rec["reference_hash"]).ids
                    if args.item not in ids:  # never printed nothing with exit 0
                        hint = did_you_mean(args.item, ids, n=3)
                        raise ConfigError(
                            "item",
                            args.item,
                            f"is not an item of this benchmark's reference; {hint}".rstrip("; "),
                        )
                n = len(rows)
                rows = rows[args.offset : None if args.limit is None else args.offset + args.limit]
            traces = None
            if args.traces:
                kept = app.store.traces_get(bid, [r.ledger_id for r in rows])
                traces = {
                    r.ledger_id: msgspec.convert(msgspec.to_builtins(kept.get(r.ledger_id, [])), list[p.Step])
                    for r in rows
                }
            outputs = None
            if args.outputs:
                texts = app.store.outputs_get(bid, [r.ledger_id for r in rows])
                cut = args.output_chars
                outputs = {k: v if v is None or cut is None else v[:cut] for k, v in texts.items()}

            from hrbench.specs import stored_scorer  # the registry, on the first rows read

            spec = rec.get("spec") or {}
            info = p.BenchmarkInfo(
                id=bid,
                status=rec["status"],
                n_rows=n,
                total=spec.get("total"),
                created=_iso(rec["created"]),
                name=(spec.get("params") or {}).get("name"),
                scorer=stored_scorer(spec),
            )
            wire = msgspec.convert(msgspec.to_builtins(rows), list[p.Row])
            return p.BenchmarkRowsResult(benchmark=info, rows=wire, traces=traces, outputs=outputs)

        return await to_thread(load)

    feature("benchmark/rows")(async_handler(p.BenchmarkRowsParams, benchmark_rows))


def _register_report(feature: Callable[[str], Any], app: App) -> None:
    """``report``: a stored benchmark's report, with its status, stop and unknown-cost notes."""

    async def report(args: p.ReportParams) -> p.ReportResult:
        settings = dict(args.settings)
        if "compare_pair" in settings and settings["compare_pair"] is not None:
            settings["compare_pair"] = tuple(settings["compare_pair"])

        def build() -> dict[str, Any]:
            # imported on the first report, in this worker thread: statistics and numpy (~0.3 s of CPU)
            from hrbench.results import browse

            return browse.benchmark_report(app.store, resolve(app, args.id), running(app), **settings)

        return p.ReportResult(report=await to_thread(build))

    feature("report")(async_handler(p.ReportParams, report))


def _register_browse(feature: Callable[[str], Any], app: App) -> None:
    """The views of stored benchmarks (``hrb view``): :mod:`hrbench.results.browse` builds, we convert."""

    def _browse(typ: type[S], result: type[Any], build: Callable[[ModuleType, S], Any]) -> None:
        def view(args: S) -> Any:
            from hrbench.results import browse  # on the first view, in this worker thread (it imports numpy)

            return build(browse, args)

        async def handler(args: S) -> Any:
            return msgspec.convert(await to_thread(view, args), result, from_attributes=True)

        method = next(m for m, (params, _) in p.METHODS.items() if params is typ)
        feature(method)(async_handler(typ, handler))

    _browse(
        p.BenchmarkListParams,
        p.BenchmarkListResult,
        lambda browse, a: {"benchmarks": browse.benchmark_list(app.store, a.search, running(app), a.limit)},
    )
    _browse(
        p.BenchmarkViewParams,
        p.BenchmarkViewResult,
        lambda browse, a: browse.benchmark_view(
            app.store, resolve(app, a.id), a.against, level=a.level, method=a.method, running=running(app)
        ),
    )
    _browse(
        p.BenchmarkMatrixParams,
        p.BenchmarkMatrixResult,
        lambda browse, a: browse.benchmark_matrix(
            app.store,
            resolve(app, a.id),
            cluster=a.cluster,
            failure_kind=a.failure_kind,
            split=a.split,
            disagree=a.disagree,
            offset=a.offset,
            limit=a.limit,
            cancelled=a.cancelled,
        ),
    )
    _browse(
        p.BenchmarkCellParams,
        p.BenchmarkCellResult,
        lambda browse, a: browse.benchmark_cell(app.store, resolve(app, a.id), a.item, a.arm),
    )
    _browse(
        p.BenchmarkCompareParams,
        p.BenchmarkCompareResult,
        lambda browse, a: browse.benchmark_compare(
            app.store,
            resolve(app, a.a),
            resolve(app, a.b),
            level=a.level,
            method=a.method,
            running=running(app),
        ),
    )
