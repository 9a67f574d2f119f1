"""A reference file read as records (the default format) whose first record is another known format's names it.

Rule: ``hrb ref put NAME FILE`` without ``--format`` (and a spec's ``[reference] path`` without
``format``) reads reference records; a file whose first record has the keys of a format the
readers know (SQuAD's ``context``/``question``/``answers``, TAT-QA's, lm-eval's samples, an
Inspect log, promptfoo's results) is refused with that format to give.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hrbench.errors import ConfigError
from hrbench.specs import build_reference

INTEROP = Path(__file__).resolve().parents[1] / "interop" / "data"  # tests/unit/interop/data


@pytest.mark.parametrize(
    ("where", "fmt"),
    [
        ("squad2-dev-500/squad2_dev_500.jsonl", "squad"),  # rows of the real SQuAD 2.0 dev sample
        ("tatqa-dev-llm/tatqa_dataset_dev.json", "tatqa"),  # a list of TAT-QA contexts
    ],
)
def test_real_data_without_its_format_names_the_format(data: Path, where: str, fmt: str) -> None:
    with pytest.raises(
        ConfigError, match=rf"are a {fmt} file's: give its format \(hrb ref put NAME FILE --format {fmt};"
    ):
        build_reference({"path": str(data / where)})
    assert build_reference({"path": str(data / where), "format": fmt, "limit": 3}).ids  # and it reads so


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("lmeval_real_samples_arith.jsonl", "lm-eval"),
        ("inspect_capitals.json", "inspect"),  # one JSON object
        ("inspect_capitals.eval", "inspect"),  # a zip: not text
        ("promptfoo_capitals.json", "promptfoo"),
    ],
)
def test_other_tools_files_without_their_format_name_the_format(name: str, fmt: str) -> None:
    with pytest.raises(ConfigError, match=rf"--format {fmt};"):
        build_reference({"path": str(INTEROP / name)})


def test_squads_nested_json_on_one_line_names_squad(tmp_path: Path) -> None:
    path = tmp_path / "dev.json"
    path.write_text(json.dumps({"version": "v2.0", "data": []}))
    with pytest.raises(ConfigError, match=r"--format squad;"):
        build_reference({"path": str(path)})


def test_records_of_no_known_format_get_no_guess(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"question": "q"}\n')
    with pytest.raises(ConfigError) as info:
        build_reference({"path": str(path)})
    assert 'line 1: expected {"id", "item", "label", ...} (got' in str(info.value)
    assert "--format" not in str(info.value)
