"""The JSON-RPC methods. Each handler is thin: decode its params Struct, call the library, encode.

Handlers are registered on each connection's server by :func:`register`; they close over the
daemon's shared :class:`~hrbench_server.app.App`. Blocking work (SQLite, statistics) and any
scoring that may take long run in a worker thread so the event loop keeps serving other clients.
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
import functools
import inspect
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import anyio
import anyio.to_thread
import msgspec
from pygls.exceptions import JsonRpcInvalidRequest

from hrbench import specs
from hrbench._util.environ import env_value, use_caller_env
from hrbench._util.timefmt import iso_seconds as _iso
from hrbench.errors import ConfigError, NotFound, did_you_mean
from hrbench.reading._reference import json_lines
from hrbench.reference import check_label
from hrbench.results import browse
from hrbench.runner.ledger import unknown_of, unknown_sentence
from hrbench.runner.runtime import cancel_grace_s, off_loop, offloaded
from hrbench_client import protocol as p
from hrbench_server import __version__
from hrbench_server.app import App, warning_collector
from hrbench_server.checks import register_checks
from hrbench_server.errors import invalid_params, to_rpc_error
from hrbench_server.interop import register_export
from hrbench_server.rpc import INLINE_OR_TASK, RpcServer

__all__ = ["over_tcp", "register"]

S = TypeVar("S", bound=msgspec.Struct)
T = TypeVar("T")

_DECODERS: dict[type[Any], msgspec.json.Decoder[Any]] = {}


def decode(raw: Any, typ: type[S]) -> S:
    """Decode raw params into ``typ``; a validation error becomes -32602 with its field path."""
    dec = _DECODERS.get(typ)
    if dec is None:
        dec = _DECODERS[typ] = msgspec.json.Decoder(typ)
    try:
        out: S = (
            dec.decode(raw)
            if isinstance(raw, msgspec.Raw)
            else msgspec.convert({} if raw is None else raw, typ)
        )
        return out
    except msgspec.DecodeError as exc:  # ValidationError included; an unknown field gets the close name
        raise invalid_params(ValueError(p.unknown_field_hint(str(exc), typ, raw))) from None


def _sync(typ: type[S], fn: Callable[[S], Any]) -> Callable[[Any], Any]:
    @functools.wraps(fn)
    def handler(params):  # type: ignore[no-untyped-def]  # pygls must not see an annotation
        args = decode(params, typ)
        try:
            return fn(args)
        except Exception as exc:
            raise to_rpc_error(exc) from None

    return handler


def _async(typ: type[S], fn: Callable[[S], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
    @functools.wraps(fn)
    async def handler(params):  # type: ignore[no-untyped-def]
        args = decode(params, typ)
        sink: list[str] = []
        warning_collector.set(sink)
        try:
            return await fn(args)
        except Exception as exc:
            raise to_rpc_error(exc) from None
        except BaseExceptionGroup as eg:
            if eg.subgroup(lambda e: not isinstance(e, Exception)) is not None:
                raise
            raise to_rpc_error(eg) from None

    return handler


def _inline_or_task(typ: type[S], fn: Callable[[S], Any]) -> Callable[[Any], Any]:
    """A handler whose ``fn`` returns its result, or an awaitable of it (work off the loop).

    The result is answered at once, as a sync handler's; an awaitable runs as a task, as an
    async handler's (:meth:`hrbench_server.rpc.HrbenchProtocol._execute_handler`).
    """

    async def later(pending: Awaitable[Any]) -> Any:
        try:
            return await pending
        except Exception as exc:
            raise to_rpc_error(exc) from None

    @functools.wraps(fn)
    def handler(params):  # type: ignore[no-untyped-def]
        args = decode(params, typ)
        try:
            out = fn(args)
        except Exception as exc:
            raise to_rpc_error(exc) from None
        return later(out) if inspect.isawaitable(out) else out

    setattr(handler, INLINE_OR_TASK, True)
    return handler


def _to_thread(fn: Callable[..., T], *args: Any) -> Awaitable[T]:
    return anyio.to_thread.run_sync(functools.partial(fn, *args))


over_tcp: contextvars.ContextVar[bool] = contextvars.ContextVar("hrbench_over_tcp", default=False)
"""Whether this context serves a TCP connection (set by :func:`hrbench_server.daemon.serve_daemon`)."""

EXPORTS = "exports"
"""The folder of the state folder where a TCP client's file-writing methods may write."""


