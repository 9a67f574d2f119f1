"""``hrb score`` on JSON lines from stdin: ``--label`` is the label of the lines that carry none.

``echo '{"output":"paris"}' | hrb score --label Paris`` scores the line against Paris: never
``correct: null`` (exit 0), nor, with ``--check``, exit 2 asking for the ``--label`` it was given.
The rule (:class:`hrbench_client.cli.score._StdinInputs`): the flags are the lines' defaults, as
``--scorer`` and ``--settings`` already were; a line's own ``label`` (or ``item``) wins, and a
``"label": null`` is no label, so it takes the default too.
"""

from __future__ import annotations

import argparse
import io
import json
import sys

import pytest

from hrbench_client.cli.score import _StdinInputs
from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401  (the fixture stops the daemon)


def _stdin(*records: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


@pytest.mark.usefixtures("shared_home")  # scoring keeps nothing: the module's daemon answers it
def test_label_is_the_default_of_stdin_lines_and_check_works_with_it() -> None:
    got = lines(hrb("score", "--label", "Paris", input=_stdin({"output": "paris"})).stdout)
    assert got == [{"correct": True, "outcome": "paris", "failure_kind": None, "scorer": "exact_normalised"}]
    assert lines(hrb("score", "--check", "--label", "Paris", input=_stdin({"output": "paris"})).stdout)[0][
        "correct"
    ]
    stdin = _stdin(
        {"output": "paris"},  # the default label: right
        {"output": "Lyon"},  # the default label: wrong
        {"output": "lima", "label": "Lima"},  # its own label wins: right
        {"output": "paris", "label": "Lima"},  # its own label wins: wrong
        {"output": "paris", "label": None},  # null is no label: the default
    )
    done = hrb("score", "--check", "--label", "Paris", input=stdin, check_rc=1)
    assert [r["correct"] for r in lines(done.stdout)] == [True, False, True, False, True]


@pytest.mark.usefixtures("shared_home")  # scoring keeps nothing: the module's daemon answers it
def test_several_labels_and_label_json_are_defaults_too() -> None:
    stdin = _stdin({"output": "lutetia"}, {"output": "rome"})
    got = lines(hrb("score", "--label", "Paris", "--label", "Lutetia", input=stdin).stdout)
    assert [r["correct"] for r in got] == [True, False]
    got = lines(hrb("score", "--label-json", '["Paris", "Lutetia"]', input=stdin).stdout)
    assert [r["correct"] for r in got] == [True, False]


@pytest.mark.usefixtures("shared_home")  # scoring keeps nothing: the module's daemon answers it
def test_check_without_any_label_still_names_the_line() -> None:
    stdin = _stdin({"output": "paris", "label": "Paris"}, {"output": "lyon"})
    done = hrb("score", "--check", input=stdin, check_rc=2)
    assert [r["correct"] for r in lines(done.stdout)] == [True]  # the lines before it are scored
    assert "stdin line 2" in done.stderr and "--check needs a label" in done.stderr


def test_stdin_inputs_take_the_flags_as_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    args = argparse.Namespace(scorer="exact", check=False, settings=None)
    records = _stdin(
        {"output": "a"}, {"output": "b", "label": "B", "item": {"q": 2}}, {"output": "c", "item": None}
    )
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(records.encode())))
    got = [(x.label, x.item) for x in _StdinInputs(args, label="A", item={"q": 1})]
    assert got == [("A", {"q": 1}), ("B", {"q": 2}), ("A", {"q": 1})]
