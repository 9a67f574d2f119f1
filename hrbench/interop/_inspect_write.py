"""Benchmarks as Inspect eval logs: one JSON log (format ``version`` 2) per arm.

Inspect's log format (``inspect_ai.log.EvalLog``) is read by ``inspect view``, by
``inspect_ai.log.read_eval_log`` and by the tools that share it; these msgspec Structs write the
part of it a benchmark fills, so writing needs no Inspect install. What lands where:

- ``eval``: ``task`` = the benchmark's name, ``model`` = the arm's model (from its trace), or the
  arm's name when it sent no request; ``config.epochs`` = the runs; ``dataset`` = the items.
- one sample per item x run: ``id`` = the item id, ``epoch`` = the run's draw index, ``input`` =
  the item (JSON text when it is not text), ``target`` = the label, ``output`` = the reply (the
  last request's text, else what the scorer saw), ``model_usage`` = the run's tokens and USD.
- ``scores[SCORER]``: ``value`` ``"C"`` (right) or ``"I"`` (wrong); ``answer`` = what the
  scorer saw; ``explanation`` = the failure kind; an unlabelled run has no score.
- sample and score ``metadata``: ``cluster``, ``split``, ``run``, ``draw_index``, ``usd``,
  ``usd_list`` (list price), ``usd_provenance``, ``reportable``, ``failure_kind``, ``arm``.
- a run that ended in an error carries ``error.message`` (the outcome).
- ``results.scores[0].metrics``: ``accuracy``, ``stderr``, ``ci_low`` and ``ci_high`` (the
  report's interval, its level and method in each metric's ``params``); ``results.metadata``:
  the report's paired comparisons that involve the arm, with the level, method and note.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from hrbench.records import Row, Step, list_usd

__all__ = ["INSPECT_LOG_VERSION", "bench_to_inspect", "inspect_logs", "write_inspect_logs"]

INSPECT_LOG_VERSION = 2
"""The Inspect eval log format version written (``EvalLog.version``)."""

_STATUS = {"running": "started", "cancelled": "cancelled"}
"""A benchmark status as an Inspect log status; any other is ``"success"`` (its runs are all in)."""


class _Usage(msgspec.Struct, kw_only=True):
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    input_tokens_cache_read: int | None = None
    reasoning_tokens: int | None = None
    total_cost: float | None = None


class _Message(msgspec.Struct, kw_only=True, omit_defaults=True):
    role: str
    content: str
    source: str | None = None
    model: str | None = None


class _Choice(msgspec.Struct, kw_only=True):
    message: _Message
    stop_reason: str = "unknown"


class _Output(msgspec.Struct, kw_only=True):
    model: str
    choices: list[_Choice]
    completion: str
    usage: _Usage | None = None
    error: str | None = None


class _Score(msgspec.Struct, kw_only=True):
    value: str
    answer: str | None = None
    explanation: str | None = None
    metadata: dict[str, Any] | None = None


class _Error(msgspec.Struct, kw_only=True):
    message: str
    traceback: str = ""
    traceback_ansi: str = ""


class _Sample(msgspec.Struct, kw_only=True):
    id: str
    epoch: int
    input: str
    target: str | list[str]
    messages: list[_Message]
    output: _Output
    scores: dict[str, _Score] | None
    metadata: dict[str, Any]
    model_usage: dict[str, _Usage]
    total_time: float | None = None
    uuid: str
    error: _Error | None = None


class _Metric(msgspec.Struct, kw_only=True):
    name: str
    value: float
    params: dict[str, Any] = msgspec.field(default_factory=dict)


class _EvalScore(msgspec.Struct, kw_only=True):
    name: str
    scorer: str
    scored_samples: int
    unscored_samples: int
    params: dict[str, Any] = msgspec.field(default_factory=dict)
    metrics: dict[str, _Metric]


class _Results(msgspec.Struct, kw_only=True):
    total_samples: int
    completed_samples: int
    scores: list[_EvalScore]
    metadata: dict[str, Any] | None = None


class _Dataset(msgspec.Struct, kw_only=True):
    name: str | None
    samples: int
    sample_ids: list[str]


class _Config(msgspec.Struct, kw_only=True):
    epochs: int


class _Spec(msgspec.Struct, kw_only=True):
    eval_id: str
    run_id: str
    created: str
    task: str
    task_id: str
    task_version: int = 0
    dataset: _Dataset
    model: str
    config: _Config
    packages: dict[str, str]
    metadata: dict[str, Any]


class _Stats(msgspec.Struct, kw_only=True):
    started_at: str
    completed_at: str
    model_usage: dict[str, _Usage]


class _Log(msgspec.Struct, kw_only=True):
    version: int = INSPECT_LOG_VERSION
    status: str
    eval: _Spec
    results: _Results | None
    stats: _Stats
    samples: list[_Sample]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _target(label: Any) -> str | list[str]:
    if label is None:
        return ""
    if isinstance(label, (list, tuple)) and all(isinstance(x, str) for x in label):
        return list(label)
    return _text(label)


def _requests(trace: Sequence[Step]) -> list[Step]:
    return [s for s in trace if s.kind == "request"]


def _usage(row: Row, usd: float | None) -> _Usage:
    return _Usage(
        input_tokens=row.tokens_in,
        output_tokens=row.tokens_out,
        total_tokens=row.tokens_in + row.tokens_out,
        input_tokens_cache_read=row.tokens_cached or None,
        reasoning_tokens=row.tokens_reasoning or None,
        total_cost=usd,
    )


def _row_metadata(row: Row, usd_list: float | None) -> dict[str, Any]:
    return {
        "arm": row.arm,
        "cluster": row.cluster,
        "split": row.split,
        "run": row.run,
        "draw_index": row.draw_index,
        "usd": row.usd,
        "usd_list": usd_list,
        "usd_provenance": row.usd_provenance,
        "reportable": row.reportable,
        "failure_kind": row.failure_kind,
    }


def _sample(row: Row, model: str, item: Any, label: Any, trace: Sequence[Step], scorer: str) -> _Sample:
    asked = _requests(trace)
    reply = asked[-1].text if asked and asked[-1].text is not None else row.outcome
    completion = "" if reply is None else str(reply)
    usd_list = list_usd(trace) if trace else row.usd
    meta = _row_metadata(row, usd_list)
    usage = _usage(row, row.usd)
    said = _Message(role="assistant", content=completion, source="generate", model=model)
    score = None
    if row.correct is not None:
        value = "C" if row.correct else "I"
        score = {scorer: _Score(value=value, answer=row.outcome, explanation=row.failure_kind, metadata=meta)}
    cause = next((s.error for s in reversed(trace) if s.error), None) or row.outcome or "error"
    error = _Error(message=cause) if row.failure_kind == "error" else None
    prompt = _text(item) if item is not None else row.item
    return _Sample(
        id=row.item,
        epoch=row.draw_index if row.draw_index >= 1 else row.run,
        input=prompt,
        target=_target(label),
        messages=[_Message(role="user", content=prompt, source="input"), said],
        output=_Output(model=model, choices=[_Choice(message=said)], completion=completion, usage=usage),
        scores=score,
        metadata=meta,
        model_usage={model: usage},
        total_time=row.seconds,
        uuid=row.ledger_id or uuid.uuid4().hex,
        error=error,
    )


def _metrics(rows: Sequence[Row], stats: Mapping[str, Any] | None) -> dict[str, _Metric]:
    scored = [r.correct for r in rows if r.correct is not None and r.reportable]
    if stats is None or stats.get("accuracy") is None:
        mean = sum(scored) / len(scored) if scored else float("nan")
        return {"accuracy": _Metric(name="accuracy", value=mean)}
    params = {"level": stats.get("level"), "method": stats.get("method")}
    out = {"accuracy": _Metric(name="accuracy", value=float(stats["accuracy"]), params=params)}
    for key, name in (("se", "stderr"), ("ci_low", "ci_low"), ("ci_high", "ci_high")):
        if stats.get(key) is not None:
            out[name] = _Metric(name=name, value=float(stats[key]), params=params)
    return out


def _report(rows: Sequence[Row], traces: Mapping[str, Sequence[Step]] | None) -> dict[str, Any] | None:
    """The report a log's results carry: the full one, else the descriptive one, else none."""
    from hrbench.stats import report_payload

    for descriptive in (False, True):
        try:
            return report_payload(list(rows), traces=traces, descriptive=descriptive)
        except ValueError:  # too few runs (TooFewRunsError), no labelled row
            continue
    return None


