"""One error boundary for other tools' files: a malformed file is a ConfigError naming the file and the place.

Hand-made cases check the message (the place, what was expected, what was found); a property
test breaks the files the real Inspect, lm-eval and promptfoo wrote (``_mutate``) and requires
that reading them as an arm and as a reference ends in the file's data or a
:class:`~hrbench.errors.HrbenchError` naming the file: never another exception (which the
daemon sends as ``internal error``, exit 3 in ``hrb``). ``make test-slow`` draws its 5,000
cases (``tests/_examples.py``), ``make test`` a quarter of them.
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrbench.errors import ConfigError, HrbenchError
from hrbench.interop import imported_arm, imported_reference, read_imported
from hrbench.testing._bombs import Member, eval_zip
from tests._examples import examples
from tests.unit.interop._mutate import DATA, FILES, MEMBERS, broken_file

INSPECT = json.loads((DATA / "inspect_capitals.json").read_text())
PROMPTFOO = json.loads((DATA / "promptfoo_capitals.json").read_text())
LMEVAL = [json.loads(x) for x in (DATA / "lmeval_real_samples_arith.jsonl").read_text().splitlines()]


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    if value is _DEL:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


_DEL = object()


def _json(doc: Any) -> bytes:
    return json.dumps(doc).encode()


def _lines(recs: list[Any]) -> bytes:
    return "\n".join(map(json.dumps, recs)).encode()


def _eval_with(name: str, content: bytes) -> bytes:
    return eval_zip([Member.of(n, content if n == name else c) for n, c in MEMBERS])


SAMPLE = json.loads(dict(MEMBERS)["samples/q1_epoch_1.json"])
CASES = [
    # Inspect .json: every place a .get met another type
    ("a.json", "inspect", _json(_set(INSPECT, ("samples", 3, "output"), [1, 2])), "samples[3].output: expected an object, found a list [1, 2]"),
    ("a.json", "inspect", _json(_set(INSPECT, ("samples", 3, "output"), "Paris")), "samples[3].output: expected an object, found a string 'Paris'"),
    ("a.json", "inspect", _json(_set(INSPECT, ("samples", 0, "output", "choices"), 5)), None),
    ("a.json", "inspect", _json(_set(INSPECT, ("samples", 2, "metadata"), "x")), "samples[2].metadata: expected an object, found a string 'x'"),
    ("a.json", "inspect", _json(_set(INSPECT, ("samples", 2, "input"), [1])), "samples[2].input[0]: expected an object, found a number 1"),
    ("a.json", "inspect", _json(_set(INSPECT, ("samples", 1), 7)), "samples[1]: expected an object, found a number 7"),
    ("a.json", "inspect", _json(_set(INSPECT, ("samples",), {"a": 1})), "samples: expected a list"),
    ("a.json", "inspect", _json(_set(INSPECT, ("eval",), [1])), "eval: expected an object, found a list [1]"),
    ("a.json", "inspect", _json(_set(INSPECT, ("samples", 4, "error"), {"message": {"a": 1}})), None),
    # Inspect .eval: a member's JSON, and the member itself
    ("a.eval", "inspect", _eval_with("samples/q1_epoch_1.json", b'{"id": "q1", "epoch": 1, "output": '), "member samples/q1_epoch_1.json: not JSON (Expecting value)"),
    ("a.eval", "inspect", _eval_with("samples/q1_epoch_1.json", _json(SAMPLE | {"output": {"choices": [3]}})), "member samples/q1_epoch_1.json, output.choices[0]: expected an object, found a number 3"),
    ("a.eval", "inspect", _eval_with("samples/q1_epoch_1.json", _json([SAMPLE])), "member samples/q1_epoch_1.json: expected an object, found a list"),
    ("a.eval", "inspect", _eval_with("header.json", _json({"version": 2, "eval": "m"})), "member header.json, eval: expected an object, found a string 'm'"),
    # promptfoo
    ("p.json", "promptfoo", _json(_set(PROMPTFOO, ("results", "results", 2, "provider"), 5)), "results.results[2].provider: expected an object, found a number 5"),
    ("p.json", "promptfoo", _json(_set(PROMPTFOO, ("results", "results", 2, "response"), [])), None),
    ("p.json", "promptfoo", _json(_set(PROMPTFOO, ("results", "results", 2, "response"), ["x"])), "results.results[2].response: expected an object, found a list ['x']"),
    ("p.json", "promptfoo", _json(_set(PROMPTFOO, ("results", "results", 1), "r")), "results.results[1]: expected an object, found a string 'r'"),
    ("p.json", "promptfoo", _json(_set(PROMPTFOO, ("results", "results", 0, "testIdx"), "x")), "expected values of one kind that order"),
    # lm-eval, by line
    ("samples_x.jsonl", "lm-eval", _lines(LMEVAL[:2] + [LMEVAL[2] | {"filtered_resps": [{"a": 1}]}]), None),
    ("samples_x.jsonl", "lm-eval", _lines(LMEVAL[:1]) + b"\n\xff\xfe{}", f"line 2: not UTF-8 text: byte {len(_lines(LMEVAL[:1])) + 1} is 0xFF, in b'\\xff\\xfe{{}}'; it may be Windows-1252"),
    ("samples_x.jsonl", "lm-eval", _lines(LMEVAL[:1] + [[1, 2]]), "line 2: lacks doc_id"),
    ("samples_x.jsonl", "lm-eval", _lines(LMEVAL)[:-20], "line 3: not JSON"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "fmt", "data", "want"), CASES)
def test_a_malformed_file_is_refused_naming_the_place(
    name: str, fmt: str, data: bytes, want: str | None, tmp_path: Path
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    if want is None:  # read: the value is taken as it is (an output, an item), or skipped
        _read_all_ways(path, fmt)
        return
    with pytest.raises(ConfigError) as caught:
        read_imported(path, fmt)
    msg = str(caught.value)
    assert want in msg and msg.startswith("path: ") and msg.endswith(f"(got {str(path)!r})"), msg


def _read_all_ways(path: Path, fmt: str) -> None:
    """Read ``path`` as each of its arms and as a reference; raises what the library raises."""
    found = read_imported(path, fmt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for arm in found.arms:
            imported_arm("a", path, fmt, source_arm=arm)
        if found.items:
            imported_reference(path, fmt)


GROUPS = {
    "inspect-json-promptfoo": ("inspect_capitals.json", "promptfoo_capitals.json"),
    "inspect-eval": ("inspect_capitals.eval",),
    "lm-eval": tuple(n for n in FILES if n.endswith(".jsonl")),
}
"""The peers' files in three groups, each drawn 1,700 times: 5,100 cases in ``make test-slow``."""


