"""The distinct-draw check holds across a resume (seed 002).

A benchmark refused because its runs were not distinct draws (a provider that gives one
response id per prompt, or an arm that leaves the draw index out under a cache) is not "fixed"
by ``retry_errors``: no retry accepts one more duplicate from the cache, until the benchmark is
``done`` on five copies of one draw. The kept runs' draws seed the check.
"""

from __future__ import annotations

import hashlib
import warnings
from typing import Any

import msgspec
import pytest

import hrbench as hb

ASK = hb.Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}?").text)
NO_INDEX = hb.Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}?", draw_index=None).text)


def _same_id(messages: Any, params: Any) -> hb.Result:
    """A provider that gives one response id per prompt, whatever the draw (``sameid``)."""
    prompt = messages[-1]["content"]
    return hb.Result(text="Paris", response_id="chatcmpl-" + hashlib.sha256(prompt.encode()).hexdigest()[:8])


def _fresh_ids(prefix: str = "a") -> hb.MockClient:
    n = iter(range(10**6))
    return hb.MockClient(lambda m, p: hb.Result(text="Paris", response_id=f"chatcmpl-{prefix}{next(n)}"))


def _ref(n: int) -> hb.Reference:
    return hb.Reference({f"q{i}": f"C{i}" for i in range(n)}, labels=["Paris"] * n)


@pytest.mark.parametrize(
    ("arm", "client", "cached"),
    [
        (ASK, hb.MockClient(_same_id), True),  # a reply id seen in a kept run, served from the cache
        (ASK, hb.MockClient(_same_id), False),  # ... or sent again live
        (NO_INDEX, _fresh_ids(), True),  # the kept run's own cache entry served again
    ],
    ids=["same-id-cached", "same-id-live", "no-draw-index-cached"],
)
@pytest.mark.parametrize("retries", [1, 4])
def test_retry_errors_refuses_the_duplicates_again_every_time(
    tmp_path: Any, arm: hb.Arm, client: hb.MockClient, cached: bool, retries: int
) -> None:
    """Every retry refuses the same runs; none is laundered into a kept draw."""
    store = hb.Store(tmp_path / "s.db")
    cache = hb.Cache(store) if cached else None
    ref = _ref(2)
    with pytest.raises(hb.DuplicateDrawError) as err:
        hb.benchmark(arm, ref, runs=5, client=client, cache=cache)
    bench = err.value.bench
    assert [r.failure_kind for r in bench.rows] == [None, *["error"] * 4] * 2
    traces = dict(bench.traces)
    for _ in range(retries):
        done = {(r.arm, r.item, r.run): r for r in bench.rows}
        with pytest.raises(hb.DuplicateDrawError, match="not distinct draws") as again:
            hb.benchmark(
                arm, ref, runs=5, client=client, cache=cache, done=done, done_traces=traces, retry_errors=True
            )
        bench = again.value.bench
        assert [r.failure_kind for r in bench.rows] == [None, *["error"] * 4] * 2
        assert len(again.value.bench.duplicates) == 8
        traces = {**traces, **bench.traces}


def test_a_plain_resume_checks_the_runs_it_makes_against_the_kept_ones() -> None:
    """A resume after a crash (runs 1-2 kept) refuses a run 3 that repeats run 1's response id."""
    client = hb.MockClient(_same_id)
    ref = _ref(1)
    with pytest.raises(hb.DuplicateDrawError) as err:
        hb.benchmark(ASK, ref, runs=5, client=client)
    first = err.value.bench
    done = {(r.arm, r.item, r.run): r for r in first.rows if r.run == 1}  # as if it died after run 1
    with pytest.raises(hb.DuplicateDrawError) as resumed:
        hb.benchmark(ASK, ref, runs=5, client=client, done=done, done_traces=first.traces)
    assert [r.failure_kind for r in resumed.value.bench.rows] == [None, *["error"] * 4]


def test_a_resume_with_distinct_draws_is_not_refused() -> None:
    """The check refuses repeats only: a provider that gives fresh draws resumes cleanly."""
    ref = _ref(3)
    first = hb.benchmark(ASK, ref, runs=5, client=_fresh_ids())
    done = {(r.arm, r.item, r.run): r for r in first.rows if r.run <= 2}
    again = hb.benchmark(ASK, ref, runs=5, client=_fresh_ids("b"), done=done, done_traces=first.traces)
    assert again.status == "done" and not again.duplicates


