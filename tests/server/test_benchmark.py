"""The `benchmark` method end to end: streaming, SQLite, cancel, SIGKILL and resume."""

from __future__ import annotations

import collections
import json
import sqlite3
from pathlib import Path

import msgspec
import pytest

import hrbench_client as hc
from hrbench.store import Store
from hrbench_client import protocol as p
from tests._slow import slow
from tests.server._daemon import Daemon, spec


def calls(path: Path) -> list[tuple[str, int]]:
    if not path.exists():
        return []
    return [tuple(json.loads(line)) for line in path.read_text().splitlines() if line.strip()]  # type: ignore[misc]


def stored_rows(db: Path, bench_id: str) -> dict[tuple[str, str, int], bytes]:
    """A benchmark's rows as the store keeps them (read as any later process reads them), by key."""
    store = Store(db)
    try:
        return {(r.arm, r.item, r.run): msgspec.json.encode(r) for r in store.rows_get(bench_id)}
    finally:
        store.close()


def keys(rows: list[p.Row]) -> list[tuple[str, str, int]]:
    return [(r.arm, r.item, r.run) for r in rows]


def test_rows_stream_and_are_stored(shared_daemon: Daemon) -> None:
    with shared_daemon.client() as c:
        seen: list[tuple[int, int]] = []
        stream = c.benchmark(spec(n=6, runs=3), on_progress=lambda d, t: seen.append((d, t)))
        rows = list(stream)
        res = stream.result
        assert res is not None and res.status == "done" and res.n_rows == 18 == len(rows)
        assert res.summary[0].arm == "ask" and res.summary[0].accuracy == 1.0
        assert "FewRunsWarning" in " ".join(res.warnings)
        assert seen[-1] == (18, 18)
        stored = c.rows(res.id)
        assert stored.benchmark.status == "done" and stored.benchmark.n_rows == 18
        assert sorted(keys(stored.rows)) == sorted(keys(rows))
        with_traces = c.rows(res.id, limit=2, traces=True)
        assert len(with_traces.rows) == 2 and with_traces.traces is not None
        assert with_traces.traces[with_traces.rows[0].ledger_id][0].source == "live"
        report = c.report(res.id, descriptive=True)
        assert report["arms"][0]["accuracy"] == 1.0 and "text" in report
        with pytest.raises(hc.TooFewRunsError):
            c.report(res.id)


@pytest.mark.parametrize(("offset", "limit"), [(0, None), (0, 7), (5, 4), (5, None), (18, 3), (30, 1)])
def test_rows_pages_match_the_whole(shared_daemon: Daemon, offset: int, limit: int | None) -> None:
    with shared_daemon.client() as c:
        stream = c.benchmark(spec(n=6, runs=3, name="paged"))
        list(stream)
        assert stream.id is not None
        whole = c.rows(stream.id).rows
        end = None if limit is None else offset + limit
        page = c.rows(stream.id, offset=offset, limit=limit, traces=True)
        assert page.benchmark.n_rows == 18 == len(whole)
        assert keys(page.rows) == keys(whole[offset:end])
        assert page.traces is not None and sorted(page.traces) == sorted(r.ledger_id for r in page.rows)
        assert all(page.traces[r.ledger_id] for r in page.rows)


def test_no_stream_sends_progress_only(shared_daemon: Daemon) -> None:
    with shared_daemon.client() as c:
        stream = c.benchmark(spec(n=3, stream=False))
        assert list(stream) == []
        assert stream.result is not None and stream.result.n_rows == 15


def test_cancel_keeps_finished_rows_and_resume_finishes(daemon: Daemon, calls_file: Path) -> None:
    daemon.env["HRB_MOCK_DELAY_S"] = "0"
    with daemon.client() as c:
        slow = spec(n=40, concurrency=2, client={"kind": "mock", "reply": "x", "delay_s": 0.01})
        stream = c.benchmark(slow)
        got = []
        with pytest.raises(hc.RequestCancelled):
            for row in stream:
                got.append(row)
                if len(got) == 10:
                    stream.cancel()
        bench_id = stream.id
        assert bench_id is not None
        # no sleep: the daemon answers a cancelled request once its run has ended and is stored
        stored = c.rows(bench_id)
        assert stored.benchmark.status == "cancelled"
        assert len(stored.rows) >= 10 and len(stored.rows) < 200
        assert {k for k in keys(got)} <= set(keys(stored.rows))
        assert c.status().running == []
        resumed = c.resume(bench_id)
        new_rows = list(resumed)
        assert resumed.result is not None and resumed.result.n_rows == 200
        assert resumed.result.n_resumed == len(stored.rows)
        final = c.rows(bench_id).rows
        assert len(final) == 200 == len(set(keys(final)))
        assert not set(keys(new_rows)) & set(keys(stored.rows))


def test_closing_a_stream_early_cancels(daemon: Daemon) -> None:
    with daemon.client() as c:
        with c.benchmark(
            spec(n=40, client={"kind": "mock", "reply": "x", "delay_s": 0.01}, concurrency=2)
        ) as stream:
            for _ in stream:
                break
        assert stream.id is not None
        assert c.score("a", label="a").correct  # the connection is usable again
        assert c.rows(stream.id).benchmark.status == "cancelled"


def test_resume_refuses_changed_fields_and_unknown_ids(shared_daemon: Daemon) -> None:
    with shared_daemon.client() as c:
        with pytest.raises(hc.NotFound):
            list(c.resume("feedfacefeedface"))
        with pytest.raises(hc.ConfigError, match="resume"):
            list(c.benchmark({"resume": "x", "runs": 7}))


