"""The numeric, choice and pattern scorers from the shell: ``hrb score`` and a TOML ``hrb bench``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401  (the fixture stops the daemon)


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
