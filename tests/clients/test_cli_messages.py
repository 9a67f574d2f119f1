"""The `hrb` exit-code table and its msgspec validation messages (no daemon).

A value outside a ``Literal`` is said as hrbench's ``ConfigError`` says one: the field, the
closest value allowed, every value allowed and the value given
(:func:`hrbench_client.protocol.enum_hint`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from hrbench_client import errors as e
from hrbench_client import protocol as p
from hrbench_client.cli._common import explain
from hrbench_client.cli.exit_codes import EXIT_ERROR, EXIT_USAGE, exit_code
from tests._slow import slow


@pytest.mark.parametrize(
    "cls",
    [e.ConfigError, e.ReferenceValueError, e.SignatureError, e.InvalidParams, e.TooFewRunsError, e.NotFound],
)
def test_invalid_input_is_exit_2(cls: type[e.HrbenchError]) -> None:
    assert exit_code(cls("x")) == EXIT_USAGE
    assert exit_code(e.from_error({"code": cls.code, "message": "x"})) == EXIT_USAGE


@pytest.mark.parametrize(
    "cls",
    [
        e.HrbenchError,
        e.DaemonError,
        e.ModelError,
        e.BudgetRefused,
        e.ReplayMiss,
        e.ScorerError,
        e.ReferenceLocked,
        e.DuplicateDrawError,
        e.InternalError,
        e.MethodNotFound,
        e.RequestCancelled,
    ],
)
def test_daemon_and_run_errors_are_exit_3(cls: type[e.HrbenchError]) -> None:
    assert exit_code(cls("x")) == EXIT_ERROR


def _message(data: object, typ: object = p.BenchmarkParams, hinted: bool = False) -> str:
    """``explain``'s words for ``data`` decoded as ``typ``; ``hinted``: given the type and data, as ``hrb`` gives them."""
    with pytest.raises(msgspec.ValidationError) as info:
        msgspec.convert(data, typ)
    return explain(info.value, typ, data) if hinted else explain(info.value)


def test_kind_errors_name_the_closest_kind_and_list_the_valid_kinds() -> None:
    data: dict = {"arms": [{"kind": "prompt", "name": "a", "template": "t"}, {"kind": "promt"}]}
    arm = _message(data, hinted=True)
    assert arm == (
        "arms[1].kind: unknown value; did you mean 'prompt'? expected one of prompt, reading, outputs, "
        "import (got 'promt')"
    )
    data = {"client": {"kind": "mok"}}
    client = _message(data, hinted=True)
    assert client == (
        "client.kind: unknown value; did you mean 'mock'? expected one of openai, anthropic, replay, mock "
        "(got 'mok')"
    )
    data = {"client": {"kind": "replay", "recording": "r", "fallback": {"kind": "replay"}}}
    fallback = _message(data, hinted=True)
    assert (
        fallback
        == "client.fallback.kind: unknown value; expected one of openai, anthropic, mock (got 'replay')"
    )
    data = {"module": {"signature": "a -> b"}, "data": [], "client": {"kind": "x"}}
    evaluate = _message(data, p.EvaluateParams, hinted=True)
    assert evaluate == "client.kind: unknown value; expected one of openai, anthropic, replay, mock (got 'x')"


def test_top_level_errors_get_a_path_and_others_are_kept() -> None:
    assert _message({"rusn": 5}) == "Object contains unknown field `rusn` - at `$`"
    assert _message([]).endswith(" - at `$`")
    assert _message({"runs": "five"}) == "Expected `int`, got `str` - at `$.runs`"
    assert _message({"reference": {"format": "csv"}}).endswith("at `$.reference.format`")


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (
            {"reference": {"path": "r.csv", "format": "lmeval"}},
            "reference.format: unknown value; did you mean 'lm-eval'? "
            "expected one of rows, squad, tatqa, inspect, lm-eval, promptfoo (got 'lmeval')",
        ),
        (
            {"arms": [{"kind": "outputs", "name": "o", "path": "o.json", "format": "lm_eval"}]},
            "arms[0].format: unknown value; did you mean 'lm-eval'? "
            "expected one of outputs, tatqa, inspect, lm-eval, promptfoo (got 'lm_eval')",
        ),
        (
            {"arms": [{"kind": "prompt", "name": "a", "template": "{item}", "reasoning_effort": "HIGH"}]},
            "arms[0].reasoning_effort: unknown value; did you mean 'high'? "
            "expected one of none, minimal, low, medium, high, xhigh (got 'HIGH')",
        ),
        ({"executor": "zzz"}, "executor: unknown value; expected one of local, ray (got 'zzz')"),
    ],
)
def test_a_value_outside_its_choices_is_said_with_the_close_one_and_every_one(
    data: object, said: str
) -> None:
    with pytest.raises(msgspec.ValidationError) as info:
        msgspec.convert(data, p.BenchmarkParams)
    assert explain(info.value, p.BenchmarkParams, data) == said


def test_hrb_bench_names_a_misspelt_format_s_choices(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("id,item,label\nq1,France,Paris\n")
    (tmp_path / "s.toml").write_text(
        'runs = 1\n[reference]\npath = "r.csv"\nformat = "lmeval"\n'
        '[[arms]]\nkind = "outputs"\nname = "o"\noutputs = {q1 = "Paris"}\n'
    )
    proc = subprocess.run(
        [sys.executable, "-m", "hrbench_client.cli", "bench", "s.toml", "--no-autostart", "--no-rows"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=slow(120),
    )
    assert proc.returncode == 2, proc.stderr
    assert (
        "s.toml: reference.format: unknown value; did you mean 'lm-eval'? expected one of rows" in proc.stderr
    )


def test_hrb_bench_refuses_a_template_naming_no_field_of_the_item(tmp_path: Path, shared_home: Path) -> None:
    (tmp_path / "s.toml").write_text(
        'runs = 1\n[reference]\nitems = {q1 = "France", q2 = "Peru"}\n'
        '[client]\nkind = "mock"\nreply = "Paris"\n'
        '[[arms]]\nkind = "prompt"\nname = "ask"\ntemplate = "Capital of France?"\n'
    )
    proc = subprocess.run(
        [sys.executable, "-m", "hrbench_client.cli", "bench", "s.toml", "--no-rows"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=slow(180),
    )
    assert proc.returncode == 2, proc.stderr
    assert (
        "arms[0].template: names no field of the item, so every item would get the same prompt; "
        "a prompt arm's item reaches the model only through its template: write {item} (the whole item) "
        "(got 'Capital of France?')"
    ) in proc.stderr, proc.stderr
