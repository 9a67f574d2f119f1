"""The peers' side of ``bench/overhead.py``: DSPy's ``Evaluate`` and inspect_ai's ``eval`` on an instant mock.

Run by ``bench/overhead.py`` with the peers' own virtual environment (``.venv-peers``, made by
``make bench``), so their pins never touch hrbench's. Each peer makes ITEMS x RUNS rows on an
instantly answering mock model with an exact-match scorer, and is warmed and timed by
``bench/_timing.py`` exactly as ``overhead.py`` times hrbench. A peer's run counts only when it
succeeded and scored every row right (the mock's reply is every row's label): inspect_ai's log
must say ``success`` and hold every sample, none with an error, each scored ``C``; DSPy's result
must hold a prediction scored true for every example. Otherwise the peer is reported failed, with
the reason, and ``overhead.py`` prints no ratio for it.

inspect_ai's ``mockllm/model`` counts the tokens of each reply with tiktoken's ``o200k_base``,
which tiktoken downloads on first use: offline every sample then errors. The encoding is put
where tiktoken's cache looks (``TIKTOKEN_CACHE_DIR``, a temporary folder, this process only), from
the copy hrbench ships (``hrbench/data/tiktoken/``), as ``tests/interop/conftest.py`` does.

Prints one JSON object on its last line, by peer: ``{"rows", "wall_s", "cpu_s", "repeats",
"warmups", "does"}``, or ``{"failed": why, "does"}``.

Usage: ``.venv-peers/bin/python bench/_peers.py [--items 200] [--runs 5] [--repeat 3] [--warmup 1]
[--only dspy|inspect_ai] [--write-logs DIR]`` (``--write-logs``: inspect_ai's logs are kept there,
in Inspect's JSON format, instead of its default ``.eval`` in a temporary folder).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _timing import timed

REPO = Path(__file__).resolve().parents[1]
SHIPPED_O200K = REPO / "hrbench" / "data" / "tiktoken" / "o200k_base.tiktoken.gz"
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
"""Where tiktoken fetches o200k_base from; its cache names the file by this URL's SHA-1."""

MOCKLLM_REPLY = "Default output from mockllm/model"
"""inspect_ai's ``mockllm/model`` answers every prompt with this text: each sample's target."""

CONCURRENCY = 16
"""Rows in flight on every side (hrbench's ``concurrency``, DSPy's threads, Inspect's connections)."""

DOES = {
    "dspy": "dspy.Evaluate(num_threads={c}) of dspy.Predict('question -> answer') over {rows:,} examples "
    "({items:,} items x {runs} runs as distinct examples), DummyLM answering 'Paris', metric "
    "example.answer == pred.answer",
    "inspect_ai": "inspect_ai.eval() of a Task of {items:,} samples x {runs} epochs, generate() on "
    "mockllm/model, match(location='exact'), max_connections={c}, its default .eval log written",
}


