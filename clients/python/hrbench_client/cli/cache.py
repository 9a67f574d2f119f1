"""``hrb cache`` (stats, clear) and ``hrb recording`` (import, export)."""

from __future__ import annotations

from hrbench_client.cli._common import _client, _fail_usage, _out, parse_age
from hrbench_client.cli.exit_codes import EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def cmd_cache(args: argparse.Namespace) -> int:
    filters = {"model": args.model, "arm": args.arm, "older_than_s": None}
    if args.older_than is not None:
        filters["older_than_s"] = parse_age(args.older_than)
    if args.cache_cmd == "stats":
        if any(v is not None for v in filters.values()):
            _fail_usage("--model, --arm and --older-than choose what `hrb cache clear` deletes")
        with _client(args) as hb:
            _out(hb.cache_stats())
        return EXIT_OK
    with _client(args) as hb:  # clear
        _out({"deleted": hb.cache_clear(**filters)})
    return EXIT_OK


def cmd_recording(args: argparse.Namespace) -> int:
    with _client(args) as hb:
        if args.rec_cmd == "import":
            _out(hb.recording_import(args.file, args.name))
        else:
            _out(hb.recording_export(args.name, args.file))
    return EXIT_OK
