"""Inspect logs as arms: the usage and cost a log records, retried samples, early-stopped epochs.

The logs under ``data/`` were written by the real Inspect (inspect-ai 0.3.285) with its own CLI,
offline, on ``mockllm/model``; the commands are in ``tests/interop/inspect_tasks.py``:
``inspect_capitals.json`` (``@capitals --epochs 2 --log-format json``), ``inspect_retry.eval``
(``@retry --epochs 2 --retry-on-error=1``) and ``inspect_early.eval`` (``@early --epochs 4``).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.interop import imported_arm, imported_reference
from hrbench.stats._agreement import _rescored

DATA = Path(__file__).parent / "data"
CAPITALS, RETRY, EARLY = (
    DATA / "inspect_capitals.json",
    DATA / "inspect_retry.eval",
    DATA / "inspect_early.eval",
)


def _bench(arms: Any, ref: hb.Reference, runs: int, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few runs: the report is descriptive
        return hb.benchmark(arms, ref, runs=runs, **kw)


def _logged_tokens(log: Path) -> dict[tuple[str, int], tuple[int, int]]:
    """Per (sample id, epoch), the input and output tokens the log's ``model_usage`` records."""
    out = {}
    for s in json.loads(log.read_text())["samples"]:
        [used] = s["model_usage"].values()
        out[(str(s["id"]), s["epoch"])] = (used["input_tokens"], used["output_tokens"])
    return out


def test_imported_runs_keep_the_tokens_the_log_records_not_paid_here() -> None:
    b = _bench(imported_arm("mock", CAPITALS, "inspect"), imported_reference(CAPITALS, "inspect"), runs=2)
    logged = _logged_tokens(CAPITALS)
    assert {(r.item, r.run): (r.tokens_in, r.tokens_out) for r in b.rows} == logged
    assert sum(r.tokens_in for r in b.rows) == sum(i for i, _ in logged.values()) > 0
    assert {(r.usd, r.usd_provenance) for r in b.rows} == {(0.0, "log")}
    [s] = b.summary()
    assert s["tokens_in"] == 24 and s["usd"] == 0.0 and s["usd_list"] is None and s["usd_from_log"] == 6
    assert "From the log, not paid here: the tokens and usd_list of mock (6 runs)" in str(b)
    for r in b.rows:  # each run's trace holds its output, as the log has it: judge agreement rescores it
        step, note = b.traces[r.ledger_id]  # the log's step, then the output the scorer read
        assert (note.kind, note.source, note.text) == ("note", "output", step.text)
        assert (step.kind, step.source, step.model, step.usd) == ("request", "log", "mockllm/model", 0.0)
        assert step.text is not None and step.text.lower() == r.outcome
        assert (
            step.usage is not None
            and (step.usage.tokens_in, step.usage.tokens_out) == logged[(r.item, r.run)]
        )


def test_the_cost_a_log_records_is_the_list_price_and_the_governor_counts_none(tmp_path: Path) -> None:
    data = json.loads(CAPITALS.read_text())
    for s in data["samples"]:
        for used in s["model_usage"].values():
            used["total_cost"] = 0.25
            used["input_tokens_cache_read"] = 2
    priced = tmp_path / "priced.json"
    priced.write_text(json.dumps(data))
    gov = hb.Governor(max_usd=0.01)  # less than one logged run costs: nothing is paid here
    b = _bench(
        imported_arm("mock", priced, "inspect"), imported_reference(priced, "inspect"), runs=2, governor=gov
    )
    assert {r.failure_kind for r in b.rows} <= {None, "wrong"} and b.governor["usd"] == 0.0
    assert {(r.usd, r.usd_provenance, r.tokens_cached) for r in b.rows} == {(0.0, "log", 2)}
    assert {(r.item, r.run): r.tokens_in for r in b.rows} == {
        k: i + 2 for k, (i, _) in _logged_tokens(CAPITALS).items()
    }
    [s] = b.summary()
    assert (s["usd"], s["usd_list"]) == (0.0, pytest.approx(1.5))
    rep = hb.report(b, descriptive=True)
    [arm] = rep.arms
    assert (arm.usd, arm.usd_list, arm.usd_from_log) == (0.0, pytest.approx(1.5), 6)
    assert arm.usd_per_run == pytest.approx(0.25)
    assert "From the log, not paid here: the usd_list of mock (6 runs)" in str(rep)


def _with_cost(tmp_path: Path, cost: float) -> Path:
    """Inspect's own log (it records no cost on ``mockllm/model``) with ``total_cost`` set on every sample."""
    data = json.loads(CAPITALS.read_text())
    for s in data["samples"]:
        for used in s["model_usage"].values():
            used["total_cost"] = cost
    path = tmp_path / f"cost-{cost}.json"
    path.write_text(json.dumps(data))
    return path


