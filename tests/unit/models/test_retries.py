"""Retries (cases R01a, R01c, R01d, R02a) against the loopback provider."""

from __future__ import annotations

import calendar
import contextlib
import os
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

import hrbench as hb
from hrbench.models import _pace
from hrbench.models._remote import http_date, parse_retry_after
from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.conftest import REPO, case
from tests.unit.models.conftest import FAST, Counter, req, send

# these benchmarks run on unlabelled items on purpose (cache, draws, retries, threads)
pytestmark = pytest.mark.filterwarnings("ignore::hrbench.errors.NoLabelsWarning")

TZS = ["America/New_York", "Asia/Kolkata", "Pacific/Chatham", "Australia/Lord_Howe", "UTC", "Etc/GMT+12"]


@pytest.fixture(params=TZS)
def tz(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run the test with the process's local time zone set to ``request.param``."""
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    try:
        yield request.param
    finally:
        monkeypatch.undo()
        time.tzset()


def _gmt(text: str) -> float:
    return float(calendar.timegm(time.strptime(text, "%a, %d %b %Y %H:%M:%S GMT")))


def test_case_R01a_asctime_date_is_gmt_in_every_time_zone(tz: str) -> None:
    c = case("R01a")["output"]
    assert time.localtime(0).tm_zone is not None  # the zone really applies
    wait = parse_retry_after({"retry-after": c["retry_after"]}, now=_gmt(c["now"]))
    assert wait == case("R01a")["label"]["wait_s"]


def test_case_R01d_imf_fixdate(tz: str) -> None:
    c = case("R01d")
    wait = parse_retry_after(
        {"retry-after": c["output"]["retry_after"]}, now=_gmt("Wed, 21 Oct 2015 07:28:00 GMT")
    )
    assert wait == c["label"]["wait_s"]


@pytest.mark.parametrize(
    "form",
    [
        "Wed, 21 Oct 2015 07:28:30 GMT",
        "Wednesday, 21-Oct-15 07:28:30 GMT",
        "Wed Oct 21 07:28:30 2015",
        "Wed, 21 Oct 2015 07:28:30 -0000",
        "Wed, 21 Oct 2015 07:28:30 +0000",
        "Wed, 21 Oct 2015 07:28:30",
        "Wed, 21 Oct 2015 09:28:30 +0200",
        "Wed, 21 Oct 2015 02:28:30 -0500",
    ],
)
def test_every_http_date_form_is_the_same_instant(tz: str, form: str) -> None:
    assert http_date(form) == _gmt("Wed, 21 Oct 2015 07:28:30 GMT")


@pytest.mark.parametrize("bad", ["soon", "", "Wed, 99 Foo 2015", "-3", "nan", "inf"])
def test_unreadable_retry_after_is_none(bad: str) -> None:
    assert parse_retry_after({"retry-after": bad}) is None


def test_a_date_in_the_past_waits_zero() -> None:
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}) == 0.0


def _client(kind: str, srv: LoopbackServer, **kw: Any) -> Any:
    cls = hb.OpenAIClient if kind == "openai" else hb.AnthropicClient
    return cls("loopback-1", base_url=srv.base_url, api_key_env=None, **{**FAST, **kw})