def _open_for_writing(path: str, home: Path | None) -> BinaryIO:
    """Open ``path`` to write (truncated, created 0600); under ``home``'s exports folder when given.

    Decided (SPEC §4 refuses code over TCP): a TCP client holds the token but may not be the
    daemon's user, so what it asks the daemon to write goes only into ``<home>/exports`` (made
    0700): never over the store, the token or a file elsewhere, and never through a symbolic
    link. The folder is checked by its real path; the file is opened with ``O_NOFOLLOW``.
    Methods that write files take no path to get their data on the wire instead.

    Raises:
        ConfigError: over TCP, ``path`` outside the exports folder, naming the rule; or the
            file cannot be written (its reason: a symbolic link, a read-only folder, ...).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    if home is not None:
        exports = Path(home) / EXPORTS
        exports.mkdir(mode=0o700, exist_ok=True)
        inside = os.path.realpath(os.path.dirname(path))
        root = os.path.realpath(exports)
        if os.path.commonpath([inside, root]) != root or os.path.basename(path) in ("", ".", ".."):
            raise ConfigError(
                "path",
                path,
                f"over TCP the daemon writes files only inside {exports} (a TCP client may not be the "
                "daemon's user); give a path there, leave `path` out to get the data in the reply, "
                "or use the Unix socket",
            )
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        why = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror or type(exc).__name__
        raise ConfigError("path", path, f"cannot write the file: {why}") from None
    return os.fdopen(fd, "wb")


def _abs(path: str, field: str) -> str:
    if not os.path.isabs(os.path.expanduser(path)):
        raise ConfigError(
            field, path, "the daemon needs an absolute path (its working directory is not yours)"
        )
    return os.path.expanduser(path)


def register(server: RpcServer, app: App) -> None:
    """Register every method of :data:`hrbench_client.protocol.METHODS` on ``server``."""
    from hrbench_server.bench import add_import_path, check_resume_only, run_benchmark, wire_reference

    proto = server.protocol
    proto.graceful_cancel = app.cancel_soon  # Ctrl-C and a closed connection cancel as `hrb cancel` does
    feature = server.feature

    # -- score: inline when it is quick; else in a worker thread (issue 24, case S12a) ---------
    def score(args: p.ScoreParams) -> p.ScoreResult | Awaitable[p.ScoreResult]:
        key = (
            args.scorer
            if not args.settings
            else f"{args.scorer}|{msgspec.json.encode(args.settings, order='sorted')!r}"
        )
        if ":" in args.scorer:  # code: checked before the cache, which a trusted caller may have filled
            specs.check_code_allowed("scorer", args.scorer)
        if args.scorer == "judge":  # before its settings are read: what is missing is a benchmark
            from hrbench.scoring.judge import OUTSIDE_A_BENCHMARK

            raise ConfigError("scorer", args.scorer, OUTSIDE_A_BENCHMARK)
        sc = app.scorers.get(key)
        if sc is None and ":" in args.scorer:  # code is imported off the loop
            return off_loop_score(key, args, None)
        if sc is None:
            sc = app.scorers[key] = specs.build_scorer(args.scorer, args.settings)
        check_label("", args.label, field="label")  # as a reference's labels are (an empty one too)
        # Decided (issue 24, case S12a): what may take long runs in a worker thread, so one
        # client's scorer does not hold the daemon's other clients: a scorer that declares itself
        # heavy (the pattern scorer, bounded by its time limit), code (an import path: its cost
        # is unknown), a long reply or label (hrbench.runner.runtime.off_loop). A built-in scorer on a
        # short reply takes microseconds, less than the hop to a thread: it is answered at once.
        if ":" in args.scorer or off_loop(sc, args.output, args.label):
            return off_loop_score(key, args, sc)
        return score_result(sc, sc(args.item, args.output, args.label))

    async def off_loop_score(key: str, args: p.ScoreParams, sc: Any) -> p.ScoreResult:
        if sc is None:  # its label is checked once it is built, as above
            sc = app.scorers[key] = await _to_thread(specs.build_scorer, args.scorer, args.settings)
            check_label("", args.label, field="label")
        # heavy scorers share a limiter of their own: they queue among themselves, not before others
        limiter = app.heavy_scorers if offloaded(sc) else None
        s = await anyio.to_thread.run_sync(sc, args.item, args.output, args.label, limiter=limiter)
        return score_result(sc, s)

    def score_result(sc: Any, s: Any) -> p.ScoreResult:
        return p.ScoreResult(
            correct=s.correct, outcome=s.outcome, failure_kind=s.failure_kind, scorer=sc.name
        )

    feature("score")(_inline_or_task(p.ScoreParams, score))

    # -- benchmark ------------------------------------------------------------------------------
    async def benchmark(args: p.BenchmarkParams) -> p.BenchmarkResult:
        if args.resume is not None:  # an id prefix or a name too; a spec beside it is refused first
            check_resume_only(args)
            found = await _to_thread(_resolve, app, args.resume, "resume")
            args = msgspec.structs.replace(args, resume=found)
        with use_caller_env(args.env):
            require_keys(args.client, "client")
            require_keys(judge_client(args.scorer, args.scorer_settings), "scorer_settings.client")
            return await run_benchmark(app, proto, proto.msg_id, args)

    feature("benchmark")(_async(p.BenchmarkParams, benchmark))

    # -- evaluate -------------------------------------------------------------------------------
    async def evaluate(args: p.EvaluateParams) -> p.EvaluateResult:
        from hrbench.evaluation.evaluate import evaluate_spec_async
        from hrbench.runner.cache import Cache

        add_import_path(args.python_path)
        price = getattr(args.client, "price", None)
        if price is not None:  # a field accepted must not be ignored
            raise ConfigError(
                "client.price", msgspec.to_builtins(price), "evaluate does not price calls; leave it out"
            )
        spec = msgspec.to_builtins(msgspec.structs.replace(args, python_path=[], env={}))
        spec.pop("python_path", None)
        spec.pop("env", None)
        store = app.store
        with use_caller_env(args.env):
            require_keys(args.client, "client")
            out = await evaluate_spec_async(spec, cache=Cache(store), store=store)
        return p.EvaluateResult(result=out)

    feature("evaluate")(_async(p.EvaluateParams, evaluate))

    # -- references -----------------------------------------------------------------------------
    async def reference_put(args: p.ReferencePutParams) -> p.ReferenceInfo:
        def put() -> p.ReferenceInfo:
            ref = wire_reference(args.reference, app.store)  # keyed by id (issue 25)
            new = app.store.reference_get(ref.hash) is None
            before = app.store.reference_history(args.name) if args.name else []
            h = app.store.reference_put(ref, args.name)
            put = [r for r in app.store.reference_list() if r["hash"] == h and r["name"] == args.name]
            created = _iso(put[-1]["created"]) if put else None
            was = before[-1]["hash"] if before else None  # a rebound name is said (newcomer finding 18)
            return p.ReferenceInfo(
                hash=h,
                name=args.name,
                n_items=len(ref),
                created=created,
                new=new,
                replaced=was if was != h else None,
            )

        return await _to_thread(put)

    async def reference_get(args: p.ReferenceGetParams) -> p.ReferenceSpec:
        ref = await _to_thread(app.store.reference_get, args.ref)
        if ref is None:
            names = [r["name"] for r in await _to_thread(app.store.reference_list) if r["name"]]
            raise NotFound(
                f"ref: no stored reference has this name or hash (8+ characters of it); "
                f"{did_you_mean(args.ref, names, n=3)}`hrb ref list` lists them (got {args.ref!r})",
                ref=args.ref,
            )
        d = ref.to_dict()
        return p.ReferenceSpec(items=d["items"], labels=d["labels"], cluster=d["cluster"], split=d["split"])

    async def reference_list(args: p.ReferenceListParams) -> p.ReferenceListResult:
        refs = await _to_thread(app.store.reference_list)
        out = [
            p.ReferenceInfo(hash=r["hash"], name=r["name"], n_items=r["n_items"], created=_iso(r["created"]))
            for r in reversed(refs)
        ]
        return p.ReferenceListResult(references=out)

    feature("reference/put")(_async(p.ReferencePutParams, reference_put))
    feature("reference/get")(_async(p.ReferenceGetParams, reference_get))
    feature("reference/list")(_async(p.ReferenceListParams, reference_list))

    # -- recordings -----------------------------------------------------------------------------
    async def recording_import(args: p.RecordingImportParams) -> p.RecordingImportResult:
        path = _abs(args.path, "path")
        name = args.name or Path(path).stem

        def load() -> int:
            try:
                text = Path(path).read_text(encoding="utf-8")
            except OSError as exc:
                raise ConfigError(
                    "path", args.path, f"cannot read the recording ({type(exc).__name__})"
                ) from None
            entries = [e for _, e in json_lines(text, args.path, "path", objects=False)]
            try:
                return app.store.recording_import(name, entries)
            except (KeyError, TypeError, msgspec.ValidationError) as exc:
                raise ConfigError("path", args.path, f"not a recording export ({exc})") from None

        return p.RecordingImportResult(name=name, n=await _to_thread(load))

    async def recording_export(args: p.RecordingExportParams) -> p.RecordingExportResult:
        path = None if args.path is None else _abs(args.path, "path")
        tcp = over_tcp.get()

        def dump() -> p.RecordingExportResult:
            entries = app.store.recording_export(args.name)
            if not entries and args.name not in app.store.recordings():
                hint = did_you_mean(args.name, app.store.recordings(), n=3)
                raise NotFound(
                    f"name: no recording has this name; {hint}".rstrip("; ") + f" (got {args.name!r})",
                    recording=args.name,
                )
            if path is None:  # the data on the wire: the caller writes it where it likes
                return p.RecordingExportResult(name=args.name, n=len(entries), entries=entries)
            enc = msgspec.json.Encoder()
            with _open_for_writing(path, app.home if tcp else None) as f:
                for e in entries:
                    f.write(enc.encode(e) + b"\n")
            return p.RecordingExportResult(name=args.name, n=len(entries), path=path)

        return await _to_thread(dump)

    feature("recording/import")(_async(p.RecordingImportParams, recording_import))
    feature("recording/export")(_async(p.RecordingExportParams, recording_export))

    # -- cache, stored benchmarks, reports ------------------------------------------------------
    async def cache_stats(args: p.CacheStatsParams) -> p.CacheStatsResult:
        stats = await _to_thread(app.store.cache_stats)
        stats.pop("path", None)
        return p.CacheStatsResult(stats=stats)

    async def benchmark_rows(args: p.BenchmarkRowsParams) -> p.BenchmarkRowsResult:
        def load() -> p.BenchmarkRowsResult:
            bid = _resolve(app, args.id)
            rec = app.store.benchmark_get(bid)
            if rec is None:
                raise NotFound(f"no stored benchmark has the id {bid!r}", benchmark=bid)
            arms = [a["name"] for a in (rec.get("spec") or {}).get("arms") or []]
            if args.arm is not None and arms and args.arm not in arms:  # as report's compare_pair does
                raise ConfigError(
                    "arm", args.arm, f"is not an arm of this benchmark (arms: {', '.join(arms)})"
                )
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
                    if args.item not in ids:  # printed nothing, exit 0 (newcomer finding)
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
            spec = rec.get("spec") or {}
            info = p.BenchmarkInfo(
                id=bid,
                status=rec["status"],
                n_rows=n,
                total=spec.get("total"),
                created=_iso(rec["created"]),
                name=(spec.get("params") or {}).get("name"),
            )
            wire = msgspec.convert(msgspec.to_builtins(rows), list[p.Row])
            return p.BenchmarkRowsResult(benchmark=info, rows=wire, traces=traces)

        return await _to_thread(load)

    async def report(args: p.ReportParams) -> p.ReportResult:
        from hrbench.stats import report_payload

        settings = dict(args.settings)
        if "compare_pair" in settings and settings["compare_pair"] is not None:
            settings["compare_pair"] = tuple(settings["compare_pair"])

        def build() -> dict[str, Any]:
            bench_id = _resolve(app, args.id)
            rec = app.store.benchmark_get(bench_id) or {}
            rows = app.store.rows_get(bench_id)
            traces = app.store.traces_get(bench_id)  # the list price per arm (issue 18)
            try:
                out = report_payload(rows, traces=traces, stop=rec.get("spec", {}).get("stop"), **settings)
            except TypeError as exc:
                raise ConfigError("settings", args.settings, f"not a report setting ({exc})") from None
            # newcomer finding: a report says when its benchmark is not a finished, whole one
            ledger = app.store.ledger_get(bench_id)
            head = browse.benchmark_status(
                rec, len(rows), running(), ledger, browse.stop_limits(app.store, rec)
            )
            out["status"], out["stop_note"] = head["status"], head["stop_note"]
            # what a crash or a cancel left unknown, in the sentence hrb ls shows (newcomer finding)
            out["unknown_note"] = unknown_sentence(unknown_of(ledger))
            return out

        return p.ReportResult(report=await _to_thread(build))

    async def benchmark_delete(args: p.BenchmarkDeleteParams) -> p.BenchmarkDeleteResult:
        def delete() -> p.BenchmarkDeleteResult:
            bid = _resolve(app, args.id)
            if bid in app.running:
                raise ConfigError(
                    "id", args.id, f"this benchmark is running; cancel it first: hrb cancel {bid}"
                )
            n = app.store.benchmark_delete([bid])
            return p.BenchmarkDeleteResult(id=bid, rows=n["rows"], traces=n["traces"], locks=n["locks"])

        return await _to_thread(delete)

    async def benchmark_cancel(args: p.BenchmarkCancelParams) -> p.BenchmarkCancelResult:
        """Cancel a running benchmark (newcomer finding): its saved rows stay, ``--resume`` finishes it.

        Waits until the run stored its end (status ``cancelled``), so a resume right after
        does not find it running.
        """
        bid = await _to_thread(_resolve, app, args.id)
        task = app.running.get(bid)
        if task is None:
            was = await _to_thread(browse.benchmark_list, app.store, bid, running())
            status = next((b["status"] for b in was if b["id"] == bid), None)
            raise ConfigError(
                "id", args.id, f"benchmark {bid} is not running in this daemon (status {status})"
            )
        # decided (newcomer finding): the requests already sent finish first, within the grace,
        # and are settled at their real cost with their runs saved (App.cancel)
        in_flight = await app.cancel(bid, args.grace_s, by="`hrb cancel`")

        def ended() -> p.BenchmarkCancelResult:
            rec = app.store.benchmark_get(bid) or {}
            ledger = app.store.ledger_get(bid) or {}
            return p.BenchmarkCancelResult(
                id=bid,
                status=str(rec.get("status")),
                rows=app.store.rows_count(bid),
                in_flight=in_flight,
                unknown_note=unknown_sentence(unknown_of(ledger)),
            )

        return await _to_thread(ended)

    async def cache_clear(args: p.CacheClearParams) -> p.CacheClearResult:
        clear = functools.partial(
            app.store.cache_clear, model=args.model, arm=args.arm, older_than_s=args.older_than_s
        )
        return p.CacheClearResult(deleted=await _to_thread(clear))

    async def gc(args: p.GcParams) -> p.GcResult:
        out = await _to_thread(
            functools.partial(
                app.store.gc,
                args.older_than_s,
                keep=list(app.running),
                cache=args.cache,
                recordings=args.recordings,
                vacuum=args.vacuum,
            )
        )
        return p.GcResult(**out)

    feature("benchmark/delete")(_async(p.BenchmarkDeleteParams, benchmark_delete))
    feature("benchmark/cancel")(_async(p.BenchmarkCancelParams, benchmark_cancel))
    feature("gc")(_async(p.GcParams, gc))
    feature("cache/stats")(_async(p.CacheStatsParams, cache_stats))
    feature("cache/clear")(_async(p.CacheClearParams, cache_clear))
    feature("benchmark/rows")(_async(p.BenchmarkRowsParams, benchmark_rows))
    feature("report")(_async(p.ReportParams, report))

    # -- browsing stored benchmarks (hrb view): hrbench.browse builds, we convert ---------------
    def _browse(typ: type[S], result: type[Any], build: Callable[[S], Any]) -> None:
        async def handler(args: S) -> Any:
            return msgspec.convert(await _to_thread(build, args), result, from_attributes=True)

        method = next(m for m, (params, _) in p.METHODS.items() if params is typ)
        feature(method)(_async(typ, handler))

    def running() -> set[str]:
        return set(app.running)

    _browse(
        p.BenchmarkListParams,
        p.BenchmarkListResult,
        lambda a: {"benchmarks": browse.benchmark_list(app.store, a.search, running(), a.limit)},
    )
    _browse(
        p.BenchmarkViewParams,
        p.BenchmarkViewResult,
        lambda a: browse.benchmark_view(
            app.store, _resolve(app, a.id), a.against, level=a.level, method=a.method, running=running()
        ),
    )
    _browse(
        p.BenchmarkMatrixParams,
        p.BenchmarkMatrixResult,
        lambda a: browse.benchmark_matrix(
            app.store,
            _resolve(app, a.id),
            cluster=a.cluster,
            failure_kind=a.failure_kind,
            split=a.split,
            disagree=a.disagree,
            offset=a.offset,
            limit=a.limit,
        ),
    )
    _browse(
        p.BenchmarkCellParams,
        p.BenchmarkCellResult,
        lambda a: browse.benchmark_cell(app.store, _resolve(app, a.id), a.item, a.arm),
    )
    _browse(
        p.BenchmarkCompareParams,
        p.BenchmarkCompareResult,
        lambda a: browse.benchmark_compare(
            app.store,
            _resolve(app, a.a),
            _resolve(app, a.b),
            level=a.level,
            method=a.method,
            running=running(),
        ),
    )
    register_checks(feature, app, _async)  # benchmark/gate and prices: hrbench_server.checks
    register_export(feature, app, _async, _resolve, _open_for_writing, over_tcp)  # hrbench_server.interop

    # -- daemon ---------------------------------------------------------------------------------
    def status(args: p.StatusParams) -> p.StatusResult:
        return p.StatusResult(
            protocol_version=p.PROTOCOL_VERSION,
            version=__version__,
            pid=os.getpid(),
            uptime_s=round(time.monotonic() - app.started, 3),
            connections=app.connections,
            running=sorted(app.running),
            home=str(app.home),
            transport=app.transport,
            idle_exit_s=app.idle_exit_s,
            cancel_grace_s=cancel_grace_s(),
        )

    def shutdown(args: p.ShutdownParams) -> p.ShutdownResult | None:
        if proto.lsp_session:  # LSP: answer null, then wait for `exit` (see hrbench_server.rpc)
            proto.shutdown_requested = True
            return None
        why = "a shutdown request" + ("" if app.transport == "stdio" else " (`hrb daemon stop`)")
        asyncio.get_running_loop().call_soon(app.stop, why)  # its cancelled benchmarks say why (newcomer)
        return p.ShutdownResult(ok=True)

    def initialize(args: p.InitializeParams) -> p.InitializeResult:
        """LSP's ``initialize``: once per connection (LSP: a second one is an InvalidRequest)."""
        if proto.lsp_session:
            raise JsonRpcInvalidRequest(
                "Invalid Request: `initialize` was already sent on this connection, and LSP allows it "
                "once per session; go on with the session, or send `shutdown` and `exit` and connect again",
                data=p.ErrorData(name="InvalidRequest", field="method"),
            )
        proto.lsp_session = True
        return _INITIALIZE_RESULT

    def auth(args: p.AuthParams) -> p.AuthResult:
        return p.AuthResult(ok=True)  # already authenticated (or a transport without a token)

    feature("status")(_sync(p.StatusParams, status))
    feature("shutdown")(_sync(p.ShutdownParams, shutdown))
    feature("auth")(_sync(p.AuthParams, auth))
    feature("initialize")(_sync(p.InitializeParams, initialize))


