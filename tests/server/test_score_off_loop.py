"""One client's slow scorer does not stall the daemon's other clients (case S12a).

A real daemon with its own HRBENCH_HOME (the ``daemon`` fixture, stopped on every path; the two
tests that only check replies share the module's ``shared_daemon``), raw frames on its Unix
socket. Connection A sends a pattern that backtracks; 0.3 s later connection B sends plain
``exact`` scores. No wall-clock threshold: B must be answered while A's match
still runs (A's answer not yet sent), and B's median latency is compared, as a ratio, with the
same score on the idle daemon. Scored inline on the event loop, A would hold every connection
until its time limit (about 1 s against an idle score of well under a millisecond: a ratio in
the thousands); the bound below leaves room for a loaded 2-core machine.
"""

from __future__ import annotations

import re
import select
import statistics
import threading
import time
from typing import Any

import pytest

from tests._slow import slow
from tests.server._daemon import Daemon, spec
from tests.server._wire import RawConn, frame, req

RATIO_BOUND = 50.0
"""B's median latency while A runs, at most this many times its idle median (the target:
within 50 ms; an idle score takes ~0.1-1 ms here, A's stall would be its time limit, ~1 s)."""

BACKTRACKS = "(a|a)+$"
"""A pattern the `regex` package backtracks on too: each extra ``a`` doubles its time (30 take
seconds). The case's own ``(a+)+$`` is matched in linear time by `regex` (stdlib `re` takes
exponential time on it): its test below checks that it is answered, and quickly."""

LIMIT_S = 1.0
"""A's time limit (seconds): the pattern scorer's default, given explicitly."""

TIME_LIMIT = re.compile(r"(?<![\d.])1(?:\.0+)?\s*(?:s|seconds?)\b")  # "1 s", "1.0 s", "1 second"


def _score_body(msg_id: int, output: str, label: str, **params: Any) -> bytes:
    return req("score", {"output": output, "label": label, **params}, msg_id)


def _backtracking(msg_id: int) -> bytes:
    settings = {"pattern": BACKTRACKS, "timeout": LIMIT_S}
    return _score_body(msg_id, "a" * 40 + "b", "a", scorer="pattern", settings=settings)


def _latency(c: RawConn, msg_id: int) -> float:
    """One plain ``exact`` score's round trip on ``c`` (seconds)."""
    t0 = time.perf_counter()
    c.send(frame(_score_body(msg_id, "Paris", "Paris")))
    reply = c.recv_reply()
    elapsed = time.perf_counter() - t0
    assert reply["id"] == msg_id and reply["result"]["correct"] is True, reply
    return elapsed


def _b_during(b: RawConn, first_id: int, n: int = 7, gap_s: float = 0.05) -> list[float]:
    """B's plain scores, ``gap_s`` apart: their latencies (seconds)."""
    out = []
    for i in range(n):
        out.append(_latency(b, first_id + i))
        time.sleep(gap_s)
    return out


def _idle_median(b: RawConn) -> float:
    """B's median latency on the idle daemon, its scores spaced as :func:`_b_during` spaces them."""
    for i in range(20):  # warm: the scorer built, the connection's first replies
        _latency(b, 10_000 + i)
    return statistics.median(_b_during(b, 20_000, n=15))


def _pending(c: RawConn) -> bool:
    """Nothing has arrived on ``c`` yet (its request is still being worked on)."""
    return not select.select([c.sock], [], [], 0)[0]


def _check_b(idle: float, during: list[float], what: str) -> None:
    """B's median within :data:`RATIO_BOUND` x idle; none of B's answers waited for a match."""
    ratio = statistics.median(during) / idle
    print(
        f"{what}: B idle {idle * 1e3:.2f} ms, while A runs median {statistics.median(during) * 1e3:.2f} ms "
        f"(slowest {max(during) * 1e3:.2f} ms): ratio {ratio:.1f}x"
    )
    assert ratio <= RATIO_BOUND, f"B waited {ratio:.0f}x its idle latency while A's pattern ran"
    # against A's time limit, not a wall-clock threshold: no answer of B waited for a match
    assert max(during) < LIMIT_S / 4, f"a score of B waited {max(during):.2f} s: for A's match"


def _while_a_runs(d: Daemon, a_body: bytes) -> tuple[float, list[float], bool, dict[str, Any]]:
    """B's idle median, B's latencies while A's request runs, whether A still ran after them, A's reply."""
    with RawConn(d.socket) as a, RawConn(d.socket) as b:
        idle = _idle_median(b)
        a.send(frame(a_body))
        time.sleep(0.3)  # the case: B comes 0.3 s after A
        during = _b_during(b, 30_000)
        still_running = _pending(a)
        return idle, during, still_running, a.recv_reply()


def test_S12a_a_backtracking_pattern_does_not_stall_other_connections(daemon: Daemon) -> None:
    """Case S12a's family: B is answered in its usual time; A ends in an error naming pattern and limit."""
    idle, during, still_running, a_reply = _while_a_runs(daemon, _backtracking(1))
    assert still_running, "B was answered only after A's match ended: the match held the event loop"
    _check_b(idle, during, "S12a")
    err = a_reply.get("error")
    assert err is not None and a_reply["id"] == 1, a_reply
    assert err["code"] == -32005 and err["data"]["name"] == "ScorerError", err
    assert BACKTRACKS in err["message"] and TIME_LIMIT.search(err["message"]), err["message"]


