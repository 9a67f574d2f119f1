"""hrbench.specs: arms, clients, references, scorers and governors from specs."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import anyio
import msgspec
import pytest

from hrbench.arm import Arm
from hrbench.errors import ConfigError
from hrbench.models import MockClient
from hrbench.records import Request
from hrbench.runner._benchmark import benchmark
from hrbench.specs import (
    build_arm,
    build_client,
    build_governor,
    build_reference,
    build_scorer,
    format_prompt,
    load_object,
)
from hrbench.store import Store
from hrbench_client import protocol as p
from tests._slow import slow


@pytest.mark.parametrize(
    ("template", "item", "want"),
    [
        ("Capital of {item}?", "France", "Capital of France?"),
        ("Q: {question} D: {document}", {"question": "q", "document": "d"}, "Q: q D: d"),
        ("{{literal}} {item}", 3, "{literal} 3"),
    ],
)
def test_format_prompt(template: str, item: object, want: str) -> None:
    assert format_prompt(template, item) == want


@pytest.mark.parametrize("template", ["{missing}", "{item", "{0}"])
def test_format_prompt_errors_name_the_template(template: str) -> None:
    with pytest.raises(ConfigError, match="template"):
        format_prompt(template, {"question": "q"})


def run(spec: dict, ref: dict, client: dict | None = None, runs: int = 1):  # type: ignore[no-untyped-def]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return benchmark(
            build_arm(msgspec.convert(spec, p.ArmSpec)),  # the wire Struct, as the daemon passes it
            build_reference(ref),
            runs=runs,
            client=None if client is None else build_client(client),
        )


def test_prompt_arm_with_a_mock_reply_table() -> None:
    bench = run(
        {
            "kind": "prompt",
            "name": "ask",
            "template": "Capital of {item}?",
            "system": "Be brief.",
            "params": {"temperature": 0},
        },
        {"items": {"q1": "France", "q2": "Peru"}, "labels": ["Paris", "Lima"]},
        {"kind": "mock", "replies": {"Capital of France?": "Paris"}, "default": "?"},
        runs=2,
    )
    assert [r.correct for r in bench.rows] == [True, True, False, False]


def test_prompt_arm_hash_follows_the_template() -> None:
    a = build_arm({"kind": "prompt", "name": "a", "template": "x {item}"})
    b = build_arm({"kind": "prompt", "name": "a", "template": "y {item}"})
    assert a.hash != b.hash
    assert a.hash == build_arm({"kind": "prompt", "name": "a", "template": "x {item}"}).hash


def test_outputs_arm_inline_per_run_and_from_files(tmp_path: Path) -> None:
    ref = {"items": {"q1": "a", "q2": "b"}, "labels": ["A", "B"]}
    bench = run({"kind": "outputs", "name": "o", "outputs": {"q1": "A", "q2": ["B", "x", None]}}, ref, runs=3)
    assert [(r.item, r.run, r.correct, r.failure_kind) for r in bench.rows] == [
        ("q1", 1, True, None), ("q1", 2, True, None), ("q1", 3, True, None),
        ("q2", 1, True, None), ("q2", 2, False, "wrong"), ("q2", 3, False, "parse_failure"),
    ]  # fmt: skip
    with pytest.raises(ConfigError, match="fewer outputs than the 3 run"):  # 2 outputs for 3 runs
        run({"kind": "outputs", "name": "o", "outputs": {"q1": "A", "q2": ["B", "x"]}}, ref, runs=3)
    jsonl = tmp_path / "o.jsonl"
    jsonl.write_text('{"item": "q1", "output": "A", "run": 1}\n{"item": "q2", "output": "B"}\n')
    assert [r.correct for r in run({"kind": "outputs", "name": "o", "path": str(jsonl)}, ref).rows] == [
        True,
        True,
    ]
    obj = tmp_path / "o.json"
    obj.write_text(json.dumps({"q1": "no", "q2": "B"}))
    assert [r.correct for r in run({"kind": "outputs", "name": "o", "path": str(obj)}, ref).rows] == [
        False,
        True,
    ]
    with pytest.raises(ConfigError, match="exactly one"):
        build_arm({"kind": "outputs", "name": "o"})
    with pytest.raises(ConfigError, match="cannot read"):
        build_arm({"kind": "outputs", "name": "o", "path": str(tmp_path / "nope.json")})


def test_import_arm_function_factory_and_arm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "spec_mod_t.py").write_text(
        "from hrbench.arm import Arm\n"
        "def fn(item, ctx):\n    return item\n"
        "def factory(suffix):\n    return lambda item, ctx: item + suffix\n"
        "ARM = Arm('made', fn)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert build_arm({"kind": "import", "path": "spec_mod_t:fn"}).name == "fn"
    assert build_arm({"kind": "import", "path": "spec_mod_t:ARM"}).name == "made"
    assert build_arm({"kind": "import", "path": "spec_mod_t:ARM", "name": "renamed"}).name == "renamed"
    arm = build_arm(
        {"kind": "import", "path": "spec_mod_t:factory", "name": "f", "settings": {"suffix": "!"}}
    )
    assert isinstance(arm, Arm) and arm.fn("a", None) == "a!"
    with pytest.raises(ConfigError, match="rejected"):
        build_arm({"kind": "import", "path": "spec_mod_t:factory", "settings": {"nope": 1}})
    with pytest.raises(ConfigError, match="cannot import"):
        build_arm({"kind": "import", "path": "no_such_module_xyz:fn"})
    with pytest.raises(ConfigError, match="no attribute"):
        load_object("spec_mod_t:missing")
    with pytest.raises(ConfigError, match="package.module:attribute"):
        load_object("spec_mod_t")


def test_load_object_reloads_edited_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import time

    mod = tmp_path / "spec_reload_t.py"
    mod.write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_object("spec_reload_t:VALUE") == 1
    mod.write_text("VALUE = 2\n")
    later = time.time() + 5
    os.utime(mod, (later, later))
    assert load_object("spec_reload_t:VALUE") == 2


class _Gate:
    """Holds a module's body mid-import (read by the module written in the next test)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()


