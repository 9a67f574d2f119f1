"""The generated reference has an entry for every spec field, CLI option, wire method and public name."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from tests.docs._blocks import DOCS


def _refgen() -> Any:
    sys.path.insert(0, str(DOCS / "_gen"))
    try:
        import refgen  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(DOCS / "_gen"))
    return refgen


REFGEN = _refgen()
SPEC = REFGEN.spec_page()
CLI = REFGEN.cli_page()


@pytest.mark.parametrize(("struct", "field"), [(s, f) for s, f, _ in REFGEN.spec_fields()])
def test_every_spec_field_has_a_reference_entry(struct: str, field: str) -> None:
    """A field the schema has needs a meaning: a ``Meta(description=...)`` or docs/_gen/spec_fields.py."""
    prop = REFGEN.spec_structs()[struct]["properties"][field]
    text, _ = REFGEN.field_entry(struct, field, prop)
    assert text.strip(), f"{struct}.{field} has no description: add one to docs/_gen/spec_fields.py"
    section = SPEC[SPEC.index(f"## {struct}\n") :].split("\n## ", 1)[0]
    assert f"| `{field}` |" in section


def test_the_fields_table_names_no_field_that_is_gone() -> None:
    known = {f"{s}.{f}" for s, f, _ in REFGEN.spec_fields()}
    table = REFGEN._fields_table()
    assert sorted(set(table.FIELDS) - known) == []
    assert sorted(set(table.STRUCTS) - set(REFGEN.spec_structs())) == []


def _options() -> list[tuple[str, str]]:
    out = []
    for line, parser, _ in REFGEN.commands():
        for action in REFGEN.options(parser):
            if line != "hrb" and action.dest in REFGEN.GLOBAL:
                continue
            out.append((line, REFGEN.option_name(action)))
    return out


@pytest.mark.parametrize(("command", "option"), _options())
def test_every_cli_option_has_a_reference_entry(command: str, option: str) -> None:
    parser = dict((line, p) for line, p, _ in REFGEN.commands())[command]
    action = next(a for a in REFGEN.options(parser) if REFGEN.option_name(a) == option)
    assert (action.help or "").strip(), f"`{command}` {option} has no help text"
    section = CLI[CLI.index(f"## `{command}`\n") :].split("\n## ", 1)[0]
    assert f"| `{option}` |" in section


def test_every_command_and_wire_method_is_in_the_reference() -> None:
    import json

    wire = REFGEN.wire_page()
    bundle = json.loads((REFGEN.SCHEMA / "hrbench.schema.json").read_text(encoding="utf-8"))
    missing = [m for m in [*bundle["methods"], *bundle["notifications"]] if f"## `{m}`" not in wire]
    assert not missing
    assert len([c for c in REFGEN.commands()]) >= 20
    assert "## `hrb recording export`" in CLI and "## `hrb ref put`" in CLI and "## `hrb eval`" in CLI


def test_the_python_reference_documents_every_public_name() -> None:
    import hrbench
    import hrbench_client

    page = REFGEN.python_page()
    assert [n for n in hrbench.__all__ if f"::: hrbench.{n}\n" not in page] == []
    assert "::: hrbench_client.connect" in page and "::: hrbench_client.Client" in page
    assert hrbench_client.connect
