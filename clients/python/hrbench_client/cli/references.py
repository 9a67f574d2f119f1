"""``hrb ref``: store, read and list references."""

from __future__ import annotations

import os

from hrbench_client.cli._common import _client, _err, _fail_usage, _out
from hrbench_client.cli.exit_codes import EXIT_OK
from hrbench_client.cli.spec_files import _load_toml, _resolve
from hrbench_client.errors import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def cmd_ref(args: argparse.Namespace) -> int:
    if getattr(args, "id_var", None) is not None and args.file.endswith(".toml"):
        _fail_usage("--id-var is for a results file; in a TOML file give id_var in [reference]")
    with _client(args) as hb:
        if args.ref_cmd == "put":
            path = os.path.abspath(args.file)
            if path.endswith(".toml"):
                data, base = _load_toml(path)
                ref = data.get("reference", data)
                if "path" in ref:
                    ref["path"] = _resolve(base, ref["path"])
            else:
                ref = {"path": path, "format": args.format}
                if args.id_var is not None:
                    ref["id_var"] = args.id_var  # the daemon refuses it for a format but promptfoo
            try:
                info = hb.references.put(ref, args.name)
            except ConfigError as exc:
                if not path.endswith(".toml"):  # no spec: name the file, not a spec field
                    exc.message = _as_file_error(exc.message, args.file, path)
                raise
            _out(info)
            if info.replaced:  # rebinding a name is never silent
                _err(
                    f"reference {args.name!r} now points at {info.hash[:12]} (was {info.replaced[:12]}): "
                    "benchmarks naming it from now on use the new content; earlier ones keep theirs "
                    f"(`hrb ref get {info.replaced[:12]}`)"
                )
        elif args.ref_cmd == "get":
            _out(hb.references.get(args.name))
        else:
            for info in hb.references.list():
                _out(info)
    return EXIT_OK


def _as_file_error(message: str, given: str, path: str) -> str:
    """A reference error about a file ``hrb ref put`` was given, worded without the spec field it was sent as.

    Example:
        >>> _as_file_error("reference.path: r.csv has no `item` column (got '/d/r.csv')", "d/r.csv", "/d/r.csv")
        'd/r.csv has no `item` column'
    """
    for field in ("reference.path ", "reference.path: ", "reference.format: ", "reference: ", "path: "):
        if message.startswith(field):
            message = message[len(field) :]
            break
    for shown in (repr(path), repr(given)):
        message = message.replace(f" (got {shown})", "")
    name = os.path.basename(path)
    if message.startswith(name):  # the library names the file already: say it as given
        return given + message[len(name) :]
    return f"{given}: {message}"
