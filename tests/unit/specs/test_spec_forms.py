"""Every spec field with a form is checked when its client or arm is built (hrbench._forms).

A ``base_url`` of ``"${VAR}"`` (variables are expanded only in path fields) is refused before
the first run, as bad input is, not accepted for 200 runs to fail after 5 attempts each (exit 3).
A mapping spec's misspelt field (``base_ur``) is not dropped silently, which would send the
client to the provider's own URL.
"""

from __future__ import annotations

import math

import msgspec
import pytest

import hrbench as hb
from hrbench import specs
from hrbench.errors import ConfigError
from hrbench.store import Store
from hrbench_client import protocol as p


def _refused(build: object, *args: object, match: str | None = None) -> ConfigError:
    with pytest.raises(ConfigError, match=match) as info:
        build(*args)  # type: ignore[operator]
    return info.value


def _openai(**kw: object) -> dict[str, object]:
    return {"kind": "openai", "model": "m", "api_key_env": None, **kw}


@pytest.mark.parametrize("value", ["${LLM_URL}", "$LLM_URL", "${LLM_URL}/v1", "http://$HOST:8000/v1"])
def test_a_variable_in_base_url_is_refused_naming_the_field_and_where_variables_are_expanded(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_URL", "http://127.0.0.1:9/v1")  # set or not: never expanded there
    err = _refused(specs.build_client, _openai(base_url=value))
    assert err.field == "client.base_url"
    assert str(err).startswith("client.base_url: $")
    assert "is a variable reference, and this field is not expanded" in str(err)
    assert "only in the path fields of a TOML spec" in str(err) and "reference.path" in str(err)
    assert repr(value) in str(err)


def test_the_library_client_classes_refuse_a_variable_or_malformed_url() -> None:
    for cls in (hb.OpenAIClient, hb.AnthropicClient):
        assert _refused(cls, "m", "${LLM_URL}").field == "base_url"
        assert _refused(cls, "m", "localhost:8000/v1", match="add http:// or https://").field == "base_url"
    assert (
        hb.OpenAIClient("m", "http://127.0.0.1:8000/v1", None).url
        == "http://127.0.0.1:8000/v1/chat/completions"
    )


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("", "leave the field out"),
        ("localhost:8000/v1", "add http:// or https:// in front"),
        ("127.0.0.1:8000", "add http:// or https:// in front"),
        ("ftp://example.com/v1", "not ftp://"),
        ("http://", "it names no host"),
        ("http:example.com", "it names no host"),
        ("http://example.com:99999/v1", "port is not a number"),
        ("http://example.com /v1", "holds no spaces"),
        ("http://example.com/v1?api-version=1", "no query or fragment"),
    ],
)
def test_a_base_url_needs_http_or_https_and_a_host(url: str, why: str) -> None:
    err = _refused(specs.build_client, _openai(base_url=url), match=why)
    assert err.field == "client.base_url"


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8000/v1", "https://api.openai.com/v1", "http://[::1]:8080/v1", "HTTPS://Host/v1/"],
)
def test_urls_of_the_right_form_are_kept(url: str) -> None:
    assert specs.build_client(_openai(base_url=url)).base_url == url.rstrip("/")
    assert specs.build_client({"kind": "anthropic", "model": "c", "base_url": url}).base_url == url.rstrip(
        "/"
    )


def test_a_replay_and_its_fallback_check_their_urls_and_names() -> None:
    store = Store(":memory:")
    replay = {"kind": "replay", "recording": "r", "fallback": {"kind": "mock", "echo": True}}
    assert specs.build_client(replay, store).model == "mock"
    assert _refused(specs.build_client, {**replay, "base_url": "$U"}, store).field == "client.base_url"
    bad_fallback = {**replay, "fallback": _openai(base_url="127.0.0.1:8000")}
    assert _refused(specs.build_client, bad_fallback, store).field == "client.fallback.base_url"
    misspelt = {**replay, "fallback": {"kind": "mock", "rply": "x"}}
    err = _refused(specs.build_client, misspelt, store, match="did you mean 'reply'")
    assert err.field == "client.fallback.rply"
    assert _refused(specs.build_client, {**replay, "model": " "}, store).field == "client.model"
    assert _refused(specs.build_client, {**replay, "recording": ""}, store).field == "client.recording"


def test_unknown_fields_of_mapping_specs_are_refused_with_the_close_name() -> None:
    err = _refused(
        specs.build_client, _openai(base_ur="http://127.0.0.1:8000/v1"), match="did you mean 'base_url'"
    )
    assert err.field == "client.base_ur"
    err = _refused(specs.build_arm, {"kind": "prompt", "name": "a", "template": "t", "modle": "m"})
    assert err.field == "arm.modle" and "did you mean 'model'" in str(err)
    err = _refused(specs.build_reference, {"items": {"q1": "a"}, "lables": {"q1": "A"}})
    assert err.field == "reference.lables" and "did you mean 'labels'" in str(err)
    err = _refused(specs.build_governor, {"max_call": 5})
    assert err.field == "governor.max_call" and "did you mean 'max_calls'" in str(err)
    judge = {"client": {"kind": "mock", "rpley": "yes"}}
    err = _refused(specs.build_scorer, "judge", judge, match="did you mean 'reply'")
    assert err.field == "scorer_settings.client.rpley"


