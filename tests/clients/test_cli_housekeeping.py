"""`hrb` housekeeping: --version, global options anywhere, help on every argument, --check needs a label."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from hrbench_client import protocol as p
from hrbench_client.cli.parser import _parser
from tests._procs import stop_daemon
from tests.clients.test_cli import hrb


def test_version() -> None:
    out = hrb("--version").stdout.strip()
    assert out.startswith("hrb ") and f"protocol {p.PROTOCOL_VERSION}" in out


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helped = {c.dest for c in action._choices_actions}
            for name, sub in action.choices.items():
                if name not in helped:
                    missing.append((path, name))
                missing += _walk(sub, (*path, name))
        elif not isinstance(action, argparse._HelpAction) and not action.help:
            missing.append((path, "/".join(action.option_strings) or action.dest))
    return missing


def test_every_command_and_argument_has_help() -> None:
    assert _walk(_parser(), ("hrb",)) == []


@pytest.mark.parametrize(
    "args",
    [
        ("--home", "{h}", "score", "--label", "a", "a"),
        ("score", "--home", "{h}", "--label", "a", "a"),
        ("score", "--label", "a", "a", "--home", "{h}"),
        ("score", "--label", "a", "--home={h}", "a"),
    ],
)
def test_global_options_before_or_after_the_subcommand(tmp_path: Path, args: tuple[str, ...]) -> None:
    home = tmp_path / "elsewhere"
    try:
        got = hrb(*(a.format(h=home) for a in args)).stdout
        assert json.loads(got)["correct"] is True
        status = json.loads(hrb("daemon", "status", "--home", str(home)).stdout)
        assert status["running"] is True and status["home"] == str(home)
    finally:
        stop_daemon(home)  # not `hrb daemon stop`: it waits for init to reap the daemon


def test_no_autostart_after_the_subcommand(tmp_path: Path) -> None:
    proc = hrb("score", "--label", "a", "a", "--no-autostart", "--home", str(tmp_path / "none"), check_rc=3)
    assert "no hrbench daemon is running" in proc.stderr


def test_score_check_without_a_label_is_a_usage_error() -> None:
    assert "--check needs a label" in hrb("score", "--check", "paris", check_rc=2).stderr
    out = hrb("score", "--check", input='{"output": "a", "label": "a"}\n{"output": "b"}\n', check_rc=2)
    assert "stdin line 2: --check needs a label" in out.stderr
    assert [json.loads(x)["correct"] for x in out.stdout.splitlines()] == [True]
    assert json.loads(hrb("score", "paris").stdout)["correct"] is None  # without --check: fine


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _ls() -> list[dict]:
    return [json.loads(x) for x in hrb("ls").stdout.splitlines()]


def test_ls_lookup_by_name_and_prefix_rm_and_gc() -> None:
    first = json.loads(hrb("bench", str(EXAMPLES / "capitals.toml"), "--no-rows").stdout)
    second = json.loads(hrb("bench", str(EXAMPLES / "capitals.toml"), "--no-rows").stdout)
    listed = _ls()
    assert [b["id"] for b in listed] == [second["id"], first["id"]]  # newest first
    top = listed[0]
    assert (top["name"], top["status"], top["arms"], top["rows"], top["total"]) == (
        "capitals",
        "done",
        ["ask", "fixed"],
        40,
        40,
    )
    assert top["accuracy"] == {"ask": 0.75, "fixed": 0.95} and top["created"].endswith("+00:00")
    table = hrb("ls", "--text").stdout
    assert "capitals" in table and "ask (0.750), fixed (0.950)" in table
    # an id, a unique prefix, or a name (the newest of that name) wherever an id is taken
    by_name = [json.loads(x) for x in hrb("rows", "capitals", "--limit", "1").stdout.splitlines()]
    assert by_name[0]["ledger_id"].startswith(second["id"])
    assert json.loads(hrb("rows", first["id"][:8], "--limit", "1").stdout)["ledger_id"].startswith(
        first["id"]
    )
    assert "ask - fixed" in hrb("report", "capitals", "--compare", "ask", "fixed", "--text").stdout
    assert json.loads(hrb("bench", "--resume", first["id"][:6], "--no-rows").stdout)["n_resumed"] == 40
    missing = hrb("rows", "no-such-name", check_rc=2).stderr
    assert "NotFound" in missing and "hrb ls" in missing
    # rm by name deletes the newest of that name, with its rows and traces
    gone = json.loads(hrb("rm", "capitals").stdout)
    assert (gone["id"], gone["rows"], gone["traces"]) == (second["id"], 40, 40)
    assert [b["id"] for b in _ls()] == [first["id"]]
    hrb("rows", second["id"], check_rc=2)
    # gc: nothing is that old; then everything is
    kept = json.loads(hrb("gc", "--older-than", "30d").stdout)
    assert kept["benchmarks"] == 0 and kept["cache"] == 0 and kept["vacuumed"] is True
    swept = json.loads(hrb("gc", "--older-than", "0s").stdout)
    assert (swept["benchmarks"], swept["rows"], swept["cache"]) == (1, 40, 20)
    assert swept["bytes_after"] < swept["bytes_before"]
    assert _ls() == []


@pytest.mark.parametrize("age", ["3x", "-1d", "", "d", "nan", "inf"])
def test_gc_refuses_a_malformed_age(age: str) -> None:
    assert "--older-than" in hrb("gc", "--older-than", age, check_rc=2).stderr


@pytest.mark.parametrize(
    ("age", "seconds"), [("45s", 45), ("90m", 5400), ("12h", 43200), ("2", 172800), ("1w", 604800)]
)
def test_parse_age(age: str, seconds: float) -> None:
    from hrbench_client.cli._common import parse_age

    assert parse_age(age) == seconds


def test_resume_and_ls_say_what_a_crash_left_unknown(tmp_path: Path) -> None:
    # a killed run leaves its in-flight reservations open in the ledger (written
    # here as the killed daemon left them); the resume counts them as spent and says so
    from hrbench.store import Store

    home = tmp_path / "h"
    try:
        done = json.loads(
            hrb("--home", str(home), "bench", str(EXAMPLES / "capitals.toml"), "--no-rows").stdout
        )
        Store(home / "hrbench.sqlite3").ledger_apply(
            done["id"], "killed", [(1, 0.0125, 30), (2, 0.0125, 30)], [], (0, 0.0, 0)
        )
        again = json.loads(hrb("--home", str(home), "bench", "--resume", done["id"], "--no-rows").stdout)
        assert "Governor: in flight at a crash: unknown, at most 0.0250 USD / 2 calls" in again["text"]
        (listed,) = [json.loads(x) for x in hrb("--home", str(home), "ls").stdout.splitlines()]
        assert (listed["unknown_calls"], listed["unknown_usd"]) == (2, 0.025)
        table = hrb("--home", str(home), "ls", "--text").stdout
        assert "in flight at a crash: unknown, at most 0.0250 USD / 2 calls (counted as spent)" in table
    finally:
        stop_daemon(home)  # not `hrb daemon stop`: it waits for init to reap the daemon
