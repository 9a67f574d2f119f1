"""Inspect eval logs as arms and references (``format = "inspect"``).

Reads a log file ``inspect eval`` wrote: ``.json`` (the whole log as one JSON object) or
``.eval`` (a zip whose members are JSON, compressed with zstd, or deflated by older Inspect
versions: ``header.json``, or ``_journal/start.json`` in a log still being written, and one
``samples/ID_epoch_N.json`` per sample).

Fields read (everything else is ignored):

- ``version``: the log format version; only version 2 (Inspect's current one) is read, any
  other is refused by name;
- ``eval.model``: the arm's name in the file (its ``source_arm``);
- per sample: ``id`` (the item id, as text), ``epoch`` (the run), ``input`` (the item: its text,
  or a chat's messages), ``target`` (the label), ``output.completion`` (the output; else the
  text of ``output.choices[0].message.content``), ``error.message`` (a sample that failed: an
  error run with that cause), ``metadata.cluster`` and ``metadata.split`` (when present).
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

from hrbench._util.files import open_input, read_text
from hrbench.errors import ConfigError
from hrbench.interop._foreign import ErrorRun, Imported, check_version

__all__ = ["INSPECT_VERSIONS", "read_inspect"]

INSPECT_VERSIONS = (2,)
"""The Inspect log format versions this reader knows (``EvalLog.version``)."""

_ZSTD = 93
"""The zip compression method number of zstd (APPNOTE 4.4.5)."""


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, source: str) -> bytes:
    """One member's bytes: stored and deflated by :mod:`zipfile`, zstd by ``zstandard``."""
    if info.compress_type != _ZSTD:
        return zf.read(info)
    import zstandard

    fp = zf.fp
    assert fp is not None
    fp.seek(info.header_offset)
    head = fp.read(30)
    if head[:4] != b"PK\x03\x04":
        raise ConfigError("path", source, f"member {info.filename} has no local header: not a whole zip")
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    fp.seek(info.header_offset + 30 + name_len + extra_len)
    raw = fp.read(info.compress_size)
    reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    data: bytes = reader.read()
    if zlib.crc32(data) != info.CRC:
        raise ConfigError("path", source, f"member {info.filename} fails its checksum")
    return data


def _eval_zip(path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the samples of a ``.eval`` log."""
    raw = open_input(path, "path")
    try:
        zf = zipfile.ZipFile(raw)
    except zipfile.BadZipFile:
        raw.close()
        raise ConfigError("path", path, "is not an Inspect .eval log (not a zip file)") from None
    with raw, zf:
        infos = {i.filename: i for i in zf.infolist()}
        head = infos.get("header.json") or infos.get("_journal/start.json")
        if head is None:
            raise ConfigError("path", path, "is not an Inspect .eval log (no header.json)")
        header = json.loads(_member(zf, head, path))
        names = sorted(n for n in infos if n.startswith("samples/") and n.endswith(".json"))
        samples = [json.loads(_member(zf, infos[n], path)) for n in names]
    return header, samples


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(c.get("text", "")) for c in content if isinstance(c, dict) and c.get("type") == "text"
        )
    return None


def _output(sample: dict[str, Any]) -> Any:
    out = sample.get("output") or {}
    if out.get("completion"):
        return out["completion"]
    choices = out.get("choices") or []
    if choices:
        text = _content_text((choices[0].get("message") or {}).get("content"))
        if text is not None:
            return text
    return out.get("completion", "")


def _input(value: Any) -> Any:
    if isinstance(value, list):  # a chat: its messages as {role, content} with text content
        return [{"role": m.get("role"), "content": _content_text(m.get("content"))} for m in value]
    return value


def read_inspect(path: str) -> Imported:
    """Read an Inspect eval log (``.json`` or ``.eval``); see the module's fields.

    Raises:
        ConfigError: not an Inspect log, a format version other than 2, a sample without an
            id or epoch, a sample given twice, or an item whose input or target differs
            between epochs.
        OSError: the file cannot be read.

    Example:
        >>> import json, tempfile, pathlib
        >>> log = {"version": 2, "eval": {"model": "mockllm/model"}, "samples": [
        ...     {"id": 1, "epoch": 1, "input": "2+2?", "target": "4", "output": {"completion": "4"}}]}
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "log.json"
        >>> _ = p.write_text(json.dumps(log))
        >>> found = read_inspect(str(p))
        >>> found.arms, found.labels
        ({'mockllm/model': {'1': ['4']}}, {'1': '4'})
    """
    if Path(path).suffix == ".eval":
        header, samples = _eval_zip(path)
    else:
        try:
            header = json.loads(read_text(path, "path"))
        except json.JSONDecodeError as exc:
            raise ConfigError("path", path, f"is not an Inspect log (not JSON: {exc.msg})") from None
        if not isinstance(header, dict) or "eval" not in header:
            raise ConfigError("path", path, "is not an Inspect log (no `eval` field)")
        samples = header.get("samples") or []
    check_version(path, "Inspect log", "version", header.get("version"), INSPECT_VERSIONS)
    if not samples:
        raise ConfigError("path", path, "holds no samples (was the eval run with `--no-log-samples`?)")
    model = str((header.get("eval") or {}).get("model") or "inspect")
    found = Imported(source=path, fmt="inspect", items={}, labels={}, arms={model: {}})
    for n, s in enumerate(samples, 1):
        if s.get("id") is None or not isinstance(s.get("epoch"), int) or s["epoch"] < 1:
            raise ConfigError("path", path, f"sample {n} has no `id` or no `epoch` of 1 or more")
        item = str(s["id"])
        given, target = _input(s.get("input")), s.get("target")
        if item in found.items and (found.items[item], found.labels[item]) != (given, target):
            raise ConfigError(
                "path", path, f"sample {item!r} has another input or target at epoch {s['epoch']}"
            )
        found.items[item], found.labels[item] = given, target
        meta = s.get("metadata") or {}
        if meta.get("cluster") is not None:
            found.clusters[item] = str(meta["cluster"])
        if meta.get("split") is not None:
            found.splits[item] = str(meta["split"])
        err = s.get("error")
        out = ErrorRun(str(err.get("message") or "error")) if isinstance(err, dict) else _output(s)
        found.add_run(model, item, s["epoch"], out)
    return found
