"""Benchmarks as Inspect eval logs: one log (format ``version`` 2) per arm, the mapping.

Inspect's log format (``inspect_ai.log.EvalLog``) is read by ``inspect view``, by
``inspect_ai.log.read_eval_log`` and by the tools that share it; these msgspec Structs write the
part of it a benchmark fills, so writing needs no Inspect install (:mod:`._inspect_files` names
and writes the files, ``.json`` or ``.eval``). Every top-level field Inspect writes is written,
in Inspect's order (``version``, ``status``, ``eval``, ``plan``, ``results``, ``stats``,
``invalidated``, ``tags``, ``metadata``, then ``samples`` and ``reductions``), so Inspect's
header-only reader, which stops at ``samples`` and needs ``plan`` (shared case H4-02), reads it.
What lands where:

- ``eval``: ``task`` = the benchmark's name, ``model`` = the arm's model (from its trace), or the
  arm's name when it sent no request; ``config.epochs`` = the runs; ``dataset`` = the items;
  ``task_id`` a hex id of the benchmark and arm (the last part of the file name).
- ``plan``: one step, ``solver`` ``hrbench``, whose ``params`` name the arm.
- one sample per item x run: ``id`` = the item id (a whole number below 2**53 as a number, as
  Inspect's own ids are), ``epoch`` = the run's draw index, ``input`` = the item (its messages
  when it is a chat, else JSON text when it is not text), ``target`` = the label (``""``,
  Inspect's default, when unlabelled), ``output`` = the reply (the last request's text, else
  what the scorer saw), ``model_usage`` = the run's tokens (Inspect's ``input_tokens`` leave out
  the cache reads, kept in ``input_tokens_cache_read``) and ``total_cost`` its list price (what
  its replies cost when first paid, :func:`hrbench.records.list_usd`; what was paid here is the
  metadata's ``usd``).
- ``scores[SCORER]``: ``value`` ``"C"`` (right) or ``"I"`` (wrong); ``answer`` = what the
  scorer saw; ``explanation`` = the failure kind; an unlabelled run has no score.
- sample and score ``metadata``: ``cluster``, ``split``, ``run``, ``draw_index``, ``usd``,
  ``usd_list`` (list price), ``usd_provenance``, ``reportable``, ``failure_kind``, ``arm``.
- a run that ended in an error carries ``error.message`` (the outcome).
- ``results.scores[0].metrics``: ``accuracy``, ``stderr``, ``ci_low`` and ``ci_high`` (the
  report's interval, its level and method in each metric's ``params``); ``results.metadata``:
  the report's paired comparisons that involve the arm, with the level, method and note.
- ``reductions``: per labelled item, the mean of its runs' scores (Inspect's ``mean`` reducer).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from hrbench.records import Row, Step, list_usd

__all__ = ["INSPECT_LOG_VERSION", "inspect_logs", "inspect_time", "sample_id", "task_id"]

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
    id: str | int
    epoch: int
    input: str | list[_Message]
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
    sample_ids: list[str | int]


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


class _PlanStep(msgspec.Struct, kw_only=True):
    solver: str
    params: dict[str, Any]


class _Plan(msgspec.Struct, kw_only=True):
    name: str = "plan"
    steps: list[_PlanStep]
    config: dict[str, Any] = msgspec.field(default_factory=dict)


class _Reduced(msgspec.Struct, kw_only=True):
    value: float
    sample_id: str | int


class _Reduction(msgspec.Struct, kw_only=True):
    scorer: str
    reducer: str = "mean"
    samples: list[_Reduced]


class _Log(msgspec.Struct, kw_only=True):
    """The log, its fields in the order Inspect writes them (its header reader stops at ``samples``)."""

    version: int = INSPECT_LOG_VERSION
    status: str
    eval: _Spec
    plan: _Plan
    results: _Results | None
    stats: _Stats
    invalidated: bool = False
    tags: list[str] = msgspec.field(default_factory=list)
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    samples: list[_Sample]
    reductions: list[_Reduction] | None = None


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def sample_input(item: Any, fallback: str) -> str | list[_Message]:
    """A sample's ``input``: a chat's messages as Inspect's, any other item as text."""
    if item is None:
        return fallback
    if (
        isinstance(item, list)
        and item
        and all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in item
        )
    ):
        return [_Message(role=m["role"], content=m["content"]) for m in item]
    return _text(item)