def test_kept_runs_without_traces_are_said_not_checked() -> None:
    """Loud, never silent: kept runs given without their traces cannot be checked against."""
    ref = _ref(2)
    first = hb.benchmark(ASK, ref, runs=5, client=_fresh_ids())
    done = {(r.arm, r.item, r.run): r for r in first.rows if r.run <= 2}
    with pytest.warns(hb.DrawsUncheckedWarning, match="4 of 4 kept run"):
        hb.benchmark(ASK, ref, runs=5, client=hb.MockClient(lambda m, p: "Paris"), done=done)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hb.benchmark(ASK, ref, runs=5, client=_fresh_ids("b"), done=dict(done), done_traces=first.traces)


# -- items with the same payload -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "groups"),
    [
        ({"q1": "France", "q2": "Peru", "q3": "France"}, "'q1' = 'q3'"),
        ({"a": {"x": 1, "y": "t"}, "b": {"y": "t", "x": 1}, "c": {"x": 2}}, "'a' = 'b'"),
        ({"a": "x", "b": "x", "c": "y", "d": "y", "e": "x"}, "'a' = 'b' = 'e'; 'c' = 'd'"),
    ],
)
def test_items_with_the_same_payload_are_refused_under_a_cache_before_any_call(
    items: dict[str, Any], groups: str
) -> None:
    """Under a cache the later item would get the first one's draws: refused up front, naming the ids."""
    client = _fresh_ids()
    ref = hb.Reference(items, labels=["Paris"] * len(items))
    with pytest.raises(hb.ConfigError, match="reference.items: items with the same payload") as err:
        hb.benchmark(ASK, ref, runs=5, client=client, cache=hb.Cache())
    assert groups in str(err.value)
    assert client.calls == 0


def test_items_with_the_same_payload_run_without_a_cache_and_without_a_client() -> None:
    """Without a cache each copy gets its own draws: nothing to refuse."""
    ref = hb.Reference({"q1": "France", "q2": "Peru", "q3": "France"}, labels=["Paris", "Lima", "Paris"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bench = hb.benchmark(ASK, ref, runs=5, client=_fresh_ids())
        assert bench.status == "done"
        hb.benchmark(hb.Arm("fixed", lambda item, ctx: "Paris"), ref, runs=5, cache=hb.Cache())


# -- what seed and version select (neither is in the cache key) -----------------------------------


def test_seed_selects_ctx_rng_not_the_cached_replies_and_a_params_seed_does(tmp_path: Any) -> None:
    """seed 002: `seed` starts ctx.rng; the draw is selected by request and draw index (SPEC 6)."""
    store = hb.Store(tmp_path / "s.db")
    ref = _ref(2)
    client = _fresh_ids()  # one responder: its fingerprint is in the key

    def calls(arm: hb.Arm, seed: int) -> int:
        before = client.calls
        hb.benchmark(arm, ref, runs=5, client=client, cache=hb.Cache(store), seed=seed)
        return client.calls - before

    assert calls(ASK, 1) == 10
    with pytest.warns(hb.CachedDrawsWarning, match=r"all 10 replies came from the cache: the seed \(2\)"):
        assert calls(ASK, 2) == 0  # the same requests and draw indexes: the cached replies, whatever the seed
    sampler = hb.Arm("pick", lambda item, ctx: ctx.call(f"{item} {ctx.rng.randrange(10**9)}").text)
    assert [calls(sampler, 1), calls(sampler, 2), calls(sampler, 1)] == [10, 10, 0]  # ctx.rng follows seed
    with_param = hb.Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}?", seed=7).text)
    assert calls(with_param, 1) == 10  # a provider seed is sent, so it is in the key


def test_an_arm_version_bump_changes_its_hash_not_its_cache_key(tmp_path: Any) -> None:
    store = hb.Store(tmp_path / "s.db")
    client = _fresh_ids()
    v1, v2 = hb.Arm("ask", ASK.fn, version="1"), hb.Arm("ask", ASK.fn, version="2")
    assert v1.hash != v2.hash
    hb.benchmark(v1, _ref(2), runs=5, client=client, cache=hb.Cache(store))
    hb.benchmark(v2, _ref(2), runs=5, client=client, cache=hb.Cache(store))
    assert client.calls == 10  # the second is served the first one's replies


def test_seed_and_version_are_documented_in_the_schema_and_readme() -> None:
    """The README and the schema explain seed and version."""
    from pathlib import Path

    from hrbench_client import protocol as p

    root = Path(__file__).resolve().parents[3]
    readme = (root / "docs" / "rules" / "draws.md").read_text()
    assert "seeds only `ctx.rng`" in readme and "not in the cache key" in readme
    schema = msgspec.json.schema(p.BenchmarkParams)
    seed = schema["$defs"]["BenchmarkParams"]["properties"]["seed"]["description"]
    assert "not part of the cache key" in seed
    version = schema["$defs"]["PromptArmSpec"]["properties"]["version"]["description"]
    assert "not of the cache key" in version