_INITIALIZE_RESULT = p.InitializeResult(
    capabilities=p.ServerCapabilities(
        experimental=p.ServerExperimental(
            hrbench=p.HrbenchCapabilities(
                protocolVersion=p.PROTOCOL_VERSION,
                methods=sorted(p.METHODS),
                notifications=sorted(p.NOTIFICATIONS),
            )
        )
    ),
    serverInfo=p.ServerInfo(name="hrbench", version=__version__),
)


_HOSTED = {
    "openai": ("OPENAI_API_KEY", "api.openai.com"),
    "anthropic": ("ANTHROPIC_API_KEY", "api.anthropic.com"),
}


def judge_client(scorer: Any, settings: Any) -> p.ClientSpec | None:
    """The judge's client spec of a ``judge`` scorer's settings, to check its key like the arms'.

    ``None`` for another scorer, or for settings that do not hold a valid client spec (building
    the scorer then names what is wrong).

    Example:
        >>> judge_client("judge", {"client": {"kind": "mock", "reply": "CORRECT"}}).reply
        'CORRECT'
        >>> judge_client("exact", {}) is None
        True
    """
    if scorer != "judge" or not isinstance(settings, dict):
        return None
    try:
        return msgspec.convert(settings.get("client"), p.ClientSpec)  # type: ignore[arg-type]
    except msgspec.ValidationError:
        return None


