"""``benchmark``, ``evaluate`` and ``benchmark/cancel``: running work, and refusing a missing API key first."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from hrbench._util.environ import env_value, use_caller_env
from hrbench.errors import ConfigError
from hrbench.runner import unknown_of, unknown_sentence
from hrbench_client import protocol as p
from hrbench_server.app import App
from hrbench_server.methods._handlers import async_handler, resolve, running, to_thread
from hrbench_server.rpc import HrbenchProtocol

__all__ = ["judge_client", "register_benchmarks", "require_keys"]


def _say_newest(app: App, name: str, found: str) -> None:
    """Warn :class:`~hrbench.errors.ResumedNewestWarning` when ``name`` names several benchmarks and ``found`` is their newest."""
    import warnings

    from hrbench._util.timefmt import iso_seconds
    from hrbench.errors import ResumedNewestWarning

    named = app.store.benchmarks_named(name)
    if len(named) < 2 or named[0][0] != found:
        return
    warnings.warn(
        f"--resume {name!r}: {len(named)} benchmarks are named {name!r}; resumed the newest, {found} "
        f"(started {iso_seconds(named[0][1])}); give another's id to resume it (`hrb ls` lists them)",
        ResumedNewestWarning,
        stacklevel=1,
    )


def register_benchmarks(feature: Callable[[str], Any], proto: HrbenchProtocol, app: App) -> None:
    """Register ``benchmark``, ``evaluate`` and ``benchmark/cancel`` (:mod:`hrbench_server.bench` runs them).

    What they run is imported on their first call, not here: a connection registers every method
    (the runner, the store's readers and numpy are no part of a daemon's start).
    """

    async def benchmark(args: p.BenchmarkParams) -> p.BenchmarkResult:
        run_benchmark = await to_thread(_runner)
        from hrbench_server.bench_spec import check_resume_only  # imported by the runner's modules

        if args.resume is not None:  # an id prefix or a name too; a spec beside it is refused first
            check_resume_only(args)
            found = await to_thread(resolve, app, args.resume, "resume")
            if found != args.resume:  # a prefix or a name: say which of a name's benchmarks runs
                await to_thread(_say_newest, app, args.resume, found)
            args = msgspec.structs.replace(args, resume=found)
        with use_caller_env(args.env):
            require_keys(args.client, "client")
            require_keys(judge_client(args.scorer, args.scorer_settings), "scorer_settings.client")
            return await run_benchmark(app, proto, proto.msg_id, args)

    feature("benchmark")(async_handler(p.BenchmarkParams, benchmark))

    async def evaluate(args: p.EvaluateParams) -> p.EvaluateResult:
        evaluate_spec_async, add_import_path = await to_thread(_evaluator)
        from hrbench.runner import Cache

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

    feature("evaluate")(async_handler(p.EvaluateParams, evaluate))

    async def benchmark_cancel(args: p.BenchmarkCancelParams) -> p.BenchmarkCancelResult:
        """Cancel a running benchmark: its saved rows stay, ``--resume`` finishes it.

        Waits until the run stored its end (status ``cancelled``), so a resume right after
        does not find it running.
        """
        bid = await to_thread(resolve, app, args.id)
        task = app.running.get(bid)
        if task is None:
            was = await to_thread(_listed, app, bid)
            status = next((b["status"] for b in was if b["id"] == bid), None)
            raise ConfigError(
                "id", args.id, f"benchmark {bid} is not running in this daemon (status {status})"
            )
        # the requests already sent finish first, within the grace,
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

        return await to_thread(ended)

    feature("benchmark/cancel")(async_handler(p.BenchmarkCancelParams, benchmark_cancel))


def _runner() -> Callable[..., Awaitable[p.BenchmarkResult]]:
    """The daemon's benchmark runner, imported by the first benchmark in a worker thread.

    The runner, the scorers and the statistics its stop rules use (numpy) take ~0.3 s of CPU to
    import, and the price package's data (which prices every call, a mock's too) as long to
    load: not at the daemon's start, and not on the event loop, where they would hold every
    other client that long. Later benchmarks find both done.
    """
    import hrbench._util.sqlite  # noqa: F401 - what the store's first open imports: here, off the loop
    from hrbench.models import package_price
    from hrbench_server.bench import run_benchmark

    package_price("gpt-4o-mini", "openai")  # loads the package's data once (cached)
    return run_benchmark


def _evaluator() -> tuple[Callable[..., Awaitable[Any]], Callable[[list[str]], None]]:
    """``evaluate``'s runner and the spec's import path, imported as :func:`_runner` imports its own."""
    import hrbench._util.sqlite  # noqa: F401 - what the store's first open imports: here, off the loop
    from hrbench.evaluation.evaluate import evaluate_spec_async
    from hrbench_server.bench_spec import add_import_path

    return evaluate_spec_async, add_import_path


def _listed(app: App, bid: str) -> list[dict[str, Any]]:
    """Benchmark ``bid`` as ``benchmark/list`` shows it (its status), read in a worker thread."""
    from hrbench.results import browse

    return browse.benchmark_list(app.store, bid, running(app))


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
    if scorer not in ("judge", "trajectory_judge") or not isinstance(settings, dict):
        return None
    try:
        return msgspec.convert(settings.get("client"), p.ClientSpec)  # type: ignore[arg-type]
    except msgspec.ValidationError:
        return None


def require_keys(client: Any, field: str) -> None:
    """Refuse, before the first call, a model client whose key is set nowhere (SPEC §4).

    Rule: a key is required when the client talks to the provider's hosted API
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
