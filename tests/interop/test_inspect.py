"""hrbench and the real Inspect: logs hrbench writes are read by Inspect, logs Inspect writes are arms.

Run by ``make test-interop`` in ``.venv-interop`` (inspect-ai 0.3.285 installed); excluded from
``make test``, whose venv has no inspect-ai. Inspect writes its logs here with its own CLI
(``inspect eval tests/interop/inspect_tasks.py@TASK``, offline, ``mockllm/model``), into
pytest's temporary folders; its own tools read hrbench's exports: ``read_eval_log`` (whole and
header only), ``list_eval_logs``, ``inspect log list``, ``evals_df`` and ``samples_df``, and the
log list the ``inspect view`` server serves.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.parse
import urllib.request
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from inspect_ai.analysis import evals_df, samples_df
from inspect_ai.log import EvalSampleScore, list_eval_logs, read_eval_log

import hrbench as hb
from hrbench.interop._imported import imported_arm, imported_reference
from hrbench.records import Result, Usage
from hrbench.stats import report_payload
from hrbench_client.export import inspect_score
from tests._slow import slow
from tests.interop.conftest import inspect_cli, inspect_env

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
    fmt: str, run_inspect: Callable[..., Path]
) -> None:
    path = run_inspect("capitals", fmt)
    assert path.suffix == f".{fmt}"
    theirs = read_eval_log(str(path))
    verdicts = {(str(s.id), s.epoch): s.scores["exact"].value == "C" for s in theirs.samples or []}
    assert len(verdicts) == 6 and sorted(verdicts.values()) == [False, True, True, True, True, True]
    ref = imported_reference(path, "inspect")
    b = _quiet(lambda: hb.benchmark(imported_arm("mock", path, "inspect"), ref, runs=2))
    assert {(r.item, r.run): r.correct for r in b.rows} == verdicts


def test_inspect_to_hrbench_to_inspect_keeps_ids_epochs_and_scores(
    run_inspect: Callable[..., Path], tmp_path: Path
) -> None:
    first = run_inspect("capitals", "eval")
    theirs = read_eval_log(str(first))
    ref = imported_reference(first, "inspect")
    b = _quiet(lambda: hb.benchmark(imported_arm("mock", first, "inspect"), ref, runs=2))
    [back] = b.to_inspect(tmp_path / "back", name="capitals")
    again = read_eval_log(str(back))

    def key(log: Any, scorer: str) -> list[tuple[str, int, Any]]:
        return sorted((str(s.id), s.epoch, s.scores[scorer].value) for s in log.samples)

    assert key(again, b.scorer_name) == key(theirs, "exact")

    def mapped(log: Any) -> dict[tuple[Any, int], Any]:
        """Each sample field hrbench maps: id (its type too), epoch, input, target, output, usage, error."""
        return {
            (s.id, s.epoch): (s.input, s.target, s.output.completion, s.error,
                              {m: (u.input_tokens, u.output_tokens, u.total_cost) for m, u in s.model_usage.items()})
            for s in log.samples
        }  # fmt: skip

    assert mapped(again) == mapped(theirs) and len(mapped(theirs)) == 6
    assert again.eval.model == theirs.eval.model == "mockllm/model"
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
    log = read_eval_log(next(x for x in out["paths"] if "_ask_" in Path(x).name))
    assert log.eval.run_id == bid and log.samples is not None and len(log.samples) == len(rows) == 15
    assert sorted((str(s.id), s.epoch, s.scores["exact_normalised"].value) for s in log.samples) == sorted(
        (r["item"], r["draw_index"], "C" if r["correct"] else "I") for r in rows
    )
    assert [EvalSampleScore.model_validate(x).value for x in recs] == [
        "C" if r["correct"] else "I" for r in rows
    ]


def _capitals(runs: int = 2) -> Any:
    """A benchmark with an unlabelled item, an error run, tokens and clusters, on a mock model."""

    def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> Result:
        asked = messages[-1]["content"]
        if "Oman" in asked and params["draw_index"] == 2:
            raise RuntimeError("the model fell over")
        text = {"France": "Paris", "Peru": "Cusco", "Chad": "Lyon", "Oman": "Muscat"}[asked.split()[-1]]
        return Result(text=text, usage=Usage(tokens_in=20, tokens_out=2, tokens_cached=8))

    ref = hb.Reference(
        {"q1": "France", "2": "Peru", "q3": "Chad", "q4": "Oman"},
        labels={"q1": "Paris", "2": "Lima", "q3": None, "q4": "Muscat"},
        cluster={"q1": "eu", "2": "am", "q3": "af", "q4": "as"},
    )
    arms = [
        hb.Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}").text),
        hb.Arm("paris", lambda i, c: "Paris"),
    ]
    return _quiet(lambda: hb.benchmark(arms, ref, runs=runs, client=hb.MockClient(reply)))


@pytest.mark.parametrize("fmt", ["json", "eval"])
def test_H4_02_an_exported_log_is_read_header_only_by_inspect(fmt: str, tmp_path: Path) -> None:
    """Shared case H4-02: every header field Inspect's header reader needs (``plan``; inspect_ai PR#4367)."""
    paths = _capitals().to_inspect(tmp_path, name="caps", log_format=fmt)
    for path in paths:
        header = read_eval_log(str(path), header_only=True)  # raised "Must encounter a 'plan'"
        assert header.eval.task == "caps" and header.samples is None and header.status == "success"
        assert header.plan.steps[0].solver == "hrbench" and header.results is not None
        assert header.eval.task_id == path.stem.split("_")[-1]


