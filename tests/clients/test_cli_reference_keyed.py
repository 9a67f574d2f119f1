"""Through `hrb`: a TOML file's order is kept; JSON reference files are keyed.

`hrb` reads a TOML file in its order, so its lists beside a table of items keep working (the
client sends them keyed by item id). A JSON reference file holding one ``{"items", "labels", ...}``
object (as `hrb ref get` prints one) follows the wire's rule: a JSON object has no order, so a list
beside its items is refused with the keyed form; records of JSON lines hold their own id and label.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._slow import slow
from tests.server._daemon import Daemon

HRB = [sys.executable, "-m", "hrbench_client.cli", "--no-autostart"]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("keyed") / "home"
    with Daemon(home):
        yield home


def _hrb(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HRBENCH_HOME": str(home)}
    return subprocess.run([*HRB, *args], capture_output=True, text=True, timeout=slow(120), env=env)


def _lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


# ids whose sorted order is not the file's: a pairing by sorted key or by hash would show
REFERENCE = """
[reference]
items = { z = "France", a = "Peru", m = "Chad", b = "Fiji" }
labels = ["Paris", "Lima", "N'Djamena", "Suva"]
cluster = ["eu", "sa", "af", "oc"]
split = ["test", "test", "test", "dev"]
"""


def test_a_toml_files_lists_pair_with_its_items_in_the_files_order(home: Path, tmp_path: Path) -> None:
    spec = tmp_path / "caps.toml"
    spec.write_text(
        "runs = 1\n"
        + REFERENCE
        + textwrap.dedent("""
        [client]
        kind = "mock"
        default = "I do not know"
        [client.replies]
        "Capital of France?" = "Paris"
        "Capital of Peru?" = "Lima"
        "Capital of Chad?" = "N'Djamena"
        "Capital of Fiji?" = "Suva"
        [[arms]]
        kind = "prompt"
        name = "ask"
        template = "Capital of {item}?"
        """)
    )
    done = _hrb(home, "bench", str(spec))
    assert done.returncode == 0, done.stderr
    rows = {r["item"]: (r["correct"], r["cluster"]) for r in _lines(done.stdout) if "item" in r}
    assert rows == {"z": (True, "eu"), "a": (True, "sa"), "m": (True, "af")}  # b is on dev
    ref = tmp_path / "ref.toml"
    ref.write_text(REFERENCE)
    assert _hrb(home, "ref", "put", "caps-toml", str(ref)).returncode == 0
    got = _lines(_hrb(home, "ref", "get", "caps-toml").stdout)[0]
    assert got["labels"] == {"z": "Paris", "a": "Lima", "m": "N'Djamena", "b": "Suva"}
    assert got["cluster"] == {"z": "eu", "a": "sa", "m": "af", "b": "oc"}
    assert got["split"] == {"z": "test", "a": "test", "m": "test", "b": "dev"}


def test_a_toml_list_of_the_wrong_length_is_bad_input(home: Path, tmp_path: Path) -> None:
    ref = tmp_path / "short.toml"
    ref.write_text('[reference]\nitems = { q1 = "France", q2 = "Peru" }\nlabels = ["Paris"]\n')
    done = _hrb(home, "ref", "put", "short", str(ref))
    assert done.returncode == 2, done.stderr
    assert "ReferenceValueError: reference.labels: 1 value for 2 items" in done.stderr


def test_what_ref_get_prints_is_a_reference_file_and_a_json_list_beside_it_is_refused(
    home: Path, tmp_path: Path
) -> None:
    ref = tmp_path / "ref.toml"
    ref.write_text(REFERENCE)
    first = _lines(_hrb(home, "ref", "put", "round", str(ref)).stdout)[0]
    printed = tmp_path / "printed.json"
    printed.write_text(_hrb(home, "ref", "get", "round").stdout)
    again = _hrb(home, "ref", "put", "round-again", str(printed))
    assert again.returncode == 0, again.stderr
    assert _lines(again.stdout)[0]["hash"] == first["hash"]  # the same content, read keyed
    positional = tmp_path / "positional.json"
    positional.write_text(
        json.dumps({"items": {"z": "France", "a": "Peru"}, "labels": ["Paris", "Lima"]}, indent=2)
    )
    refused = _hrb(home, "ref", "put", "positional", str(positional))
    assert refused.returncode == 2, refused.stderr
    assert f"{positional}: labels: a list is not paired by position" in refused.stderr
    assert "reference.path" not in refused.stderr  # no spec: the file, not a spec field
    assert 'key it by item id, "labels": {"z": <label of z>, "a": <label of a>}' in refused.stderr
    typo = tmp_path / "typo.json"
    typo.write_text(json.dumps({"items": {"z": "France"}, "label": {"z": "Paris"}}))
    refused = _hrb(home, "ref", "put", "typo", str(typo))
    assert refused.returncode == 2 and "unknown field; did you mean 'labels'?" in refused.stderr


def test_json_lines_records_pair_by_their_own_ids(home: Path, tmp_path: Path) -> None:
    rows = tmp_path / "ref.jsonl"
    records = [("z", "France", "Paris"), ("a", "Peru", "Lima"), ("m", "Chad", "N'Djamena")]
    rows.write_text("".join(json.dumps({"id": i, "item": c, "label": lab}) + "\n" for i, c, lab in records))
    assert _hrb(home, "ref", "put", "rows", str(rows)).returncode == 0
    got = _lines(_hrb(home, "ref", "get", "rows").stdout)[0]
    assert got["items"] == {"z": "France", "a": "Peru", "m": "Chad"}
    assert got["labels"] == {"z": "Paris", "a": "Lima", "m": "N'Djamena"}


def test_a_labels_table_that_leaves_an_item_out_is_counted_on_stderr(home: Path, tmp_path: Path) -> None:
    """An item a labels table leaves out is unlabelled (NA), and their count is said on stderr."""
    spec = tmp_path / "partial.toml"
    spec.write_text(
        textwrap.dedent("""
        runs = 5
        [reference]
        items = { q1 = "France", q2 = "Peru", q3 = "Chad" }
        labels = { q1 = "Paris", q3 = "N'Djamena" }
        [client]
        kind = "mock"
        reply = "Paris"
        [[arms]]
        kind = "prompt"
        name = "ask"
        template = "Capital of {item}?"
        """)
    )
    done = _hrb(home, "bench", str(spec), "--no-rows")
    assert done.returncode == 0, done.stderr
    assert (
        "hrb: warning: UnlabelledItemsWarning: 1 of 3 items on split(s) test are given no label "
        "('q2': left out of a `labels` table" in done.stderr
    )
    assert "accuracy averages the 2 labelled items" in done.stderr
