"""A billed reply is cached only once its bill is kept in the governor's ledger.

Rule (rows add up to the provider's bill after a crash): a run made again on resume is served
from the cache and carries what was paid for it before the crash, read from the ledger
(``hrbench.runner._remade.prepaid``). A reply written to the cache before its bill was committed
would, after a crash between the two writes, be served on resume at $0: the provider billed it,
no row says so. So the cache write of a billed reply waits for the ledger's commit of its bill;
a crash between the two then loses only the cache entry (the call is made again, and both bills
are in the rows, as the provider billed both).
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench.models import Pricing
from hrbench.records import Request, Result, Usage
from hrbench.runner import Governor, kept_ledger
from hrbench.runner.runtime import Runtime
from hrbench.store import Store

PRICING = Pricing(overrides={"priced-1": {"input": 2.0, "output": 8.0}})
REF = hb.Reference({f"q{i}": f"question {i}" for i in range(6)}, labels="Paris")


def _priced(messages: list[dict[str, Any]], params: dict[str, Any]) -> Result:
    return Result(text="Paris", model="priced-1", usage=Usage(tokens_in=1000, tokens_out=500))


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
@pytest.mark.parametrize("path", ["counted", "held"])
def test_a_billed_reply_is_cached_only_after_its_bill_is_kept(
    path: str, sync: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if path == "held":  # a capped governor's way: a reservation and a gate
        monkeypatch.setattr(Runtime, "_counted", Runtime._held)
    apply, put = Store.ledger_apply, Store.cache_put

    def slow_apply(self: Store, *args: Any, **kwargs: Any) -> Any:
        time.sleep(0.05)  # a commit on a busy disk: the window a crash can fall in is wide open
        return apply(self, *args, **kwargs)

    unbilled: list[str] = []
    puts: list[str] = []

    def checked_put(self: Store, key: str, arm: str, hashed: str, request: Request, result: Result) -> None:
        puts.append(key)
        billed = {s.key for steps in self.ledger_paid("b").values() for s in steps}
        if key not in billed:
            unbilled.append(key)
        put(self, key, arm, hashed, request, result)

    monkeypatch.setattr(Store, "ledger_apply", slow_apply)
    monkeypatch.setattr(Store, "cache_put", checked_put)
    store = Store(tmp_path / "s.sqlite3")

    async def ask(item: str, ctx: Any) -> str:
        return (await ctx.acall(item)).text or ""

    def ask_sync(item: str, ctx: Any) -> str:
        return ctx.call(item).text or ""

    gov = Governor()
    with warnings.catch_warnings(), kept_ledger(gov, store, "b"):
        warnings.simplefilter("ignore")
        bench = hb.benchmark(
            hb.Arm("ask", ask_sync if sync else ask),
            REF,
            runs=2,
            client=hb.MockClient(_priced),
            governor=gov,
            pricing=PRICING,
            cache=hb.Cache(store),
            benchmark_id="b",
        )
    assert [r.correct for r in bench.rows] == [True] * 12
    assert sum(r.usd or 0.0 for r in bench.rows) == pytest.approx(12 * 0.006)
    assert len(puts) == 12
    assert unbilled == [], f"{len(unbilled)} of 12 billed replies were cached before their bill was kept"
