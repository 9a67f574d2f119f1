"""Other tools' results as outputs arms and references: Inspect logs, lm-eval samples, promptfoo results.

The Inspect logs under ``data/`` were written by a real ``inspect eval`` (inspect-ai 0.3, its
``mockllm/model`` on a 3-sample task, 2 epochs: ``tests/interop/_inspect_task.py``), one as
``.eval`` (zstd members), one as ``.json``; the lm-eval and promptfoo files follow the formats
those tools document (lm-eval 0.4 ``samples_*.jsonl``, promptfoo results version 3).
"""

from __future__ import annotations

import json
import warnings
import zipfile
from pathlib import Path
from typing import Any

import msgspec
import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.interop._imported import imported_arm, imported_reference, read_imported
from hrbench.specs import build_arm, build_reference
from hrbench_client import protocol as p

DATA = Path(__file__).parent / "data"
EVAL, JSON = DATA / "inspect_capitals.eval", DATA / "inspect_capitals.json"
LMEVAL = DATA / "samples_arith_2026-12-02T05-00-00.jsonl"
CHOICE = DATA / "samples_choice_2026-12-02T05-00-00.jsonl"
REAL_LMEVAL = DATA / "lmeval_real_samples_arith.jsonl"  # lm-eval 0.4.13 wrote it (tests/interop/lmeval_arith)
PROMPTFOO = DATA / "promptfoo_capitals.json"


def _bench(arm: hb.Arm, ref: hb.Reference, runs: int) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few runs, arm errors: counted in the rows
        return hb.benchmark(arm, ref, runs=runs)


def _inspect_verdicts(log: Path) -> dict[tuple[str, int], bool]:
    """What Inspect's own scorer said of each sample of the .json log (C or I)."""
    data = json.loads(log.read_text())
    return {(str(s["id"]), s["epoch"]): s["scores"]["exact"]["value"] == "C" for s in data["samples"]}


@pytest.mark.parametrize("log", [EVAL, JSON], ids=["eval", "json"])
def test_an_inspect_log_imports_as_an_arm_with_inspects_verdicts(log: Path) -> None:
    assert {i.compress_type for i in zipfile.ZipFile(EVAL).infolist()} == {93}  # zstd members
    ref = imported_reference(log, "inspect")
    assert ref.items == {"q1": "Capital of France?", "q2": "Capital of Peru?", "3": "Capital of Chile?"}
    assert ref.labels == {"q1": "Paris", "q2": "Lima", "3": "Santiago"}
    b = _bench(imported_arm("mock", log, "inspect"), ref, runs=2)
    got = {(r.item, r.run): r.correct for r in b.rows}
    assert got == _inspect_verdicts(JSON) and got[("q2", 1)] is False and sum(got.values()) == 5
    assert [r.outcome for r in b.rows if r.item == "q2"] == ["cusco", "lima"]


