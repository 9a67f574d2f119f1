"""A bench script prints its figures and no warning: a loopback model is given a price.

``bench/concurrency.py`` runs a benchmark against a loopback model, which no price table
knows: an undeclared model warns ``UnpricedModelWarning`` (seed 002: its USD is NA), so the
script declares it free (``Pricing(free=...)``, docs/guides/prices.md "Declaring a model free").
"""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio

from hrbench.testing import LoopbackServer

ROOT = Path(__file__).resolve().parents[2]


def _bench(name: str) -> ModuleType:
    """A module of ``bench/``, its folder on the import path only while it is imported."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "bench"))


def test_the_concurrency_bench_warns_of_nothing() -> None:
    concurrency = _bench("concurrency")
    with LoopbackServer() as srv, warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        wall = anyio.run(concurrency.bench_loop, srv.base_url, 10, 2)
    assert wall > 0
    assert [f"{w.category.__name__}: {w.message}" for w in got] == []


def test_the_concurrency_bench_collects_garbage_before_each_timed_run_outside_it(monkeypatch: Any) -> None:
    """Every way is timed as bench/_timing.py times a side: a full collection before each timed
    run, never inside it (the ways share one process, so one way's garbage is not another's cost)."""
    concurrency = _bench("concurrency")
    events: list[str] = []
    monkeypatch.setattr(concurrency.gc, "collect", lambda *a: events.append("collect") or 0)

    def way(name: str) -> Any:
        async def run(base_url: str, n: int, c: int) -> float:
            events.append(f"{name} {n}")
            return 0.001

        return run

    best = concurrency.measure({"a": way("a"), "b": way("b")}, "http://127.0.0.1:9", 10, 2, 2)
    assert sorted(best) == ["a", "b"]
    timed = ["collect", "a 10", "collect", "b 10"]
    assert events == ["a 8", "b 8", *timed, *timed]
