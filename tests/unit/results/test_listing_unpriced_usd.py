"""A benchmark whose model has no price lists its USD as NA in every state, never the 0 its calls were counted at.

Rule (seed 002: usd is NA when a model has no price; ``docs/guides/prices.md``): ``hrb ls`` and
the view show ``usd NA`` (``null`` in JSON) while it runs, once done, and when it was cancelled,
failed or interrupted (those store no summary: their rows say it).
"""

from __future__ import annotations

import msgspec
import pytest

from hrbench.records import Row
from hrbench.results.browse import benchmark_list
from hrbench.store import Store
from hrbench_client import protocol as p
from hrbench_client.cli.housekeeping import limits_text

STATES = ["running", "interrupted", "cancelled", "failed", "errors", "done"]


def _store(status: str, usd: float | None) -> tuple[Store, tuple[str, ...]]:
    store = Store(":memory:")
    limits = {"max_calls": 400, "max_usd": None, "max_tokens": None, "default": False}  # no USD cap: it runs
    spec = {"params": {"name": "local", "runs": 5}, "arms": [{"name": "ask"}], "total": 10, "limits": limits}
    store.benchmark_put("b", spec, "h")
    rows = [
        Row(
            cluster=f"q{i}",
            item=f"q{i}",
            arm="ask",
            run=0,
            split="test",
            correct=True,
            outcome="x",
            failure_kind=None,
            usd=usd,
            ledger_id=f"l{i}",
        )
        for i in range(3)
    ]
    store.rows_put("b", list(enumerate(rows)))
    store.ledger_apply(
        "b", "s1", [], [], (3, 0.0 if usd is None else 3 * usd, 30)
    )  # an unpriced call counts 0
    if status in ("done", "errors"):  # a finished run stores its summary: its usd is NA too
        store.benchmark_finish(
            "b", status, [{"arm": "ask", "accuracy": 1.0, "usd": None if usd is None else 3 * usd}]
        )
    elif status in ("cancelled", "failed"):  # ended early: no summary
        store.benchmark_finish("b", status, None)
    return store, ("b",) if status == "running" else ()


@pytest.mark.parametrize("status", STATES)
def test_an_unpriced_models_usd_is_na_in_every_state(status: str) -> None:
    store, running = _store(status, None)
    listed = benchmark_list(store, running=running)[0]
    assert listed["status"] == status and listed["calls"] == 3
    assert listed["usd"] is None, listed
    text = limits_text(msgspec.convert(listed, p.BenchmarkListing))
    assert text is not None and "usd NA of" in text, text


@pytest.mark.parametrize("status", STATES)
def test_a_priced_models_usd_is_its_spend_in_every_state(status: str) -> None:
    store, running = _store(status, 0.01)
    assert benchmark_list(store, running=running)[0]["usd"] == pytest.approx(0.03)
