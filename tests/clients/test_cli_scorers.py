"""The numeric, choice and pattern scorers from the shell: ``hrb score`` and a TOML ``hrb bench``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests._slow import slow
from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401  (the fixture stops the daemon)


@pytest.mark.usefixtures("shared_home")  # scoring keeps nothing: the module's daemon answers it
def test_hrb_score_with_the_new_scorers() -> None:
    got = lines(hrb("score", "--scorer", "choice", "--label", "B", "**Answer: (B)**").stdout)[0]
    assert got == {"correct": True, "outcome": "B", "failure_kind": None, "scorer": "choice"}
    got = lines(
        hrb("score", "--scorer", "choice", "--label", "A", "(A) or (C)", "--check", check_rc=1).stdout
    )[0]
    assert got["failure_kind"] == "parse_failure" and got["outcome"] == "A,C"
    got = lines(
        hrb(
            "score", "--scorer", "numeric", "--settings", '{"rel_tol": 0.01}', "--label", "100", "about 100.5"
        ).stdout
    )[0]
    assert got["correct"] is True and got["scorer"] == "numeric"
    settings = json.dumps({"pattern": r"ANSWER:\s*(?P<answer>.+)", "then": "numeric"})
    got = lines(
        hrb(
            "score", "--scorer", "pattern", "--settings", settings, "--label", "-12", "ANSWER: \u221212"
        ).stdout
    )
    assert got[0]["correct"] is True
    err = hrb(
        "score", "--scorer", "pattern", "--settings", '{"pattern": "("}', "--label", "1", "1", check_rc=2
    ).stderr
    assert "pattern" in err and "does not compile" in err


def test_a_toml_benchmark_scored_by_choice(tmp_path: Path) -> None:
    spec = tmp_path / "mc.toml"
    spec.write_text(
        textwrap.dedent("""
        runs = 5
        scorer = "choice"
        [scorer_settings]
        letters = "ABCD"
        [reference]
        items = ["q1", "q2"]
        labels = ["B", "C"]
        [client]
        kind = "mock"
        reply = "The answer is (B)."
        [[arms]]
        kind = "prompt"
        name = "ask"
        template = "{item}"
        """)
    )
    out = lines(hrb("bench", str(spec)).stdout)
    rows, result = out[:-1], out[-1]
    assert len(rows) == 10
    assert sorted({(r["item"], r["correct"], r["outcome"]) for r in rows}) == [
        ("1", True, "B"),
        ("2", False, "B"),
    ]
    assert result["status"] == "done"


@pytest.mark.usefixtures("shared_home")  # scoring keeps nothing: the module's daemon answers it
def test_a_label_the_scorer_cannot_read_is_a_usage_error_exit_2() -> None:
    # exit 2, not 3 (ScorerError) as for a run error
    for label, scorer in (("Q", "choice"), ("(AB)", "choice"), ("no number here", "numeric")):
        for argv in (  # the fast path (one OUTPUT) and the full path (JSON lines on stdin)
            ("score", "--scorer", scorer, "--label", label, "(A)"),
            ("score", "--scorer", scorer),
        ):
            stdin = json.dumps({"output": "(A)", "label": label}) + "\n" if len(argv) == 3 else None
            err = hrb(*argv, input=stdin, check_rc=2).stderr
            assert "ScorerError" in err and repr(label) in err, err


@pytest.mark.usefixtures("shared_home")  # scoring keeps nothing: the module's daemon answers it
def test_an_empty_label_is_refused_exit_2_for_every_scorer() -> None:
    # `hrb score --label "" ""` is refused by every scorer, not a parse_failure (numeric alone)
    for scorer in ("exact", "answer_contains", "choice", "numeric"):
        err = hrb("score", "--scorer", scorer, "--label", " ", "Paris", check_rc=2).stderr
        assert "ReferenceValueError: label: the label is only white space" in err, err


@pytest.mark.usefixtures("shared_home")  # scoring keeps nothing: the module's daemon answers it
def test_hrb_score_refuses_the_judge_naming_the_way_that_works() -> None:
    # a judge calls a model, so it grades inside a benchmark (governor, cache)
    client = json.dumps({"client": {"kind": "mock", "reply": "CORRECT"}})
    for extra in ((), ("--settings", client)):
        err = hrb("score", "--scorer", "judge", *extra, "--label", "Paris", "Paris", check_rc=2).stderr
        assert "ConfigError: scorer" in err and "hrb bench" in err and "outputs" in err, err


def _scorer_help() -> list[tuple[str, str]]:
    """`hrb score --help`'s --scorer text, as (name, what) pairs in the order listed."""
    import os
    import re
    import subprocess

    from tests.clients.test_cli import HRB

    out = subprocess.run(
        [*HRB, "score", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=slow(60),
        env={**os.environ, "COLUMNS": "100"},  # wrapped as on a terminal: the parse joins the lines
    ).stdout
    text = " ".join(out.split("\n  --scorer SCORER", 1)[1].split("\n  --settings SETTINGS", 1)[0].split())
    assert text.startswith("a scorer name: "), text
    *listed, last = text.removeprefix("a scorer name: ").split("; ")
    assert last.startswith("or package.module:function"), last
    pairs = [re.fullmatch(r"(\S+) \((.*)\)", item) for item in listed]
    assert all(pairs), listed
    return [(m.group(1), m.group(2)) for m in pairs if m]


def test_hrb_score_help_lists_every_scorer_of_the_registry() -> None:
    """The help lists every scorer of the registry (`squad` and `tatqa` too), none by hand."""
    from hrbench.specs import SCORERS

    # (argparse breaks lines at hyphens: "TAT-QA" may come back as "TAT- QA")
    shown = [(name, what.replace("- ", "-")) for name, what in _scorer_help()]
    assert shown == [(name, what) for name, (_, _, what) in SCORERS.items()]
    assert {"squad", "tatqa"} <= dict(shown).keys()


def test_the_clients_scorer_names_are_generated_from_the_registry() -> None:
    """`hrbench_client` imports nothing from the core, so `make schema` writes the names it shows."""
    from hrbench.specs import client_scorers_module
    from hrbench_client import _scorers

    assert Path(_scorers.__file__).read_text() == client_scorers_module(), "stale: run `make schema`"


def test_every_scorer_of_the_registry_builds() -> None:
    from hrbench.specs import SCORERS, build_scorer

    settings: dict[str, dict[str, object]] = {
        "pattern": {"pattern": "ANSWER: (.+)"},
        "judge": {"client": {"kind": "mock", "reply": "yes"}},
        "tool_sequence": {"expected": ["lookup"]},
        "step_count": {"max_steps": 4},
        "tool_args": {"tool": "lookup", "expected": {"city": "Paris"}},
        "trajectory_judge": {"client": {"kind": "mock", "reply": "yes"}},
    }
    for name, (module, attr, _) in SCORERS.items():
        built = build_scorer(name, settings.get(name))
        assert callable(built) and built.name, name
        assert attr in vars(__import__(module, fromlist=[attr])), name
