"""The committed JSON Schema files are exactly what the protocol Structs generate."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from hrbench_client import protocol as p

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schema"


def test_schema_files_are_up_to_date() -> None:
    expected = p.schemas()
    committed = {f.name: f.read_bytes() for f in SCHEMA_DIR.glob("*.schema.json")}
    stale = sorted(n for n in expected.keys() | committed.keys() if expected.get(n) != committed.get(n))
    assert not stale, f"schema/ is stale ({stale[:5]}...); run `python -m hrbench_client.protocol schema`"


def test_every_method_and_notification_has_files() -> None:
    names = set(p.schemas())
    for method in p.METHODS:
        stem = method.replace("/", ".")
        assert {f"{stem}.params.schema.json", f"{stem}.result.schema.json"} <= names
    for note in p.NOTIFICATIONS:
        assert f"{note.replace('/', '.')}.schema.json" in names
    bundle = json.loads(p.schemas()["hrbench.schema.json"])
    assert set(bundle["methods"]) == set(p.METHODS)
    assert bundle["$schema"].endswith("2020-12/schema")


def test_arm_and_client_specs_are_tagged_unions() -> None:
    schema = json.loads(p.schemas()["benchmark.params.schema.json"])
    defs = schema["$defs"]
    arms = defs["BenchmarkParams"]["properties"]["arms"]["items"]
    assert set(arms["discriminator"]["mapping"]) == {"prompt", "reading", "outputs", "import"}
    assert defs["BenchmarkParams"]["additionalProperties"] is False
    assert "api_key" not in json.dumps(defs["OpenAIClientSpec"]["properties"]).replace("api_key_env", "")


def _strip(obj: object) -> object:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in ("description", "title")}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


@pytest.mark.parametrize("name", ["Row", "Step", "Usage"])
def test_wire_records_mirror_the_library(name: str) -> None:
    from hrbench import records

    wire, lib = getattr(p, name), getattr(records, name)
    assert wire.__struct_fields__ == lib.__struct_fields__
    assert wire.__struct_defaults__ == lib.__struct_defaults__
    assert _strip(msgspec.json.schema(wire)) == _strip(msgspec.json.schema(lib))


LSP_PARAMS = {"initialize"}  # LSP's own params: clients send many fields hrbench does not read


@pytest.mark.parametrize("method", sorted(set(p.METHODS) - LSP_PARAMS))
def test_params_reject_unknown_fields(method: str) -> None:
    params, _ = p.METHODS[method]
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.convert({"definitely_not_a_field": 1}, params)


@pytest.mark.parametrize("method", sorted(LSP_PARAMS))
def test_lsp_params_accept_what_lsp_clients_send(method: str) -> None:
    params, _ = p.METHODS[method]
    sent = {"processId": 12, "rootUri": None, "workspaceFolders": None, "trace": "off", "capabilities": {}}
    assert msgspec.convert(sent, params).processId == 12
