"""`hrb bench` with the model server down: every run an `error`, status `errors`, exit 3, whatever the scorer.

The spec: a prompt arm against an OpenAI-compatible server on loopback that is not
running (a closed port), scored by a function of their own named by its import path. Each
run's model call fails; no scorer may score the failure (it would make it a verdict: status
`done`, exit 0). The same holds for a scorer object of one's own, a built-in one and a judge.
"""

from __future__ import annotations

import json
import socket
import textwrap
from pathlib import Path

import pytest

from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401  (the fixture stops the daemon)

MINE = '''
from pathlib import Path

import hrbench as hb

CALLED = Path(__file__).with_name("called.txt")


def starts_right(item, output, label):
    """A scorer of one's own, as the docs write it: it notes each call."""
    with CALLED.open("a") as f:
        f.write(repr(output) + "\\n")
    return output.strip().lower().startswith(label.lower())


STARTS = hb.scorer(starts_right, "starts_right_object")
'''


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _spec(folder: Path, base_url: str, scorer: str, extra: str = "") -> Path:
    spec = folder / f"down-{scorer.replace(':', '-')}.toml"
    spec.write_text(
        textwrap.dedent(f"""
        runs = 5
        scorer = "{scorer}"
        [reference]
        items = {{q1 = "France", q2 = "Peru", q3 = "Chad", q4 = "Fiji"}}
        labels = {{q1 = "Paris", q2 = "Lima", q3 = "N'Djamena", q4 = "Suva"}}
        cluster = {{q1 = "a", q2 = "a", q3 = "b", q4 = "b"}}
        [client]
        kind = "openai"
        model = "loopback-1"
        base_url = "{base_url}"
        api_key_env = "HRBENCH_TEST_LOOPBACK_KEY"
        max_attempts = 1
        [[arms]]
        kind = "prompt"
        name = "ask"
        template = "Capital of {{item}}? One word."
        """)
        + textwrap.dedent(extra)
    )
    return spec


@pytest.mark.parametrize(
    ("scorer", "extra"),
    [
        ("mine:starts_right", ""),
        ("mine:STARTS", ""),
        ("answer_contains", ""),
        ("judge", '[scorer_settings.client]\nkind = "mock"\nreply = "CORRECT"\n'),
    ],
    ids=["own-function", "own-scorer-object", "built-in", "judge"],
)
def test_a_server_that_is_down_makes_every_run_an_error_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scorer: str, extra: str
) -> None:
    monkeypatch.setenv("HRBENCH_TEST_LOOPBACK_KEY", "sk-test")
    (tmp_path / "mine.py").write_text(MINE)
    base_url = _closed_port()
    proc = hrb("bench", str(_spec(tmp_path, base_url, scorer, extra)), check_rc=3)
    out = lines(proc.stdout)
    rows, result = out[:-1], out[-1]
    assert len(rows) == 20 and {r["failure_kind"] for r in rows} == {"error"}
    assert {r["correct"] for r in rows} == {False}
    assert result["status"] == "errors"
    assert result["summary"][0]["error_causes"] == {f"openai: cannot connect to {base_url}": 20}
    assert not (tmp_path / "called.txt").exists()  # the user's function never saw a failed call
    stored = lines(hrb("rows", result["id"]).stdout)
    assert {r["failure_kind"] for r in stored} == {"error"} and len(stored) == 20
    listing = {b["id"]: b for b in (json.loads(x) for x in hrb("ls").stdout.splitlines())}
    assert listing[result["id"]]["status"] == "errors"
