"""Inspect eval log files: named as Inspect names them, written as ``.json`` or as ``.eval``.

Inspect lists a ``.json`` log only when its name starts with an ISO timestamp
(``inspect_ai.log.list_eval_logs``, ``inspect log list``, ``inspect view``;
https://github.com/UKGovernmentBEIS/inspect_ai/issues/1125), and reads the task and the task id
from the name: ``{created}_{task}_{id}`` (``INSPECT_EVAL_LOG_FILE_PATTERN``, whose
``{task}_{model}_{id}`` form this follows with the arm as the model). Each part is cleaned as
Inspect cleans it (``_``, ``/``, ``:`` and ``+`` become ``-``), so a log of benchmark
``capitals`` made at 2026-12-07 05:18:02 UTC, arm ``ask``, is named
``2026-12-07T05-18-02-00-00_capitals_ask_<task id>.json``.

A ``.eval`` log is the zip Inspect writes (deflated members, which every Inspect version
reads): ``header.json`` (the log without its samples), ``_journal/start.json`` (version,
``eval``, ``plan``), one ``samples/ID_epoch_N.json`` per sample, ``summaries.json`` (what
``inspect view`` lists a log's samples by) and ``reductions.json``.
"""

from __future__ import annotations

import contextlib
import io
import re
import urllib.parse
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

__all__ = [
    "LOG_FORMATS",
    "bench_to_inspect",
    "eval_archive",
    "log_file_name",
    "stored_to_inspect",
    "write_inspect_logs",
]

LOG_FORMATS = ("json", "eval")
"""The Inspect log formats written: ``"json"`` (one JSON object) and ``"eval"`` (Inspect's zip)."""