def tiktoken_cache(folder: Path) -> Path:
    """A tiktoken cache in ``folder`` holding o200k_base from hrbench's shipped copy (no download)."""
    (folder / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(
        gzip.decompress(SHIPPED_O200K.read_bytes())
    )
    return folder


def inspect_problem(log: dict[str, Any], rows: int) -> str | None:
    """Why an inspect_ai run does not count (``None``: it succeeded and scored every row right).

    Args:
        log: the log in Inspect's JSON log format (the fields read: ``status``, ``error.message``,
            ``samples[].error.message``, ``samples[].scores.*.value``); :func:`inspect_log_fields`
            gives them from an ``EvalLog``.
        rows: the samples x epochs the run had to score.

    Returns:
        The reason, naming the count and the first error, or ``None``.
    """
    samples = log.get("samples") or []
    errors = [s for s in samples if s.get("error")]
    unscored = [s for s in samples if not s.get("error") and not s.get("scores")]
    wrong = [
        s for s in samples if s.get("scores") and any(v.get("value") != "C" for v in s["scores"].values())
    ]
    why = []
    if log.get("status") != "success":
        why.append(f"status {log.get('status')!r}")
    if len(samples) != rows:
        why.append(f"{len(samples)} of {rows} samples in the log")
    if errors:
        why.append(f"{len(errors)} samples errored")
    if unscored:
        why.append(f"{len(unscored)} samples unscored")
    if wrong:
        why.append(f"{len(wrong)} samples scored wrong")
    first = log.get("error") or (errors[0]["error"] if errors else None)
    if first:
        why.append(f"first error: {_first_line(first.get('message'))[:160]}")
    return "; ".join(why) or None


def _first_line(text: Any) -> str:
    return str(text or "").strip().splitlines()[0][:200] if str(text or "").strip() else "(no message)"


def inspect_log_fields(log: Any) -> dict[str, Any]:
    """The fields :func:`inspect_problem` reads, from inspect_ai's ``EvalLog``, in its JSON log's shape."""

    def err(e: Any) -> dict[str, Any] | None:
        return None if e is None else {"message": e.message}

    return {
        "status": log.status,
        "error": err(log.error),
        "samples": [
            {
                "id": s.id,
                "epoch": s.epoch,
                "error": err(s.error),
                "scores": {k: {"value": v.value} for k, v in (s.scores or {}).items()},
            }
            for s in log.samples or []
        ],
    }


def dspy_problem(results: list[tuple[Any, Any, Any]], rows: int) -> str | None:
    """Why a DSPy ``Evaluate`` run does not count (``None``: every example predicted and scored true).

    ``Evaluate`` gives an example whose program or metric raised an empty ``Prediction`` and its
    ``failure_score`` (0.0), logs the error and goes on: such rows are counted here.

    Args:
        results: ``EvaluationResult.results``, ``(example, prediction, score)`` per example.
        rows: the examples the run had to score.

    Returns:
        The reason, or ``None``.
    """
    failed = [r for r in results if "answer" not in r[1]]
    wrong = [r for r in results if "answer" in r[1] and r[2] is not True]
    why = []
    if len(results) != rows:
        why.append(f"{len(results)} of {rows} examples in the result")
    if failed:
        why.append(f"{len(failed)} examples failed (no prediction: the program or the metric raised)")
    if wrong:
        why.append(f"{len(wrong)} examples scored wrong")
    return "; ".join(why) or None


class PeerFailed(Exception):
    """Raised when a peer's run does not count; the message says why."""


def run_dspy(items: int, runs: int, repeats: int, warmups: int) -> dict[str, Any]:
    import dspy
    from dspy.utils import DummyLM

    rows = items * runs
    prog = dspy.Predict("question -> answer")
    dev = [
        dspy.Example(question=f"Capital of France? ({i}, run {r})", answer="Paris").with_inputs("question")
        for i in range(items)
        for r in range(1, runs + 1)
    ]

    def metric(example: Any, pred: Any, trace: Any = None) -> bool:
        return bool(example.answer == pred.answer)

    ev = dspy.Evaluate(devset=dev, metric=metric, num_threads=CONCURRENCY, display_progress=False)
    # DummyLM hands out its scripted answers in turn: one fresh LM a run, made before the timing
    lms = iter([DummyLM([{"answer": "Paris"}] * rows) for _ in range(repeats + warmups)])

    def run() -> Any:
        dspy.configure(lm=next(lms))
        return ev(prog)

    def rows_of(result: Any) -> int:
        if (why := dspy_problem(result.results, rows)) is not None:
            raise PeerFailed(why)
        return len(result.results)

    return vars(timed(run, rows_of, repeats, warmups))


def run_inspect(items: int, runs: int, repeats: int, warmups: int, keep_logs: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="hrb-peers-") as tmp:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache(Path(tmp)))
        from inspect_ai import Task
        from inspect_ai import eval as inspect_eval
        from inspect_ai.dataset import Sample
        from inspect_ai.scorer import match
        from inspect_ai.solver import generate

        rows = items * runs
        samples = [
            Sample(id=f"q{i}", input=f"Capital of France? ({i})", target=MOCKLLM_REPLY) for i in range(items)
        ]
        task = Task(dataset=samples, solver=generate(), scorer=match(location="exact"))
        logs = Path(tmp) / "logs"
        fmt: dict[str, Any] = {"log_format": "json"} if keep_logs else {}

        def run() -> Any:
            [log] = inspect_eval(
                task,
                model="mockllm/model",
                epochs=runs,
                display="none",
                log_dir=str(keep_logs or logs),
                max_connections=CONCURRENCY,
                **fmt,
            )
            return log

        def rows_of(log: Any) -> int:
            why = inspect_problem(inspect_log_fields(log), rows)
            if not keep_logs:
                shutil.rmtree(logs, ignore_errors=True)  # each run's log file, once checked
            if why is not None:
                raise PeerFailed(why)
            return len(log.samples)

        return vars(timed(run, rows_of, repeats, warmups))


def measure(name: str, fn: Callable[[], dict[str, Any]], does: str) -> dict[str, Any]:
    """One peer's figures, or why its run does not count."""
    try:
        return {**fn(), "does": does}
    except Exception as exc:  # the peer's own failure: reported, never a ratio
        text = str(exc) if isinstance(exc, PeerFailed) else f"{type(exc).__name__}: {exc}"
        return {"failed": _first_line(text)[:300], "does": does}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--only", choices=sorted(DOES))
    ap.add_argument("--write-logs", type=Path, help="keep inspect_ai's logs here (JSON format)")
    a = ap.parse_args()
    logging.disable(logging.WARNING)
    fill = {"items": a.items, "runs": a.runs, "rows": a.items * a.runs, "c": CONCURRENCY}
    runners: dict[str, Callable[[], dict[str, Any]]] = {
        "dspy": lambda: run_dspy(a.items, a.runs, a.repeat, a.warmup),
        "inspect_ai": lambda: run_inspect(a.items, a.runs, a.repeat, a.warmup, a.write_logs),
    }
    out = {
        name: measure(name, fn, DOES[name].format(**fill))
        for name, fn in runners.items()
        if a.only in (None, name)
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