NO_COST = "its log records no cost"


def test_a_log_recording_a_cost_of_0_records_a_cost_and_one_without_cost_is_na(tmp_path: Path) -> None:
    """``total_cost: 0.0`` is a cost of 0 (usd_list 0, no NA note); no ``total_cost`` is NA, and said so."""
    free = _with_cost(tmp_path, 0.0)
    b = _bench(imported_arm("mock", free, "inspect"), imported_reference(free, "inspect"), runs=2)
    [s] = b.summary()
    assert (s["usd_list"], s["usd_from_log"]) == (0.0, 6)
    rep = hb.report(b, descriptive=True)
    assert rep.arms[0].usd_list == 0.0
    for text in (str(b), str(rep)):
        assert (
            "usd_list of mock (6 runs)" in text and NO_COST not in text and "it records no cost" not in text
        )
    # Inspect's own log: no total_cost at all (mockllm/model has no price)
    none = _bench(imported_arm("mock", CAPITALS, "inspect"), imported_reference(CAPITALS, "inspect"), runs=2)
    assert none.summary()[0]["usd_list"] is None
    assert f"usd_list of mock is NA: {NO_COST} for some or all of its runs" in str(none)
    assert f"usd_list of mock is - (NA): {NO_COST}" in str(hb.report(none, descriptive=True))
    # the rows without their traces: no list price is known, and the log is not blamed for it
    bare = str(hb.report(none.rows, descriptive=True))
    assert "at what was paid (no traces, so no list price)" in bare and NO_COST not in bare


def test_judge_agreement_rescores_an_imported_arms_outputs_from_their_traces() -> None:
    """A judge scored an imported arm: the exact scorer rescores each run's output, read from its trace."""

    def grade(messages: Any, params: Any) -> str:  # a judge that calls every output right
        return "correct"

    ref = imported_reference(CAPITALS, "inspect")
    b = _bench(imported_arm("mock", CAPITALS, "inspect"), ref, runs=2,
               scorer=hb.judge_scorer(hb.MockClient(grade)))  # fmt: skip
    # the log's step, the judge's note of the text judged, its request, the output the judge read
    assert [len(b.traces[r.ledger_id]) for r in b.rows] == [4] * 6
    exact = {
        (r.item, r.run): r.correct
        for r in _bench(imported_arm("mock", CAPITALS, "inspect"), ref, runs=2).rows
    }
    assert _rescored(b, hb.exact_scorer()) == {("mock", i, n): ok for (i, n), ok in exact.items()}
    agreement = hb.judge_agreement(b)
    assert (agreement.n, agreement.agree, agreement.confusion["judge_only"]) == (6, 5, 1)


def test_H4_16_a_sample_that_succeeded_on_retry_is_one_successful_run() -> None:
    """Shared case H4-16: Inspect's ``error_retries`` holds the failed attempt, ``error`` is null."""
    log = {(s["id"], s["epoch"]): s for s in _samples(RETRY)}
    assert len(log[("q1", 1)]["error_retries"]) == 1 and log[("q1", 1)].get("error") is None
    b = _bench(imported_arm("mock", RETRY, "inspect"), imported_reference(RETRY, "inspect"), runs=2)
    assert len(b.rows) == 4
    [q1_run1] = [r for r in b.rows if (r.item, r.run) == ("q1", 1)]
    assert (q1_run1.correct, q1_run1.failure_kind) == (True, None)
    assert not any(r.failure_kind == "error" for r in b.rows)


def _samples(path: Path) -> list[dict[str, Any]]:
    """The sample documents of an Inspect ``.eval`` (zstd) log, read with the bounded zip reader."""
    from hrbench.interop._boundary import reading
    from hrbench.interop._bounded import ZipDocuments

    with reading(str(path), "inspect"):
        docs = ZipDocuments(str(path), "an Inspect .eval log")
        return [json.loads(json.dumps(docs.document(n))) for n in docs.members if n.startswith("samples/")]


def test_H4_17_early_stopped_epochs_refuse_the_benchmark_naming_them() -> None:
    """Shared case H4-17: an item with fewer runs in the file than the benchmark's is refused, never filled in."""
    calls: list[int] = []
    counted = hb.Arm("counted", lambda item, ctx: calls.append(1) or "x")
    ref = imported_reference(EARLY, "inspect")
    with pytest.raises(ConfigError) as err:
        _bench([imported_arm("mock", EARLY, "inspect"), counted], ref, runs=4)
    said = str(err.value).replace("'", "")
    assert (
        "3 has 2 (missing runs 3, 4)" in said and "q1 has 2 (missing runs 3, 4)" in said and "q2" not in said
    )
    assert calls == []  # refused before the first run
    ok = _bench(imported_arm("mock", EARLY, "inspect"), ref, runs=2)  # the runs every item has
    assert len(ok.rows) == 6
