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
  or a chat's messages), ``target`` (the label; ``""`` or ``[]``, Inspect's default for a sample
  with no target, is no label), ``output.completion`` (the output; else the text of
  ``output.choices[0].message.content``), ``error.message`` (a sample that failed: an error run
  with that cause), ``metadata.cluster`` and ``metadata.split`` (when present), ``model_usage``
  (the run's tokens and ``total_cost``, of the log's model, else of every model the sample
  used: :class:`~hrbench.interop._foreign.LogUsage`).

A sample that failed and then succeeded on a retry (Inspect's ``--retry-on-error``: its
``error_retries`` lists the failed attempts, its ``error`` is null) is one successful run; the
attempts are neither runs nor errors (shared case H4-16). Epochs a log leaves out (Inspect's
early stopping) are runs the file lacks, which the outputs rules refuse (shared case H4-17).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hrbench.errors import ConfigError
from hrbench.interop._boundary import foreign_reader
from hrbench.interop._bounded import ZipDocuments, lazy_documents, read_json
from hrbench.interop._foreign import ErrorRun, Imported, LogUsage, check_version
from hrbench.interop._inspect_write import sample_input, sample_target

__all__ = ["INSPECT_VERSIONS", "read_inspect"]

INSPECT_VERSIONS = (2,)
"""The Inspect log format versions this reader knows (``EvalLog.version``)."""


def _eval_zip(path: str) -> tuple[Any, Any, list[int]]:
    """The header and the samples of a ``.eval`` log, and where each sample stands in the archive.

    The samples are read one at a time as they are looped over, in their members' names' order;
    the list gives each one's place among the archive's members, the order they were written in
    (hrbench writes a reference's items in its order, which the reference read back keeps).
    """
    archive = ZipDocuments(path, "an Inspect .eval log")
    head = next((n for n in ("header.json", "_journal/start.json") if n in archive.members), None)
    if head is None:
        raise ConfigError("path", path, "is not an Inspect .eval log (no header.json)")
    header = archive.document(head)
    written = {n: k for k, n in enumerate(archive.members)}
    names = sorted(n for n in archive.members if n.startswith("samples/") and n.endswith(".json"))
    return header, lazy_documents(archive, names), [written[n] for n in names]


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


def _label(target: Any) -> Any:
    """A sample's target as a label: Inspect's ``""`` (its default, no target) and ``[]`` are none."""
    return None if target == "" or target == [] else target


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _usage(sample: dict[str, Any], model: str) -> LogUsage | None:
    """The usage a sample's ``model_usage`` records: of ``model``, else summed over its models.

    Inspect's ``input_tokens`` leave out the cache reads and writes (``ModelUsage``); hrbench's
    ``tokens_in`` holds them, so they are added back. ``total_cost`` is ``None`` unless every
    model's usage records one.
    """
    used = sample.get("model_usage")
    if not isinstance(used, dict) or not used:
        return None
    picked = [used[model]] if isinstance(used.get(model), dict) else list(used.values())
    picked = [u for u in picked if isinstance(u, dict)]
    if not picked:
        return None
    costs = [u.get("total_cost") for u in picked]
    usd = None
    if all(isinstance(c, (int, float)) and not isinstance(c, bool) and 0 <= c < math.inf for c in costs):
        usd = float(sum(costs))
    return LogUsage(
        model=model if len(picked) == 1 and model in used else None,
        tokens_in=sum(
            _count(u.get("input_tokens"))
            + _count(u.get("input_tokens_cache_read"))
            + _count(u.get("input_tokens_cache_write"))
            for u in picked
        ),
        tokens_out=sum(_count(u.get("output_tokens")) for u in picked),
        tokens_reasoning=sum(_count(u.get("reasoning_tokens")) for u in picked),
        tokens_cached=sum(_count(u.get("input_tokens_cache_read")) for u in picked),
        usd=usd,
    )


def _kept(sample: dict[str, Any], meta: dict[str, Any]) -> tuple[Any, Any]:
    """A sample's item and label: ``metadata.input_value``/``target_value`` where the log keeps them.

    hrbench writes an item or label that Inspect's ``input`` or ``target`` cannot hold (a dict, a
    number) as its JSON text there and the value itself in the metadata (``kept_values``). The
    value is taken only while ``input``/``target`` still say the same; a log edited since is
    read as it now stands.
    """
    given, target = _input(sample.get("input")), _label(sample.get("target"))
    if "input_value" in meta and _written_input(meta["input_value"], "") == sample.get("input"):
        given = meta["input_value"]
    if "target_value" in meta and sample_target(meta["target_value"]) == sample.get("target"):
        target = meta["target_value"]
    return given, target


def _written_input(item: Any, fallback: str) -> Any:
    out = sample_input(item, fallback)
    return out if isinstance(out, str) else None  # chat items need no kept value


@foreign_reader("inspect")
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
    places: list[int] = []
    if Path(path).suffix == ".eval":
        header, samples, places = _eval_zip(path)
    else:
        header = read_json(path, "an Inspect log")
        if not isinstance(header, dict) or "eval" not in header:
            raise ConfigError("path", path, "is not an Inspect log (no `eval` field)")
        samples = header.get("samples") or []
    check_version(path, "Inspect log", "version", header.get("version"), INSPECT_VERSIONS)
    if not samples:
        raise ConfigError("path", path, "holds no samples (was the eval run with `--no-log-samples`?)")
    model = str((header.get("eval") or {}).get("model") or "inspect")
    found = Imported(source=path, fmt="inspect", items={}, labels={}, arms={model: {}})
    first: dict[str, int] = {}  # an item's first place in the file as written
    for n, s in enumerate(samples, 1):
        if s.get("id") is None or not isinstance(s.get("epoch"), int) or s["epoch"] < 1:
            raise ConfigError("path", path, f"sample {n} has no `id` or no `epoch` of 1 or more")
        item = str(s["id"])
        meta = s.get("metadata") or {}
        given, target = _kept(s, meta)
        if item in found.items and (found.items[item], found.labels[item]) != (given, target):
            raise ConfigError(
                "path", path, f"sample {item!r} has another input or target at epoch {s['epoch']}"
            )
        found.items[item], found.labels[item] = given, target
        place = places[n - 1] if places else n
        first[item] = min(first.get(item, place), place)
        if meta.get("cluster") is not None:
            found.clusters[item] = str(meta["cluster"])
        if meta.get("split") is not None:
            found.splits[item] = str(meta["split"])
        err = s.get("error")
        out = ErrorRun(str(err.get("message") or "error")) if isinstance(err, dict) else _output(s)
        found.add_run(model, item, s["epoch"], out, _usage(s, model))
    order = sorted(found.items, key=first.__getitem__)
    found.items = {k: found.items[k] for k in order}
    found.labels = {k: found.labels[k] for k in order}
    return found
