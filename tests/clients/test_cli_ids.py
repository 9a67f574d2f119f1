"""Every `hrb` command that takes an id, id prefix or name: an unknown or ambiguous one is exit 2.

SPEC section 6: "2 on bad input", for rows/report/cancel/view as for rm (never 3). Every such
command refuses it with exit 2 in one message shape,
``hrb: NotFound: <field>: no stored ...; did you mean '<closest>'? ... (got '<given>')``, and an
ambiguous id prefix as ``hrb: ConfigError: id: the prefix matches several benchmarks (...)``.
One real daemon serves the module; each command is one parametrised case.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrbench.store import Store
from tests._slow import slow
from tests.server._daemon import Daemon

HRB = [sys.executable, "-m", "hrbench_client.cli", "--no-autostart"]
TWINS = ("abcd000000000001", "abcd000000000002")  # two stored ids sharing the prefix "abcd"


def _hrb(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HRBENCH_HOME": str(home)}
    return subprocess.run([*HRB, *args], capture_output=True, text=True, timeout=slow(120), env=env)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A daemon holding the benchmark ``capitals``, the reference ``caps``, the recording ``capsrec``."""
    base = tmp_path_factory.mktemp("ids")
    home = base / "home"
    spec = base / "capitals.toml"
    spec.write_text(
        textwrap.dedent("""
        runs = 1
        record = "capsrec"
        [reference]
        items = ["France", "Peru"]
        labels = ["Paris", "Lima"]
        [client]
        kind = "mock"
        reply = "Paris"
        [[arms]]
        kind = "prompt"
        name = "ask"
        template = "{item}"
    """)
    )
    ref = base / "caps.jsonl"
    ref.write_text('{"id": "q1", "item": "France", "label": "Paris"}\n')
    with Daemon(home):
        done = _hrb(home, "bench", str(spec), "--no-rows")
        assert done.returncode == 0, done.stderr
        bench_id = json.loads(done.stdout.splitlines()[-1])["id"]
        assert _hrb(home, "ref", "put", "caps", str(ref)).returncode == 0
        store = Store(home / "hrbench.sqlite3")  # two benchmarks whose ids share a prefix
        for twin in TWINS:
            store.benchmark_put(twin, {"params": {"name": "twin"}}, "none", "done")
        store.close()
        yield home, bench_id


def _commands(ref: str, out: Path) -> dict[str, list[str]]:
    return {
        "rows": ["rows", ref],
        "report": ["report", ref],
        "report --text": ["report", ref, "--text"],
        "report --html": ["report", ref, "--html", str(out / "page.html")],
        "view": ["view", ref, "--no-browser"],
        "cancel": ["cancel", ref],
        "rm": ["rm", ref],
        "bench --resume": ["bench", "--resume", ref],
    }


COMMANDS = list(_commands("X", Path()))
_UNKNOWN = (
    r"hrb: NotFound: (id|resume): no stored benchmark has this id, id prefix \(4\+ characters\) or name; "
    r"did you mean {hint}\? `hrb ls` lists them \(got '{ref}'\)"
)


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unknown_benchmark_exits_2_naming_the_closest(
    stored: tuple[Path, str], tmp_path: Path, command: str
) -> None:
    home, _ = stored
    got = _hrb(home, *_commands("capitols", tmp_path)[command])
    assert got.returncode == 2, got.stderr
    assert re.search(_UNKNOWN.format(hint="'capitals'", ref="capitols"), got.stderr), got.stderr
    assert got.stdout == "" and not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_mistyped_id_prefix_names_the_whole_id(
    stored: tuple[Path, str], tmp_path: Path, command: str
) -> None:
    home, bench_id = stored
    typo = bench_id[:5] + ("0" if bench_id[5] != "0" else "1")  # a prefix of nothing, close to the id
    got = _hrb(home, *_commands(typo, tmp_path)[command])
    assert got.returncode == 2, got.stderr
    # (another stored id may be as close, by chance: it is named too, never instead)
    hint = f"('[0-9a-f]{{16}}', )*'{bench_id}'(, '[0-9a-f]{{16}}')*"
    assert re.search(_UNKNOWN.format(hint=hint, ref=typo), got.stderr), got.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_an_ambiguous_id_prefix_exits_2_listing_the_ids(
    stored: tuple[Path, str], tmp_path: Path, command: str
) -> None:
    home, _ = stored
    got = _hrb(home, *_commands("abcd", tmp_path)[command])
    assert got.returncode == 2, got.stderr
    want = f"hrb: ConfigError: id: the prefix matches several benchmarks ({', '.join(TWINS)}); give more of it (got 'abcd')"
    assert want in got.stderr, got.stderr


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["ref", "get", "capz"], "hrb: NotFound: ref: no stored reference has this name or hash"),
        (["recording", "export", "capsrek", "OUT"], "hrb: NotFound: name: no recording has this name"),
    ],
    ids=["ref get", "recording export"],
)
def test_an_unknown_reference_or_recording_name_exits_2_naming_the_closest(
    stored: tuple[Path, str], tmp_path: Path, argv: list[str], said: str
) -> None:
    home, _ = stored
    got = _hrb(home, *[str(tmp_path / "out.jsonl") if a == "OUT" else a for a in argv])
    assert got.returncode == 2, got.stderr
    assert said in got.stderr and f"(got '{argv[2]}')" in got.stderr, got.stderr
    assert ("did you mean 'caps'?" if argv[0] == "ref" else "did you mean 'capsrec'?") in got.stderr


def test_rm_of_several_unknown_ids_says_each_then_deletes_nothing(stored: tuple[Path, str]) -> None:
    home, bench_id = stored
    got = _hrb(home, "rm", bench_id, "capitols", "abcd")
    assert got.returncode == 2 and got.stdout == "", got.stderr
    said = got.stderr.splitlines()
    assert re.fullmatch(_UNKNOWN.format(hint="'capitals'", ref="capitols"), said[0]), said
    assert said[1].startswith("hrb: ConfigError: id: the prefix matches several benchmarks")
    assert said[2] == "hrb: nothing was deleted"
    assert _hrb(home, "rows", bench_id, "--limit", "1").returncode == 0