def inspect_logs(
    rows: Iterable[Row],
    *,
    task: str,
    items: Mapping[str, Any] | None = None,
    labels: Mapping[str, Any] | None = None,
    traces: Mapping[str, Sequence[Step]] | None = None,
    scorer: str = "exact",
    status: str = "done",
    created: str | None = None,
    bench_id: str = "",
    report: Mapping[str, Any] | None = None,
) -> dict[str, bytes]:
    """The Inspect eval logs of a benchmark's rows, one per arm, as JSON bytes.

    Args:
        rows: the benchmark's rows (:class:`~hrbench.records.Row`), any order.
        task: the task name (the benchmark's name).
        items: item id -> item (a sample's ``input``); ``None``: the item id stands for it.
        labels: item id -> label (a sample's ``target``; ``""`` when unlabelled).
        traces: ledger id -> steps; each arm's model, each reply and list price come from them.
        scorer: the scorer's name (the key of each sample's score).
        status: the benchmark's status (``"cancelled"`` and ``"running"`` are kept as Inspect's
            ``"cancelled"`` and ``"started"``; others are ``"success"``).
        created: when the benchmark was made, ISO 8601 with a zone; ``None``: now.
        bench_id: the benchmark's id (``eval.metadata.hrbench_id``, ``eval.run_id``).
        report: the report payload (:func:`hrbench.stats.report_payload`); ``None``: computed
            from the rows (descriptive when they have fewer than 5 runs).

    Returns:
        ``{arm: log JSON bytes}``, in the rows' arm order.

    Example:
        >>> import json
        >>> from hrbench.records import Row
        >>> rows = [Row(cluster="q1", item="q1", arm="a", run=1, split="test", correct=True,
        ...             outcome="x", failure_kind=None, draw_index=1)]
        >>> log = json.loads(inspect_logs(rows, task="demo", labels={"q1": "x"})["a"])
        >>> log["version"], log["eval"]["task"], log["samples"][0]["scores"]["exact"]["value"]
        (2, 'demo', 'C')
    """
    rows = list(rows)
    traces = traces or {}
    items, labels = items or {}, labels or {}
    report = report if report is not None else _report(rows, traces)
    stats = {a["arm"]: a for a in (report or {}).get("arms", [])}
    when = created or dt.datetime.now(dt.UTC).isoformat()
    by_arm: dict[str, list[Row]] = {}
    for r in rows:
        by_arm.setdefault(r.arm, []).append(r)
    out: dict[str, bytes] = {}
    enc = msgspec.json.Encoder()
    for arm, arm_rows in by_arm.items():
        models = [s.model for r in arm_rows for s in _requests(traces.get(r.ledger_id, ())) if s.model]
        model = models[0] if models else arm
        samples = [
            _sample(r, model, items.get(r.item), labels.get(r.item), traces.get(r.ledger_id, ()), scorer)
            for r in arm_rows
        ]
        samples.sort(key=lambda s: (s.epoch, s.id))
        arm_stats = stats.get(arm)
        if arm_stats is not None and report is not None:
            arm_stats = {**arm_stats, "level": report.get("level"), "method": report.get("method")}
        out[arm] = enc.encode(_log(arm, arm_rows, samples, model, task, when, bench_id, status, scorer,
                                   arm_stats, report))  # fmt: skip
    return out


