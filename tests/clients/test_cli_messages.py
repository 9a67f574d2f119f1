"""The `hrb` exit-code table and its msgspec validation messages (no daemon)."""

from __future__ import annotations

import msgspec
import pytest

from hrbench_client import errors as e
from hrbench_client import protocol as p
from hrbench_client.cli._common import explain
from hrbench_client.cli.exit_codes import EXIT_ERROR, EXIT_USAGE, exit_code


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


def _message(data: object, typ: object = p.BenchmarkParams) -> str:
    with pytest.raises(msgspec.ValidationError) as info:
        msgspec.convert(data, typ)
    return explain(info.value)


def test_kind_errors_list_the_valid_kinds() -> None:
    arm = _message({"arms": [{"kind": "prompt", "name": "a", "template": "t"}, {"kind": "promt"}]})
    assert arm == (
        "Invalid value 'promt' - at `$.arms[1].kind` (expected one of: prompt, reading, outputs, import)"
    )
    client = _message({"client": {"kind": "mok"}})
    assert client.endswith("`$.client.kind` (expected one of: openai, anthropic, replay, mock)")
    fallback = _message({"client": {"kind": "replay", "recording": "r", "fallback": {"kind": "replay"}}})
    assert fallback.endswith("`$.client.fallback.kind` (expected one of: openai, anthropic, mock)")
    evaluate = _message(
        {"module": {"signature": "a -> b"}, "data": [], "client": {"kind": "x"}}, p.EvaluateParams
    )
    assert evaluate.endswith("(expected one of: openai, anthropic, replay, mock)")


def test_top_level_errors_get_a_path_and_others_are_kept() -> None:
    assert _message({"rusn": 5}) == "Object contains unknown field `rusn` - at `$`"
    assert _message([]).endswith(" - at `$`")
    assert _message({"runs": "five"}) == "Expected `int`, got `str` - at `$.runs`"
    assert _message({"reference": {"format": "csv"}}).endswith("at `$.reference.format`")
