"""A prompt arm's spec errors are refused before the first run, naming the arm, field and value."""

from __future__ import annotations

from typing import Any

import pytest

import hrbench as hb
from hrbench import specs
from hrbench.errors import ConfigError

CLIENT = {"kind": "mock", "reply": "Paris"}
CALLS: list[Any] = []  # what the probe arm (run beside the prompt arm) was called with


def _run(template: str, items: Any, client: Any = CLIENT, name: str = "ask") -> list[hb.Arm]:
    arm = specs.build_arm({"kind": "prompt", "name": name, "template": template})
    calls = CALLS
    calls.clear()
    ref = hb.Reference(items, labels="Paris")
    hb.benchmark(
        [arm, hb.Arm("probe", lambda item, ctx: calls.append(item) or "x")],
        ref,
        runs=5,
        client=None if client is None else specs.build_client(client),
    )
    return calls


@pytest.mark.parametrize("field", ["country", "nation", "q", "item_name", "Country"])
@pytest.mark.parametrize(
    "items", [{"q1": "France", "q2": "Peru"}, {"q1": {"question": "x"}, "q2": {"question": "y"}}]
)
def test_a_field_no_item_has_is_refused_before_any_run(field: str, items: dict[str, Any]) -> None:
    template = f"Capital of {{{field}}}?"
    with pytest.raises(ConfigError) as info:
        _run(template, items)
    assert CALLS == []  # refused before the first run of any arm
    msg = str(info.value)
    assert msg.startswith("arms[0].template:") and f"{{{field}}}" in msg and "item 'q1'" in msg
    assert "2 of 2 item(s) lack it: q1, q2" in msg and repr(template) in msg


@pytest.mark.parametrize(
    ("lacking", "shown"),
    [(["q3"], "q3"), (["q2", "q4"], "q2, q4"), ([f"q{i}" for i in range(2, 9)], "q2, q3, q4, q5, q6, ...")],
)
def test_items_that_lack_a_field_are_named_even_when_the_first_has_it(lacking: list[str], shown: str) -> None:
    items = {f"q{i}": ({"title": "t"} if f"q{i}" in lacking else {"country": "c"}) for i in range(1, 9)}
    with pytest.raises(ConfigError) as info:
        _run("Capital of {country}?", items)
    msg = str(info.value)
    assert f"which item {lacking[0]!r} lacks ({len(lacking)} of 8 item(s) lack it: {shown})" in msg


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("Capital of {item?", "malformed template (expected '}' before end of string)"),
        ("Capital of {item", "malformed template"),
        ("Capital of item}", "malformed template (Single '}'"),
        ("Capital of {}?", "positional fields"),
        ("Capital of {0}?", "names {0}, which item 'q1' lacks"),
        ("Capital of {item!z}", "Unknown conversion specifier z"),
        ("Capital of {item:%%%}", "cannot be filled with item 'q1'"),
    ],
)
def test_a_malformed_template_is_refused_before_any_run(template: str, why: str) -> None:
    with pytest.raises(ConfigError) as info:
        _run(template, {"q1": "France", "q2": "Peru"}, name="arm two")
    msg = str(info.value)
    assert msg.startswith("arms[0].template:") and why in msg and repr(template)[:60] in msg


@pytest.mark.parametrize("template", ["Capital of {item}?", "{question} ({item[question]})", "{item.real}"])
def test_a_prompt_arm_without_a_client_is_refused(template: str) -> None:
    with pytest.raises(ConfigError, match=r"^arms\[0\]\.client: prompt arm 'ask' calls a model"):
        _run(template, {"q1": {"question": "x"}}, client=None)


@pytest.mark.parametrize(
    ("template", "items"),
    [
        ("Capital of {item}?", ["France", "Peru"]),
        ("Q: {question} D: {document}", [{"question": "q", "document": "d"}] * 3),
        ("{item[question]}", [{"question": "q"}]),
        ("{{literal}} {item}", ["x"]),
    ],
)
def test_good_templates_run(template: str, items: list[Any]) -> None:
    assert len(_run(template, items)) == 5 * len(items)


def test_the_check_only_sees_the_split_that_runs() -> None:
    arm = specs.build_arm({"kind": "prompt", "name": "ask", "template": "{country}"})
    ref = hb.Reference([{"title": "t"}, {"country": "c"}], labels="c", split=["dev", "test"])
    bench = hb.benchmark(arm, ref, runs=5, client=specs.build_client(CLIENT), split="test")
    assert len(bench.rows) == 5


@pytest.mark.parametrize(
    ("template", "items", "allowed"),
    [
        ("Capital of France?", {"q1": "France", "q2": "Peru"}, "write {item} (the whole item) (got"),
        ("Answer {{item}}.", {"q1": "France"}, "write {item} (the whole item) (got"),  # {{ is a brace
        ("", {"q1": "France"}, "write {item}"),
        (
            "Answer the question.",
            {"q1": {"question": "a", "context": "b"}},
            "write {item} (the whole item) or a field of the item: {question}, {context} (got",
        ),
    ],
)
def test_a_template_naming_no_field_of_the_item_is_refused_before_any_run(
    template: str, items: dict[str, Any], allowed: str
) -> None:
    """Every item would get the same prompt: the template is a prompt arm's only way to the model."""
    with pytest.raises(ConfigError) as info:
        _run(template, items)
    assert CALLS == []
    msg = str(info.value)
    assert msg.startswith(
        "arms[0].template: names no field of the item, so every item would get the same prompt"
    )
    assert allowed in msg and msg.endswith(f"(got {template!r})"), msg


def test_a_system_prompt_does_not_carry_the_item() -> None:
    """``system`` is sent as written: a template without a field is refused even with one."""
    arm = specs.build_arm({"kind": "prompt", "name": "a", "template": "Go.", "system": "About {item}"})
    with pytest.raises(ConfigError, match=r"^arms\[0\]\.template: names no field"):
        hb.benchmark([arm], hb.Reference({"q1": "France"}), runs=1, client=specs.build_client(CLIENT))
