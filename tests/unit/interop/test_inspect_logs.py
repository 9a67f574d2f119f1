"""Exported Inspect logs as Inspect's own tools expect them: names, header fields, ``.eval``, ids, usage.

Each check compares with what the real Inspect wrote (``data/inspect_capitals.*``, made by
``inspect eval tests/interop/inspect_tasks.py@capitals``, inspect-ai 0.3.285) or with the rule
Inspect's reader applies; ``tests/interop`` (``make test-interop``) runs Inspect's own readers,
``inspect log list`` and ``inspect view`` on the same exports.
"""

from __future__ import annotations

import io
import json
import re
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench.interop import imported_arm, imported_reference, inspect_logs, write_inspect_logs
from hrbench.records import Result, Row, Usage

DATA = Path(__file__).parent / "data"
THEIRS_JSON, THEIRS_EVAL = DATA / "inspect_capitals.json", DATA / "inspect_capitals.eval"

INSPECT_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*$")
"""``inspect_ai.log._file.log_file_pattern``: a ``.json`` log is listed only when its name matches."""


def _quiet(fn: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few runs: the report is descriptive
        return fn()


def _ref() -> Any:
    return hb.Reference({"q1": "France", "3": "Peru"}, labels=["Paris", "Lima"])


def _bench(**kw: Any) -> Any:
    ref = _ref()
    arms = [hb.Arm("good_v2", lambda item, ctx: {"France": "Paris", "Peru": "Lima"}[item]),
            hb.Arm("paris", lambda item, ctx: "Paris")]  # fmt: skip
    return _quiet(lambda: hb.benchmark(arms, ref, runs=2, **kw))


def _inspect_parts(name: str) -> tuple[str, str]:
    """The task and task id Inspect reads from a log's name (``_try_parse_filename``)."""
    parts = name.rsplit(".", 1)[0].split("_")
    last = 3 if len(parts) > 3 else 2
    return parts[1], parts[last].split("-")[0]


def test_logs_are_named_as_inspect_names_them(tmp_path: Path) -> None:
    """A ``.json`` log Inspect lists starts with an ISO timestamp (inspect_ai#1125; shared case H4-02)."""
    paths = _bench().to_inspect(tmp_path, name="caps_2")
    for path in paths:
        log = json.loads(path.read_text())
        assert INSPECT_NAME.match(path.name), path.name
        assert path.name.startswith(log["eval"]["created"].replace(":", "-").replace("+", "-"))
        task, task_id = _inspect_parts(path.name)
        assert (task, task_id) == ("caps-2", log["eval"]["task_id"])  # `_` cleaned to `-`, as Inspect does
        assert re.fullmatch(r"[0-9a-f]{22}", task_id)
        assert log["eval"]["created"].endswith("+00:00") and "." not in log["eval"]["created"]
    assert [p.name.split("_")[2] for p in paths] == ["good-v2", "paris"]
    assert len({_inspect_parts(p.name)[1] for p in paths}) == 2


def test_the_log_has_every_top_level_field_inspect_writes_in_its_order(tmp_path: Path) -> None:
    """Inspect's header-only reader stops at ``samples`` and needs ``plan`` (shared case H4-02)."""
    theirs = list(json.loads(THEIRS_JSON.read_text()))
    ours = list(json.loads(_bench().to_inspect(tmp_path, name="caps")[0].read_text()))
    assert (
        ours == theirs
    )  # version, status, eval, plan, results, stats, invalidated, tags, metadata, samples, reductions
    log = json.loads(_bench().to_inspect(tmp_path / "b", name="caps")[0].read_text())
    assert (
        log["plan"]["steps"][0]["solver"] == "hrbench"
        and log["plan"]["steps"][0]["params"]["arm"] == "good_v2"
    )
    [red] = log["reductions"]
    assert {r["sample_id"]: r["value"] for r in red["samples"]} == {"q1": 1.0, 3: 1.0}


def test_an_eval_log_is_the_zip_inspect_writes_and_imports_as_the_json_one(tmp_path: Path) -> None:
    b = _bench()
    [as_json, _] = b.to_inspect(tmp_path / "j", name="caps")
    [as_eval, _] = b.to_inspect(tmp_path / "e", name="caps", log_format="eval")
    assert as_eval.suffix == ".eval" and as_eval.stem.split("_", 1)[1] == as_json.stem.split("_", 1)[1]
    theirs = {re.sub(r"/.*", "/", n) for n in zipfile.ZipFile(THEIRS_EVAL).namelist()}
    ours = zipfile.ZipFile(as_eval)
    assert {
        re.sub(r"/.*", "/", n) for n in ours.namelist()
    } == theirs  # header, journal, samples, summaries, reductions
    header = json.loads(ours.read("header.json"))
    assert list(header) == list(json.loads(THEIRS_JSON.read_text()))[:9] and "samples" not in header
    assert sorted(n for n in ours.namelist() if n.startswith("samples/")) == [
        "samples/3_epoch_1.json", "samples/3_epoch_2.json", "samples/q1_epoch_1.json", "samples/q1_epoch_2.json",
    ]  # fmt: skip
    summaries = json.loads(ours.read("summaries.json"))
    assert [(s["id"], s["epoch"]) for s in summaries] == [
        ("q1", 1),
        (3, 1),
        ("q1", 2),
        (3, 2),
    ]  # the reference's order
    for p in (as_json, as_eval):
        assert imported_reference(p, "inspect").hash == _ref().hash  # the same reference back
    runs = [
        sorted((r.item, r.run, r.correct, r.outcome) for r in
               _quiet(lambda p=p: hb.benchmark(imported_arm("a", p, "inspect"), imported_reference(p, "inspect"), runs=2)).rows)
        for p in (as_json, as_eval)
    ]  # fmt: skip
    assert (
        runs[0]
        == runs[1]
        == sorted((r.item, r.run, r.correct, r.outcome) for r in b.rows if r.arm == "good_v2")
    )
    with pytest.raises(ValueError, match="log_format 'zip'"):
        b.to_inspect(tmp_path, log_format="zip")


def test_whole_number_ids_are_numbers_and_chats_are_messages(tmp_path: Path) -> None:
    """Inspect's own ids are numbers where they can be: a log from Inspect and back keeps them."""
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital of Peru?"}]
    ref = hb.Reference({"3": "France", "q1": chat, "007": "Chad"}, labels=["Paris", "Lima", "N'Djamena"])
    b = _quiet(lambda: hb.benchmark(hb.Arm("a", lambda item, ctx: "Paris"), ref, runs=1))
    log = json.loads(b.to_inspect(tmp_path)[0].read_text())
    by_id = {s["id"]: s for s in log["samples"]}
    assert set(by_id) == {3, "q1", "007"} and log["eval"]["dataset"]["sample_ids"] == [3, "q1", "007"]
    assert by_id["q1"]["input"] == chat and by_id["q1"]["messages"][:2] == chat
    assert by_id[3]["input"] == "France"
    again = imported_reference(b.to_inspect(tmp_path / "again")[0], "inspect")
    assert again.items == ref.items


def test_usage_is_written_in_inspects_convention() -> None:
    """Inspect's ``input_tokens`` leave out the cache reads (``ModelUsage``); hrbench's ``tokens_in`` holds them."""
    row = Row(cluster="q", item="q", arm="a", run=1, split="test", correct=True, outcome="x", failure_kind=None,
              tokens_in=100, tokens_out=30, tokens_reasoning=10, tokens_cached=60, usd=0.002, draw_index=1)  # fmt: skip
    log = json.loads(inspect_logs([row], task="t", labels={"q": "x"})["a"])
    used = log["samples"][0]["model_usage"]["a"]
    assert used == {"input_tokens": 40, "output_tokens": 30, "total_tokens": 130, "input_tokens_cache_read": 60,
                    "reasoning_tokens": 10, "total_cost": 0.002}  # fmt: skip
    assert log["stats"]["model_usage"]["a"]["input_tokens_cache_read"] == 60


def test_a_mock_models_usage_goes_out_and_back(tmp_path: Path) -> None:
    def reply(messages: Any, params: Any) -> Result:
        return Result(
            text="Paris", usage=Usage(tokens_in=12, tokens_out=3, tokens_cached=5, tokens_reasoning=1)
        )

    ref = hb.Reference({"q1": "France"}, labels=["Paris"])
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}?").text)
    b = _quiet(lambda: hb.benchmark(arm, ref, runs=2, client=hb.MockClient(reply)))
    [path] = b.to_inspect(tmp_path, log_format="eval")
    again = _quiet(
        lambda: hb.benchmark(
            imported_arm("ask", path, "inspect"), imported_reference(path, "inspect"), runs=2
        )
    )
    keep = ("item", "run", "correct", "tokens_in", "tokens_out", "tokens_cached", "tokens_reasoning")
    assert [[getattr(r, k) for k in keep] for r in again.rows] == [
        [getattr(r, k) for k in keep] for r in b.rows
    ]
    assert again.rows[0].tokens_in == 12 and again.rows[0].usd_provenance == "log"


