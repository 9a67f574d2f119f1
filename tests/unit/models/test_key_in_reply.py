"""A reply that echoes the key in use never reaches the store (SPEC section 4)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from hrbench.arm import Arm
from hrbench.models import OpenAIClient
from hrbench.reading import answer_scorer
from hrbench.reference import Reference
from hrbench.runner import Cache, Governor
from hrbench.runner._benchmark import benchmark
from hrbench.store import Store
from hrbench.testing import LoopbackServer
from tests.unit.models.conftest import FAST

KEY = "hrb-test-9f3c2a7b5d1e4f60a8c2"


@pytest.mark.parametrize(
    "echo",
    [
        lambda k: f"Your key is {k}.",
        lambda k: "key: " + base64.b64encode(k.encode()).decode(),
        lambda k: "k=" + k.encode().hex(),
        lambda k: " ".join(k),
    ],
    ids=["plain", "base64", "hex", "spaced"],
)
def test_a_reply_echoing_the_key_is_scrubbed_before_the_cache_traces_and_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, echo: Any
) -> None:
    monkeypatch.setenv("HRB_TEST_REPLY_KEY", KEY)
    with LoopbackServer(api_key=KEY, reply_fn=lambda prompt, seed, call: f"Paris. {echo(KEY)}") as srv:
        store = Store(tmp_path / "state.sqlite3")
        client = OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env="HRB_TEST_REPLY_KEY", **FAST)

        async def ask(item: str, ctx: Any) -> Any:
            return (await ctx.acall(item, seed=ctx.draw_index)).text

        bench = benchmark(
            Arm("ask", ask),
            Reference({"q1": "Capital of France?"}, labels="Paris", split="test"),
            runs=5,
            client=client,
            governor=Governor(max_calls=10),
            cache=Cache(store),
            scorer=answer_scorer(),
        )
        store.close()
    assert [r.correct for r in bench.rows] == [True] * 5  # the answer is kept
    assert all("***" in (r.outcome or "") or r.outcome == "Paris" for r in bench.rows)
    shown = repr(bench.rows) + repr(bench.traces)
    forms = [KEY, base64.b64encode(KEY.encode()).decode(), KEY.encode().hex(), " ".join(KEY)]
    assert not any(f in shown for f in forms)
    for f in tmp_path.iterdir():  # the database and its WAL, byte for byte
        data = f.read_bytes()
        assert not any(form.encode() in data for form in forms), f.name
