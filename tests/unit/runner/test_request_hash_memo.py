"""The request hash's memo of recent requests: the same hashes as computed afresh, and bounded.

A cell's runs differ only in their draw index, which the request hash leaves out, so the
hash of each run after the first is looked up (``hrbench.runner._cache._HASHED``). The keys
must be those the store already holds: the memo may only save work, never change a key.
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrbench as hb
from hrbench.records import Request
from hrbench.runner import _cache as cache_mod
from hrbench.runner._cache import cache_key, request_hash
from hrbench.store import Store
from tests._examples import examples


def _fresh(request: Request) -> str:
    """The hash computed with empty memos."""
    cache_mod._HASHED.clear()
    cache_mod._HASHED_BYTES[0] = 0
    cache_mod._PLAIN_HASHED.clear()
    cache_mod._PLAIN_CHARS[0] = 0
    return request_hash(request)


# Keys written by the store before the memo existed (computed by the tree before it): a
# memo that changed a key would orphan every stored cache entry and recording.
_STORED = (
    "30c45715eb2e7d9b23406d51658de9c2d52a77979f1685e6f83915b181a22ace",
    "a008c8a62415585a141f606cc91c0ef96dc5b0c192fd40b4f62cd6c2d2455a8d",
)


def _req(content: str, draw: int = 1, **kw: object) -> Request:
    return Request(messages=[{"role": "user", "content": content}], draw_index=draw, **kw)  # type: ignore[arg-type]


def test_keys_are_those_the_store_already_holds() -> None:
    r = _req("q1", 2, params={"temperature": 0.5, "seed": 3}, model="m2")
    for _ in range(2):  # afresh, then from the memo
        assert (request_hash(r), cache_key(r, "A")) == _STORED


def test_memo_gives_the_fresh_hash_for_every_request_and_repeat() -> None:
    requests = [_req(f"q{i}", d) for i in range(50) for d in (1, 2, 3)]
    requests += [_req("q1", 1, params={"temperature": 0.5}), _req("q1", 1, model="m2")]
    fresh = [_fresh(r) for r in requests]
    assert len(set(fresh)) == 52  # the draw index aside, every request hashes apart
    for r, h in zip(requests * 2, fresh * 2, strict=True):  # the memo serves the repeats
        assert request_hash(r) == h
    assert request_hash(_req("q1", 1)) != request_hash(_req("q2", 1))
    # the draw index stays out of the request hash and in the cache key
    assert request_hash(_req("q1", 1)) == request_hash(_req("q1", 2))
    assert cache_key(_req("q1", 1), "A") != cache_key(_req("q1", 2), "A")
    expected = hashlib.sha256(f"{_fresh(_req('q1', 2))}|A|2".encode()).hexdigest()
    assert cache_key(_req("q1", 2), "A") == expected


def test_memo_is_emptied_past_its_byte_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_mod, "_HASHED_MAX_BYTES", 2_000)
    cache_mod._HASHED.clear()
    cache_mod._HASHED_BYTES[0] = 0
    big = _req("y" * 5_000)
    big_hash = _fresh(big)
    fresh = [_fresh(_req(f"question {i} " + "x" * 40)) for i in range(200)]
    cache_mod._HASHED.clear()
    cache_mod._HASHED_BYTES[0] = 0
    for i in range(200):
        r = _req(f"question {i} " + "x" * 40)
        assert request_hash(r) == fresh[i]
        held = sum(len(k) for k in cache_mod._HASHED)
        assert held == cache_mod._HASHED_BYTES[0]
        assert held <= 2_000
    assert len(cache_mod._HASHED) > 1
    # one request past the bound is hashed right and held alone
    assert request_hash(big) == big_hash
    assert len(cache_mod._HASHED) == 1


class _Counting:
    """The canonical encoder, counting the requests it encodes (one per :func:`request_hash`)."""

    def __init__(self, inner: object) -> None:
        self.inner, self.n = inner, 0

    def encode(self, body: object) -> bytes:
        self.n += 1
        return self.inner.encode(body)  # type: ignore[attr-defined, no-any-return]


def test_each_request_is_encoded_and_hashed_once_through_cache_and_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One hash per request: the runtime hands its request hash and key to the cache and the recorder."""
    counting = _Counting(cache_mod._canon)
    monkeypatch.setattr(cache_mod, "_canon", counting)
    store = Store(tmp_path / "s.sqlite3")
    ref = hb.Reference({f"q{i}": f"question {i}" for i in range(4)}, labels="x")
    # a request with params is not plain (_plain_key): each is encoded, once
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item, temperature=0).text)
    try:
        for _ in range(2):  # sent and kept, then served from the cache
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                bench = hb.benchmark(
                    arm,
                    ref,
                    runs=2,
                    client=hb.MockClient(lambda m, p: "x"),
                    governor=hb.Governor(),
                    cache=hb.Cache(store),
                    record="r1",
                    store=store,
                )
            assert [r.correct for r in bench.rows] == [True] * 8
            assert counting.n == 8, counting.n  # one encoding per request, not one per use
            counting.n = 0
        assert store.cache_stats()["entries"] == 8
        assert len(store.recording_export("r1")) == 8
    finally:
        store.close()


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=examples(200), deadline=None)
@given(
    messages=st.lists(
        st.dictionaries(st.sampled_from(["role", "content", "name"]), _JSON, max_size=3), max_size=3
    ),
    params=st.dictionaries(st.text(max_size=8), _JSON, max_size=3),
    tools=st.none() | st.lists(st.dictionaries(st.text(max_size=6), _JSON, max_size=2), max_size=2),
    wire=st.none()
    | st.fixed_dictionaries(
        {},
        optional={
            "endpoint": st.text(max_size=10),
            "defaults": st.dictionaries(st.text(max_size=8), _JSON, max_size=2),
            "headers": st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=2),
            "responder": st.text(max_size=10),
        },
    ),
    base_url=st.sampled_from(["", "http://x/v1", "http://x/v1/"]),
)
def test_the_hash_is_of_the_request_as_a_dict_sorted_at_every_level(
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    tools: list[dict[str, Any]] | None,
    wire: dict[str, Any] | None,
    base_url: str,
) -> None:
    # the keys the store holds are sha256 of this dict's canonical JSON (keys sorted at every
    # level); however it is encoded, the hash must stay the same, byte for byte
    r = Request(
        messages=messages, params=params, tools=tools, model="m", provider="p", base_url=base_url, wire=wire
    )
    w = wire or {}
    defaults = w.get("defaults") or {}
    body = {
        "provider": "p",
        "endpoint": w.get("endpoint") or base_url.rstrip("/"),
        "model": "m",
        "messages": messages,
        "params": {**defaults, **params} if defaults else params,
        "tools": tools,
        "headers": w.get("headers") or {},
        "responder": w.get("responder"),
    }
    canon = msgspec.json.Encoder(order="sorted").encode(body)
    assert _fresh(r) == hashlib.sha256(canon).hexdigest()