def test_write_refuses_an_unknown_format(tmp_path: Path) -> None:
    logs = inspect_logs([Row(cluster="q", item="q", arm="a", run=1, split="test", correct=None, outcome=None,
                             failure_kind=None)], task="t")  # fmt: skip
    with pytest.raises(ValueError, match="expected one of json, eval"):
        write_inspect_logs(tmp_path, logs, log_format="zip")
    [path] = write_inspect_logs(tmp_path, logs, log_format="eval")
    assert zipfile.ZipFile(io.BytesIO(path.read_bytes())).testzip() is None


def test_hostile_ids_and_names_stay_inside_the_folder_and_the_zip(tmp_path: Path) -> None:
    ref = hb.Reference(
        {"../../etc/passwd": "France", "a/b": "Peru", "c\\d": "Chad"}, labels=["Paris", "Lima", "x"]
    )
    b = _quiet(lambda: hb.benchmark(hb.Arm("../arm", lambda item, ctx: "Paris"), ref, runs=1))
    [path] = b.to_inspect(tmp_path / "logs", name="../../task", log_format="eval")
    assert path.parent == tmp_path / "logs" and "/" not in path.name and ".._" not in path.name
    members = zipfile.ZipFile(path).namelist()
    assert all(m.startswith(("samples/", "_journal/")) or "/" not in m for m in members)
    assert not any(".." in m.split("/") or "\\" in m for m in members)
    assert "samples/a/b_epoch_1.json" in members  # as Inspect names it: a safe id keeps its name
    again = imported_reference(path, "inspect")
    assert again.items == ref.items


def test_malformed_usage_in_a_log_counts_nothing_and_no_cost(tmp_path: Path) -> None:
    data = json.loads(THEIRS_JSON.read_text())
    bad: list[Any] = [{"mockllm/model": {"input_tokens": -5, "output_tokens": True, "total_cost": float("inf")}},
                      {"mockllm/model": "lots"}, [], {"other": {"input_tokens": 7, "total_cost": -1}}]  # fmt: skip
    for s, used in zip(data["samples"], bad * 2, strict=False):
        s["model_usage"] = used
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data).replace("Infinity", "1e999"))
    b = _quiet(
        lambda: hb.benchmark(imported_arm("m", path, "inspect"), imported_reference(path, "inspect"), runs=2)
    )
    assert sorted(r.tokens_in for r in b.rows) == [0, 0, 0, 0, 0, 7] and {r.tokens_out for r in b.rows} == {0}
    assert b.summary()[0]["usd_list"] is None
