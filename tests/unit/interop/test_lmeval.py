"""lm-eval samples files as lm-eval 0.4.13 really writes them, read as lm-eval scored them.

The ``data/lmeval_samples_hr_*.jsonl`` files were written by lm-eval 0.4.13 itself (``lm_eval
--log_samples``) on the tasks of ``tests/interop/lmeval`` against the loopback model of
``tests/interop/lmeval/serve.py``, whose docstring gives the commands; ``make test-interop``
writes them again and checks the same. lm-eval writes every number and flag of
``filtered_resps`` as text (``"-0.885"``, ``"True"``).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.interop._imported import imported_arm, imported_reference, read_imported
from tests.conftest import case

DATA = Path(__file__).parent / "data"


def _lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (DATA / f"lmeval_samples_{name}.jsonl").read_text().splitlines()]


def _rows(path: Path, runs: int = 1) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few runs
        return hb.benchmark(
            imported_arm("lm", path, "lm-eval"), imported_reference(path, "lm-eval"), runs=runs
        ).rows


def _write(tmp_path: Path, *lines: dict[str, Any]) -> Path:
    path = tmp_path / "samples_task.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    return path


def _choice_line(filtered: list[Any], target: Any, continuations: list[str] | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {"doc_id": 0, "doc": {"q": "?"}, "target": target, "filter": "none"}
    line |= {"filtered_resps": filtered, "resps": [[r] for r in filtered], "metrics": ["acc"]}
    if continuations is not None:
        line["arguments"] = {
            f"gen_args_{i}": {"arg_0": "Question: ?\nAnswer:", "arg_1": c}
            for i, c in enumerate(continuations)
        }
    return line


@pytest.mark.parametrize("with_arguments", [True, False], ids=["arguments", "shape"])
def test_h4_04_the_likeliest_choice_is_the_largest_loglikelihood_as_a_number(
    tmp_path: Path, with_arguments: bool
) -> None:
    """H4-04: ``'-1.5'`` sorts above ``'-0.25'`` as text; the likeliest choice is -0.25 (choice 1)."""
    c = case("H4-04")
    line = _choice_line(
        c["output"]["filtered_resps"], c["output"]["target"], [" a", " b", " c"] if with_arguments else None
    )
    path = _write(tmp_path, line)
    assert read_imported(path, "lm-eval").arms == {"none": {"0": [c["label"]["output"]]}}
    [row] = _rows(path)
    assert (row.outcome, row.correct) == (str(c["label"]["output"]), c["label"]["correct"])


@pytest.mark.parametrize("task", ["hr_choice_index", "hr_choice_text", "hr_choice_letter"])
def test_real_multiple_choice_files_score_as_lm_eval_scored_them(task: str) -> None:
    """A target that is an index (``"1"``), a choice's text (``"Paris"``) or a letter (``"B"``)."""
    lines = _lines(task)
    rows = _rows(DATA / f"lmeval_samples_{task}.jsonl")
    assert [(r.item, r.correct) for r in rows] == [(str(x["doc_id"]), x["acc"] == 1.0) for x in lines]
    assert {r.correct for r in rows} == {True, False}
    picked = [max(range(3), key=lambda i, x=x: float(x["filtered_resps"][i][0])) for x in lines]
    assert [r.outcome for r in rows] == [str(i) for i in picked]


def test_the_real_file_holds_a_document_where_text_order_would_pick_another_choice() -> None:
    """The H4-04 fault on lm-eval's own output: doc 0's largest text is not its largest number."""
    [first, *_] = _lines("hr_choice_index")
    texts = [pair[0] for pair in first["filtered_resps"]]
    assert all(isinstance(t, str) for t in texts) and texts.index(max(texts)) == 2
    [row, *_] = _rows(DATA / "lmeval_samples_hr_choice_index.jsonl")
    assert (row.outcome, row.correct, first["acc"]) == ("1", True, 1.0)


