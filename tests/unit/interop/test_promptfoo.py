"""promptfoo results as promptfoo 0.123.1 really writes them: templated labels, repeats by ``testIdx``.

``data/promptfoo_templates.json`` was written by promptfoo 0.123.1 itself from
``tests/interop/promptfoo/promptfooconfig.yaml`` (its comment gives the command: a python
provider that answers a capital, wrong on its second asking, and promptfoo's echo provider;
``--repeat 2 -j 4``); ``make test-interop`` writes it again and checks the same. Its labels
are templates: ``defaultTest``'s ``equals: "{{ answer }}"`` and a test's own
``equals: "{{answer}}"``, which promptfoo renders with the test's vars before it compares.
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
from hrbench.interop._promptfoo import render_value

REAL = Path(__file__).parent / "data" / "promptfoo_templates.json"
PYTHON, ECHO = "python | capital of {{country}}", "echo | capital of {{country}}"


def _rows(path: Path, arm: str) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few runs, error runs
        ref = imported_reference(path, "promptfoo")
        return hb.benchmark(imported_arm("pf", path, "promptfoo", source_arm=arm), ref, runs=2).rows


def _theirs(path: Path, label: str) -> list[tuple[str, int, bool | None]]:
    """promptfoo's own verdict per item and run (runs in ``testIdx`` order; ``None``: an error)."""
    results = [
        r for r in json.loads(path.read_text())["results"]["results"] if r["provider"]["label"] == label
    ]
    out, runs = [], {}
    for r in sorted(results, key=lambda r: r["testIdx"]):
        item = r["vars"]["id"]
        runs[item] = runs.get(item, 0) + 1
        out.append((item, runs[item], None if r["failureReason"] == 2 else r["success"]))
    return sorted(out)


def test_templated_labels_are_rendered_with_the_tests_vars() -> None:
    data = json.loads(REAL.read_text())
    asserts = {json.dumps(r["testCase"]["assert"]) for r in data["results"]["results"]}
    assert '[{"type": "equals", "value": "{{ answer }}"}]' in asserts  # defaultTest's, as written
    labels = imported_reference(REAL, "promptfoo").labels
    assert labels == {
        "q1": "Paris", "q2": "Lima", "q3": "Santiago", "q4": "What is the capital of Japan?", "q5": "Poseidonis",
    }  # fmt: skip


@pytest.mark.parametrize("arm", [PYTHON, ECHO], ids=["python", "echo"])
def test_each_run_is_right_exactly_when_promptfoo_passed_it(arm: str) -> None:
    rows = _rows(REAL, arm)
    ours = sorted((r.item, r.run, None if r.failure_kind == "error" else r.correct) for r in rows)
    assert ours == _theirs(REAL, arm.split(" | ")[0])
    assert sum(r.correct is True for r in rows) == {PYTHON: 3, ECHO: 2}[arm]


def test_repeats_are_ordered_by_test_idx_not_by_file_position(tmp_path: Path) -> None:
    """promptfoo running tests concurrently may write a repeat before the one it follows."""
    data = json.loads(REAL.read_text())
    data["results"]["results"].reverse()
    shuffled = tmp_path / "shuffled.json"
    shuffled.write_text(json.dumps(data))
    found = read_imported(shuffled, "promptfoo")
    assert found.arms[PYTHON]["q1"] == ["Paris", "Lyon"]  # testIdx 0, then 1
    assert found.arms == read_imported(REAL, "promptfoo").arms
    rows = _rows(shuffled, PYTHON)
    assert [(r.item, r.run, r.correct) for r in rows if r.item == "q1"] == [("q1", 1, True), ("q1", 2, False)]


def _results_with(tmp_path: Path, value: Any, test_vars: dict[str, Any]) -> Path:
    data = json.loads(REAL.read_text())
    for r in data["results"]["results"]:
        r["vars"] = r["testCase"]["vars"] = {**r["vars"], **test_vars}
        r["testCase"]["assert"] = [{"type": "equals", "value": value}]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("value", "test_vars", "label"),
    [
        ("{{answer}}", {}, "Paris"),
        ("{{ answer }}!", {}, "Paris!"),
        ("{{ row.km }} km", {"row": {"km": 12.0}}, "12 km"),
        ("{{ flag }}/{{ none }}", {"flag": True, "none": None}, "true/"),
        ("no template", {}, "no template"),
    ],
)
def test_a_template_renders_as_nunjucks_writes_values(
    tmp_path: Path, value: str, test_vars: dict[str, Any], label: str
) -> None:
    path = _results_with(tmp_path, value, test_vars)
    assert imported_reference(path, "promptfoo").labels["q1"] == label


@pytest.mark.parametrize(
    ("value", "test_vars", "why"),
    [
        ("{{ answer | upper }}", {}, r"`\{\{ answer \| upper \}\}` is not a variable name"),
        ("{% if answer %}x{% endif %}", {}, "holds a nunjucks tag"),
        ("{# note #}Paris", {}, "holds a nunjucks tag or comment"),
        (
            "{{ capital }}",
            {},
            r"`\{\{ capital \}\}` names no variable of the test \(its vars: answer, country, id\)",
        ),
        (
            "{{ answers }}",
            {"answers": ["Paris", "Lyon"]},
            r"`\{\{ answers \}\}` is a list, not a text or a number",
        ),
        ("{{ answer", {}, r"opens `\{\{` and does not close it"),
        ("{{ {a} }}", {}, r"opens `\{\{` and does not close it \(or holds braces inside\)"),
    ],
)
def test_a_template_that_cannot_be_rendered_is_refused_by_name(
    tmp_path: Path, value: str, test_vars: dict[str, Any], why: str
) -> None:
    path = _results_with(tmp_path, value, test_vars)
    with pytest.raises(
        ConfigError, match=r"^assert\.value: results\.results\[0\] \(test 0\) of .*: " + why
    ) as err:
        read_imported(path, "promptfoo")
    assert err.value.field == "assert.value" and str(err.value).endswith(f"(got {value!r})")
    with pytest.raises(ConfigError, match=r"^reference\.assert\.value: "):
        hb.specs.build_reference({"path": str(path), "format": "promptfoo"})


@pytest.mark.parametrize(
    "value",
    ["{{ answer }}" + "{{" * 200_000, "{{ " + "x" * 500_000 + " | upper }}"],
    ids=["unclosed", "long"],
)
def test_a_huge_hostile_template_is_refused_with_a_short_message(value: str) -> None:
    with pytest.raises(ConfigError) as err:
        render_value(value, {"answer": "Paris"}, "results.results[0]")
    assert len(str(err.value)) < 700
