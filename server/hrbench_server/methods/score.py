"""``score``: one reply scored by a named scorer, inline when it is quick, else in a worker thread."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.to_thread
import msgspec

from hrbench.errors import ConfigError
from hrbench.reference import check_label
from hrbench.runner.runtime import off_loop, offloaded
from hrbench_client import protocol as p
from hrbench_server.app import App
from hrbench_server.methods._handlers import inline_or_task, to_thread

__all__ = ["register_score"]


def register_score(feature: Callable[[str], Any], app: App) -> None:
    """Register ``score``; built scorers are kept in ``app.scorers`` by name and settings."""

    def score(args: p.ScoreParams) -> p.ScoreResult | Awaitable[p.ScoreResult]:
        key = (
            args.scorer
            if not args.settings
            else f"{args.scorer}|{msgspec.json.encode(args.settings, order='sorted')!r}"
        )
        if ":" in args.scorer:  # code: checked before the cache, which a trusted caller may have filled
            from hrbench.specs import check_code_allowed

            check_code_allowed("scorer", args.scorer)
        if args.scorer == "judge":  # before its settings are read: what is missing is a benchmark
            from hrbench.scoring import OUTSIDE_A_BENCHMARK

            raise ConfigError("scorer", args.scorer, OUTSIDE_A_BENCHMARK)
        sc = app.scorers.get(key)
        if sc is None:
            # the specs: imported by the first score of a scorer not built yet, not at the daemon's
            # start; on the loop (~20 ms, once), so that a quick score (exact's module is imported
            # at start) is answered before the next message is read. A scorer built once is
            # looked up, with nothing imported.
            from hrbench import specs

            # code, or a built-in scorer whose module is not imported yet (regex, the reading
            # scorers): imported off the loop
            if ":" in args.scorer or not _module_imported(specs.SCORERS, args.scorer):
                return off_loop_score(key, args, None)
            sc = app.scorers[key] = specs.build_scorer(args.scorer, args.settings)
        check_label("", args.label, field="label")  # as a reference's labels are (an empty one too)
        # Rule (case S12a): what may take long runs in a worker thread, so one
        # client's scorer does not hold the daemon's other clients: a scorer that declares itself
        # heavy (the pattern scorer, bounded by its time limit), code (an import path: its cost
        # is unknown), a long reply or label (hrbench.runner.runtime.off_loop). A built-in scorer on a
        # short reply takes microseconds, less than the hop to a thread: it is answered at once.
        if ":" in args.scorer or off_loop(sc, args.output, args.label):
            return off_loop_score(key, args, sc)
        return score_result(sc, sc(args.item, args.output, args.label))

    async def off_loop_score(key: str, args: p.ScoreParams, sc: Any) -> p.ScoreResult:
        if sc is None:  # its label is checked once it is built, as above
            from hrbench.specs import build_scorer  # imported by score() already

            sc = app.scorers[key] = await to_thread(build_scorer, args.scorer, args.settings)
            check_label("", args.label, field="label")
        # heavy scorers share a limiter of their own: they queue among themselves, not before others
        limiter = app.heavy_scorers if offloaded(sc) else None
        s = await anyio.to_thread.run_sync(sc, args.item, args.output, args.label, limiter=limiter)
        return score_result(sc, s)

    def score_result(sc: Any, s: Any) -> p.ScoreResult:
        return p.ScoreResult(
            correct=s.correct, outcome=s.outcome, failure_kind=s.failure_kind, scorer=sc.name
        )

    feature("score")(inline_or_task(p.ScoreParams, score))


def _module_imported(scorers: dict[str, tuple[str, str, str]], name: str) -> bool:
    """Whether the module of the built-in scorer ``name`` is imported (an unknown name: ``True``).

    Example:
        >>> _module_imported({"exact": ("sys", "f", "")}, "exact"), _module_imported({}, "nope")
        (True, True)
    """
    entry = scorers.get(name)
    return entry is None or entry[0] in sys.modules