@pytest.mark.parametrize("fmt", ["json", "eval"])
def test_inspects_tools_list_the_exports_one_row_per_arm_and_sample(
    fmt: str, tmp_path: Path, tiktoken_cache: Path
) -> None:
    b = _capitals()
    paths = b.to_inspect(tmp_path / "logs", name="caps", log_format=fmt)
    listed = list_eval_logs(str(tmp_path / "logs"))
    assert sorted(Path(x.name.removeprefix("file://")).name for x in listed) == sorted(p.name for p in paths)
    assert {(x.task, x.task_id) for x in listed} == {("caps", p.stem.split("_")[-1]) for p in paths}
    proc = subprocess.run(
        [inspect_cli(), "log", "list", "--json", "--absolute", "--log-dir", str(tmp_path / "logs")],
        capture_output=True, text=True, env=inspect_env(tiktoken_cache, tmp_path / "logs"), timeout=slow(120),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(Path(x["name"].removeprefix("file://")).name for x in json.loads(proc.stdout)) == sorted(
        p.name for p in paths
    )
    evals = evals_df(str(tmp_path / "logs"), quiet=True)
    assert sorted(evals["model"]) == ["mock", "paris"] and set(evals["task_name"]) == {
        "caps"
    }  # one row per arm
    with warnings.catch_warnings():  # inspect-ai 0.3.285's own pandas call: drop_duplicates(inplace=True)
        warnings.filterwarnings("ignore", message="The inplace keyword in DataFrame.drop_duplicates")
        samples = samples_df(str(tmp_path / "logs"), quiet=True)  # one row per sample: per arm, item and run
    arm_of = {e: e.split("-", 1)[1] for e in evals["eval_id"]}
    got = sorted(
        zip(samples["eval_id"].map(arm_of), samples["id"].astype(str), samples["epoch"], strict=True)
    )
    assert got == sorted((r.arm, r.item, r.draw_index) for r in b.rows) and len(got) == 16


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=slow(10)) as reply:  # noqa: S310 (127.0.0.1 only)
        return json.loads(reply.read())


