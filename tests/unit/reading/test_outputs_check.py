"""Outputs arms refused before the first run: ids matching no item are not scored 0 with exit 0
and no warning; a duplicate line in a predictions file is not kept silently."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.reading import check_outputs, outputs_arm
from hrbench.runner import error_note
from hrbench.runner._benchmark import MISSING_OUTPUT_ADVICE
from hrbench.specs import build_arm, build_reference

ITEMS = {"q1": "France", "q2": "Peru", "q3": "Chad"}
REF = {"items": ITEMS, "labels": ["Paris", "Lima", "N'Djamena"]}


def _run(arm: hb.Arm, reference: dict[str, Any] = REF) -> hb.Benchmark:
    return hb.benchmark(arm, build_reference(reference), runs=3)


@pytest.mark.parametrize(
    ("outputs", "shown"),
    [
        ({"Q1": "Paris", "q2": "Lima", "q3": "x"}, "'Q1' (closest item: 'q1')"),  # the key's case differs
        ({"q1": "P", "q2": "L", "q3": "N", "Q1": "x", "Q2": "y", "Q3": "z", "Q4": "w"}, "and 1 more"),
        ({"q1 ": "Paris", "q1": "P", "q2": "Lima", "q3": "x"}, "'q1 ' (closest item: 'q1')"),
        ({"q1": "Paris", "q2": "Lima", "q3": "x", "q9": "Lima"}, "'q9'"),
        ({"a": "Paris"}, "'a'"),
    ],
)
def test_an_outputs_arm_with_ids_of_no_item_is_refused_before_the_first_run(
    outputs: dict[str, str], shown: str, tmp_path: Path
) -> None:
    """Inline, as a mapping and as a file: one rule, the field and the file named."""
    arm = build_arm({"kind": "outputs", "name": "base", "outputs": outputs})
    with pytest.raises(ConfigError) as err:
        _run(arm)
    assert err.value.field == "arms[0].outputs" and shown in str(err.value)
    assert "output id(s) match no item of the reference" in str(err.value)
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": k, "prediction": v}) + "\n" for k, v in outputs.items()))
    spec = {"kind": "outputs", "name": "base", "path": str(preds), "id_field": "id"}
    with pytest.raises(ConfigError) as err:
        _run(build_arm(spec))
    assert err.value.field == "arms[0].path" and shown in str(err.value)
    assert "arm 'base', preds.jsonl:" in str(err.value)
    with pytest.raises(ConfigError) as err:
        _run(outputs_arm("base", outputs))
    assert err.value.field == "arms[0].outputs" and shown in str(err.value)


@pytest.mark.parametrize(
    ("ids", "per_run", "refused"),
    [
        (["q1", "q2", "q3"], None, None),
        (["q1", "q2", "q3", "q4"], None, None),  # another split's item: an item of the reference
        (["q1"], None, "2 of 3 item(s) run have no output: 'q2', 'q3'"),
        (["q1", "q2", "q3", "zz"], None, "1 of 4 output id(s) match no item of the reference: 'zz'"),
        (["Q1", "Q2"], None, "3 of 3 item(s) run have no output"),
        (["q1", "Q2", "q3"], None, "'Q2' (closest item: 'q2')"),
        (["q4"], None, "3 of 3 item(s) run have no output"),  # another split's items only
        (
            ["q1", "q2", "q3"],
            {"q1": ["a", "b"]},
            "1 item(s) have fewer outputs than the 3 run(s): 'q1' has 2 (missing run 3)",
        ),
        (["q1", "q2", "q3"], {"q1": ["a", "NO", "c"]}, "'q1' has 2 (missing run 2)"),
        (["q1", "q2", "q3"], {"q1": ["a", "b", "c", "d"]}, None),  # more outputs than runs: the first ones
    ],
)
def test_check_outputs_rule_family(
    ids: list[str], per_run: dict[str, list[str]] | None, refused: str | None
) -> None:
    from hrbench.reading import NO_OUTPUT

    run = {"q1": "France", "q2": "Peru", "q3": "Chad"}
    known = [*run, "q4"]
    lists = (
        None
        if per_run is None
        else {k: [NO_OUTPUT if x == "NO" else x for x in v] for k, v in per_run.items()}
    )
    if refused is None:
        check_outputs("a", ids, run, known, runs=3, per_run=lists)
        return
    with pytest.raises(ConfigError) as err:
        check_outputs("a", ids, run, known, runs=3, per_run=lists)
    assert err.value.field == "outputs" and refused in str(err.value), str(err.value)
    with pytest.raises(ConfigError) as err:
        check_outputs("a", ids, run, known, runs=3, per_run=lists, source="/x/p.jsonl")
    assert err.value.field == "path" and "arm 'a', p.jsonl: " in str(err.value)


@pytest.mark.parametrize("runs", [1, 2, 5])
@pytest.mark.parametrize("given", [0, 1, 2, 4])
def test_fewer_outputs_than_runs_is_refused_inline_and_from_a_file(
    runs: int, given: int, tmp_path: Path
) -> None:
    """bad/outslen.toml: 2 outputs for 5 runs gave 3 silent parse failures, exit 0."""
    outputs = {"q1": ["Paris"] * given, "q2": "Lima", "q3": "N'Djamena"}
    preds = tmp_path / "o.jsonl"
    preds.write_text(
        "".join(json.dumps({"item": "q1", "run": r, "output": "Paris"}) + "\n" for r in range(1, given + 1))
        + '{"item": "q2", "output": "Lima"}\n{"item": "q3", "output": "N\'Djamena"}\n'
    )
    for spec, field in (({"outputs": outputs}, "arms[0].outputs"), ({"path": str(preds)}, "arms[0].path")):
        arm = build_arm({"kind": "outputs", "name": "o", **spec})
        if given >= runs:
            with pytest.warns(Warning) if runs < 5 else contextlib.nullcontext():
                bench = hb.benchmark(arm, build_reference(REF), runs=runs)
            assert all(r.correct for r in bench.rows)
            continue
        with pytest.raises(ConfigError) as err:
            hb.benchmark(arm, build_reference(REF), runs=runs)
        said = (
            "1 of 3 item(s) run have no output: 'q1'"  # a file with no line for q1
            if given == 0 and field.endswith("path")
            else f"fewer outputs than the {runs} run(s): 'q1'"
        )
        assert err.value.field == field and said in str(err.value)


def test_a_run_left_out_of_an_outputs_file_is_refused(tmp_path: Path) -> None:
    preds = tmp_path / "o.jsonl"
    preds.write_text(
        '{"item": "q1", "run": 1, "output": "Paris"}\n{"item": "q1", "run": 3, "output": "Paris"}\n'
        '{"item": "q2", "output": "Lima"}\n{"item": "q3", "output": "x"}\n'
    )
    with pytest.raises(ConfigError, match=r"'q1' has 2 \(missing run 2\)"):
        hb.benchmark(
            build_arm({"kind": "outputs", "name": "o", "path": str(preds)}), build_reference(REF), runs=3
        )


def test_a_wider_predictions_file_is_scored_on_a_sample_of_its_source(tmp_path: Path) -> None:
    """A run file over the whole data set, the reference a selection of it (ids, ids_from, limit)."""
    source = tmp_path / "ref.jsonl"
    source.write_text(
        "".join(json.dumps({"id": f"q{i}", "item": f"c{i}", "label": f"x{i}"}) + "\n" for i in range(1, 7))
    )
    outputs = {f"q{i}": f"x{i}" for i in range(1, 7)}
    for select in ({"ids": ["q2", "q4"]}, {"limit": 2}):
        ref = build_reference({"path": str(source), **select})
        assert len(ref) == 2 and ref.source_ids == frozenset(outputs)
        bench = hb.benchmark(outputs_arm("wide", outputs), ref, runs=5)
        assert all(r.correct for r in bench.rows)
    with pytest.raises(ConfigError, match="1 of 7 output id"):  # still: an id of no item of the source
        hb.benchmark(
            outputs_arm("wide", {**outputs, "q7": "x"}), build_reference({"path": str(source), "limit": 2})
        )


@pytest.mark.parametrize("missing", ["refuse", "error"])
def test_a_legitimately_partial_file_gives_error_runs_with_their_cause(missing: str, tmp_path: Path) -> None:
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"id": "q1", "prediction": "Paris"}\n{"id": "q2", "prediction": "Lima"}\n')
    arm = build_arm(
        {"kind": "outputs", "name": "f", "path": str(preds), "id_field": "id", "missing": missing}
    )
    if missing == "refuse":
        with pytest.raises(ConfigError, match=r"1 of 3 item\(s\) run have no output: 'q3' \(to score only"):
            _run(arm)
        return
    with pytest.warns((hb.ArmErrorWarning, hb.FewRunsWarning)) as said:
        bench = _run(arm)
    assert any("no output for item 'q3'" in str(w.message) for w in said)
    assert [r.failure_kind for r in bench.rows] == [None] * 3 + [None] * 3 + ["error"] * 3


@pytest.mark.parametrize(
    ("lines", "spec", "said"),
    [
        (
            [
                '{"id": "q1", "prediction": "Paris"}',
                "",
                '{"id": "q2", "prediction": "Lima"}',
                '{"id": "q1", "prediction": "Lyon"}',
            ],
            {"id_field": "id"},
            "'q1'",
        ),
        (
            [
                '{"item": "q1", "output": "Paris"}',
                '{"item": "q2", "output": "Lima"}',
                "",
                '{"item": "q1", "output": "Lyon"}',
            ],
            {},
            "lines 1 and 4 have the same item 'q1' with different outputs",
        ),
        (
            [
                '{"item": "q1", "run": 1, "output": "Paris"}',
                '{"item": "q1", "run": 2, "output": "P"}',
                '{"item": "q1", "run": 1, "output": "Lyon"}',
            ],
            {},
            "lines 1 and 3 have the same item 'q1' run 1 with different outputs",
        ),
    ],
)
def test_a_duplicate_line_in_an_outputs_file_is_refused_naming_the_id_and_both_lines(
    tmp_path: Path, lines: list[str], spec: dict[str, Any], said: str
) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as err:
        build_arm({"kind": "outputs", "name": "f", "path": str(path), **spec})
    assert said in str(err.value)
    if spec:
        assert "lines 1 and 4" in str(err.value)


@pytest.mark.parametrize("spec", [{"id_field": "id"}, {}])
def test_a_key_written_twice_in_a_json_object_of_outputs_is_refused(
    tmp_path: Path, spec: dict[str, Any]
) -> None:
    path = tmp_path / "preds.json"
    path.write_text('{"q1": "Paris",\n "q2": "Lima",\n "q1": "Lyon"}')
    assert json.loads(path.read_text()) == {"q1": "Lyon", "q2": "Lima"}  # what json keeps silently
    with pytest.raises(ConfigError, match="'q1'"):
        build_arm({"kind": "outputs", "name": "f", "path": str(path), **spec})


def _partial_arms(how: str, tmp_path: Path) -> list[hb.Arm]:
    """Two arms whose outputs leave out the item ``q3``, given ``how`` (missing = "error")."""
    arms = []
    for name, answers in (("f", {"q1": "Paris", "q2": "Lima"}), ("g", {"q1": "Lyon", "q2": "Lima"})):
        if how == "mapping":
            arms.append(outputs_arm(name, answers, missing="error"))
            continue
        spec: dict[str, Any] = {"kind": "outputs", "name": name, "missing": "error"}
        if how == "inline":
            spec["outputs"] = answers
        else:
            path = tmp_path / f"{name}.jsonl"
            if how == "predictions file":
                text = "".join(json.dumps({"id": k, "prediction": v}) + "\n" for k, v in answers.items())
                spec["id_field"] = "id"
            else:  # the spec's own {"item", "output"} lines
                text = "".join(json.dumps({"item": k, "output": v}) + "\n" for k, v in answers.items())
            path.write_text(text)
            spec["path"] = str(path)
        arms.append(build_arm(spec))
    return arms


@pytest.mark.parametrize("how", ["mapping", "inline", "predictions file", "outputs file"])
def test_a_missing_output_is_the_cause_of_its_error_runs_named_by_item_and_arm(
    how: str, tmp_path: Path
) -> None:
    """Not "commonest cause: LookupError (5 runs)" (the TAT-QA demo's outputs lack answers): the cause of a run
    whose item the outputs leave out is ``no output for item 'ID'``, in the summary, the note and
    the printout, with the arms that lack it; the first message names the arm (and the file)."""
    with pytest.warns((hb.ArmErrorWarning, hb.FewRunsWarning)) as said:
        bench = hb.benchmark(_partial_arms(how, tmp_path), build_reference(REF), runs=3)
    cause = "no output for item 'q3'"
    assert [s["error_causes"] for s in bench.summary()] == [{cause: 3}, {cause: 3}]
    note = (
        f"6 of 18 runs ended in errors and count as wrong; commonest cause: {cause} "
        f"(6 runs, arms 'f', 'g'); 6 of them had no output to score: {MISSING_OUTPUT_ADVICE}"
    )
    assert bench.status == "errors" and bench.error_note() == note
    # a retry reads the same outputs, so it is not advised
    assert f"Runs failed: {note}" in str(bench) and "run them again" not in str(bench)
    (warned,) = [str(w.message) for w in said if w.category is hb.ArmErrorWarning]
    assert (
        f"arms 'f', 'g': 3 of 9 run(s) each raised or failed (3 x {cause})" in warned
    )  # one cause, said once
    file = "" if how in ("mapping", "inline") else " (f.jsonl)"
    assert f"{cause}: the outputs of arm 'f'{file} leave it out" in warned
    assert "LookupError (" not in note and "x LookupError" not in warned


@pytest.mark.parametrize(
    ("causes", "advised"),
    [
        ({"no output for item 'q3'": 2}, None),
        ({"no output for item 'q3'": 2, "no output for item 'q4'": 1}, None),
        ({"no output for item 'q3'": 2, "duplicate_draw": 1}, None),
        (
            {"no output for item 'q3'": 2, "RuntimeError": 1},
            "fix the other causes, then run them again with R",
        ),
        ({"RuntimeError": 1}, "fix it, then run them again with R"),
    ],
)
def test_a_retry_is_advised_only_for_causes_a_retry_can_fix(
    causes: dict[str, int], advised: str | None
) -> None:
    """The TAT-QA demo ends ``errors`` for a question its outputs lack; no ``--retry-errors`` is
    advised for it, which reads the same outputs and fails the same way."""
    note = error_note(causes, 10, "R")
    assert note is not None
    if advised is None:
        assert "run them again" not in note
    else:
        assert note.endswith(advised)
    missing = sum(k for c, k in causes.items() if c.startswith("no output for item"))
    assert (f"{missing} of them had no output to score: {MISSING_OUTPUT_ADVICE}" in note) is bool(missing)