def test_S12a_the_cases_pattern_is_answered_and_b_is_not_delayed(daemon: Daemon) -> None:
    """Case S12a as written: ``(a+)+$`` on 22 a's and a b (linear for `regex`): no match, B unhurt."""
    body = _score_body(1, "a" * 22 + "b", "a", scorer="pattern", settings={"pattern": "(a+)+$"})
    idle, during, _, a_reply = _while_a_runs(daemon, body)
    assert a_reply["id"] == 1 and a_reply["result"]["failure_kind"] == "parse_failure", a_reply
    _check_b(idle, during, "S12a as written")


@pytest.mark.slow  # 10-23 s of backtracking patterns; make test-slow
def test_S12a_many_backtracking_requests_at_once_do_not_stall_other_connections(daemon: Daemon) -> None:
    """Heavy scorers queue on a limiter of their own: four at once leave B's plain scores alone."""
    conns = [RawConn(daemon.socket) for _ in range(4)]
    try:
        with RawConn(daemon.socket) as b:
            idle = _idle_median(b)
            for i, c in enumerate(conns):
                c.send(frame(_backtracking(i)))
            time.sleep(0.3)
            during = _b_during(b, 40_000)
            assert _pending(conns[-1]), "B was answered only after the last backtracking request ended"
            _check_b(idle, during, "S12a, four at once")
            for c in conns:
                assert c.recv_reply()["error"]["data"]["name"] == "ScorerError"
    finally:
        for c in conns:
            c.close()


@pytest.mark.slow  # 10-23 s of backtracking patterns; make test-slow
def test_S12a_a_benchmark_whose_pattern_backtracks_does_not_stall_other_connections(daemon: Daemon) -> None:
    """Inside a benchmark too; its rows are ``error`` rows whose cause names the pattern and the limit."""
    params = spec(
        n=1,
        runs=2,
        client={"kind": "mock", "reply": "a" * 40 + "b"},
        scorer="pattern",
        scorer_settings={"pattern": BACKTRACKS, "timeout": LIMIT_S},
        reference={"items": {"q0": "x"}, "labels": {"q0": "a"}},
    )
    finished: list[float] = []
    results: list[Any] = []

    def run() -> None:
        with daemon.client(60.0) as c:
            stream = c.benchmark(params)
            rows = list(stream)
            finished.append(time.perf_counter())
            assert stream.result is not None
            stored = c.rows(stream.result.id, traces=True)
            results.append((rows, stream.result, stored.traces))

    with RawConn(daemon.socket) as b:
        idle = _idle_median(b)
        runner = threading.Thread(target=run)
        runner.start()
        try:
            time.sleep(0.3)
            during = _b_during(b, 50_000, n=15, gap_s=0.1)  # over 1.5 s: inside the 2 rows' matches
            b_done = time.perf_counter()
        finally:
            runner.join(slow(60))
    assert finished and b_done < finished[0], "B was answered only after the benchmark's matches ended"
    _check_b(idle, during, "S12a, in a benchmark")
    rows, result, traces = results[0]
    assert [r.failure_kind for r in rows] == ["error", "error"]
    assert result.status == "errors"
    assert result.summary[0].error_causes == {"scorer 'pattern'": 2}  # the short cause, by scorer
    for r in rows:  # the run's trace has the whole cause
        (cause,) = [st.error for st in traces[r.ledger_id] if st.kind == "error"]
        assert BACKTRACKS in cause and TIME_LIMIT.search(cause) and "(ScorerError)" in cause, cause


def test_S12a_a_quick_score_is_answered_at_once_in_order(shared_daemon: Daemon) -> None:
    """A quick score is answered before the next message is read: replies keep the requests' order."""
    with RawConn(shared_daemon.socket) as c:
        c.send(
            frame(_score_body(1, "Paris", "Paris"))
            + frame(req("status", id=2))
            + frame(_score_body(3, "x", "y"))
        )
        assert [c.recv_reply()["id"] for _ in range(3)] == [1, 2, 3]


def test_S12a_a_long_reply_is_scored_off_the_loop_with_the_library_verdict(shared_daemon: Daemon) -> None:
    """Over INLINE_CHARS characters the scorer runs in a worker thread: same verdict as in-process."""
    from hrbench.runner.runtime import INLINE_CHARS
    from hrbench.specs import build_scorer

    reply = "Let me think. " * (INLINE_CHARS // 14 + 1) + "The answer is 42."
    with RawConn(shared_daemon.socket) as c:
        for msg_id, scorer in enumerate(["exact", "answer_contains", "numeric"]):
            c.send(frame(_score_body(msg_id, reply, "42", scorer=scorer)))
            got = c.recv_reply()["result"]
            want = build_scorer(scorer)(None, reply, "42")
            assert (got["correct"], got["failure_kind"]) == (want.correct, want.failure_kind), scorer
