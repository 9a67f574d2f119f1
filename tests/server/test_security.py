"""Socket permissions, the TCP transport's token and loopback rule, and API keys kept secret."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import hrbench_client as hc
from hrbench.testing import LoopbackServer
from hrbench.testing._loopback import ECHO_ENCODINGS
from hrbench_client import _paths
from hrbench_client.client import Client
from tests._slow import slow
from tests.server._daemon import Daemon, spec
from tests.unit._util.test_redact import recoverable

FAKE_KEY = "sk-hrbench-test-0123456789abcdefSECRET"


def test_socket_and_state_dir_are_private(daemon: Daemon) -> None:
    mode = os.stat(daemon.socket).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    assert stat.S_IMODE(os.stat(daemon.home).st_mode) == 0o700
    for name in ("daemon.pid", "daemon.lock"):
        assert stat.S_IMODE(os.stat(daemon.home / name).st_mode) == 0o600
    with daemon.client() as c:
        c.cache_stats()  # opens the database
        list(c.benchmark(spec(n=1)))  # writes to it
        # replies take 0.5 s: still running after its first batch of rows (batches stream once
        # committed, so an instant mock could be done by then and its lock file gone)
        stream = c.benchmark(spec(n=40, client={"kind": "mock", "reply": "x", "delay_s": 0.5}))
        next(iter(stream))  # running: its lease's lock file exists (in hrbench.sqlite3.locks, 0700)
        for f in daemon.home.glob("hrbench.sqlite3*"):
            private = 0o700 if f.is_dir() else 0o600
            assert stat.S_IMODE(os.stat(f).st_mode) == private, f
            for inner in f.iterdir() if f.is_dir() else ():
                assert stat.S_IMODE(os.stat(inner).st_mode) == 0o600, inner
        assert len(list((daemon.home / "hrbench.sqlite3.locks").iterdir())) == 1
        stream.close()


def test_one_daemon_per_state_dir(daemon: Daemon) -> None:
    second = subprocess.run(daemon.command(), capture_output=True, env=daemon.env, timeout=slow(60))
    assert second.returncode == 3 and b"another daemon" in second.stderr
    with daemon.client() as c:
        assert c.status().pid == daemon.proc.pid  # type: ignore[union-attr]


@pytest.mark.parametrize("addr", ["0.0.0.0:0", "192.168.1.10:8765", "[::]:0", "example.com:80", "8.8.8.8:53"])
def test_tcp_refuses_non_loopback(tmp_path: Path, addr: str) -> None:
    home = tmp_path / "home"
    cmd = [sys.executable, "-m", "hrbench_server", "--home", str(home), "daemon", "--tcp", addr]
    proc = subprocess.run(cmd, capture_output=True, timeout=slow(60))
    assert proc.returncode == 2
    assert b"loopback" in proc.stderr
    assert not _paths.socket_path(home).exists()


def test_tcp_requires_the_token(home: Path) -> None:
    d = Daemon(home, tcp="127.0.0.1:0").start()
    try:
        token_file = _paths.token_path(home)
        assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
        info = json.loads(_paths.pid_path(home).read_text())
        host, port = info["tcp"].rsplit(":", 1)
        assert host == "127.0.0.1"
        with pytest.raises(hc.HrbenchError) as err:
            Client.connect_tcp(host, int(port), "wrong-token", timeout_s=slow(10))
        assert err.value.code == -32098
        import socket

        with socket.create_connection(
            (host, int(port)), timeout=slow(10)
        ) as s:  # no auth first: refused, closed
            body = b'{"jsonrpc":"2.0","id":1,"method":"status"}'
            s.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            data = s.recv(65536)
            assert b"-32098" in data and b'"result"' not in data
        with Client.connect_tcp(host, int(port), token_file.read_text().strip(), timeout_s=slow(10)) as c:
            assert c.status().transport == "unix+tcp"
            assert c.score("a", label="a").correct
        with hc.connect(home, tcp=True, timeout_s=slow(10)) as c:
            assert c.score("a", label="a").correct
    finally:
        d.stop()


def test_api_key_never_stored_logged_or_sent_back(home: Path) -> None:
    with LoopbackServer() as srv:
        d = Daemon(home, env={"HRB_TEST_KEY": FAKE_KEY}).start()
        try:
            client = {
                "kind": "openai",
                "model": "loopback-1",
                "base_url": srv.base_url,
                "api_key_env": "HRB_TEST_KEY",
                "max_attempts": 1,
            }
            with d.client() as c:
                ok = c.benchmark(spec(n=3, client=client, record="rec1"))
                rows = list(ok)
                assert len(rows) == 15
                # a provider error that quotes the key back must not carry it anywhere
                # (in every encoding a server may use)
                leak = spec(
                    n=1,
                    runs=1,
                    client=client,
                    arms=[
                        {
                            "kind": "prompt",
                            "name": f"leak-{enc}",
                            "template": f"[[fault:echo_key:enc={enc}]] {{item}}",
                        }
                        for enc in ECHO_ENCODINGS
                    ],
                )
                bad = c.benchmark(leak)
                leak_rows = list(bad)
                assert len(leak_rows) == len(ECHO_ENCODINGS)
                assert all(r.failure_kind == "error" for r in leak_rows)
                traces = c.rows(bad.id, traces=True).traces  # type: ignore[arg-type]
                errors = [s.error for steps in (traces or {}).values() for s in steps if s.error]
                asked = [
                    s.error
                    for steps in (traces or {}).values()
                    for s in steps
                    if s.error and s.kind == "request"
                ]
                assert len(asked) == len(ECHO_ENCODINGS) and all("***" in e for e in errors), errors
                assert recoverable(json.dumps(msgspec_builtins(traces)), FAKE_KEY) == []
                assert recoverable(json.dumps(msgspec_builtins(c.rows(bad.id).rows)), FAKE_KEY) == []
                export = home / "rec.jsonl"
                c.recording_export("rec1", export)
                assert FAKE_KEY not in export.read_text()
        finally:
            d.stop()
        assert any(
            r.headers.get("authorization") == f"Bearer {FAKE_KEY}" for r in srv.requests
        )  # it was used
    log = d.read_log()
    assert "hrbench daemon" in log and FAKE_KEY not in log
    assert recoverable(log, FAKE_KEY) == []
    for f in home.rglob("*"):
        if f.is_file():
            assert recoverable(f.read_bytes().decode("latin-1"), FAKE_KEY) == [], f


def msgspec_builtins(obj: object) -> object:
    import msgspec

    return msgspec.to_builtins(obj)