_WHOLE = re.compile(r"-?(0|[1-9][0-9]{0,15})")


def sample_id(item: str) -> str | int:
    """An item id as an Inspect sample id: a whole number below 2**53 as a number, as Inspect's own.

    Inspect's sample ids are ``int | str``; hrbench's are text (an Inspect id ``3`` is read as
    ``"3"``), so the whole numbers go back as numbers and a log taken from Inspect to hrbench
    and back keeps its ids. Below 2**53 a JavaScript reader (``inspect view``) keeps them exact.

    Example:
        >>> [sample_id(x) for x in ("3", "q1", "007", "-2", "12345678901234567890")]
        [3, 'q1', '007', -2, '12345678901234567890']
    """
    if _WHOLE.fullmatch(item) and abs(int(item)) < 2**53:
        return int(item)
    return item


def task_id(bench_id: str, arm: str) -> str:
    """The ``eval.task_id`` of one arm's log: 22 hex digits of the benchmark and arm (no ``_`` or ``-``).

    Inspect names a log ``{created}_{task}_{task_id}``, reads the task id back from the part after
    the last ``_`` and cuts it at the first ``-``, so the id has neither.

    Example:
        >>> task_id("b1", "ask"), len(task_id("b1", "ask"))
        ('9ebc5807cee62e2d3b0fbd', 22)
    """
    return hashlib.sha256(f"{bench_id}\x00{arm}".encode()).hexdigest()[:22]


def inspect_time(when: str | None) -> str:
    """A time as Inspect writes ``eval.created``: ISO 8601 to the second, with its zone; ``None``: now.

    Example:
        >>> inspect_time("2026-12-07T05:18:02.123456+00:00")
        '2026-12-07T05:18:02+00:00'
    """
    moment = dt.datetime.now(dt.UTC) if when is None else dt.datetime.fromisoformat(when)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.replace(microsecond=0).isoformat()


def sample_target(label: Any) -> str | list[str]:
    if label is None:
        return ""
    if isinstance(label, (list, tuple)) and all(isinstance(x, str) for x in label):
        return list(label)
    return _text(label)


def _requests(trace: Sequence[Step]) -> list[Step]:
    return [s for s in trace if s.kind == "request"]