_TEXT = st.text(max_size=8)


@settings(max_examples=examples(200), deadline=None)
@given(
    messages=st.lists(st.fixed_dictionaries({"role": _TEXT, "content": _TEXT}), max_size=3),
    responder=st.none() | _TEXT,
    model=st.none() | _TEXT,
    base_url=st.sampled_from(["", "http://x/v1", "http://x/v1/"]),
    others=st.lists(st.tuples(_TEXT, _TEXT), max_size=3),
)
def test_a_plain_request_found_by_its_fields_has_the_hash_of_its_encoding(
    messages: list[dict[str, str]],
    responder: str | None,
    model: str | None,
    base_url: str,
    others: list[tuple[str, str]],
) -> None:
    # plain requests are looked up by their fields, not their bytes: the hash found must be the
    # one their canonical JSON gives, whatever other plain requests the memo holds
    wire = None if responder is None else {"responder": responder}
    r = Request(messages=messages, model=model, base_url=base_url, provider="p", wire=wire)
    assert cache_mod._plain_key(r) is not None
    expected = hashlib.sha256(
        msgspec.json.Encoder(order="sorted").encode(
            {
                "provider": "p",
                "endpoint": base_url.rstrip("/"),
                "model": model,
                "messages": messages,
                "params": {},
                "tools": None,
                "headers": {},
                "responder": responder,
            }
        )
    ).hexdigest()
    assert _fresh(r) == expected
    for role, content in others:  # other plain requests in the memo
        request_hash(Request(messages=[{"role": role, "content": content}], provider="p", wire=wire))
    assert request_hash(r) == expected  # from the memo
    assert cache_mod._plain_key(msgspec.structs.replace(r, params={"seed": 1})) is None


