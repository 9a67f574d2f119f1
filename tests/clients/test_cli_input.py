"""Bad input through `hrb` is exit 2 with the field and the value named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clients.test_cli import _stop_daemon, hrb, lines

__all__ = ["_stop_daemon"]  # the autouse fixture that stops the test's daemon


@pytest.mark.parametrize(
    ("pre", "post"),
    [
        (["--label", "a"], ["--label-json", '"b"']),
        (["--label-json", '"b"'], ["--label", "a"]),
        (["--label", "a", "--label", "c"], ["--label-json", "null"]),
        (["--check", "--label", "a"], ["--label-json", "[1]"]),
    ],
)
def test_label_and_label_json_together_are_a_usage_error(pre: list[str], post: list[str]) -> None:
    proc = hrb("score", *pre, *post, "a", check_rc=2)
    assert "--label" in proc.stderr and "not allowed" in proc.stderr


def test_ref_put_refuses_bad_records_with_exit_2(tmp_path: Path) -> None:
    bad = {
        "labl": ([{"id": "a", "item": "x", "labl": "y"}], ["line 1", "'labl'", "did you mean 'label'"]),
        "mapping": ([{"id": "a", "item": "x", "label": {"k": 1}}], ["labels['a']", "{'k': 1}"]),
        "bool": ([{"id": "a", "item": "x", "label": True}], ["labels['a']", "True"]),
        "dup": ([{"id": "a", "item": "x"}, {"id": "a", "item": "y"}], ["lines 1 and 2", "'a'"]),
    }
    for name, (records, needles) in bad.items():
        f = tmp_path / f"{name}.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in records))
        err = hrb("ref", "put", "t", str(f), check_rc=2).stderr
        for needle in needles:
            assert needle in err, (name, err)
    assert lines(hrb("ref", "list").stdout) == []  # none was stored


def _squad_spec(
    tmp_path: Path, data: Path, name: str, *, ref: str = "", arm: str = "", top: str = ""
) -> Path:
    d = data / "squad2-dev-llama32-3b"
    spec = tmp_path / f"{name}.toml"
    spec.write_text(
        f'runs = 5\nscorer = "answer_contains"\n{top}\n'
        f'[reference]\npath = "{d}/questions.jsonl"\n{ref or "format = " + chr(34) + "squad" + chr(34)}\n'
        f'[[arms]]\nkind = "outputs"\nname = "v1"\npath = "{d}/runs/pipeline_v1_1000.jsonl"\n'
        f"{arm or 'id_field = ' + chr(34) + 'qid' + chr(34)}\n"
    )
    return spec


@pytest.mark.usefixtures("shared_home")  # refusals only: the module's daemon holds no run
def test_real_data_spec_mismatches_exit_2_before_any_run(tmp_path: Path, data: Path) -> None:
    cases = {
        "ref_tatqa": ({"ref": 'format = "tatqa"'}, ["questions.jsonl", "line 2 is not JSON", "TAT-QA"]),
        "arm_tatqa": ({"arm": 'format = "tatqa"'}, ["pipeline_v1_1000.jsonl", "question_id"]),
        "pred_field": (
            {"arm": 'id_field = "qid"\nprediction_field = "answer"'},
            ["prediction_field", "'answer'", "prediction, qid"],
        ),
        "metric": ({"top": 'metrics = ["tatqa"]'}, ["metrics", "TAT-QA reference", "gs1000-0000"]),
    }
    for name, (parts, needles) in cases.items():
        err = hrb("bench", str(_squad_spec(tmp_path, data, name, **parts)), "--no-rows", check_rc=2).stderr
        assert "InternalError" not in err
        for needle in needles:
            assert needle in err, (name, err)
    # no run was made: nothing, or (a library refusal after the daemon recorded the benchmark) a failed
    # benchmark without rows
    for bench in lines(hrb("ls").stdout):
        assert bench["status"] == "failed" and bench["rows"] == 0, bench


@pytest.mark.usefixtures("shared_home")  # refusals only: the module's daemon holds no run
def test_prompt_spec_errors_exit_2_before_any_run(tmp_path: Path) -> None:
    body = '[reference]\nitems = {{ q1 = "France", q2 = "Peru" }}\nlabels = ["Paris", "Lima"]\n{client}\n'
    body += '[[arms]]\nkind = "prompt"\nname = "ask"\ntemplate = "{template}"\n'
    client = '[client]\nkind = "mock"\nreply = "Paris"'
    cases = [
        ("Capital of {country}?", client, ["arms[0].template", "{country}", "q1, q2"]),
        ("Capital of {item?", client, ["arms[0].template", "malformed", "'Capital of {item?'"]),
        ("Capital of {item}?", "", ["arms[0].client", "prompt arm 'ask'"]),
    ]
    for n, (template, cl, needles) in enumerate(cases):
        spec = tmp_path / f"p{n}.toml"
        spec.write_text("runs = 5\n" + body.format(client=cl, template=template))
        err = hrb("bench", str(spec), "--no-rows", check_rc=2).stderr
        for needle in needles:
            assert needle in err, (template, err)
        assert "run(s) ended in errors" not in err