def test_the_inspect_view_server_lists_and_reads_the_exports(tmp_path: Path, tiktoken_cache: Path) -> None:
    """``inspect view`` lists logs at ``/api/log-files`` and reads their headers at ``/api/log-headers``."""
    b = _capitals()
    paths = b.to_inspect(tmp_path / "logs", name="caps") + b.to_inspect(
        tmp_path / "logs", name="caps", log_format="eval"
    )
    port = _free_port()
    view = subprocess.Popen(
        [inspect_cli(), "view", "--log-dir", str(tmp_path / "logs"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=inspect_env(tiktoken_cache, tmp_path / "logs"),
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}/api"
        deadline = time.monotonic() + slow(60)
        while True:
            try:
                files = _get(f"{base}/log-files")["files"]
                break
            except OSError:
                assert view.poll() is None and time.monotonic() < deadline, "inspect view did not start"
                time.sleep(0.25)
        names = [f["name"] for f in files]
        assert sorted(Path(n.removeprefix("file://")).name for n in names) == sorted(p.name for p in paths)
        assert {f["task"] for f in files} == {"caps"}
        query = urllib.parse.urlencode([("file", n) for n in names])
        headers = _get(f"{base}/log-headers?{query}")
        assert len(headers) == 4 and {h["eval"]["task"] for h in headers} == {"caps"}
        assert {h["eval"]["metadata"]["arm"] for h in headers} == {"ask", "paris"}
        assert all(h["plan"]["steps"][0]["solver"] == "hrbench" for h in headers)
    finally:
        view.terminate()
        try:
            view.wait(timeout=slow(20))
        except subprocess.TimeoutExpired:
            view.kill()
            view.wait()


def test_hrbench_to_inspect_to_hrbench_with_inspects_reader(tmp_path: Path) -> None:
    """Inspect's reader takes each export whole; imported again, the rows are the same (errors, usage, clusters, runs)."""
    b = _capitals()
    keep = ("cluster", "item", "run", "split", "correct", "outcome", "failure_kind", "tokens_in", "tokens_out",
            "tokens_cached", "draw_index")  # fmt: skip
    for fmt in ("json", "eval"):
        for path in b.to_inspect(tmp_path / fmt, name="caps", log_format=fmt):
            log = read_eval_log(str(path))
            arm = log.eval.metadata["arm"]
            assert {str(s.id): s.target for s in log.samples}["q3"] == ""  # Inspect's default: no target
            ask = [s for s in log.samples if str(s.id) == "q4" and s.epoch == 2]
            if arm == "ask":
                assert ask[0].error is not None and "fell over" in ask[0].error.message
                assert {s.model_usage["mock"].input_tokens for s in log.samples if s.error is None} == {12}
            ref = imported_reference(path, "inspect")
            assert ref.labels["q3"] is None and ref.clusters == b.reference.clusters
            again = _quiet(
                lambda p=path, r=ref, a=arm: hb.benchmark(imported_arm(a, p, "inspect"), r, runs=2)
            )
            mine = sorted(tuple(getattr(r, k) for k in keep) for r in b.rows if r.arm == arm)
            assert sorted(tuple(getattr(r, k) for k in keep) for r in again.rows) == mine


def test_H4_16_a_sample_retried_by_inspect_is_one_successful_run(run_inspect: Callable[..., Path]) -> None:
    """Shared case H4-16: ``inspect eval --retry-on-error=1``; q1 epoch 1 failed once, then succeeded."""
    path = run_inspect("retry", "eval", 2, "--retry-on-error=1")
    theirs = {(str(s.id), s.epoch): s for s in read_eval_log(str(path)).samples or []}
    assert len(theirs[("q1", 1)].error_retries or []) == 1 and theirs[("q1", 1)].error is None
    b = _quiet(
        lambda: hb.benchmark(
            imported_arm("mock", path, "inspect"), imported_reference(path, "inspect"), runs=2
        )
    )
    assert len(b.rows) == 4
    [row] = [r for r in b.rows if (r.item, r.run) == ("q1", 1)]
    assert (row.correct, row.failure_kind) == (True, None)


def test_H4_17_epochs_inspect_stopped_early_refuse_the_benchmark(run_inspect: Callable[..., Path]) -> None:
    """Shared case H4-17: Inspect's early stopping left out epochs 3-4 of samples 3 and q1."""
    from hrbench.errors import ConfigError

    path = run_inspect("early", "eval", 4)
    epochs = sorted((str(s.id), s.epoch) for s in read_eval_log(str(path)).samples or [])
    assert epochs == [("3", 1), ("3", 2), ("q1", 1), ("q1", 2), ("q2", 1), ("q2", 2), ("q2", 3), ("q2", 4)]
    with pytest.raises(ConfigError) as err:
        _quiet(
            lambda: hb.benchmark(
                imported_arm("mock", path, "inspect"), imported_reference(path, "inspect"), runs=4
            )
        )
    said = str(err.value).replace("'", "")
    assert (
        "3 has 2 (missing runs 3, 4)" in said and "q1 has 2 (missing runs 3, 4)" in said and "q2" not in said
    )
