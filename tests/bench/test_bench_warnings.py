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