@pytest.mark.timeout(900)  # 1,700 cases: about a minute of one core; the suite's workers share two
@pytest.mark.parametrize("group", sorted(GROUPS))
@settings(
    max_examples=examples(1700),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
@given(data=st.data())
def test_no_broken_peer_file_is_an_internal_error(
    group: str, data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    name, fmt, content = data.draw(broken_file(GROUPS[group]))
    path = tmp_path_factory.mktemp("broken", numbered=True) / name
    path.write_bytes(content)
    try:
        _read_all_ways(path, fmt)
    except HrbenchError as exc:
        assert str(path) in str(exc), exc
    finally:
        path.unlink()
        path.parent.rmdir()


@pytest.mark.parametrize(
    ("target", "want"),
    [([], "labels['0']: expected a string, a number"), ("", "labels['0']: the label is empty")],
)
def test_a_label_the_reference_refuses_names_the_file(target: Any, want: str, tmp_path: Path) -> None:
    path = tmp_path / "samples_x.jsonl"
    path.write_bytes(_lines([LMEVAL[0] | {"target": target}, *LMEVAL[1:]]))
    read_imported(path, "lm-eval")  # the file reads; the reference refuses its label
    with pytest.raises(ConfigError, match=r"^" + re.escape(want)) as caught:
        imported_reference(path, "lm-eval")
    assert str(caught.value).endswith(f"(in {path})")


def test_a_specs_arm_and_reference_name_their_field_the_file_and_the_place(tmp_path: Path) -> None:
    """The spec layer (``hrbench.specs``, what the daemon builds a spec with) keeps the place."""
    from hrbench.specs import build_arm, build_reference

    path = tmp_path / "log.json"
    path.write_bytes(_json(_set(INSPECT, ("samples", 3, "output"), [1, 2])))
    place = "samples[3].output: expected an object, found a list [1, 2]"
    with pytest.raises(ConfigError, match=re.escape(f"reference.path: {place} (got {str(path)!r})")):
        build_reference({"path": str(path), "format": "inspect"})
    with pytest.raises(ConfigError, match=re.escape(f"arm.path: {place} (got {str(path)!r})")):
        build_arm({"kind": "outputs", "name": "a", "path": str(path), "format": "inspect"})


def test_the_peer_files_themselves_read() -> None:
    for name, fmt in FILES.items():
        _read_all_ways(DATA / name, fmt)