def test_a_judge_client_is_checked_and_named_under_scorer_settings() -> None:
    err = _refused(specs.build_scorer, "judge", {"client": _openai(base_url="${JUDGE_URL}")})
    assert err.field == "scorer_settings.client.base_url"


def test_model_names_are_not_empty_and_hold_no_variable() -> None:
    for model in ("", "  "):
        assert _refused(specs.build_client, _openai(model=model)).field == "client.model"
        assert (
            _refused(specs.build_client, {"kind": "mock", "reply": "x", "model": model}).field
            == "client.model"
        )
        prompt = {"kind": "prompt", "name": "a", "template": "t", "model": model}
        assert _refused(specs.build_arm, prompt, match="leave the field out").field == "arm.model"
        reading = {"kind": "reading", "recipe": "direct", "model": model}
        assert _refused(specs.build_arm, reading).field == "arm.model"
    assert (
        _refused(specs.build_client, _openai(model="${MODEL}"), match="variable reference").field
        == "client.model"
    )
    err = _refused(specs.build_client, _openai(billed_as=["gpt-4o", "$DEAR"]), match="variable reference")
    assert err.field == "client.billed_as[1]"


def test_numbers_in_range_and_enums() -> None:
    for field, value in [
        ("timeout_s", 0),
        ("timeout_s", math.nan),
        ("max_total_s", -1.0),
        ("max_attempts", 0),
        ("max_attempts", 2.5),
        ("max_connections", True),
    ]:
        assert _refused(specs.build_client, _openai(**{field: value})).field == f"client.{field}"
    assert (
        _refused(specs.build_client, {"kind": "mock", "reply": "x", "delay_s": -1}).field == "client.delay_s"
    )
    assert _refused(specs.build_reference, {"items": ["a"], "limit": 0}).field == "reference.limit"
    outputs = {"kind": "outputs", "name": "o", "outputs": {"1": "a"}, "format": "tatq"}
    err = _refused(specs.build_arm, outputs, match="did you mean 'tatqa'")
    assert err.field == "arm.format"
    err = _refused(specs.build_client, {"kind": "anthropic", "model": "c", "anthropic_version": "latest"})
    assert err.field == "client.anthropic_version"
    assert _refused(
        specs.build_client, _openai(api_key_env="$OPENAI_API_KEY"), match="without `\\$`"
    ).field == ("client.api_key_env")


def test_wire_structs_pass_and_name_their_fields_under_the_spec() -> None:
    """The daemon builds from Structs: the same checks, errors under the spec's place."""
    spec = msgspec.convert(_openai(base_url="${LLM_URL}"), p.ClientSpec)
    with pytest.raises(ConfigError) as info, specs.field_under("client"):
        specs.build_client(spec)
    assert info.value.field == "client.base_url"
    good = msgspec.convert(_openai(base_url="http://127.0.0.1:8000/v1"), p.ClientSpec)
    assert specs.build_client(good).base_url == "http://127.0.0.1:8000/v1"


def _fields(union: object) -> dict[str, tuple[str, ...]]:
    return {
        t.__struct_config__.tag: ("kind", *t.__struct_fields__)  # type: ignore[attr-defined]
        for t in union.__args__  # type: ignore[attr-defined]
    }


def test_the_mapping_field_lists_match_the_wire_structs() -> None:
    assert {k: set(v) for k, v in specs.CLIENT_FIELDS.items()} == {
        k: set(v) for k, v in _fields(p.ClientSpec).items()
    }
    assert {k: set(v) for k, v in specs.ARM_FIELDS.items()} == {
        k: set(v) for k, v in _fields(p.ArmSpec).items()
    }
    assert set(specs.REFERENCE_FIELDS) == set(p.ReferenceSpec.__struct_fields__)
    assert set(p.GovernorSpec.__struct_fields__) == {*specs.GOVERNOR_LIMITS, "defaults"}
    assert set(specs.GOVERNOR_LIMITS) == {"max_calls", "max_usd", "max_tokens"} | {
        f"{cap}_per_run" for cap in ("max_calls", "max_usd", "max_tokens")
    }


def test_the_wire_names_the_close_field_of_an_unknown_one() -> None:
    def hint(data: dict[str, object]) -> str:
        with pytest.raises(msgspec.ValidationError) as info:
            msgspec.convert(data, p.BenchmarkParams)
        return p.unknown_field_hint(str(info.value), p.BenchmarkParams, msgspec.json.encode(data))

    assert hint({"client": _openai(base_ur="x")}).endswith("at `$.client` (did you mean `base_url`?)")
    assert hint({"rusn": 5}).endswith("(did you mean `runs`?)")
    arms = [
        {"kind": "prompt", "name": "a", "template": "t"},
        {"kind": "prompt", "name": "b", "template": "t", "sytem": "s"},
    ]
    assert hint({"arms": arms}).endswith("at `$.arms[1]` (did you mean `system`?)")
    assert hint(
        {"client": {"kind": "openai", "model": "m", "prices": {"x": {"inptu": 1, "output": 2}}}}
    ).endswith("(did you mean `input`?)")
    # the kind the object gives decides: a mock client has no base_url to suggest
    assert hint({"client": {"kind": "mock", "reply": "x", "base_ur": "y"}}).endswith("at `$.client`")
    assert p.unknown_field_hint("Expected `int`, got `str` - at `$.runs`", p.BenchmarkParams) == (
        "Expected `int`, got `str` - at `$.runs`"
    )
