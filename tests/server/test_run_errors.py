"""Runs that ended in errors, resumes and a stopped daemon, through a real daemon.

Each test runs a benchmark through a daemon subprocess against a real
:class:`~hrbench.testing.LoopbackServer` (or a port nothing listens on any more), and
checks what the result, the store, ``benchmark/list`` (``hrb ls``), the report and the HTML page
say, and what a resume sends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hrbench.testing import LoopbackServer
from hrbench_client.view import benchmark_html
from tests._slow import slow
from tests.server._daemon import Daemon, spec

pytestmark = pytest.mark.timeout(180)


def _client(base_url: str) -> dict[str, Any]:
    return {
        "kind": "openai",
        "model": "loopback-1",
        "base_url": base_url,
        "api_key_env": None,
        "max_attempts": 1,
    }


def _note(n: int, total: int, cause: str, k: int, bid: str) -> str:
    return (
        f"{n} of {total} runs ended in errors and count as wrong; commonest cause: {cause} "
        f"({k} run{'s' if k != 1 else ''}, arm 'ask'); fix it, then run them again with `hrb bench --resume {bid} --retry-errors`"
    )


def test_a_benchmark_whose_every_run_failed_on_a_dead_port_is_shown_errors(home: Path) -> None:
    """Every run failed (the model server's port was dead): it is shown `errors`, never `done`."""
    with LoopbackServer() as srv:
        base_url = srv.base_url
    cause = f"openai: cannot connect to {base_url}"  # nothing listens there any more
    d = Daemon(home).start()
    try:
        with d.client() as c:
            stream = c.benchmark(spec(n=2, runs=5, client=_client(base_url)))
            rows = list(stream)
            assert stream.result is not None
            bid = stream.result.id
            listing = {b.id: b for b in c.benchmarks()}[bid]
            rep = c.report(bid, descriptive=True)
            page = benchmark_html(c, bid)
    finally:
        d.stop()
    assert [r.failure_kind for r in rows] == ["error"] * 10
    note = _note(10, 10, cause, 10, bid)
    assert stream.result.status == "errors"
    assert [s.error_causes for s in stream.result.summary] == [{cause: 10}]
    # the printout advises hrb's way to run the failed runs again, not the library's
    assert f"Runs failed: {note}." in stream.result.text and "hrbench.benchmark(" not in stream.result.text
    assert (listing.status, listing.stop_note) == ("errors", note)
    assert (rep["status"], rep["stop_note"]) == ("errors", note)
    assert note in page and 'id: "runs-failed"' in page  # the page script draws the banner


@pytest.mark.parametrize("failed", [1, 4, 9])
def test_partial_failures_show_errors_and_retry_errors_runs_them_again(home: Path, failed: int) -> None:
    """Some runs fail (HTTP 500), others not: status `errors`; `retry_errors` runs only those again.

    Their old rows are replaced, the kept runs are not sent again, and the calls the failed
    attempts made stay counted in the ledger.
    """
    with LoopbackServer() as srv:
        srv.push(*["500"] * failed)  # the first requests fail (one run at a time: the first runs)
        d = Daemon(home).start()
        try:
            with d.client() as c:
                first = c.benchmark(spec(n=2, runs=5, client=_client(srv.base_url), concurrency=1))
                list(first)
                assert first.result is not None
                bid = first.result.id
                before = {b.id: b for b in c.benchmarks()}[bid]
                kept = c.benchmark({"resume": bid})  # without retry_errors: the errors stay
                list(kept)
                sent_before_retry = len(srv.requests)
                again = c.resume(bid, retry_errors=True)
                rerun = list(again)
                after = {b.id: b for b in c.benchmarks()}[bid]
                stored = c.rows(bid).rows
        finally:
            d.stop()
    assert first.result.status == "errors"
    assert first.result.summary[0].error_causes == {"openai: HTTP 500": failed}
    assert (before.status, before.stop_note) == ("errors", _note(failed, 10, "openai: HTTP 500", failed, bid))
    assert kept.result is not None and kept.result.status == "errors" and kept.result.n_resumed == 10
    assert sent_before_retry == 10  # a resume without retry_errors sends nothing
    assert again.result is not None and again.result.status == "done"
    assert again.result.n_resumed == 10 - failed and len(rerun) == failed
    assert len(srv.requests) == 10 + failed  # only the failed runs were sent again
    assert len(stored) == 10 and all(r.failure_kind == "wrong" for r in stored)  # rows replaced
    assert (after.status, after.stop_note) == ("done", None)
    assert after.calls == 10 + failed  # what the failed attempts spent stays spent


def test_retry_errors_needs_a_resume(home: Path) -> None:
    from hrbench_client.errors import ConfigError

    d = Daemon(home).start()
    try:
        with d.client() as c, pytest.raises(ConfigError, match="give `resume` too") as err:
            list(c.benchmark({**spec(n=1, runs=1), "retry_errors": True}))
    finally:
        d.stop()
    assert err.value.field == "retry_errors"


@pytest.mark.parametrize(("spec_concurrency", "given"), [(2, None), (3, None), (2, 5)])
def test_a_resume_keeps_the_specs_concurrency_unless_given(
    home: Path, spec_concurrency: int, given: int | None
) -> None:
    """A resume keeps the spec's concurrency, not the caller's default 16."""
    with LoopbackServer(latency_s=0.05) as srv:
        d = Daemon(home).start()
        try:
            with d.client() as c:
                bench = spec(
                    n=12,
                    runs=2,
                    client=_client(srv.base_url),
                    concurrency=spec_concurrency,
                    governor={"max_calls": 2},
                )
                first = c.benchmark(bench)
                list(first)
                assert first.result is not None and first.result.status == "budget_stopped"
                srv.reset()
                resume: dict[str, Any] = {"resume": first.result.id, "governor": {"max_calls": 100}}
                if given is not None:
                    resume["concurrency"] = given
                second = c.benchmark(resume)
                list(second)
        finally:
            d.stop()
    assert second.result is not None and second.result.status == "done"
    assert 1 <= srv.max_in_flight <= (given or spec_concurrency)


def test_a_fresh_benchmark_without_concurrency_runs_16_at_once_and_keeps_it(home: Path) -> None:
    """The default (16) is stored with the spec, so a resume keeps it too."""
    d = Daemon(home).start()
    try:
        with d.client() as c:
            stream = c.benchmark(spec(n=2, runs=1))
            list(stream)
            assert stream.result is not None
    finally:
        d.stop()
    from hrbench.store import Store

    store = Store(home / "hrbench.sqlite3")
    stored = store.benchmark_get(stream.result.id)
    store.close()
    assert stored is not None and stored["spec"]["params"]["concurrency"] == 16


@pytest.mark.parametrize(
    ("env", "governor", "want"),
    [
        ({"HRBENCH_MAX_CALLS": "3"}, None, (3, 5.0, None, True)),
        ({"HRBENCH_MAX_TOKENS": "90000", "HRBENCH_MAX_USD": "2.5"}, None, (400, 2.5, 90000, True)),
        ({"HRBENCH_MAX_CALLS": "3"}, {"max_calls": 7}, (7, None, None, False)),  # the spec wins
        ({"HRBENCH_MAX_CALLS": "3"}, {"max_usd": 1.0, "defaults": True}, (3, 1.0, None, False)),
    ],
)
def test_default_limits_come_from_the_callers_shell(
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    governor: dict[str, Any] | None,
    want: tuple[Any, ...],
) -> None:
    """HRBENCH_MAX_* in the shell that submits are not ignored by a running daemon.

    The client sends them; they are the defaults for the limits the spec does not set.
    """
    for name in ("HRBENCH_MAX_CALLS", "HRBENCH_MAX_USD", "HRBENCH_MAX_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    d = Daemon(home).start()  # started without them
    try:
        for name, value in env.items():
            monkeypatch.setenv(name, value)  # the caller's shell has them
        with d.client() as c:
            stream = c.benchmark(spec(n=2, runs=5, governor=governor))
            list(stream)
            assert stream.result is not None
            listing = c.benchmarks()[0]
    finally:
        d.stop()
    assert (listing.max_calls, listing.max_usd, listing.max_tokens, listing.default_limits) == want
    assert listing.calls == min(10, want[0])


@pytest.mark.slow  # a daemon stopped by a signal: `make test-slow`
def test_a_daemon_stopped_by_a_signal_tells_the_benchmarks_caller(home: Path) -> None:
    """A stopped daemon's running benchmark does not end as a bare "cancelled": its caller is told."""
    import signal

    from hrbench_client.errors import DaemonStopped

    d = Daemon(home).start()
    try:
        with d.client() as c:
            stream = c.benchmark(
                spec(n=8, runs=5, concurrency=1, client={"kind": "mock", "reply": "x", "delay_s": 0.05})
            )
            with pytest.raises(DaemonStopped) as err:
                for i, _ in enumerate(stream):
                    if i == 0:
                        assert d.proc is not None
                        d.proc.send_signal(signal.SIGTERM)
        assert d.proc is not None and d.proc.wait(timeout=slow(30)) == 0
    finally:
        d.kill()
    ctx = err.value.context
    bid, done = ctx["benchmark"], ctx["done"]
    assert ctx["total"] == 40 and 1 <= done < 40
    assert str(err.value) == (
        f"the daemon was stopped by the signal SIGTERM while benchmark {bid} ran: {done} of 40 runs are "
        f"done and saved. Resume it with: hrb bench --resume {bid}"
    )
    d2 = Daemon(home).start()
    try:
        with d2.client() as c:
            assert c.benchmarks()[0].status == "interrupted"
            again = c.resume(bid)
            assert len(list(again)) == 40 - done
            assert again.result is not None and again.result.n_resumed == done
    finally:
        d2.stop()
