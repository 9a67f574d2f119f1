"""The daemon's wire refuses a malformed spec field before anything is stored or sent.

A ``base_url`` of ``"${VAR}"`` is refused, not accepted for every run to fail late.
A spec sent by any client (here the Python client, with a plain dict, as a Lua table or jq
would send it) gets the checks of :mod:`hrbench._util.forms` through :mod:`hrbench.specs`, and an
unknown field gets the close name (:func:`hrbench_client.protocol.unknown_field_hint`).
"""

from __future__ import annotations

from typing import Any

import pytest

import hrbench_client as hc
from hrbench.testing import LoopbackServer
from hrbench_client import protocol as p
from tests.server._daemon import Daemon


def _spec(client: dict[str, Any]) -> dict[str, Any]:
    return {
        "arms": [{"kind": "prompt", "name": "ask", "template": "Capital of {item}?"}],
        "reference": {"items": {"q1": "France", "q2": "Peru"}, "labels": {"q1": "Paris", "q2": "Lima"}},
        "client": {"kind": "openai", "model": "loopback-1", "api_key_env": None, "max_attempts": 1, **client},
        "runs": 5,
    }


def test_a_variable_base_url_is_refused_over_the_wire_before_any_request(daemon: Daemon) -> None:
    with LoopbackServer() as srv, daemon.client() as c:
        with pytest.raises(hc.ConfigError) as info:
            list(c.benchmark(_spec({"base_url": "${LLM_URL}"})))
        assert srv.requests == []
        assert info.value.code == p.ERROR_CODES["ConfigError"] and info.value.field == "client.base_url"
        assert "${LLM_URL} is a variable reference" in info.value.message
        assert "only in the path fields of a TOML spec" in info.value.message
        assert c.benchmarks() == []  # refused before it was stored
        # the same spec with the URL itself runs
        stream = c.benchmark(_spec({"base_url": srv.base_url}))
        assert len(list(stream)) == 10 and len(srv.requests) == 10  # 2 items x 5 draws


def test_other_forms_and_unknown_fields_over_the_wire(daemon: Daemon) -> None:
    with daemon.client() as c:
        replay = {"kind": "replay", "recording": "r", "fallback": {"kind": "mock", "reply": "x", "model": ""}}
        cases: list[tuple[dict[str, Any], str]] = [
            (_spec({"base_url": "127.0.0.1:8000/v1"}), "client.base_url"),
            (_spec({"model": " ", "base_url": "http://127.0.0.1:9/v1"}), "client.model"),
            ({**_spec({}), "client": replay}, "client.fallback.model"),
        ]
        for spec, field in cases:
            with pytest.raises(hc.ConfigError) as info:
                list(c.benchmark(spec))
            assert info.value.field == field, info.value.message
        arm = {"kind": "prompt", "name": "ask", "template": "t", "model": ""}
        with pytest.raises(hc.ConfigError, match=r"arms\[0\]\.model: expected a model name"):
            list(c.benchmark({**_spec({"base_url": "http://127.0.0.1:9/v1"}), "arms": [arm]}))
        with pytest.raises(
            hc.InvalidParams, match=r"unknown field `base_ur` - at `\$\.client` \(did you mean `base_url`\?\)"
        ):
            list(c.benchmark(_spec({"base_ur": "http://127.0.0.1:9/v1"})))
        assert c.benchmarks() == []


def test_a_misspelt_value_over_the_wire_names_the_close_one_and_every_one_allowed(daemon: Daemon) -> None:
    """msgspec says ``Invalid enum value 'lmeval'`` and no more; the daemon says the choices."""
    with daemon.client() as c:
        spec = {**_spec({}), "reference": {"path": "r.jsonl", "format": "lmeval"}}
        with pytest.raises(hc.InvalidParams) as info:
            list(c.benchmark(spec))
        assert info.value.message.endswith(
            "reference.format: unknown value; did you mean 'lm-eval'? "
            "expected one of rows, squad, tatqa, inspect, lm-eval, promptfoo (got 'lmeval')"
        ), info.value.message
        arm = {"kind": "outputs", "name": "o", "path": "o.json", "format": "Inspect"}
        with pytest.raises(
            hc.InvalidParams, match=r"arms\[0\]\.format: unknown value; did you mean 'inspect'\? "
        ):
            list(c.benchmark({**_spec({}), "arms": [arm]}))
        assert c.benchmarks() == []


def test_a_template_naming_no_field_of_the_item_is_refused_over_the_wire(daemon: Daemon) -> None:
    with LoopbackServer() as srv, daemon.client() as c:
        spec = _spec({"base_url": srv.base_url})
        spec["arms"] = [{"kind": "prompt", "name": "ask", "template": "Capital of France?"}]
        with pytest.raises(hc.ConfigError) as info:
            list(c.benchmark(spec))
        assert info.value.field == "arms[0].template", info.value.message
        assert "names no field of the item, so every item would get the same prompt" in info.value.message
        assert "write {item} (the whole item)" in info.value.message
        assert "(got 'Capital of France?')" in info.value.message
        assert srv.requests == [] and c.benchmarks() == []