def test_only_plain_requests_are_looked_up_by_their_fields() -> None:
    plain = _req("q1")
    assert cache_mod._plain_key(plain) is not None
    assert cache_mod._plain_key(msgspec.structs.replace(plain, wire={"responder": "f"})) is not None
    not_plain = [
        _req("q1", params={"temperature": 0}),
        _req("q1", tools=[{"name": "t"}]),
        msgspec.structs.replace(plain, wire={"responder": "f", "endpoint": "http://x"}),
        msgspec.structs.replace(plain, wire={"responder": {"f": 1}}),
        msgspec.structs.replace(plain, wire={"defaults": {"max_tokens": 3}}),
        Request(messages=[{"role": "user", "content": [{"type": "text", "text": "q1"}]}]),
        Request(messages=[{"role": "user", "content": "q1", "name": "n"}]),
        Request(messages=[{"role": "user", "content": 1}]),
        Request(messages=[{"role": "user", "content": "q1"}], model=1),  # type: ignore[arg-type]
    ]
    for r in not_plain:
        assert cache_mod._plain_key(r) is None, r
        assert request_hash(r) == _fresh(r)


def test_the_plain_memo_is_emptied_past_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_mod, "_HASHED_MAX_BYTES", 2_000)
    fresh = [_fresh(_req(f"question {i} " + "x" * 40)) for i in range(200)]
    for i in range(200):
        assert request_hash(_req(f"question {i} " + "x" * 40)) == fresh[i]
        held = sum(len(p) for k in cache_mod._PLAIN_HASHED for p in k if p is not None)
        assert held == cache_mod._PLAIN_CHARS[0] <= 2_000
    assert len(cache_mod._PLAIN_HASHED) > 1


def test_the_cache_key_is_the_hash_of_the_request_hash_arm_and_draw() -> None:
    # the key the store holds, from a prefix state kept per (request hash, arm): any order of
    # arms, draws and requests gives each its own key
    requests = [_req(f"q{i}", d) for i in range(3) for d in (1, 2, None)]  # type: ignore[arg-type]
    for arm in ("A", "B", "A", ""):
        for r in requests:
            draw = "-" if r.draw_index is None else str(r.draw_index)
            want = hashlib.sha256(f"{_fresh(r)}|{arm}|{draw}".encode()).hexdigest()
            assert cache_key(r, arm) == want
            assert cache_key(r, arm, request_hash(r)) == want


def test_plain_requests_that_differ_in_any_field_are_found_apart() -> None:
    base = Request(
        messages=[{"role": "user", "content": "q1"}],
        model="m",
        provider="p",
        base_url="u",
        wire={"responder": "f"},
    )
    variants = [
        base,
        msgspec.structs.replace(base, model="m2"),
        msgspec.structs.replace(base, model=None),
        msgspec.structs.replace(base, provider="p2"),
        msgspec.structs.replace(base, base_url="u2"),
        msgspec.structs.replace(base, wire={"responder": "g"}),
        msgspec.structs.replace(base, wire=None),
        msgspec.structs.replace(base, messages=[{"role": "system", "content": "q1"}]),
        msgspec.structs.replace(base, messages=[{"role": "user", "content": "q2"}]),
        msgspec.structs.replace(base, messages=[{"role": "user", "content": "q1"}] * 2),
    ]
    fresh = [_fresh(r) for r in variants]
    assert len(set(fresh)) == len(variants)
    for r in variants:  # every one in the memo at once
        request_hash(r)
    assert [request_hash(r) for r in variants] == fresh