def test_h4_05_an_invalid_placeholder_is_a_parse_failure_not_a_wrong_answer() -> None:
    """H4-05: doc 5 repeat 1 of the real regex-filtered run holds ``[invalid]``."""
    c = case("H4-05")
    lines = _lines("hr_arith")
    assert lines[5]["filtered_resps"] == [["[invalid]", "3"]]
    rows = _rows(DATA / "lmeval_samples_hr_arith.jsonl", runs=2)
    kinds = {(r.item, r.run): r.failure_kind for r in rows}
    assert kinds[("5", 1)] == c["expected_failure_kind"] == "parse_failure"
    assert [r.outcome for r in rows if r.failure_kind == "parse_failure"] == ["[invalid]"]
    assert kinds[("5", 2)] is None and kinds[("4", 2)] == "wrong"
    for x in lines:  # lm-eval's exact_match of a line is the mean over its repeats
        got = [r.correct for r in rows if r.item == str(x["doc_id"])]
        assert sum(got) / len(got) == x["exact_match"]


def test_a_missing_placeholder_is_a_parse_failure(tmp_path: Path) -> None:
    line = {"doc_id": 0, "doc": {}, "target": "7", "filter": "strict", "filtered_resps": ["[missing]"]}
    [row] = _rows(_write(tmp_path, line))
    assert (row.correct, row.failure_kind) == (False, "parse_failure")


def test_a_loglikelihood_task_is_right_when_the_target_is_the_greedy_continuation() -> None:
    """lm-eval's ``acc`` of a one-request loglikelihood task is ``is_greedy``."""
    lines = _lines("hr_greedy")
    rows = _rows(DATA / "lmeval_samples_hr_greedy.jsonl")
    assert (
        [r.correct for r in rows]
        == [x["acc"] == 1 for x in lines]
        == [True, False, True, False, False, False]
    )
    assert [(r.outcome, r.failure_kind) for r in rows[:2]] == [("paris", None), (None, "wrong")]
    assert imported_reference(DATA / "lmeval_samples_hr_greedy.jsonl", "lm-eval").labels["0"] == " Paris"


def test_a_rolling_loglikelihood_task_is_refused_by_name() -> None:
    with pytest.raises(
        ConfigError, match=r"line 1: a loglikelihood_rolling \(perplexity\) task: its results"
    ):
        read_imported(DATA / "lmeval_samples_hr_rolling.jsonl", "lm-eval")


def test_a_target_that_names_no_choice_is_refused_naming_it(tmp_path: Path) -> None:
    pairs = [["-0.5", "False"], ["-0.25", "True"]]
    with pytest.raises(
        ConfigError,
        match=r"target 'Rome' is neither a choice's index nor its text; its choices \[' Paris', ' Lima'\]",
    ):
        read_imported(_write(tmp_path, _choice_line(pairs, "Rome", [" Paris", " Lima"])), "lm-eval")
    with pytest.raises(ConfigError, match=r"target '²' is neither a choice's index nor its text"):
        read_imported(_write(tmp_path, _choice_line(pairs, "²", [" Paris", " Lima"])), "lm-eval")  # no index
    with pytest.raises(ConfigError, match=r"target '2' is no index of its 2 choices"):
        read_imported(_write(tmp_path, _choice_line(pairs, "2", [" Paris", " Lima"])), "lm-eval")
    with pytest.raises(ConfigError, match=r"target 'B' .* the line names no choices"):
        read_imported(_write(tmp_path, _choice_line(pairs, "B")), "lm-eval")
    with pytest.raises(ConfigError, match=r"holds \[\['-0.5', 'maybe'\], .*not \[loglikelihood, is_greedy\]"):
        read_imported(
            _write(tmp_path, _choice_line([["-0.5", "maybe"], *pairs], "0", [" a", " b", " c"])), "lm-eval"
        )


def test_several_gold_choices_and_mutual_information(tmp_path: Path) -> None:
    pairs = [["-0.5", "False"], ["-0.25", "True"], ["-3", "False"]]
    assert read_imported(
        _write(tmp_path, _choice_line(pairs, "[0, 1]", [" a", " b", " c"])), "lm-eval"
    ).labels == {"0": [0, 1]}
    line = _choice_line(
        [*pairs, ["-9", "False"], ["-5", "False"], ["-0.1", "True"]], "1", [" a", " b", " c"] * 2
    )
    # the last three are the unconditional requests (their likeliest is choice 2): left out
    line["metrics"] = ["acc", "acc_mutual_info"]
    assert read_imported(_write(tmp_path, line), "lm-eval").arms == {"none": {"0": [1]}}