GATE = _Gate()


def test_load_object_waits_for_a_module_another_thread_is_importing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the daemon builds two benchmarks at once in worker threads, both naming `_mocks:answer`:
    # the second must wait for the first import to finish, not read a half-initialised module
    (tmp_path / "spec_slow_import_t.py").write_text(
        "from tests.unit.specs.test_specs import GATE\n"
        "GATE.started.set()\n"
        "GATE.release.wait(60)\n"
        "def answer():\n    return 'ok'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "spec_slow_import_t", raising=False)
    GATE.started.clear()
    GATE.release.clear()
    got: dict[str, object] = {}

    def load(name: str) -> None:
        try:
            got[name] = load_object("spec_slow_import_t:answer")()
        except BaseException as exc:  # reported by the assertion below
            got[name] = exc

    first = threading.Thread(target=load, args=("first",))
    first.start()
    try:
        assert GATE.started.wait(slow(60))
        second = threading.Thread(target=load, args=("second",))
        second.start()
        # the first import is held in the module's body; a second loader that does not wait
        # for it finishes here (with the old bug: "has no attribute 'answer'"), one that waits
        # is still blocked and finishes once the body is released
        second.join(0.5)
    finally:
        GATE.release.set()
        first.join(slow(60))
    second.join(slow(60))
    assert got == {"first": "ok", "second": "ok"}
    monkeypatch.delitem(sys.modules, "spec_slow_import_t")


def test_mock_clients() -> None:
    req = Request(messages=[{"role": "user", "content": "hi"}])
    assert anyio.run(build_client({"kind": "mock", "reply": "yo"}).send, req).text == "yo"
    assert anyio.run(build_client({"kind": "mock", "echo": True}).send, req).text == "hi"
    assert (
        anyio.run(build_client({"kind": "mock", "function": "json:dumps"}).send, req).ok is False
    )  # wrong signature
    slow = build_client(msgspec.convert({"kind": "mock", "reply": "z", "delay_s": 0.01}, p.ClientSpec))
    assert isinstance(slow, MockClient) and anyio.run(slow.send, req).text == "z"
    for bad in ({"kind": "mock"}, {"kind": "mock", "reply": "a", "echo": True}, {"kind": "nope"}):
        with pytest.raises(ConfigError):
            build_client(bad)


def test_remote_clients_hold_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-very-secret-value")
    spec = msgspec.convert(
        {"kind": "openai", "model": "m", "api_key_env": "MY_KEY", "base_url": "http://127.0.0.1:1/v1"},
        p.ClientSpec,
    )
    cl = build_client(spec)
    assert cl.provider == "openai" and cl.model == "m"
    assert "sk-very-secret-value" not in repr(vars(cl))
    an = build_client({"kind": "anthropic", "model": "claude", "max_tokens": 50})
    assert an.provider == "anthropic" and an.max_tokens == 50
    with pytest.raises(ConfigError):
        build_client({"kind": "openai", "model": "m", "settings": {"no_such_setting": 1}})


def test_replay_client_needs_a_store() -> None:
    with pytest.raises(ConfigError):
        build_client({"kind": "replay", "recording": "r"})
    with pytest.raises(ConfigError, match="client.recording: no recording has this name"):
        build_client({"kind": "replay", "recording": "r", "model": "m"}, Store(":memory:"))
    fallback = {"kind": "mock", "echo": True}  # a new recording, filled from the fallback
    assert (
        build_client(
            {"kind": "replay", "recording": "r", "model": "m", "fallback": fallback}, Store(":memory:")
        ).model
        == "m"
    )


def test_references(tmp_path: Path) -> None:
    ref = build_reference(
        msgspec.convert({"items": ["a", "b"], "labels": ["A", None], "split": "dev"}, p.ReferenceSpec)
    )
    assert ref.ids == ["1", "2"] and ref.labels == {"1": "A", "2": None} and ref.splits["1"] == "dev"
    rows = tmp_path / "r.jsonl"
    rows.write_text('{"id": "x", "item": {"q": 1}, "label": ["a", "b"], "cluster": "c", "split": "train"}\n')
    r2 = build_reference({"path": str(rows)})
    assert r2.items == {"x": {"q": 1}} and r2.clusters == {"x": "c"} and r2.splits == {"x": "train"}
    store = Store(":memory:")
    store.reference_put(r2, "named")
    assert build_reference("named", store).hash == r2.hash
    with pytest.raises(ConfigError, match="no stored reference"):
        build_reference("nope", store)
    with pytest.raises(ConfigError, match="exactly one"):
        build_reference({"items": {"a": 1}, "path": str(rows)})


def test_scorers_and_governors() -> None:
    assert build_scorer("exact")(None, " paris ", "Paris").correct is True
    assert build_scorer("exact", {"normalise": False})(None, " paris ", "Paris").correct is False
    assert build_scorer("exact").name == "exact_normalised"
    with pytest.raises(ConfigError):
        build_scorer("regex")
    with pytest.raises(ConfigError):
        build_scorer("exact", {"bogus": 1})
    assert build_governor(None) is None
    gov = build_governor(msgspec.convert({"max_usd": 1.5}, p.GovernorSpec))
    assert gov is not None and gov.max_usd == 1.5 and gov.max_calls is None


def test_outputs_arm_spec_reads_predictions_made_elsewhere(tmp_path: Path) -> None:
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"qid": "q1", "prediction": "Paris"}\n{"qid": "q2", "prediction": "NO ANSWER"}\n')
    arm = build_arm({"kind": "outputs", "name": "file", "path": str(preds), "id_field": "qid"})
    ref = build_reference(
        {"items": {"q1": "France", "q2": "Peru", "q3": "Chad"}, "labels": ["Paris", "Lima", "x"]}
    )
    with pytest.raises(
        ConfigError,
        match=r"arms\[0\]\.path: arm 'file', preds.jsonl: 1 of 3 item\(s\) run have no output: 'q3'",
    ):
        benchmark(arm, ref, runs=1)
    with pytest.warns(Warning):
        bench = benchmark(
            arm,
            build_reference({"items": {"q1": "France", "q2": "Peru"}, "labels": ["Paris", "Lima"]}),
            runs=1,
        )
    assert [r.failure_kind for r in bench.rows] == [None, "wrong"]


