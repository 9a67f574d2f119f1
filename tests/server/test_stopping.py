"""Stop when sure through the daemon: a budget stop, then a resume that continues the same order and e-process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hrbench.store import Store
from hrbench.testing import LoopbackServer
from hrbench_client.errors import ConfigError, InvalidParams
from tests.server._daemon import Daemon

pytestmark = pytest.mark.timeout(240)

N_CLUSTERS = 24


@pytest.fixture(scope="module")
def srv() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    with Daemon(tmp_path / "home") as d:
        yield d


def _spec(srv: LoopbackServer, name: str, **kw: Any) -> dict[str, Any]:
    ids = [f"q{i}" for i in range(N_CLUSTERS * 2)]
    # "some" is right on about 6 items in 10, unevenly: the difference takes several clusters
    some = {i: f"[[reply:L{i}]]" if int(i[1:]) * 7919 % 10 < 6 else "[[reply:nope]]" for i in ids}
    return {
        "name": name,
        "runs": 5,
        "concurrency": 4,
        "reference": {
            "items": {i: {"right": f"[[reply:L{i}]] {i}", "some": f"{some[i]} {i}"} for i in ids},
            "labels": {i: f"L{i}" for i in ids},
            "cluster": {i: f"c{int(i[1:]) // 2:02d}" for i in ids},
        },
        "client": {"kind": "openai", "model": "loopback-1", "base_url": srv.base_url, "max_tokens": 10},
        "arms": [
            {"kind": "prompt", "name": "all", "template": "{right}"},
            {"kind": "prompt", "name": "some", "template": "{some}"},
        ],
        "stop": {"goal": "rank", "seed": 4, "method": "exact"},
        **kw,
    }


def _run(c: Any, spec: dict[str, Any]) -> Any:
    stream = c.benchmark(spec)
    list(stream)
    assert stream.result is not None
    return stream.result


def _stored(d: Daemon, bench_id: str) -> dict[str, Any]:
    store = Store(d.home / "hrbench.sqlite3")
    try:
        got = store.benchmark_stop_get(bench_id)
        rows = store.rows_get(bench_id)
    finally:
        store.close()
    assert got is not None
    return {**got, "stored_rows": rows}


def test_a_budget_stop_then_a_resume_continues_the_same_order_and_e_process(
    daemon: Daemon, srv: LoopbackServer
) -> None:
    with daemon.client() as c:
        whole = _run(c, _spec(srv, "whole", governor={"max_calls": 100_000}))
        part = _run(c, _spec(srv, "part", governor={"max_calls": 70}, cache=False))  # every call counted
        assert whole.status == "done" and part.status == "budget_stopped"
        first = _stored(daemon, part.id)
        assert first["reason"] == "budget" and 1 <= first["clusters"] < N_CLUSTERS
        rest = _run(c, {"resume": part.id, "governor": {"max_calls": 100_000}})
        assert rest.status == "done"
        once, resumed = _stored(daemon, whole.id), _stored(daemon, part.id)
        assert once["reason"] == resumed["reason"] == "decided"
        assert resumed["order"] == first["order"] == once["order"]
        assert resumed["clusters"] == once["clusters"] > first["clusters"]
        assert resumed["pairs"][0]["e_value"] == pytest.approx(once["pairs"][0]["e_value"])
        assert resumed["winner"] == "all"
        # the resumed benchmark reports the same runs as the one that ran at once
        key = sorted((r.arm, r.item, r.run, r.correct) for r in once["stored_rows"] if r.reportable)
        assert (
            sorted((r.arm, r.item, r.run, r.correct) for r in resumed["stored_rows"] if r.reportable) == key
        )
        rep = c.report(part.id)
        assert rep["stop"]["clusters"] == once["clusters"] and rep["stop"]["reason"] == "decided"
        view = c.view(part.id)
        assert view.report is not None and view.report["stop"]["winner"] == "all"


@pytest.mark.parametrize(
    ("stop", "error", "said"),
    [
        ({"alpha": 2}, InvalidParams, "stop.alpha = 2: must be below 1"),
        ({"alpah": 0.1}, InvalidParams, "alpah"),
        (
            {"pairs": [["all", "nobody"]]},
            ConfigError,
            "stop.pairs: names an arm that is not in the benchmark",
        ),
        ({"plan": {"diff": 0.1, "pilot": "nope"}}, ConfigError, "stop.plan.pilot"),
    ],
)
def test_a_bad_stop_table_is_a_clear_error_and_the_daemon_runs_on(
    shared_daemon: Daemon, srv: LoopbackServer, stop: dict[str, Any], error: type[Exception], said: str
) -> None:
    """The module's daemon (no test of it stops it) refuses, and runs the next benchmark."""
    with shared_daemon.client() as c:
        stored = [b.id for b in c.benchmarks()]  # the ok benchmarks the tests before this one ran
        with pytest.raises(error) as got:
            _run(c, _spec(srv, "bad", stop=stop))
        assert said in str(got.value)
        assert [b.id for b in c.benchmarks()] == stored  # refused before it was stored
        ok = _run(c, _spec(srv, "ok", stop={"goal": "rank", "max_clusters": 2}))
        assert ok.status == "done" and ok.n_rows >= 2 * 2 * 2 * 5
