"""Every way a benchmark is cancelled follows `hrb cancel`'s rule.

`hrb cancel` lets the requests already sent finish within a grace (`HRBENCH_CANCEL_GRACE_S`,
else 10 s): their replies are settled at their real cost and kept as rows, so a resume pays for
none of them again; only what outlasts the grace is counted "cancelled in flight". Ctrl-C on a
streaming `hrb bench`, its connection closing (the process killed) and `hrb daemon stop` do the
same: none cancels at once, booking every reply on its way as unknown and paying for it again on resume.

Real daemon and `hrb` subprocesses send to a real loopback model server (in this process) that
waits before each reply and bills every request it answers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from hrbench.records import usd_text
from hrbench.store import Store
from hrbench.testing import LoopbackServer
from tests._procs import interruptible
from tests._slow import slow
from tests.server._daemon import Daemon

# a fault simulation (real daemons killed, cancelled or left idle): `make test-slow`, run by .ci/run
pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

HRB = [sys.executable, "-m", "hrbench_client.cli", "--no-autostart"]
PRICE = (2000.0, 4000.0)  # USD per million input and output tokens
CONCURRENCY = 4
ITEMS = 24
HOW = ["ctrl-c", "connection closed", "daemon stop"]


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "HRBENCH_HOME": str(home)}


def _hrb(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*HRB, *args], capture_output=True, text=True, timeout=slow(90), env=_env(home))
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def _spec(tmp_path: Path, base_url: str) -> Path:
    path = tmp_path / "slow-openai.toml"
    path.write_text(
        textwrap.dedent(f"""
        runs = 1
        concurrency = {CONCURRENCY}
        cache = false
        [reference]
        items = {json.dumps([f"q{i}" for i in range(ITEMS)])}
        labels = {json.dumps(["x"] * ITEMS)}
        [client]
        kind = "openai"
        model = "loopback-1"
        base_url = "{base_url}"
        [[arms]]
        kind = "prompt"
        name = "ask"
        template = "{{item}}"
        params = {{ max_tokens = 8 }}
        [governor]
        max_calls = 200
        max_usd = 50.0
    """)
    )
    return path


def _ledger(home: Path, bench_id: str) -> dict[str, float]:
    store = Store(home / "hrbench.sqlite3")
    try:
        led = store.ledger_get(bench_id)
        rows = store.rows_count(bench_id)
    finally:
        store.close()
    assert led is not None
    return {**led, "rows": rows}


def _cancel_while_sending(
    home: Path, tmp_path: Path, how: str, grace: str | None, latency_s: float
) -> tuple[Daemon, LoopbackServer, str, int, subprocess.Popen[str], str]:
    """Run `hrb bench` on a real daemon; cancel it ``how`` while requests are in flight."""
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"loopback-1": {"input": PRICE[0], "output": PRICE[1]}}}))
    env = {"HRBENCH_PRICES": str(prices)} | ({"HRBENCH_CANCEL_GRACE_S": grace} if grace is not None else {})
    d = Daemon(home, env=env).start()
    with d.client() as c:  # `hrb daemon stop` waits that much more while benchmarks run
        assert c.status().cancel_grace_s == (10.0 if grace is None else float(grace))
    srv = LoopbackServer(latency_s=latency_s).__enter__()
    srv.set(reply_words=4, price=PRICE)
    bench: subprocess.Popen[str] | None = None
    try:
        bench = subprocess.Popen(
            [*HRB, "bench", str(_spec(tmp_path, srv.base_url))],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(home),
            preexec_fn=interruptible,  # a Ctrl-C reaches hrb however the suite was started
        )
        assert bench.stdout is not None
        bench_id = json.loads(bench.stdout.readline())["ledger_id"].split("/", 1)[0]  # a row: replies came
        deadline = time.monotonic() + slow(60)
        while srv.in_flight < CONCURRENCY:  # every slot has a request on its way
            assert time.monotonic() < deadline, d.read_log()[-2000:]
            time.sleep(0.002)
        sent_at_cancel = len(srv.requests)
        if how == "ctrl-c":
            bench.send_signal(signal.SIGINT)
        elif how == "connection closed":
            bench.send_signal(signal.SIGKILL)
        else:  # what `hrb daemon stop` sends, from here so that the stop's moment is known
            with d.client() as c:
                c.shutdown()
        _, err = bench.communicate(timeout=slow(90))
        if how == "daemon stop":  # it stops once its benchmark is stored: a new daemon reads the store
            assert d.proc is not None and d.proc.wait(timeout=slow(60)) == 0
            d = Daemon(home, env=env).start()
        deadline = time.monotonic() + slow(60)
        while _listed(d, bench_id).status == "running":  # a killed `hrb bench` is not waited for
            assert time.monotonic() < deadline
            time.sleep(0.05)
    except BaseException:  # a failed wait (a timeout included) stops what it started
        if bench is not None and bench.poll() is None:
            bench.kill()
            bench.communicate()
        srv.__exit__(None, None, None)
        d.kill()
        raise
    return d, srv, bench_id, sent_at_cancel, bench, err


def _listed(d: Daemon, bench_id: str) -> Any:
    """The benchmark as `hrb ls` lists it."""
    with d.client() as c:
        (listed,) = c.benchmarks()
    assert listed.id == bench_id
    return listed


@pytest.mark.parametrize("how", HOW)
def test_every_cancel_lets_the_requests_sent_finish_and_a_resume_pays_for_none_again(
    home: Path, tmp_path: Path, how: str
) -> None:
    """Within the grace (the default 10 s) the replies on their way are settled and saved as rows."""
    d, srv, bench_id, sent_at_cancel, bench, err = _cancel_while_sending(
        home, tmp_path, how, None, latency_s=1.0
    )
    try:
        received = len(srv.requests)
        assert sent_at_cancel <= received <= sent_at_cancel + CONCURRENCY  # nothing new was sent
        if how == "daemon stop":
            assert bench.returncode == 3 and "the daemon was stopped by" in err, err
        elif how == "ctrl-c":
            assert bench.returncode == 130, err
            assert "cancelling: the requests already sent finish first" in err
            assert f"Resume with: hrb bench --resume {bench_id}" in err
        led = _ledger(home, bench_id)  # the daemon stored the end before it answered
        assert led["rows"] == received  # every request sent is a saved run
        assert led["unknown_calls"] == 0 and led["open_calls"] == 0 and led["calls"] == received
        assert led["usd"] == pytest.approx(sum(b.usd for b in srv.bills))  # real cost, not worst case
        listed = _listed(d, bench_id)
        want = "interrupted" if how == "daemon stop" else "cancelled"
        assert (listed.status, listed.unknown_note) == (want, None)
        with d.client() as c:
            resumed = c.benchmark({"resume": bench_id, "stream": False})
            list(resumed)
        assert resumed.result is not None
        assert resumed.result.status == "done" and resumed.result.n_resumed == received
        assert len(srv.requests) == ITEMS  # the resume sent only what was never sent
        assert len({r.prompt for r in srv.requests}) == ITEMS  # each item once, across the cancel
    finally:
        srv.__exit__(None, None, None)
        d.stop()


@pytest.mark.parametrize("how", HOW)
def test_what_outlasts_the_grace_is_cancelled_in_flight_never_a_crash(
    home: Path, tmp_path: Path, how: str
) -> None:
    """With `HRBENCH_CANCEL_GRACE_S=0` the requests on their way are counted at once, as `hrb cancel --grace 0`."""
    d, srv, bench_id, _, _, _ = _cancel_while_sending(home, tmp_path, how, "0", latency_s=1.0)
    try:
        led = _ledger(home, bench_id)
        assert 1 <= led["cancelled_calls"] <= CONCURRENCY
        assert led["unknown_calls"] == led["cancelled_calls"] and led["open_calls"] == 0
        text = _hrb(home, "ls", "--text").stdout
        note = f"cancelled in flight: unknown, at most {usd_text(led['cancelled_usd'])} USD / {int(led['cancelled_calls'])} calls"
        assert note in text and "at a crash" not in text, text
    finally:
        srv.__exit__(None, None, None)
        d.stop()
