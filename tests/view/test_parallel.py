"""``hrb view`` answers a cheap page while slow ones are pending (a real view, a real daemon).

The view sent every request through one daemon connection, so the list page waited for every
page asked before it (6.8 s behind 8 others). Here two statistics pages of a 40,000-row
benchmark (seconds each) are asked first; the list page must come back while both are still
pending. Only the order of completion is checked, never a duration.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import hrbench as hb
from hrbench.records import Row, Step
from tests.server._daemon import Daemon
from tests.view.conftest import View

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

BIG = "view-parallel-big"


def _build(db: Path, items: int = 4000, arms: tuple[str, ...] = ("a", "b"), runs: int = 5) -> None:
    """A benchmark of ``items x arms x runs`` rows with one-step traces, written as the daemon writes them."""
    store = hb.Store(db)
    ref = hb.Reference(
        {f"q{i}": f"question {i}" for i in range(items)},
        labels={f"q{i}": "yes" for i in range(items)},
        cluster={f"q{i}": f"doc{i // 4}" for i in range(items)},
    )
    spec = {"arms": [{"name": a} for a in arms], "params": {"runs": runs, "name": BIG}}
    store.benchmark_put(BIG, spec, store.reference_put(ref))
    batch: list[tuple[int, Row]] = []
    traces: dict[str, list[Step]] = {}
    for i in range(items):
        for arm in arms:
            for run in range(1, runs + 1):
                lid = f"{BIG}/{arm}/q{i}/{run}"
                ok = (i + run + len(arm)) % 3 != 0
                batch.append(
                    (
                        len(batch),
                        Row(
                            cluster=f"doc{i // 4}",
                            item=f"q{i}",
                            arm=arm,
                            run=run,
                            split="test",
                            correct=ok,
                            outcome="yes" if ok else "no",
                            failure_kind=None if ok else "wrong",
                            ledger_id=lid,
                        ),
                    )
                )
                traces[lid] = [
                    Step(ledger_id=lid, key=lid, messages=[{"role": "user", "content": f"question {i}"}])
                ]
    for k in range(0, len(batch), 2000):
        part = batch[k : k + 2000]
        store.rows_put(BIG, part, {r.ledger_id: traces[r.ledger_id] for _, r in part}, fresh=len(part))
    store.benchmark_finish(BIG, "done", None)
    store.close()


@pytest.fixture(scope="module")
def big_view(tmp_path_factory: pytest.TempPathFactory) -> Iterator[View]:
    home = tmp_path_factory.mktemp("parallel") / "home"
    home.mkdir(mode=0o700)
    _build(home / "hrbench.sqlite3")
    with Daemon(home):
        view = View(home)
        try:
            yield view
        finally:
            view.stop()


def test_a_cheap_page_comes_back_while_slow_ones_are_pending(big_view: View) -> None:
    done: list[str] = []
    answers: dict[int, dict] = {}

    def slow_page(k: int) -> None:
        answers[k] = big_view.get(f"/api/benchmark/{BIG}?against=b&level=0.9")
        done.append(f"slow{k}")

    threads = [threading.Thread(target=slow_page, args=(k,)) for k in range(2)]
    for th in threads:
        th.start()
    time.sleep(0.5)  # lets both reach the daemon (a wait for something to happen, not a limit)
    listing = big_view.get("/api/benchmarks")
    done.append("cheap")
    for th in threads:
        th.join()
    assert done[0] == "cheap", done
    assert [b["name"] for b in listing["benchmarks"]] == [BIG]
    assert [a["arm"] for a in answers[0]["arms"]] == ["a", "b"] and answers[0] == answers[1]
    assert answers[0]["arms"][0]["n_runs"] == 20_000


def test_a_cell_of_the_big_benchmark_is_the_stored_runs(big_view: View) -> None:
    cell = big_view.get(f"/api/benchmark/{BIG}/cell?item=q3999&arm=b")
    assert [r["row"]["run"] for r in cell["runs"]] == [1, 2, 3, 4, 5]
    assert [r["trace"][0]["key"] for r in cell["runs"]] == [f"{BIG}/b/q3999/{k}" for k in range(1, 6)]
    assert (cell["payload"], cell["label"], cell["benchmark"]["rows"]) == ("question 3999", "yes", 40_000)
