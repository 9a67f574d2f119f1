"""Ctrl-C on `hrb bench` through a real daemon: the message is true, and `hrb ls` shows reservations apart.

Rules: `hrb bench` interrupted says "cancelled" only once the daemon has ended the benchmark
(it waits for the daemon's cancel: the requests already sent finish first), so `hrb ls` right
after shows it ended; while a benchmark runs, `hrb ls` shows the worst case reserved for the
calls in flight as reserved (``reserved_tokens``), not as tokens used (docs/guides/budgets.md).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hrbench.testing import LoopbackServer
from tests._procs import interruptible
from tests._slow import slow
from tests.clients.test_cli import _stop_daemon  # noqa: F401 - the autouse fixture that stops each test's daemon

HRB = [sys.executable, "-m", "hrbench_client.cli"]


def hrb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HRB, *args], capture_output=True, text=True, timeout=slow(180), env=os.environ)


def _listed(bid: str) -> dict:
    return next(json.loads(ln) for ln in hrb("ls").stdout.splitlines() if json.loads(ln)["id"] == bid)


def test_an_interrupted_bench_says_cancelled_once_it_is_and_ls_shows_reservations_apart(
    tmp_path: Path,
) -> None:
    with LoopbackServer(latency_s=4.0) as srv:
        items = ", ".join(f'q{i} = "Say x {i}. [[reply:x]]"' for i in range(6))
        labels = ", ".join(f'q{i} = "x"' for i in range(6))
        spec = tmp_path / "s.toml"
        spec.write_text(
            f"runs = 5\nconcurrency = 2\n[reference]\nitems = {{{items}}}\nlabels = {{{labels}}}\n"
            f'[client]\nkind = "openai"\nmodel = "loop"\nbase_url = "{srv.base_url}"\napi_key_env = false\n'
            "max_tokens = 4000\n"
            '[[arms]]\nkind = "prompt"\nname = "plain"\ntemplate = "{item}"\n'
            "[governor]\nmax_calls = 1000\nmax_tokens = 10000000\n"
        )
        env = {**os.environ, "HRBENCH_CANCEL_GRACE_S": "3"}  # the requests in flight are cut after it
        proc = subprocess.Popen(
            [*HRB, "bench", str(spec)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=interruptible,  # a Ctrl-C reaches hrb however the suite was started
        )
        try:
            assert proc.stdout is not None
            json.loads(proc.stdout.readline())  # one row settled, the next calls in flight
            deadline = time.monotonic() + slow(30)
            while time.monotonic() < deadline:
                running = next(
                    (
                        json.loads(ln)
                        for ln in hrb("ls").stdout.splitlines()
                        if json.loads(ln)["status"] == "running"
                    ),
                    None,
                )
                if running is not None and running.get("reserved_tokens"):
                    break
                time.sleep(0.05)
            assert running is not None and running["reserved_tokens"], running
            # a reservation is the worst case (max_tokens and the prompt), not use: tokens leave it out
            assert running["tokens"] < running["reserved_tokens"], running
            text = hrb("ls", "--text").stdout
            assert "reserved)" in text, text
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=slow(60))
        finally:  # stopped and its pipes closed on every path, a timeout included
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 130, err
        assert "cancelled; finished rows are kept" in err, err
        after = _listed(running["id"])
        assert after["status"] != "running", after  # it said cancelled: it is
        assert not after.get("reserved_tokens"), after