def test_tatqa_specs_read_the_real_files(data: Path) -> None:
    ref = build_reference(
        {"path": str(data / "tatqa-dev-llm" / "tatqa_dataset_dev.json"), "format": "tatqa", "limit": 30}
    )
    arm = build_arm(
        {
            "kind": "outputs",
            "name": "pot",
            "format": "tatqa",
            "path": str(data / "tatqa-dev-llm" / "runs" / "codex_code-davinci-002_pot.jsonl"),
        }
    )
    with pytest.warns(Warning):
        bench = benchmark(arm, ref, runs=1, scorer=build_scorer("answer_contains"))
    assert len(bench.rows) == 30 and sum(bool(r.correct) for r in bench.rows) > 10
    with pytest.raises(ConfigError, match="arm.format"):
        build_arm({"kind": "outputs", "name": "x", "format": "tatqa", "outputs": {"a": "b"}})


def test_reference_ids_and_ids_from_keep_shared_items(tmp_path: Path, data: Path) -> None:
    ref = build_reference({"items": {"a": 1, "b": 2, "c": 3}, "labels": ["1", "2", "3"], "ids": ["c", "a"]})
    assert ref.ids == ["a", "c"] and ref.labels == {"a": "1", "c": "3"}
    with pytest.raises(ConfigError, match="reference.ids: not an item"):
        build_reference({"items": {"a": 1}, "ids": ["zz"]})
    squad = data / "squad2-dev-llama32-3b"
    shared = build_reference(
        {
            "path": str(squad / "questions.jsonl"),
            "format": "squad",
            "ids_from": str(squad / "runs" / "baseline_raw_50.jsonl"),
            "id_field": "qid",
        }
    )
    assert len(shared) == 50 and len(set(shared.clusters.values())) < 50
    with pytest.raises(ConfigError, match="reference.id_field"):
        build_reference(
            {
                "path": str(squad / "questions.jsonl"),
                "format": "squad",
                "ids_from": str(squad / "runs" / "baseline_raw_50.jsonl"),
                "id_field": "nope",
            }
        )
