"""hrbench and the real Inspect: logs hrbench writes are read by Inspect, logs Inspect writes are arms.

Run by ``make test-interop`` in ``.venv-interop`` (inspect-ai installed); excluded from
``make test``, whose venv has no inspect-ai.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from inspect_ai.log import EvalSampleScore, read_eval_log

import hrbench as hb
from hrbench.interop._imported import imported_arm, imported_reference
from hrbench.stats import report_payload
from hrbench_client.export import inspect_score

ITEMS = {"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Oman"}
LABELS = ["Paris", "Lima", "N'Djamena", "Muscat"]
ANSWERS = {"France": "Paris", "Peru": "Lima", "Chad": "Lyon", "Oman": "Muscat"}


def _answer(item: str, ctx: Any) -> str:
    if item == "Peru" and ctx.run in (2, 4):
        return "Cusco"
    if item == "Oman" and ctx.run == 3:
        raise RuntimeError("the model fell over")
    return ANSWERS[item]


def _quiet(fn: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few runs, arm errors: the rows count them
        return fn()


def _bench() -> Any:
    ref = hb.Reference(ITEMS, labels=LABELS, cluster={"q1": "eu", "q2": "am", "q3": "af", "q4": "as"})
    arms = [hb.Arm("good", _answer), hb.Arm("paris", lambda item, ctx: "Paris")]
    return _quiet(lambda: hb.benchmark(arms, ref, runs=5))


def test_an_exported_log_is_read_by_inspect(tmp_path: Path) -> None:
    b = _bench()
    paths = b.to_inspect(tmp_path, name="capitals")
    assert len(paths) == 2
    rep = report_payload(b.rows, traces=b.traces)
    for path in paths:
        log = read_eval_log(str(path))
        arm = log.eval.metadata["arm"]
        rows = {(r.item, r.draw_index): r for r in b.rows if r.arm == arm}
        assert log.version == 2 and log.status == "success" and log.eval.task == "capitals"
        assert log.samples is not None and len(log.samples) == len(rows) == 20
        assert log.eval.config.epochs == 5 and log.eval.dataset.samples == 4
        for s in log.samples:
            r = rows[(str(s.id), s.epoch)]
            score = s.scores[b.scorer_name]
            assert score.value == ("C" if r.correct else "I") and score.explanation == r.failure_kind
            assert s.metadata["cluster"] == r.cluster and s.metadata["split"] == r.split
            assert s.metadata["draw_index"] == r.draw_index and s.metadata["usd"] == r.usd
            assert "usd_list" in s.metadata and s.target == LABELS[list(ITEMS).index(str(s.id))]
            assert (s.error is not None) == (r.failure_kind == "error")
        metrics = log.results.scores[0].metrics
        want = next(a for a in rep["arms"] if a["arm"] == arm)
        assert metrics["accuracy"].value == pytest.approx(want["accuracy"])
        assert (metrics["ci_low"].value, metrics["ci_high"].value) == pytest.approx(
            (want["ci_low"], want["ci_high"])
        )
        assert metrics["stderr"].value == pytest.approx(want["se"])
        [cmp] = log.results.metadata["comparisons"]
        assert {cmp["arm_a"], cmp["arm_b"]} == {"good", "paris"}
    # `hrb rows ID --format inspect-scores` records are Inspect's EvalSampleScore
    recs = [inspect_score(msgspec.structs.asdict(r), b.scorer_name) for r in b.rows if r.arm == "good"]
    scores = [EvalSampleScore.model_validate(x) for x in recs]
    assert [(s.sample_id, s.value) for s in scores] == [
        (r.item, "C" if r.correct else "I") for r in b.rows if r.arm == "good"
    ]


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_a_real_inspect_eval_imports_as_an_arm_with_the_same_verdicts(
    fmt: str, run_inspect: Callable[[str], Path]
) -> None:
    path = run_inspect(fmt)
    assert path.suffix == f".{fmt}"
    theirs = read_eval_log(str(path))
    verdicts = {(str(s.id), s.epoch): s.scores["exact"].value == "C" for s in theirs.samples or []}
    assert len(verdicts) == 6 and sorted(verdicts.values()) == [False, True, True, True, True, True]
    ref = imported_reference(path, "inspect")
    b = _quiet(lambda: hb.benchmark(imported_arm("mock", path, "inspect"), ref, runs=2))
    assert {(r.item, r.run): r.correct for r in b.rows} == verdicts


def test_inspect_to_hrbench_to_inspect_keeps_ids_epochs_and_scores(
    run_inspect: Callable[[str], Path], tmp_path: Path
) -> None:
    first = run_inspect("eval")
    theirs = read_eval_log(str(first))
    ref = imported_reference(first, "inspect")
    b = _quiet(lambda: hb.benchmark(imported_arm("mock", first, "inspect"), ref, runs=2))
    [back] = b.to_inspect(tmp_path / "back", name="capitals")
    again = read_eval_log(str(back))

    def key(log: Any, scorer: str) -> list[tuple[str, int, Any]]:
        return sorted((str(s.id), s.epoch, s.scores[scorer].value) for s in log.samples)

    assert key(again, b.scorer_name) == key(theirs, "exact")
    assert {str(s.id): s.target for s in again.samples} == {str(s.id): s.target for s in theirs.samples}
    assert {str(s.id): s.input for s in again.samples} == {str(s.id): s.input for s in theirs.samples}
    # and once more through hrbench: the same rows
    twice = _quiet(
        lambda: hb.benchmark(
            imported_arm("mock", back, "inspect"), imported_reference(back, "inspect"), runs=2
        )
    )
    assert [(r.item, r.run, r.correct) for r in twice.rows] == [(r.item, r.run, r.correct) for r in b.rows]


def test_hrb_export_through_the_daemon_is_read_by_inspect(tmp_path: Path) -> None:
    from hrbench_client import _paths
    from tests._procs import stop_daemon
    from tests.clients.test_cli import _bench_file, _bench_id, hrb, lines

    try:
        bid = _bench_id(_bench_file(tmp_path))
        rows = lines(hrb("rows", bid, "--arm", "ask").stdout)
        out = lines(hrb("export", bid, "--format", "inspect", "-o", str(tmp_path / "logs")).stdout)[0]
        recs = lines(hrb("rows", bid, "--arm", "ask", "--format", "inspect-scores").stdout)
    finally:
        stop_daemon(_paths.home())
    log = read_eval_log(next(x for x in out["paths"] if x.endswith("_ask.json")))
    assert log.eval.run_id == bid and log.samples is not None and len(log.samples) == len(rows) == 15
    assert sorted((str(s.id), s.epoch, s.scores["exact_normalised"].value) for s in log.samples) == sorted(
        (r["item"], r["draw_index"], "C" if r["correct"] else "I") for r in rows
    )
    assert [EvalSampleScore.model_validate(x).value for x in recs] == [
        "C" if r["correct"] else "I" for r in rows
    ]
