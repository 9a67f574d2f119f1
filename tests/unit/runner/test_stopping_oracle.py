"""A benchmark under a stop rule stops where the full recomputation, fed cluster by cluster, stops.

Oracle: the design's clusters committed one by one in the rule's order to
:class:`tests.unit.stats._sequential_oracle.FullRecompute` (every confidence sequence over
every cluster at every commit), with the arms it keeps active. The benchmark, whose gate
commits in worker threads while its cells run 8 at a time, must end with the same reason, the
same clusters, and the same summary and state, number for number; its reportable rows are
those of the committed clusters.
"""

from __future__ import annotations

import os
import threading
import warnings
from typing import Any

import numpy as np
import pytest

import hrbench as hb
from hrbench.stats import SequentialTest
from tests.unit.stats._sequential_oracle import FullRecompute, commit_all, random_design

pytestmark = pytest.mark.timeout(600)

SEED = int(os.environ.get("HRBENCH_ORACLE_SEED", "20261201"))


def _arms(design: dict[str, Any]) -> list[hb.Arm]:
    correct = design["correct"]

    def arm(name: str) -> hb.Arm:
        def answer(item: str, ctx: Any) -> str:
            return "yes" if correct[(name, item, ctx.run)] else "no"

        return hb.Arm(name, answer)

    return [arm(a) for a in design["arms"]]


def _bench(design: dict[str, Any], **kw: Any) -> hb.Bench:
    cluster_of = design["cluster_of"]
    ref = hb.Reference(
        {i: i for i in cluster_of}, labels=dict.fromkeys(cluster_of, "yes"), cluster=dict(cluster_of)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hb.benchmark(_arms(design), ref, runs=design["runs"], stop=design["rule"], concurrency=8, **kw)


@pytest.mark.parametrize("case", range(24))
def test_a_benchmark_stops_where_the_full_recomputation_stops(case: int) -> None:
    design = random_design(np.random.default_rng([SEED, 1000 + case]))
    rule, arms, sizes = design["rule"], design["arms"], design["sizes"]
    print(f"seed {SEED} case {1000 + case}: {len(arms)} arms, sizes {list(sizes.values())}, {rule}")
    oracle = FullRecompute(rule, arms, sizes)
    committed = commit_all(oracle, design)
    bench = _bench(design)
    rec = bench.stop
    assert rec is not None
    assert rec.reason == (oracle.stopped or "max_clusters")
    assert rec.clusters == len(committed) and rec.order[: rec.clusters] == committed
    assert rec.summary == oracle.summary() and rec.state == oracle.state()
    assert rec.active_arms == list(oracle.active_arms) and rec.winner == oracle.winner
    assert {r.cluster for r in bench.rows if r.reportable} == set(committed)


def test_the_gate_commits_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit may compute confidence sequences over every cluster: it runs in a worker thread."""
    where: list[bool] = []
    real = SequentialTest.commit

    def commit(self: SequentialTest, cluster: str, means: Any) -> None:
        where.append(threading.current_thread() is threading.main_thread())
        real(self, cluster, means)

    monkeypatch.setattr(SequentialTest, "commit", commit)
    design = random_design(np.random.default_rng([SEED, 1000]))
    bench = _bench(design)
    assert bench.stop is not None and bench.stop.clusters == len(where) > 0
    assert not any(where)


@pytest.mark.parametrize(("every_s", "few"), [(3600.0, True), (0.0, False)])
def test_running_records_are_stored_at_most_at_their_pace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, every_s: float, few: bool
) -> None:
    """A running record's sequences cost time: within its interval of the last one, none is stored.

    The record at the start and the one at the end are always stored; the end's is the whole.
    """
    from hrbench.runner import _stopping
    from hrbench.store import Store

    saved: list[tuple[str, int]] = []
    real = _stopping.Gate._save

    def save(self: Any, record: Any) -> None:
        saved.append((record.reason, record.clusters))
        real(self, record)

    monkeypatch.setattr(_stopping.Gate, "_save", save)
    monkeypatch.setattr(_stopping, "_KEEP_EVERY_S", every_s)
    monkeypatch.setattr(_stopping, "_KEEP_EVERY", 0.0 if every_s == 0 else 10.0)
    design = random_design(np.random.default_rng([SEED, 1000]))
    store = Store(tmp_path / "hrbench.sqlite3")
    try:
        ref_hash = _bench(design).reference_hash  # the same reference: its hash for the stored benchmark
        store.benchmark_put("b1", {}, ref_hash)
        saved.clear()
        bench = _bench(design, store=store, benchmark_id="b1")
        stored = store.benchmark_stop_get("b1")
    finally:
        store.close()
    assert bench.stop is not None and stored is not None
    running = [c for reason, c in saved if reason == "running"]
    assert saved[-1] == (bench.stop.reason, bench.stop.clusters) and stored["clusters"] == bench.stop.clusters
    assert running[0] == 0 and running == sorted(running)
    if few:
        assert running == [0]
    else:
        assert len(running) > 1 and running[-1] > 0
