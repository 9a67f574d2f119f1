"""A stored benchmark that stopped when sure, as ``hrb view`` reads it: its items and its matrix.

A stop rule's benchmark keeps the finished runs of the clusters cancelled at the stop (paid, not
reportable). The page must count what its report counts: the listing's items are the items
reported, of the items a full run has, and the item x arm matrix leaves out the cancelled
clusters' items (and says how many), so the header, the matrix, the arm table and the paired
differences agree. The benchmark is run for real, on a loopback model server, and stored as the
daemon stores one (its spec, its rows and its stop record).
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest

import hrbench as hb
from hrbench.results.browse import benchmark_list, benchmark_matrix, benchmark_view
from hrbench.stats import StopWhenSure
from hrbench.store import Store

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from hrbench.testing import LoopbackServer  # noqa: E402
from tests.unit.runner.test_stopping import N_CLUSTERS, _client, _reference, _run  # noqa: E402

pytestmark = pytest.mark.timeout(120)

PER, RUNS = 2, 5  # items per cluster, runs per item (as tests/unit/runner/test_stopping.py runs them)


@pytest.fixture(scope="module")
def stopped() -> Iterator[tuple[Store, hb.Bench]]:
    """A store holding one benchmark that stopped when sure (id ``"b"``) with clusters cancelled."""
    with LoopbackServer() as srv:
        srv.set(latency_s=0.02)  # replies take a while: clusters are in flight at the stop
        bench = _run(_client(srv), StopWhenSure(seed=7))
    assert bench.stop is not None and bench.stop.reason == "decided" and bench.stop.unreported_rows > 0
    store = Store(":memory:")
    spec = {
        "params": {"name": "stopped", "runs": RUNS},
        "arms": [{"name": "good"}, {"name": "bad"}],
        "total": N_CLUSTERS * PER * 2 * RUNS,
    }
    store.benchmark_put("b", spec, store.reference_put(_reference()))
    store.rows_put("b", list(enumerate(bench.rows)))
    store.benchmark_stop_put("b", bench.stop.to_dict())
    store.benchmark_finish("b", "done", bench.summary())
    yield store, bench
    store.close()


def test_the_matrix_shows_the_items_reported_and_counts_those_of_cancelled_clusters(
    stopped: tuple[Store, hb.Bench],
) -> None:
    store, bench = stopped
    assert bench.stop is not None
    committed = set(bench.stop.order[: bench.stop.clusters])
    cancelled = {r.item for r in bench.rows if not r.reportable}
    m = benchmark_matrix(store, "b")
    assert m["n_items_total"] == m["n_items"] == len(m["items"]) == bench.stop.clusters * PER
    assert {i["cluster"] for i in m["items"]} == set(m["clusters"]) == committed
    assert m["n_items_cancelled"] == len(cancelled) > 0
    assert not cancelled & {i["item"] for i in m["items"]}
    # every cell holds the reported runs of its arm on its item, none of the cancelled ones
    assert all(i["reported"] and [c["n"] for c in i["cells"]] == [RUNS, RUNS] for i in m["items"])
    assert {
        (i["item"], a): c["mean"] for i in m["items"] for a, c in zip(m["arms"], i["cells"], strict=True)
    } == {
        (r.item, r.arm): float(bool(r.correct)) for r in bench.rows if r.reportable
    }  # good is always right and bad always wrong, on every run
    # the filters page through the items reported only
    one = sorted(committed)[0]
    assert benchmark_matrix(store, "b", cluster=one)["n_items"] == PER
    assert benchmark_matrix(store, "b", offset=1, limit=3)["items"] == m["items"][1:4]
    # asked for, the cancelled clusters' items come too, marked not reported
    every = benchmark_matrix(store, "b", cancelled=True)
    assert every["n_items_total"] == len({r.item for r in bench.rows}) == m["n_items_total"] + len(cancelled)
    assert {i["item"] for i in every["items"] if not i["reported"]} == cancelled
    assert every["n_items_cancelled"] == len(cancelled)


def test_the_header_and_the_matrix_count_the_items_the_report_counts(stopped: tuple[Store, hb.Bench]) -> None:
    store, bench = stopped
    assert bench.stop is not None
    reported = bench.stop.clusters * PER
    (listed,) = benchmark_list(store)
    assert (listed["n_items"], listed["n_items_of"]) == (reported, N_CLUSTERS * PER)
    v = benchmark_view(store, "b")
    assert v["benchmark"] == listed  # the page's header says what the list says
    assert v["report"] is not None and v["report"]["stop"]["clusters"] == bench.stop.clusters
    assert [a["n_items"] for a in v["report"]["arms"]] == [reported, reported]
    assert [d["n_items"] for d in v["differences"]] == [reported]
    assert benchmark_matrix(store, "b")["n_items_total"] == reported


def test_a_benchmark_with_no_stop_rule_shows_every_item_it_ran() -> None:
    """Without a stop record nothing is left out (a dev split's rows are not reportable either)."""
    store = Store(":memory:")
    rows = [
        hb.Row(
            cluster=f"c{i}",
            item=f"q{i}",
            arm="a",
            run=r,
            split="dev" if i == 3 else "test",
            correct=True,
            outcome=None,
            failure_kind=None,
            reportable=i != 3,
        )
        for i in range(4)
        for r in (1, 2)
    ]
    store.benchmark_put("b", {"params": {"runs": 2}, "arms": [{"name": "a"}], "total": 8}, "h")
    store.rows_put("b", list(enumerate(rows)))
    m = benchmark_matrix(store, "b")
    assert (m["n_items_total"], m["n_items_cancelled"], m["splits"]) == (4, 0, ["dev", "test"])
    (listed,) = benchmark_list(store)
    assert (listed["n_items"], listed["n_items_of"]) == (4, None)
    # the same rows with a stop record: the dev split's rows stay, as the report keeps them
    store.benchmark_put("s", {"params": {"runs": 2}, "arms": [{"name": "a"}], "total": 8}, "h")
    store.rows_put(
        "s",
        [
            (k, msgspec.structs.replace(r, reportable=r.split == "test" and r.item != "q0"))
            for k, r in enumerate(rows)
        ],
    )
    store.benchmark_stop_put("s", {"reason": "decided", "clusters": 2, "of": 3})
    m = benchmark_matrix(store, "s")
    assert [i["item"] for i in m["items"]] == ["q1", "q2", "q3"] and m["n_items_cancelled"] == 1
    listed = next(b for b in benchmark_list(store) if b["id"] == "s")
    assert (listed["n_items"], listed["n_items_of"]) == (3, 4)