def require_keys(client: Any, field: str) -> None:
    """Refuse, before the first call, a model client whose key is set nowhere (SPEC §4, issue 15).

    Decided (SPEC silent): a key is required when the client talks to the provider's hosted API
    (``api.openai.com``, ``api.anthropic.com``) or names a variable other than the provider's
    default (the user meant one); a local server with the default name may run without a key.
    "Nowhere" is neither the caller's environment sent with the request nor the daemon's.

    Raises:
        ConfigError: naming the field and the variable, and how to set it.
    """
    if client is None:
        return
    kind = type(client).__struct_config__.tag
    if kind == "replay":
        require_keys(client.fallback, f"{field}.fallback")
        return
    if kind not in _HOSTED or client.api_key_env is None:
        return
    default, host = _HOSTED[kind]
    needed = host in client.base_url or client.api_key_env != default
    if needed and env_value(client.api_key_env) is None:
        raise ConfigError(
            f"{field}.api_key_env",
            client.api_key_env,
            f"the variable {client.api_key_env} is set neither in the calling environment nor in the "
            f"daemon's: `export {client.api_key_env}=...` in the shell that runs hrb (or the script), then "
            "run again",
        )


def _resolve(app: App, ref: str, field: str = "id") -> str:
    """The benchmark id ``ref`` names: an id, a unique id prefix or a name (``Store.benchmark_resolve``).

    Decided (newcomer finding: an unknown id was exit 3 for rows/report/cancel/view but 2 for
    rm): every method taking a benchmark id refuses an unknown or ambiguous one here, in one
    shape, ``<field>: <why>; ... (got '<ref>')``, the unknown one naming the closest stored ids
    and names (:meth:`~hrbench.store.Store.benchmark_close_to`). Both are the caller's input:
    ``hrb`` exits 2.

    Raises:
        NotFound: nothing matches.
        ConfigError: an ambiguous prefix (the candidates are listed).
    """
    bid = app.store.benchmark_resolve(ref)
    if bid is None:
        hint = app.store.benchmark_close_to(ref)
        raise NotFound(
            f"{field}: no stored benchmark has this id, id prefix (4+ characters) or name; {hint}"
            f"`hrb ls` lists them (got {ref!r})",
            benchmark=ref,
            field=field,
        )
    return bid