@pytest.mark.parametrize("form", ["asctime", "rfc850", "imf", "minus0000"])
def test_case_R01c_dated_retry_after_end_to_end(
    srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    c = case("R01c")
    monkeypatch.setenv("TZ", c["output"]["TZ"])
    time.tzset()
    try:
        srv.push(f"429:retry_after=2:date={form}")
        r = send(_client("openai", srv), "[[reply:ok]] x")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert r.ok is c["label"]["result_ok"]
    assert len(srv.requests) == c["label"]["attempts"]
    first, second = srv.requests
    assert second.at - first.at >= c["label"]["waited_s"] - 0.05  # the date names whole seconds


def test_case_R02a_retries_told_the_same_wait_are_spread(srv: LoopbackServer) -> None:
    c = case("R02a")
    n = c["output"]["requests_in_flight"]
    cl = _client("openai", srv, wait_jitter_s=1.0, max_connections=100)

    async def main() -> None:
        # the key's pace has seen the provider answer (past its slow start), so all n go at once
        async with anyio.create_task_group() as tg:
            for i in range(n):
                tg.start_soon(cl.send, req(f"[[reply:ok]] warm{i}"))
        srv.reset()
        srv.push(*["429:retry_after=1"] * n)
        async with anyio.create_task_group() as tg:
            for i in range(n):
                tg.start_soon(cl.send, req(f"[[reply:ok]] p{i}"))

    anyio.run(main)
    assert len(srv.requests) == 2 * n
    first = {q.prompt: q.at for q in srv.requests[:n]}
    retries = srv.requests[n:]
    assert {q.fault for q in srv.requests[:n]} == {"429"} and {q.fault for q in retries} == {"ok"}
    spread_ms = 1000 * (max(q.at for q in retries) - min(q.at for q in retries))
    assert spread_ms >= c["label"]["retries_spread_ms_at_least"]
    assert min(q.at - first[q.prompt] for q in retries) >= c["label"]["no_retry_before_s"] - 0.01


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("fault", ["malformed", "drop"])
def test_truncated_200_body_is_retried(srv: LoopbackServer, kind: str, fault: str) -> None:
    srv.push(fault)
    count = Counter()
    r = send(_client(kind, srv), "[[reply:whole]] x", count)
    assert r.ok and r.text == "whole"
    assert len(srv.requests) == 2 and count.n == 2


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_request_answered_at_once_builds_no_retry_loop_and_a_retried_one_does(
    srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """The first attempt is made before stamina's retry loop (which cost a tenth of a request's CPU).

    One that fails is replayed into the loop as its first attempt: the loop decides and waits
    as if it had made it (the waits: case R01c above; the spread: R02a).
    """
    import stamina

    loops: list[int] = []
    real = stamina.retry_context

    def counted(*args: Any, **kwargs: Any) -> Any:
        loops.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(stamina, "retry_context", counted)
    cl = _client(kind, srv)
    count = Counter()
    assert send(cl, "[[reply:once]] x", count).text == "once"
    assert (loops, count.n, len(srv.requests)) == ([], 1, 1)
    srv.push("500", "500")
    r = send(cl, "[[reply:third]] x", count)
    assert r.ok and r.text == "third" and len(r.retried or []) == 2
    assert (loops, count.n, len(srv.requests)) == ([1], 4, 4)


def test_after_a_storm_a_timing_out_endpoint_is_not_held_to_one_request(
    srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 storm, then no reply succeeds: the rate learned from it is forgotten with time."""
    shift = [0.0]
    cl = _client("openai", srv, max_connections=8, max_total_s=0.3, timeout_s=slow(1.0))

    async def main() -> tuple[float | None, list[Any]]:
        pace = _pace.pace_for("openai", srv.base_url, None, "loopback-1")
        pace.clock = lambda: time.monotonic() + shift[0]
        for _ in range(4):  # each request answered 429 until its time is up, none succeeds
            srv.push(*["429:retry_after=0"] * 100)  # more than its 0.3 s allows: time ends it, not a count
            assert not (await cl.send(req("x"))).ok
        low = pace.rate()
        shift[0] = _pace.FORGET_S + 1  # time passes with no 429
        srv.reset()
        srv.set(gather=8, gather_timeout_s=slow(1.0) * 3)  # replies held until 8 are in flight at once
        results: list[Any] = [None] * 8

        async def one(i: int) -> None:
            results[i] = await cl.send(req(f"y{i}"))

        async with anyio.create_task_group() as tg:
            for i in range(8):
                tg.start_soon(one, i)
        return low, results

    low, results = anyio.run(main)
    assert low is not None  # the storm taught a rate
    assert srv.max_in_flight == 8  # all eight at once, not one at a time
    assert all(r.ok for r in results)


@pytest.mark.parametrize("fault", ["quota", "quota429", "unauthorized"])
@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_quota_or_key_refusal_fails_every_other_cell_at_once_as_the_providers_error(
    srv: LoopbackServer, fault: str, concurrency: int
) -> None:
    """A quota refusal is not a budget stop (exit 4, "resume with higher limits").

    It is the provider's error, every run an ``error`` with its message as the cause,
    and no other request is sent (nor after a refused key: one clear cause, not N requests).
    """
    srv.push(*[fault] * 10)
    ref = hb.Reference({f"q{i}": f"q{i}" for i in range(10)}, labels=None)
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        bench = hb.benchmark(
            arm,
            ref,
            runs=5,
            client=_client("openai", srv),
            governor=hb.Governor(max_calls=1000),
            concurrency=concurrency,
        )
    sent = len(srv.requests)
    assert sent <= concurrency  # only the requests already in flight when the refusal came
    assert {r.failure_kind for r in bench.rows} == {"error"} and len(bench.rows) == 50
    assert bench.status == "errors" and not any(issubclass(w.category, hb.BudgetStoppedWarning) for w in got)
    (said,) = [str(w.message) for w in got if issubclass(w.category, hb.ArmErrorWarning)]
    cause = "openai: quota exhausted" if fault.startswith("quota") else "openai: HTTP 401"
    assert f"50 x {cause}" in said, said  # one cause for all, the provider's
    halted = [s for t in bench.traces.values() for s in t if s.source == "halted"]
    assert len(halted) == 50 - sent and all("not sent" in (s.error or "") for s in halted)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_connection_refused_gives_up_with_one_clear_error(kind: str) -> None:
    cls = hb.OpenAIClient if kind == "openai" else hb.AnthropicClient
    url = f"http://127.0.0.1:{_free_port()}/v1"
    cl = cls("m", base_url=url, api_key_env=None, max_attempts=5, wait_initial_s=5.0, trust_env=False)
    count = Counter()
    r = anyio.run(cl.send, req("x"), count)
    assert not r.ok and count.n == 1 and cl.attempts == 1  # no retry, no backoff wait
    assert f"cannot connect to {url}" in (r.error or "") and "base_url" in (r.error or "")


_RETRY_SCRIPT = """
import logging, sys, anyio
from hrbench import OpenAIClient
from hrbench.records import Request
from hrbench.testing import LoopbackServer
if sys.argv[1] == "configured":
    logging.basicConfig(level=logging.WARNING, format="LOG %(name)s %(message)s")
with LoopbackServer() as srv:
    srv.push("500", "500")
    cl = OpenAIClient("m", base_url=srv.base_url, api_key_env=None, wait_initial_s=0.01, wait_jitter_s=0, trust_env=False)
    r = anyio.run(cl.send, Request(messages=[{"role": "user", "content": "x"}]))
    print("OK" if r.ok else "FAILED", len(srv.requests))
"""


@pytest.mark.parametrize("mode", ["silent", "configured"])
def test_retry_logging_is_silent_unless_configured(mode: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", _RETRY_SCRIPT, mode],
        capture_output=True,
        text=True,
        env=env,
        timeout=slow(60),
        check=True,
    )
    assert out.stdout.strip() == "OK 3"
    if mode == "silent":
        assert out.stderr == ""
    else:
        assert out.stderr.count("LOG stamina") == 2  # one line per retry, when the user asks


class _FullBacklog:
    """A listening socket whose accept queue is full and never served: a connect gets no answer.

    Linux drops a SYN while the accept queue is full, so each attempt ends in a connect timeout
    without any byte of the request leaving the client.
    """

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(0)
        self.port = self.sock.getsockname()[1]
        self.fillers = []
        for _ in range(2):  # fill the accept queue (a backlog of 0 holds one)
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", self.port))
            self.fillers.append(filler)
        time.sleep(0.1)

    def close(self) -> None:
        for filler in self.fillers:
            filler.close()
        self.sock.close()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_an_attempt_that_could_not_connect_in_time_is_no_call_and_every_attempt_is_in_the_trace(
    kind: str,
) -> None:
    """Calls do not count transport retries that never reached the server.

    An attempt whose request was not written whole (here: the connection never opened,
    a connect timeout, which is retried) is no call; every attempt is a step of the run's trace.
    """
    srv = _FullBacklog()
    try:
        cls = hb.OpenAIClient if kind == "openai" else hb.AnthropicClient
        client = cls(
            "loopback-1",
            base_url=f"http://127.0.0.1:{srv.port}/v1",
            api_key_env=None,
            **{**FAST, "connect_timeout_s": 0.2},
        )
        gov = hb.Governor(max_calls=10)
        ref = hb.Reference({"q": "x"}, labels={"q": "x"})
        arm = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            bench = hb.benchmark(arm, ref, runs=1, client=client, governor=gov)
    finally:
        srv.close()
    (row,) = bench.rows
    trace = bench.traces[row.ledger_id]
    assert gov.calls == 0, trace  # nothing was sent: no call
    attempts = [s for s in trace if s.kind == "attempt"]
    assert len(attempts) == FAST["max_attempts"] - 1
    assert all(s.source == "unsent" and "not sent (no call counted)" in (s.error or "") for s in attempts)
    assert "ConnectTimeout" in (attempts[0].error or "")
    assert row.failure_kind == "error"


@pytest.mark.parametrize("fault", ["500", "drop"])
def test_attempts_written_whole_stay_calls_and_are_each_in_the_trace(srv: LoopbackServer, fault: str) -> None:
    """A failure after the request was written (a 500, a reply cut short) may have been billed: a call."""
    srv.push(fault, fault)
    gov = hb.Governor(max_calls=10)
    ref = hb.Reference({"q": "x"}, labels={"q": "answer"})
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        bench = hb.benchmark(arm, ref, runs=1, client=_client("openai", srv), governor=gov)
    (row,) = bench.rows
    trace = bench.traces[row.ledger_id]
    attempts = [s for s in trace if s.kind == "attempt"]
    requests = [s for s in trace if s.kind == "request"]
    assert len(srv.requests) == 3 and gov.calls == 3  # two failed, the third answered
    assert len(attempts) == 2 and all(s.source == "live" and s.error for s in attempts)
    assert len(requests) == 1 and requests[0].error is None