def test_an_inspect_log_of_another_version_is_refused_by_name(tmp_path: Path) -> None:
    data = json.loads(JSON.read_text())
    data["version"] = 3
    (tmp_path / "v3.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=r"format version 3; this reader knows version 2"):
        read_imported(tmp_path / "v3.json", "inspect")
    (tmp_path / "x.eval").write_text("not a zip")
    with pytest.raises(ConfigError, match="not an Inspect .eval log"):
        read_imported(tmp_path / "x.eval", "inspect")
    data["version"], data["samples"] = 2, None  # a log written without its samples
    (tmp_path / "bare.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="holds no samples"):
        read_imported(tmp_path / "bare.json", "inspect")
    (tmp_path / "other.json").write_text('{"results": []}')
    with pytest.raises(ConfigError, match="no `eval` field"):
        read_imported(tmp_path / "other.json", "inspect")


def test_inspect_ids_follow_the_outputs_rules(tmp_path: Path) -> None:
    """An item the log lacks refuses the benchmark before its first run, or is an error run."""
    ref = hb.Reference({"q1": "a", "q2": "b", "3": "c", "q4": "d"}, labels=["Paris", "Lima", "Santiago", "x"])
    with pytest.raises(ConfigError, match="q4"):
        _bench(imported_arm("mock", EVAL, "inspect"), ref, runs=2)
    b = _bench(imported_arm("mock", EVAL, "inspect", missing="error"), ref, runs=2)
    assert [(r.run, r.failure_kind) for r in b.rows if r.item == "q4"] == [(1, "error"), (2, "error")]
    with pytest.raises(ConfigError, match="run"):  # 2 epochs in the log, 3 runs asked
        _bench(imported_arm("mock", EVAL, "inspect"), imported_reference(EVAL, "inspect"), runs=3)
    data = json.loads(JSON.read_text())
    data["samples"].append(data["samples"][0])
    (tmp_path / "twice.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="has run 1 twice"):
        read_imported(tmp_path / "twice.json", "inspect")
    data["samples"][-1] = {**data["samples"][0], "epoch": 3, "target": "Lyon"}
    (tmp_path / "mismatch.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="another input or target"):
        read_imported(tmp_path / "mismatch.json", "inspect")


def test_a_failed_inspect_sample_is_an_error_run(tmp_path: Path) -> None:
    data = json.loads(JSON.read_text())
    first = next(s for s in data["samples"] if s["id"] == "q1" and s["epoch"] == 2)
    first["error"] = {"message": "RuntimeError('sandbox died')", "traceback": "", "traceback_ansi": ""}
    (tmp_path / "err.json").write_text(json.dumps(data))
    b = _bench(imported_arm("mock", tmp_path / "err.json", "inspect"), imported_reference(JSON, "inspect"), 2)
    [row] = [r for r in b.rows if (r.item, r.run) == ("q1", 2)]
    assert row.failure_kind == "error" and "ImportedRunError" in (b.error_note() or "")
    assert any("sandbox died" in (s.error or "") for s in b.traces[row.ledger_id])


def test_inspects_empty_target_is_no_label_and_a_choices_text_is_the_output(tmp_path: Path) -> None:
    """Inspect's default target (``""``, or ``[]``) is no label; an empty ``completion`` falls to the choice's text."""
    data = json.loads(JSON.read_text())
    for s in data["samples"]:
        if s["id"] == "q1":
            s["target"] = ""
        if s["id"] == "q2":
            s["target"] = []
        if (str(s["id"]), s["epoch"]) == ("3", 1):  # a completion left empty, the text in its message parts
            s["output"]["completion"] = ""
            s["output"]["choices"][0]["message"]["content"] = [
                {"type": "reasoning", "reasoning": "Chile's capital..."},
                {"type": "text", "text": "Valparaiso"},
            ]
        if (str(s["id"]), s["epoch"]) == ("3", 2):
            s["output"]["completion"] = ""
            s["output"]["choices"][0]["message"]["content"] = "Santiago"
    (tmp_path / "targets.json").write_text(json.dumps(data))
    found = read_imported(tmp_path / "targets.json", "inspect")
    assert found.labels == {"q1": None, "q2": None, "3": "Santiago"}
    assert found.arms["mockllm/model"]["3"] == ["Valparaiso", "Santiago"]
    ref = imported_reference(tmp_path / "targets.json", "inspect")
    b = _bench(imported_arm("mock", tmp_path / "targets.json", "inspect"), ref, runs=2)
    assert {(r.item, r.run): r.correct for r in b.rows} == {
        ("q1", 1): None, ("q1", 2): None, ("q2", 1): None, ("q2", 2): None, ("3", 1): False, ("3", 2): True,
    }  # fmt: skip


def test_lm_eval_samples_one_arm_per_filter_repeats_as_runs() -> None:
    with pytest.raises(ConfigError, match=r"holds 2 arms, \['strict-match', 'flexible-extract'\]: name one"):
        imported_arm("lm", LMEVAL, "lm-eval")
    with pytest.raises(ConfigError, match="did you mean 'strict-match'"):
        imported_arm("lm", LMEVAL, "lm-eval", source_arm="strict-matc")
    ref = imported_reference(LMEVAL, "lm-eval")
    assert ref.labels == {"0": "7", "1": "12", "2": "6"} and ref.items["1"]["question"].startswith("A box")
    strict = _bench(imported_arm("lm", LMEVAL, "lm-eval", source_arm="strict-match"), ref, runs=2)
    assert [(r.item, r.run, r.correct) for r in strict.rows] == [
        ("0", 1, True), ("0", 2, True), ("1", 1, True), ("1", 2, False), ("2", 1, True), ("2", 2, False),
    ]  # fmt: skip
    # lm-eval's own exact_match per line is the mean over the repeats
    lm = [json.loads(x) for x in LMEVAL.read_text().splitlines()]
    for line in (x for x in lm if x["filter"] == "strict-match"):
        rows = [r.correct for r in strict.rows if r.item == str(line["doc_id"])]
        assert sum(rows) / len(rows) == line["exact_match"]


def test_a_real_lm_eval_samples_file_scores_as_lm_eval_scored_it() -> None:
    ref = imported_reference(REAL_LMEVAL, "lm-eval")
    b = _bench(imported_arm("lm", REAL_LMEVAL, "lm-eval"), ref, runs=2)
    assert [(r.item, r.run, r.outcome, r.correct) for r in b.rows] == [
        ("0", 1, "7", True), ("0", 2, "7", True), ("1", 1, "12", True), ("1", 2, "13", False),
        ("2", 1, "6", True), ("2", 2, "6", True),
    ]  # fmt: skip
    theirs = json.loads((DATA / "lmeval_real_results_arith.json").read_text())["results"]["arith"]
    assert b.summary()[0]["accuracy"] == pytest.approx(theirs["exact_match,all"])


def test_lm_eval_multiple_choice_is_the_likeliest_choice() -> None:
    ref = imported_reference(CHOICE, "lm-eval")
    b = _bench(imported_arm("lm", CHOICE, "lm-eval"), ref, runs=1)
    lm = [json.loads(x) for x in CHOICE.read_text().splitlines()]
    assert [r.correct for r in b.rows] == [bool(x["acc"]) for x in lm] == [True, False]


def test_lm_eval_malformed_lines_are_refused_naming_the_line(tmp_path: Path) -> None:
    lines = LMEVAL.read_text().splitlines()
    (tmp_path / "twice.jsonl").write_text("\n".join([lines[0], lines[0]]))
    with pytest.raises(ConfigError, match=r"line 2: document '0' is given twice for filter 'strict-match'"):
        read_imported(tmp_path / "twice.jsonl", "lm-eval")
    rec = json.loads(lines[0])
    del rec["filtered_resps"], rec["filter"]
    (tmp_path / "old.jsonl").write_text(json.dumps(rec))
    with pytest.raises(
        ConfigError, match="line 1: lacks filtered_resps, filter: not a samples file as lm-eval 0.4"
    ):
        read_imported(tmp_path / "old.jsonl", "lm-eval")
    other = json.loads(lines[3])
    other["doc_id"], other["target"] = 0, "8"
    (tmp_path / "mismatch.jsonl").write_text("\n".join([lines[0], json.dumps(other)]))
    with pytest.raises(ConfigError, match="another doc or target"):
        read_imported(tmp_path / "mismatch.jsonl", "lm-eval")


def test_promptfoo_one_arm_per_provider_and_prompt_repeats_and_errors() -> None:
    found = read_imported(PROMPTFOO, "promptfoo")
    assert sorted(found.arms) == ["echo-bad | capital: {{country}}", "echo-good | capital: {{country}}"]
    ref = imported_reference(PROMPTFOO, "promptfoo")
    assert ref.labels == {"q1": "Paris", "q2": "Lima"} and ref.items["q2"]["country"] == "Peru"
    bad = _bench(
        imported_arm("bad", PROMPTFOO, "promptfoo", source_arm="echo-bad | capital: {{country}}"), ref, 2
    )
    assert [(r.item, r.run, r.correct, r.failure_kind) for r in bad.rows] == [
        ("q1", 1, True, None), ("q1", 2, False, "error"), ("q2", 1, False, "wrong"), ("q2", 2, True, None),
    ]  # fmt: skip
    [failed] = [r for r in bad.rows if r.failure_kind == "error"]
    assert any("500 Internal Server Error" in (s.error or "") for s in bad.traces[failed.ledger_id])
    # promptfoo's own verdicts agree on the runs that did not fail
    data = json.loads(PROMPTFOO.read_text())["results"]["results"]
    theirs = sorted(
        (r["vars"]["id"], r["testIdx"] // 2, r["success"])
        for r in data
        if r["provider"]["label"] == "echo-bad"
    )
    assert [(i, n + 1, ok) for i, n, ok in theirs] == [(r.item, r.run, r.correct) for r in bad.rows]


def test_a_promptfoo_result_that_failed_with_an_error_is_an_error_run_whatever_its_output(
    tmp_path: Path,
) -> None:
    """promptfoo's ``failureReason`` 2 (ERROR: an assertion or a transform that threw) is an error run, not its output scored."""
    data = json.loads(PROMPTFOO.read_text())
    good = [r for r in data["results"]["results"] if r["provider"]["label"] == "echo-good"]
    first = min(good, key=lambda r: r["testIdx"])
    assert first["response"]["output"] == "Paris" and first["failureReason"] == 0
    first.update(success=False, failureReason=2, error="Error: the transform threw: x is undefined")
    (tmp_path / "threw.json").write_text(json.dumps(data))
    arm = imported_arm(
        "good", tmp_path / "threw.json", "promptfoo", source_arm="echo-good | capital: {{country}}"
    )
    b = _bench(arm, imported_reference(PROMPTFOO, "promptfoo"), 2)
    [row] = [r for r in b.rows if r.failure_kind == "error"]
    assert (row.item, row.run, row.correct) == (first["vars"]["id"], 1, False)
    assert any("the transform threw" in (s.error or "") for s in b.traces[row.ledger_id])


def test_promptfoo_version_ids_and_vars_are_checked(tmp_path: Path) -> None:
    data = json.loads(PROMPTFOO.read_text())
    data["results"]["version"] = 2
    (tmp_path / "v2.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=r"results.version 2; this reader knows results.version 3"):
        read_imported(tmp_path / "v2.json", "promptfoo")
    with pytest.raises(
        ConfigError,
        match=r"^id_var: results.results\[0\] \(test 0\) of .* has no variable 'qid'; "
        r"its vars: country, expected, id \(got 'qid'\)$",
    ):
        read_imported(PROMPTFOO, "promptfoo", id_var="qid")
    data = json.loads(PROMPTFOO.read_text())
    data["results"]["results"][4]["vars"] = {**data["results"]["results"][4]["vars"], "country": "Spain"}
    (tmp_path / "dup.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="two tests have the id 'q1' with different variables"):
        read_imported(tmp_path / "dup.json", "promptfoo")


def test_spec_arms_and_references_read_the_formats() -> None:
    """The TOML/wire path: `format` and `source_arm` on an outputs arm, `format` on a reference."""
    spec = {
        "kind": "outputs",
        "name": "lm",
        "path": str(LMEVAL),
        "format": "lm-eval",
        "source_arm": "strict-match",
    }
    wire = msgspec.convert(spec, p.OutputsArmSpec)  # the daemon's decoder accepts the fields
    assert (wire.format, wire.source_arm) == ("lm-eval", "strict-match")
    arm = build_arm(spec)
    ref = build_reference({"path": str(LMEVAL), "format": "lm-eval"})
    assert msgspec.convert({"path": "x", "format": "promptfoo"}, p.ReferenceSpec).format == "promptfoo"
    assert sum(r.correct is True for r in _bench(arm, ref, runs=2).rows) == 4
    with pytest.raises(ConfigError, match="`inspect` reads a results file: give `path`"):
        build_arm({"kind": "outputs", "name": "x", "outputs": {"q1": "a"}, "format": "inspect"})
    with pytest.raises(ConfigError, match="arm.path: cannot read the results"):
        build_arm({"kind": "outputs", "name": "x", "path": "/nonexistent/log.json", "format": "inspect"})
    with pytest.raises(ConfigError, match="expected one of"):
        build_arm({"kind": "outputs", "name": "x", "path": str(JSON), "format": "inspectt"})


def _renamed(tmp_path: Path, drop: int | None = None) -> Path:
    """The promptfoo fixture with each test's id under `question_id`; result ``drop`` without it."""
    data = json.loads(PROMPTFOO.read_text())
    for n, r in enumerate(data["results"]["results"]):
        for where in (r["vars"], r["testCase"]["vars"]):
            qid = where.pop("id")
            if n != drop:
                where["question_id"] = qid
    path = tmp_path / ("renamed.json" if drop is None else "dropped.json")
    path.write_text(json.dumps(data))
    return path


def test_promptfoo_ids_come_from_the_variable_id_var_names(tmp_path: Path) -> None:
    renamed = _renamed(tmp_path)
    bad = "echo-bad | capital: {{country}}"
    ref_spec = {"path": str(renamed), "format": "promptfoo", "id_var": "question_id"}
    arm_spec = {"kind": "outputs", "name": "bad", "path": str(renamed), "format": "promptfoo"}
    arm_spec |= {"source_arm": bad, "id_var": "question_id"}
    assert msgspec.convert(ref_spec, p.ReferenceSpec).id_var == "question_id"  # the daemon's decoder
    assert msgspec.convert(arm_spec, p.OutputsArmSpec).id_var == "question_id"
    ref = build_reference(ref_spec)
    assert ref.ids == ["q1", "q2"] and ref.labels == {"q1": "Paris", "q2": "Lima"}
    got = _bench(build_arm(arm_spec), ref, runs=2)
    # the same runs as the file whose variable is `id` (test_promptfoo_one_arm_per_provider_...)
    assert [(r.item, r.run, r.correct, r.failure_kind) for r in got.rows] == [
        ("q1", 1, True, None), ("q1", 2, False, "error"), ("q2", 1, False, "wrong"), ("q2", 2, True, None),
    ]  # fmt: skip
    # an arm's id_field is read as its id_var (as before id_var), unless the two differ
    legacy = {**arm_spec, "id_field": "question_id"}
    del legacy["id_var"]
    assert build_arm(legacy).settings["outputs"] == build_arm(arm_spec).settings["outputs"]
    with pytest.raises(ConfigError, match="^arm.id_field: and id_var 'question_id' name two id variables"):
        build_arm({**arm_spec, "id_field": "id"})
    # the default is `id`, which this file's tests lack: refused, naming the field and its value
    with pytest.raises(
        ConfigError, match=r"^reference.id_var: results.results\[0\] \(test 0\) .* no variable 'id'"
    ):
        build_reference({"path": str(renamed), "format": "promptfoo"})


def test_a_result_without_the_id_var_variable_is_refused_naming_it(tmp_path: Path) -> None:
    dropped = _renamed(tmp_path, drop=3)
    with pytest.raises(ConfigError) as err:
        build_reference({"path": str(dropped), "format": "promptfoo", "id_var": "question_id"})
    assert err.value.field == "reference.id_var"
    assert str(err.value) == (
        f"reference.id_var: results.results[3] (test 1) of {dropped} has no variable 'question_id'; "
        "its vars: country, expected (got 'question_id')"
    )
    arm = {
        "kind": "outputs",
        "name": "x",
        "path": str(dropped),
        "format": "promptfoo",
        "id_var": "question_id",
    }
    with pytest.raises(ConfigError, match=r"^arm.id_var: results.results\[3\] \(test 1\)"):
        build_arm({**arm, "source_arm": "echo-bad | capital: {{country}}"})
    data = json.loads(dropped.read_text())
    data["results"]["results"][3]["vars"]["question_id"] = ""
    (tmp_path / "empty.json").write_text(json.dumps(data))
    with pytest.raises(
        ConfigError, match=r"^id_var: results.results\[3\] .*: its variable holds '', not an id"
    ):
        read_imported(tmp_path / "empty.json", "promptfoo", id_var="question_id")


def test_id_var_is_refused_where_no_promptfoo_variable_is_read() -> None:
    with pytest.raises(
        ConfigError, match="^reference.id_var: names a promptfoo test variable; the items of inspect results"
    ):
        build_reference({"path": str(JSON), "format": "inspect", "id_var": "question_id"})
    with pytest.raises(
        ConfigError, match="^reference.id_var: names a promptfoo test variable; this reference's"
    ):
        build_reference({"path": str(LMEVAL), "format": "rows", "id_var": "question_id"})
    with pytest.raises(ConfigError, match="^reference.id_var: reads a promptfoo results file: give `path`"):
        build_reference({"items": {"q1": "a"}, "id_var": "question_id"})
    with pytest.raises(
        ConfigError, match='^arm.id_var: names a promptfoo test variable: give format = "promptfoo"'
    ):
        build_arm({"kind": "outputs", "name": "x", "outputs": {"q1": "a"}, "id_var": "question_id"})
    with pytest.raises(
        ConfigError, match="^arm.id_var: names a promptfoo test variable; the items of lm-eval results"
    ):
        build_arm({"kind": "outputs", "name": "x", "path": str(LMEVAL), "format": "lm-eval", "id_var": "q"})