def _log(
    arm: str,
    rows: list[Row],
    samples: list[_Sample],
    model: str,
    task: str,
    when: str,
    bench_id: str,
    status: str,
    scorer: str,
    stats: Mapping[str, Any] | None,
    report: Mapping[str, Any] | None,
) -> _Log:
    ids = list(dict.fromkeys(r.item for r in rows))
    usage = _Usage()
    for s in samples:
        u = s.output.usage or _Usage()
        usage.input_tokens += u.input_tokens
        usage.output_tokens += u.output_tokens
        usage.total_tokens += u.total_tokens
    usd = [r.usd for r in rows]
    usage.total_cost = None if any(u is None for u in usd) else sum(u or 0.0 for u in usd)
    comparisons = [
        c for c in (report or {}).get("comparisons", []) if arm in (c.get("arm_a"), c.get("arm_b"))
    ]
    meta = None
    if report is not None:
        meta = {"comparisons": comparisons, "level": report.get("level"), "method": report.get("method"),
                "descriptive": report.get("descriptive"), "note": report.get("note")}  # fmt: skip
    n_scored = sum(1 for s in samples if s.scores)
    results = _Results(
        total_samples=len(samples),
        completed_samples=len(samples),
        scores=[
            _EvalScore(
                name=scorer,
                scorer=scorer,
                scored_samples=n_scored,
                unscored_samples=len(samples) - n_scored,
                metrics=_metrics(rows, stats),
            )
        ],
        metadata=meta,
    )
    run_id = bench_id or uuid.uuid4().hex
    return _Log(
        status=_STATUS.get(status, "success"),
        eval=_Spec(
            eval_id=f"{run_id}-{arm}",
            run_id=run_id,
            created=when,
            task=task,
            task_id=f"{task}-{arm}",
            dataset=_Dataset(name=task, samples=len(ids), sample_ids=ids),
            model=model,
            config=_Config(epochs=max((r.run for r in rows), default=1)),
            packages={"hrbench": _version()},
            metadata={"hrbench_id": bench_id, "arm": arm, "scorer": scorer},
        ),
        results=results,
        stats=_Stats(started_at=when, completed_at=when, model_usage={model: usage}),
        samples=samples,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hrbench")
    except PackageNotFoundError:
        return "0"


def _file_name(task: str, arm: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{task}_{arm}").strip("-")
    return f"{safe or 'benchmark'}.json"


def write_inspect_logs(
    directory: str | Path,
    logs: Mapping[str, bytes],
    task: str,
    *,
    make_folder: bool = True,
) -> list[Path]:
    """Write logs from :func:`inspect_logs` into ``directory`` as ``TASK_ARM.json`` files.

    The files are written together, whole or not at all: each to a temporary file in the
    folder, and only once every one is written are they renamed over their names
    (:func:`hrbench._util.files.output_file`), so a full disk leaves no partial log. A caller
    confined to the daemon's exchange folders (a TCP client) writes only inside ``exports/``.

    Args:
        directory: the folder; a file of the same name is overwritten.
        logs: ``{arm: log JSON bytes}``.
        task: the task name, the first part of each file name.
        make_folder: make ``directory`` when it is missing.

    Returns:
        The paths written, one per arm.

    Raises:
        ConfigError: the folder or a file cannot be written (naming it and why: a full disk,
            a folder outside a confined caller's ``exports/``); nothing is left behind.
        ValueError: two arms' names make the same file name.

    Example:
        >>> import tempfile
        >>> [p.name for p in write_inspect_logs(tempfile.mkdtemp(), {"a": b"{}"}, "demo")]
        ['demo_a.json']
    """
    from hrbench._util import files

    folder = Path(directory).expanduser()
    names = {arm: _file_name(task, arm) for arm in logs}
    if len(set(names.values())) < len(names):
        raise ValueError(f"arms {sorted(names)} make the same file name; rename one")
    if make_folder:
        files.make_folder(folder, "path")
    out = []
    with contextlib.ExitStack() as written:  # renamed on leaving, once every one is written
        for arm, data in logs.items():
            path = folder / names[arm]
            written.enter_context(files.output_file(path, "path")).write(data)
            out.append(path)
    return out


def bench_to_inspect(bench: Any, path: str | Path, name: str | None = None) -> list[Path]:
    """Write a finished benchmark's Inspect eval logs, one per arm, into folder ``path``.

    What each log holds is the module's docstring; :meth:`hrbench.Bench.to_inspect` calls this.

    Args:
        bench: the :class:`~hrbench.Bench` (a benchmark run with ``keep_rows=False`` has no
            rows to write).
        path: the folder to write into (made when missing).
        name: the task name; ``None``: ``hrbench-<benchmark id>``.

    Returns:
        The paths written, one per arm (``TASK_ARM.json``).

    Raises:
        ValueError: the benchmark holds no rows.
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
        >>> p.name, len(log["samples"]), log["eval"]["config"]["epochs"]
        ('demo_a.json', 2, 2)
    """
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
    return write_inspect_logs(path, logs, task)
