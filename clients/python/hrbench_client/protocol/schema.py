"""The JSON Schema of every method and notification (``make schema`` writes them to ``schema/``)."""

from __future__ import annotations

from typing import Any

import msgspec

from hrbench_client.protocol._base import PROTOCOL_VERSION
from hrbench_client.protocol.methods import ERROR_CODES, METHODS, NOTIFICATIONS, ErrorData

__all__ = ["schemas"]


def _file_stem(method: str) -> str:
    return method.replace("/", ".")


def schemas() -> dict[str, bytes]:
    """Build the JSON Schema files of every method and notification.

    Returns:
        ``file name -> pretty-printed JSON``: ``<method>.params.schema.json``,
        ``<method>.result.schema.json``, ``<notification>.schema.json`` and a bundle
        ``hrbench.schema.json`` holding every definition under ``$defs``.
    """
    dialect = "https://json-schema.org/draft/2020-12/schema"
    out: dict[str, bytes] = {}

    def dump(obj: Any) -> bytes:
        return msgspec.json.format(msgspec.json.encode(obj), indent=2) + b"\n"

    for method, (params, result) in METHODS.items():
        for part, typ in (("params", params), ("result", result)):
            schema = {"$schema": dialect, "title": f"{method} {part}", **msgspec.json.schema(typ)}
            out[f"{_file_stem(method)}.{part}.schema.json"] = dump(schema)
    for name, typ in NOTIFICATIONS.items():
        schema = {"$schema": dialect, "title": name, **msgspec.json.schema(typ)}
        out[f"{_file_stem(name)}.schema.json"] = dump(schema)
    types: list[Any] = [t for pair in METHODS.values() for t in pair] + list(NOTIFICATIONS.values())
    types.append(ErrorData)
    refs, defs = msgspec.json.schema_components(types, ref_template="#/$defs/{name}")
    bundle = {
        "$schema": dialect,
        "title": "hrbench JSON-RPC protocol",
        "description": f"protocol version {PROTOCOL_VERSION}",
        "methods": {m: {"params": refs[i * 2], "result": refs[i * 2 + 1]} for i, m in enumerate(METHODS)},
        "notifications": {n: refs[2 * len(METHODS) + i] for i, n in enumerate(NOTIFICATIONS)},
        "errors": {"codes": ERROR_CODES, "data": refs[-1]},
        "$defs": defs,
    }
    out["hrbench.schema.json"] = dump(bundle)
    return out


def _main(argv: list[str] | None = None) -> int:
    import sys
    from pathlib import Path

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python -m hrbench_client.protocol SCHEMA_DIR", file=sys.stderr)
        return 2
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    files = schemas()
    for stale in out.glob("*.schema.json"):
        if stale.name not in files:
            stale.unlink()
    for name, data in files.items():
        (out / name).write_bytes(data)
    print(f"wrote {len(files)} schema files to {out}", file=sys.stderr)
    return 0
