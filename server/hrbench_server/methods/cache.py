"""``cache/stats``, ``cache/clear``, ``recording/import`` and ``recording/export``: the store's cache and recordings."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from hrbench._util.messages import did_you_mean
from hrbench.errors import ConfigError, NotFound
from hrbench_client import protocol as p
from hrbench_server.app import App
from hrbench_server.methods._handlers import absolute_path, async_handler, to_thread

__all__ = ["register_cache"]


def register_cache(feature: Callable[[str], Any], app: App) -> None:
    """Register the ``cache/*`` and ``recording/*`` methods."""

    async def recording_import(args: p.RecordingImportParams) -> p.RecordingImportResult:
        path = absolute_path(args.path, "path")
        name = args.name or Path(path).stem

        def load() -> int:
            from hrbench._util.files import read_text
            from hrbench.reading import json_lines  # hrbench.reading: its recipes and scorers

            try:
                text = read_text(path, "path")
            except OSError as exc:
                raise ConfigError(
                    "path", args.path, f"cannot read the recording ({exc.strerror or type(exc).__name__})"
                ) from None
            entries = [e for _, e in json_lines(text, args.path, "path", objects=False)]
            try:
                return app.store.recording_import(name, entries)
            except (KeyError, TypeError, msgspec.ValidationError) as exc:
                raise ConfigError("path", args.path, f"not a recording export ({exc})") from None

        return p.RecordingImportResult(name=name, n=await to_thread(load))

    async def recording_export(args: p.RecordingExportParams) -> p.RecordingExportResult:
        path = None if args.path is None else absolute_path(args.path, "path")

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
            from hrbench._util.files import output_file

            enc = msgspec.json.Encoder()
            with output_file(path, "path") as f:  # whole or not at all; over TCP only in exports/
                for e in entries:
                    f.write(enc.encode(e) + b"\n")
            return p.RecordingExportResult(name=args.name, n=len(entries), path=path)

        return await to_thread(dump)

    feature("recording/import")(async_handler(p.RecordingImportParams, recording_import))
    feature("recording/export")(async_handler(p.RecordingExportParams, recording_export))

    async def cache_stats(args: p.CacheStatsParams) -> p.CacheStatsResult:
        stats = await to_thread(app.store.cache_stats)
        stats.pop("path", None)
        return p.CacheStatsResult(stats=stats)

    async def cache_clear(args: p.CacheClearParams) -> p.CacheClearResult:
        clear = functools.partial(
            app.store.cache_clear, model=args.model, arm=args.arm, older_than_s=args.older_than_s
        )
        return p.CacheClearResult(deleted=await to_thread(clear))

    feature("cache/stats")(async_handler(p.CacheStatsParams, cache_stats))
    feature("cache/clear")(async_handler(p.CacheClearParams, cache_clear))