def _check_format(log_format: str) -> None:
    """Refuse a log format Inspect does not have, naming it."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log_format {log_format!r}: expected one of {', '.join(LOG_FORMATS)}")


def _clean(part: str, limit: int = 80) -> str:
    """A name part as Inspect cleans it (``clean_filename_component``), kept to safe characters."""
    cleaned = re.sub(r"[_/:+]", "-", part)
    cleaned = re.sub(r"[^A-Za-z0-9.-]+", "-", cleaned).strip("-.")
    return cleaned[:limit] or "x"


def log_file_name(created: str, task: str, arm: str, task_id: str, log_format: str = "json") -> str:
    """The file name Inspect gives a log: ``{created}_{task}_{arm}_{task id}.{json|eval}``.

    Args:
        created: the log's ``eval.created`` (ISO 8601, to the second, with its zone).
        task: the task name.
        arm: the arm (in the place of Inspect's ``{model}``).
        task_id: the log's ``eval.task_id`` (no ``_`` or ``-``: Inspect cuts the id there).
        log_format: ``"json"`` or ``"eval"``.

    Example:
        >>> log_file_name("2026-12-07T05:18:02+00:00", "capitals", "ask_v2", "9ebc5807", "eval")
        '2026-12-07T05-18-02-00-00_capitals_ask-v2_9ebc5807.eval'
    """
    stamp = re.sub(r"[_/:+]", "-", created)
    return f"{stamp}_{_clean(task)}_{_clean(arm)}_{task_id}.{log_format}"


def _summary(sample: Mapping[str, Any]) -> dict[str, Any]:
    """A sample's entry in ``summaries.json`` (Inspect's ``EvalSampleSummary``)."""
    error = sample.get("error")
    return {
        "id": sample["id"],
        "epoch": sample["epoch"],
        "input": sample["input"],
        "target": sample["target"],
        "metadata": sample.get("metadata") or {},
        "scores": sample.get("scores"),
        "model_usage": sample.get("model_usage") or {},
        "total_time": sample.get("total_time"),
        "uuid": sample.get("uuid"),
        "error": error.get("message") if isinstance(error, Mapping) else None,
        "completed": True,
        "message_count": len(sample.get("messages") or []),
    }


def _member(sample_id: str | int, epoch: int) -> str:
    """A sample's member name, Inspect's ``samples/ID_epoch_N.json``.

    An id that would leave ``samples/`` (``..``, a leading ``/``, a backslash) is
    percent-encoded instead.

    Example:
        >>> _member("q1", 2), _member("../../etc/passwd", 1)
        ('samples/q1_epoch_2.json', 'samples/..%2F..%2Fetc%2Fpasswd_epoch_1.json')
    """
    name = f"{sample_id}_epoch_{epoch}.json"
    if "\\" in name or name.startswith("/") or ".." in name.split("/"):
        name = f"{urllib.parse.quote(str(sample_id), safe='')}_epoch_{epoch}.json"
    return f"samples/{name}"


def eval_archive(log: bytes) -> bytes:
    """One log (the JSON :func:`~hrbench.interop.inspect_logs` makes) as an Inspect ``.eval`` zip.

    Example:
        >>> import io, json, zipfile
        >>> from hrbench.interop import inspect_logs
        >>> from hrbench.records import Row
        >>> rows = [Row(cluster="q1", item="q1", arm="a", run=1, split="test", correct=True,
        ...             outcome="x", failure_kind=None, draw_index=1)]
        >>> z = zipfile.ZipFile(io.BytesIO(eval_archive(inspect_logs(rows, task="demo")["a"])))
        >>> sorted(z.namelist())
        ['_journal/start.json', 'header.json', 'reductions.json', 'samples/q1_epoch_1.json', 'summaries.json']
    """
    whole = msgspec.json.decode(log)
    samples = whole.pop("samples", None) or []
    reductions = whole.pop("reductions", None)
    enc = msgspec.json.encode
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        start = {"version": whole["version"], "eval": whole["eval"], "plan": whole["plan"]}
        zf.writestr("_journal/start.json", enc(start))
        for s in samples:
            zf.writestr(_member(s["id"], s["epoch"]), enc(s))
        zf.writestr("summaries.json", enc([_summary(s) for s in samples]))
        if reductions is not None:
            zf.writestr("reductions.json", enc(reductions))
        zf.writestr("header.json", enc(whole))
    return out.getvalue()


class _Eval(msgspec.Struct):
    created: str
    task: str
    task_id: str
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)


class _Head(msgspec.Struct):
    eval: _Eval


_dec_head = msgspec.json.Decoder(_Head)


def write_inspect_logs(
    directory: str | Path,
    logs: Mapping[str, bytes],
    *,
    log_format: str = "json",
    make_folder: bool = True,
) -> list[Path]:
    """Write logs from :func:`~hrbench.interop.inspect_logs` into ``directory``, named as Inspect names them.

    The files are written together, whole or not at all: each to a temporary file in the
    folder, and only once every one is written are they renamed over their names
    (:func:`hrbench._util.files.output_file`), so a full disk leaves no partial log. A caller
    confined to the daemon's exchange folders (a TCP client) writes only inside ``exports/``.

    Args:
        directory: the folder; a file of the same name is overwritten.
        logs: ``{arm: log JSON bytes}``.
        log_format: ``"json"`` (the log as one JSON object) or ``"eval"`` (Inspect's zip,
            :func:`eval_archive`).
        make_folder: make ``directory`` when it is missing.

    Returns:
        The paths written, one per arm (:func:`log_file_name`).

    Raises:
        ConfigError: the folder or a file cannot be written (naming it and why: a full disk,
            a folder outside a confined caller's ``exports/``); nothing is left behind.
        ValueError: a ``log_format`` other than ``"json"`` or ``"eval"``; two arms make the
            same file name.

    Example:
        >>> import tempfile
        >>> from hrbench.interop import inspect_logs
        >>> from hrbench.records import Row
        >>> rows = [Row(cluster="q1", item="q1", arm="a", run=1, split="test", correct=True,
        ...             outcome="x", failure_kind=None, draw_index=1)]
        >>> logs = inspect_logs(rows, task="demo", created="2026-12-07T05:18:02+00:00", bench_id="b1")
        >>> [p.name for p in write_inspect_logs(tempfile.mkdtemp(), logs)]
        ['2026-12-07T05-18-02-00-00_demo_a_0d503bcbc8a412b723211b.json']
    """
    _check_format(log_format)
    folder = Path(directory).expanduser()
    names = {}
    for arm, data in logs.items():
        head = _dec_head.decode(data).eval
        names[arm] = log_file_name(head.created, head.task, arm, head.task_id, log_format)
    if len(set(names.values())) < len(names):
        raise ValueError(f"arms {sorted(names)} make the same file name; rename one")
    from hrbench._util import files

    if make_folder:
        files.make_folder(folder, "path")
    out = []
    with contextlib.ExitStack() as written:  # renamed on leaving, once every one is written
        for arm, data in logs.items():
            path = folder / names[arm]
            f = written.enter_context(files.output_file(path, "path"))
            f.write(eval_archive(data) if log_format == "eval" else data)
            out.append(path)
    return out


def bench_to_inspect(
    bench: Any, path: str | Path, name: str | None = None, log_format: str = "json"
) -> list[Path]:
    """Write a finished benchmark's Inspect eval logs, one per arm, into folder ``path``.

    What each log holds is :mod:`hrbench.interop._inspect_write`'s docstring; the names are
    :func:`log_file_name`'s; :meth:`hrbench.Bench.to_inspect` calls this.

    Args:
        bench: the :class:`~hrbench.Bench` (a benchmark run with ``keep_rows=False`` has no
            rows to write).
        path: the folder to write into (made when missing).
        name: the task name; ``None``: ``hrbench-<benchmark id>``.
        log_format: ``"json"`` or ``"eval"`` (Inspect's zip).

    Returns:
        The paths written, one per arm.

    Raises:
        ValueError: the benchmark holds no rows; an unknown ``log_format``.
        ConfigError: the folder or a file cannot be written (naming it and why); nothing is
            left behind.

    Example:
        >>> import json, tempfile, warnings
        >>> from hrbench import Arm, Reference, benchmark
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     b = benchmark(Arm("a", lambda item, ctx: item), Reference({"q1": "x"}, labels=["x"]), runs=2)
        >>> [p] = b.to_inspect(tempfile.mkdtemp(), name="demo")
        >>> log = json.loads(p.read_text())
        >>> p.name.split("_")[1:3], len(log["samples"]), log["eval"]["config"]["epochs"]
        (['demo', 'a'], 2, 2)
    """
    from hrbench.interop._inspect_write import inspect_logs

    _check_format(log_format)
    if not bench.rows:
        raise ValueError("this benchmark holds no rows (it was run with keep_rows=False): nothing to write")
    task = name or f"hrbench-{bench.id}"
    ref = bench.reference
    logs = inspect_logs(
        bench.rows,
        task=task,
        items=ref.items,
        labels=ref.labels,
        traces=bench.traces,
        scorer=bench.scorer_name,
        status=bench.status,
        bench_id=bench.id,
    )
    return write_inspect_logs(path, logs, log_format=log_format)


def stored_to_inspect(
    record: Mapping[str, Any],
    rows: list[Any],
    path: str | Path,
    *,
    reference: Any = None,
    traces: Mapping[str, Any] | None = None,
    name: str | None = None,
    scorer: str | None = None,
    log_format: str = "json",
    make_folder: bool = True,
) -> list[Path]:
    """Write a stored benchmark's Inspect eval logs, one per arm (the daemon's ``benchmark/export``).

    Args:
        record: the stored benchmark (``id``, ``status``, ``created`` in seconds since the
            epoch, ``spec.params`` with its ``name``, ``scorer`` and ``scorer_settings``).
        rows: its rows.
        path: the folder to write into.
        reference: its :class:`~hrbench.Reference`, or ``None`` (item ids stand for the items).
        traces: its traces by ledger id.
        name: the task name; ``None``: the benchmark's name, else ``hrbench-<id>``.
        scorer: the scorer's name, the key of each sample's score
            (:func:`hrbench.specs.stored_scorer` of the stored spec); ``None``: the spec's
            ``scorer`` as written (``exact`` by default).
        log_format: ``"json"`` or ``"eval"``.
        make_folder: make ``path`` when it is missing.

    Returns:
        The paths written, one per arm.

    Raises:
        ValueError: an unknown ``log_format``; two arms make the same file name.
        ConfigError: the folder or a file cannot be written (naming it and why); nothing is
            left behind.
    """
    import datetime as dt

    from hrbench.interop._inspect_write import inspect_logs

    _check_format(log_format)
    params = (record.get("spec") or {}).get("params") or {}
    bid = str(record.get("id") or "")
    task = name or params.get("name") or f"hrbench-{bid}"
    ts = record.get("created")
    logs = inspect_logs(
        rows,
        task=task,
        items=reference.items if reference is not None else None,
        labels=reference.labels if reference is not None else None,
        traces=traces,
        scorer=scorer or params.get("scorer") or "exact",
        status=str(record.get("status")),
        created=None if ts is None else dt.datetime.fromtimestamp(ts, tz=dt.UTC).isoformat(),
        bench_id=bid,
    )
    return write_inspect_logs(path, logs, log_format=log_format, make_folder=make_folder)