@pytest.mark.slow  # a fault simulation (a real daemon SIGKILLed, then resumed): make test-slow
def test_sigkill_mid_benchmark_then_resume(home: Path, calls_file: Path) -> None:
    env = {"HRB_CALLS_FILE": str(calls_file), "HRB_MOCK_DELAY_S": "0.004"}
    big = spec(n=150, concurrency=8)
    total = 150 * 5
    d = Daemon(home, env=env).start()
    try:
        with d.client() as c:
            stream = c.benchmark(big)
            seen = []
            for row in stream:
                seen.append((row.arm, row.item, row.run))
                if len(seen) == 250:
                    d.kill()
                    break
            bench_id = stream.id
    finally:
        d.kill()
    assert bench_id is not None
    db = home / "hrbench.sqlite3"
    before_rows = stored_rows(db, bench_id)
    con = sqlite3.connect(db)
    cached = {
        (json.loads(req)["messages"][-1]["content"], json.loads(req)["draw_index"])
        for (req,) in con.execute("SELECT request FROM cache")
    }
    con.close()
    assert 0 < len(before_rows) < total
    assert set(seen) <= set(before_rows)  # every row the client saw was saved
    paid_before = calls(calls_file)
    assert set(paid_before) >= cached  # every cached reply was a call

    d2 = Daemon(home, env=env).start()
    try:
        with d2.client() as c:
            stream = c.resume(bench_id)
            resumed_rows = list(stream)
            res = stream.result
            # (flaky once under load, not reproduced since: 563 of 750 rows; the messages say
            # which count fell short, and the daemon's log says why)
            said = f"before={len(before_rows)} streamed={len(resumed_rows)} log={d2.read_log()[-3000:]}"
            assert res is not None and (res.status, res.n_rows) == ("done", total), (res, said)
            assert res.n_resumed == len(before_rows), (res.n_resumed, said)
            final = c.rows(bench_id).rows
    finally:
        d2.stop()
    # no row duplicated, every finished row kept as it was
    assert len(final) == total == len(set(keys(final))), (len(final), len(set(keys(final))), said)
    assert not set(keys(resumed_rows)) & set(before_rows)
    after = stored_rows(db, bench_id)
    assert all(after[k] == v for k, v in before_rows.items())
    # no finished (cached) call paid again; every call at most twice (an in-flight one re-sent)
    paid_after = calls(calls_file)[len(paid_before) :]
    assert not set(paid_after) & cached
    counts = collections.Counter(calls(calls_file))
    assert max(counts.values()) <= 2
    assert set(counts) == {(f"item{i}", r) for i in range(150) for r in range(1, 6)}


def test_concurrent_benchmarks_stream_every_saved_row(home: Path) -> None:
    # Rows are sent only after their batch committed; a flush cut short at the end of a run
    # (the ticker cancelled mid-write) must not lose its batch for the caller. Slow
    # calls spread each run over several flush ticks, so runs end while the ticker writes.
    import threading

    d = Daemon(home, env={"HRB_MOCK_DELAY_S": "0.01"}).start()
    results: dict[int, tuple[int, int, int]] = {}

    def work(w: int) -> None:
        with d.client() as c:
            for r in range(6):
                stream = c.benchmark(spec(n=12, runs=2, concurrency=2, name=f"conc-{w}-{r}"))
                rows = list(stream)
                stored = c.rows(stream.id or "").benchmark.n_rows
                results[w * 10 + r] = (len(rows), stream.result.n_rows if stream.result else -1, stored)

    try:
        threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=slow(300))
    finally:
        d.stop()
    assert len(results) == 48
    assert set(results.values()) == {(24, 24, 24)}, results


def test_the_row_that_fills_a_batch_hands_it_to_the_writer(home: Path) -> None:
    # An instant mock's runner gives the event loop no turn for thousands of
    # rows, so a write left to a task began only when the runner stopped at MAX_PENDING, and
    # the loop sat idle through it. The row that fills a batch now hands it to the writer
    # thread itself: the first batch holds exactly STORE_BATCH rows, and later ones (taken
    # while a write is under way) never reach MAX_PENDING before they are handed over.
    from hrbench_server.bench import MAX_PENDING, STORE_BATCH

    n_items, runs = 1000, 4
    d = Daemon(home).start()
    try:
        with d.client() as c:
            seen: list[int] = []
            stream = c.benchmark(
                {**spec(n=n_items, runs=runs, concurrency=16), "cache": False},
                on_progress=lambda done, total: seen.append(done),
            )
            rows = list(stream)
            bench_id = stream.id or ""
    finally:
        d.stop()
    assert len(rows) == n_items * runs
    assert len(set(keys(rows))) == n_items * runs
    # a batch's rows go out in notifications cut where a progress notification falls (every
    # 1%, 40 rows): progress counted every row, in steps of 40, and each streamed row is the
    # stored one, byte for byte
    assert seen[-1] == n_items * runs and seen == sorted(seen), seen
    assert max(b - a for a, b in zip(seen, seen[1:], strict=False)) <= n_items * runs // 100, seen
    assert {k: msgspec.json.encode(r) for k, r in zip(keys(rows), rows, strict=True)} == stored_rows(
        home / "hrbench.sqlite3", bench_id
    )
    con = sqlite3.connect(home / "hrbench.sqlite3")
    try:
        sizes = [
            n
            for (n,) in con.execute("SELECT n FROM row_batches WHERE benchmark_id=? ORDER BY id", [bench_id])
        ]
    finally:
        con.close()
    assert sum(sizes) == n_items * runs
    assert sizes[0] == STORE_BATCH, sizes
    assert max(sizes) < MAX_PENDING, sizes
    assert set(stored_rows(home / "hrbench.sqlite3", bench_id)) == set(keys(rows))
