"""Bad input through `hrb` is exit 2 with the field and the value named (a newcomer's findings)."""

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