def _usage(row: Row, usd: float | None) -> _Usage:
    """A run's tokens as Inspect's ``ModelUsage``, whose ``input_tokens`` leave out the cache reads."""
    return _Usage(
        input_tokens=max(row.tokens_in - row.tokens_cached, 0),
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
    usage = _usage(row, usd_list)  # Inspect's total_cost is what the usage costs: the list price
    said = _Message(role="assistant", content=completion, source="generate", model=model)
    score = None
    if row.correct is not None:
        value = "C" if row.correct else "I"
        score = {scorer: _Score(value=value, answer=row.outcome, explanation=row.failure_kind, metadata=meta)}
    cause = next((s.error for s in reversed(trace) if s.error), None) or row.outcome or "error"
    error = _Error(message=cause) if row.failure_kind == "error" else None
    prompt = sample_input(item, row.item)
    meta = {**meta, **kept_values(item, label, prompt)}
    asked_first = (
        prompt if isinstance(prompt, list) else [_Message(role="user", content=prompt, source="input")]
    )
    return _Sample(
        id=sample_id(row.item),
        epoch=row.draw_index if row.draw_index >= 1 else row.run,
        input=prompt,
        target=sample_target(label),
        messages=[*asked_first, said],
        output=_Output(model=model, choices=[_Choice(message=said)], completion=completion, usage=usage),
        scores=score,
        metadata=meta,
        model_usage={model: usage},
        total_time=row.seconds,
        uuid=row.ledger_id or uuid.uuid4().hex,
        error=error,
    )


def kept_values(item: Any, label: Any, prompt: Any) -> dict[str, Any]:
    """The item and label a sample's ``input`` and ``target`` cannot hold, for its ``metadata``.

    Inspect's ``input`` is text or chat messages and its ``target`` text or a list of text, so an
    item such as ``{"q": "2+2"}`` goes out as its JSON text. The values themselves go beside it
    as ``metadata.input_value`` and ``metadata.target_value``, so that a log taken back gives
    the same reference (its content hash unchanged); text items and labels need neither.

    Example:
        >>> kept_values({"q": "2+2"}, 4, '{"q": "2+2"}')
        {'input_value': {'q': '2+2'}, 'target_value': 4}
        >>> kept_values("2+2", "4", "2+2")
        {}
    """
    kept: dict[str, Any] = {}
    chat = isinstance(prompt, list) and all(set(m) <= {"role", "content"} for m in item)
    if item is not None and not isinstance(item, str) and not chat:
        kept["input_value"] = item
    if label is not None and sample_target(label) != label:
        kept["target_value"] = label
    return kept


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
        items: item id -> item (a sample's ``input``), in the reference's order, which the
            samples keep within each epoch (so that the log read back is the same reference,
            whose hash follows its order); ``None``: the item id stands for it, samples by id.
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
    when = inspect_time(created)
    place = {str(sample_id(k)): n for n, k in enumerate(items)}  # the reference's order, read back the same
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
        samples.sort(key=lambda s: (s.epoch, place.get(str(s.id), len(place)), str(s.id)))
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
    ids = [sample_id(i) for i in dict.fromkeys(r.item for r in rows)]
    usage = _Usage()
    for s in samples:
        u = s.output.usage or _Usage()
        usage.input_tokens += u.input_tokens
        usage.output_tokens += u.output_tokens
        usage.total_tokens += u.total_tokens
        if u.input_tokens_cache_read:
            usage.input_tokens_cache_read = (usage.input_tokens_cache_read or 0) + u.input_tokens_cache_read
        if u.reasoning_tokens:
            usage.reasoning_tokens = (usage.reasoning_tokens or 0) + u.reasoning_tokens
    costs = [s.output.usage.total_cost if s.output.usage else None for s in samples]
    usage.total_cost = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
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
            task_id=task_id(run_id, arm),
            dataset=_Dataset(name=task, samples=len(ids), sample_ids=ids),
            model=model,
            config=_Config(epochs=max((r.run for r in rows), default=1)),
            packages={"hrbench": _version()},
            metadata={"hrbench_id": bench_id, "arm": arm, "scorer": scorer},
        ),
        plan=_Plan(steps=[_PlanStep(solver="hrbench", params={"arm": arm, "scorer": scorer})]),
        results=results,
        stats=_Stats(started_at=when, completed_at=when, model_usage={model: usage}),
        samples=samples,
        reductions=_reductions(samples, scorer),
    )


def _reductions(samples: list[_Sample], scorer: str) -> list[_Reduction]:
    """Per scored sample id, the mean of its epochs' scores (C = 1, I = 0), as Inspect's ``mean`` reducer."""
    per: dict[str | int, list[float]] = {}
    for s in samples:
        score = (s.scores or {}).get(scorer)
        if score is not None:
            per.setdefault(s.id, []).append(1.0 if score.value == "C" else 0.0)
    reduced = [_Reduced(value=sum(v) / len(v), sample_id=i) for i, v in per.items()]
    return [_Reduction(scorer=scorer, samples=reduced)]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hrbench")
    except PackageNotFoundError:
        return "0"
