"""`hrb` housekeeping: --version, global options anywhere, help on every argument, --check needs a label."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from hrbench_client import protocol as p
from hrbench_client._commands import _parser
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
        hrb("daemon", "stop", "--home", str(home), check_rc=None)


def test_no_autostart_after_the_subcommand(tmp_path: Path) -> None:
    proc = hrb("score", "--label", "a", "a", "--no-autostart", "--home", str(tmp_path / "none"), check_rc=3)
    assert "no hrbench daemon is running" in proc.stderr


def test_score_check_without_a_label_is_a_usage_error() -> None:
    assert "--check needs a label" in hrb("score", "--check", "paris", check_rc=2).stderr
    out = hrb("score", "--check", input='{"output": "a", "label": "a"}\n{"output": "b"}\n', check_rc=2)
    assert "stdin line 2: --check needs a label" in out.stderr
    assert [json.loads(x)["correct"] for x in out.stdout.splitlines()] == [True]
    assert json.loads(hrb("score", "paris").stdout)["correct"] is None  # without --check: fine
