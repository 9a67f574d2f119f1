"""``hrb export ID --format inspect``: a stored benchmark as Inspect eval logs, one per arm."""

from __future__ import annotations

import os

from hrbench_client.cli._common import _client, _err, _out
from hrbench_client.cli.exit_codes import EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["cmd_export"]


def cmd_export(args: argparse.Namespace) -> int:
    """Ask the daemon to write the logs into ``--output`` (made absolute: the daemon writes it).

    Prints ``{"id", "paths"}`` as JSON on stdout and one ``wrote`` line per file on stderr.
    """
    from hrbench_client import protocol as p

    folder = os.path.abspath(os.path.expanduser(args.output))
    params = p.BenchmarkExportParams(
        id=args.id, path=folder, format=args.format, name=args.name, log_format=args.log_format
    )
    with _client(args) as hb:
        res = hb.call("benchmark/export", params, p.BenchmarkExportResult)
    for path in res.paths:
        _err(f"wrote {path}")
    _out({"id": res.id, "paths": res.paths})
    return EXIT_OK
