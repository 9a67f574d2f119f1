"""The JSON-RPC layer end to end against a real daemon: framing, errors, concurrency."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import msgspec
import pytest

import hrbench_client as hc
from hrbench_client import protocol as p
from tests._slow import slow
from tests.server._daemon import Daemon, spec


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def request(method: str, params: object = None, id: object = 1) -> bytes:
    msg: dict[str, object] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode()


def still_serving(c: hc.Client) -> None:
    assert c.status().protocol_version == p.PROTOCOL_VERSION


def test_score_round_trip(shared_daemon: Daemon) -> None:
    with shared_daemon.client() as c:
        r = c.score("  paris ", label="Paris")
        assert (r.correct, r.outcome, r.failure_kind) == (True, "paris", None)
        r = c.score("Lyon", label=["Paris", "Lutetia"])
        assert (r.correct, r.failure_kind) == (False, "wrong")
        assert c.score("x", label=None).correct is None
        assert [
            x.correct for x in c.score_many([{"output": "a", "label": "a"}, {"output": "b", "label": "a"}])
        ] == [True, False]


@pytest.mark.parametrize(
    ("body", "code", "needle"),
    [
        (b"{not json", -32700, "Parse error"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "score", "params": {"output": "x"', -32700, "Parse error"),
        (b'"just a string"', -32600, "Invalid Request"),
        (b'{"jsonrpc": "2.0", "id": 1}', -32600, "missing `method`"),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "status"}', -32600, "jsonrpc"),
        (request("nope/such/method"), -32601, "nope/such/method"),
        (request("score", {"output": 1, "label": "x"}), -32602, "`$.output`"),
        (request("score", {"output": "x", "typo": 1}), -32602, "unknown field `typo`"),
        (request("score", [1, 2]), -32602, "Expected `object`"),
        (request("benchmark", {"runs": "five"}), -32602, "at `$.runs`"),
        (request("benchmark", {"runs": 0}), -32602, "runs = 0: must be at least 1"),
        (
            request("benchmark", {"arms": [{"kind": "prompt", "name": 3, "template": "x"}]}),
            -32602,
            "`$.arms[0].name`",
        ),
        (
            request("benchmark", {"arms": [{"kind": "regex"}]}),
            -32602,
            "arms[0].kind: unknown value; expected one of prompt, reading, outputs, import (got 'regex')",
        ),
        (
            request("benchmark", {"client": {"kind": "openai", "model": "m", "api_key_env": "not a name"}}),
            -32602,
            "`$.client.api_key_env`",
        ),
    ],
)
def test_malformed_requests_get_errors_and_the_daemon_keeps_serving(
    shared_daemon: Daemon, body: bytes, code: int, needle: str
) -> None:
    with shared_daemon.client(10.0) as c:
        c.send_raw(body)
        reply = c.recv_raw()
        assert reply["error"]["code"] == code, reply
        assert needle in reply["error"]["message"]
        assert "Traceback" not in json.dumps(reply)
        still_serving(c)
    with shared_daemon.client(10.0) as c2:  # and for other clients
        still_serving(c2)


def test_invalid_params_raise_typed_errors(shared_daemon: Daemon) -> None:
    with shared_daemon.client() as c:
        with pytest.raises(hc.InvalidParams, match=r"at `\$\.runs`"):
            list(c.benchmark({"runs": "x"}))
        with pytest.raises(hc.InvalidParams) as out_of_range:  # a range broken: said in words, with the value
            list(c.benchmark({"runs": 0}))
        assert str(out_of_range.value) == "runs = 0: must be at least 1"
        assert out_of_range.value.data["field"] == "runs"
        assert out_of_range.value.data["context"] == {"rule": "must be at least 1"}
        with pytest.raises(hc.MethodNotFound):
            c.call("nope")
        with pytest.raises(hc.ConfigError) as info:
            list(c.benchmark(spec(reference="no-such-reference")))
        assert info.value.code == -32001 and info.value.data["name"] == "ConfigError"
        assert info.value.field == "reference"
        with pytest.raises(hc.NotFound):
            c.rows("0000000000000000")
        with pytest.raises(hc.NotFound):
            c.references.get("missing")
        still_serving(c)


def test_internal_errors_carry_no_traceback_or_path(shared_daemon: Daemon) -> None:
    with shared_daemon.client() as c:
        bad = spec(arms=[{"kind": "import", "path": "_mocks:broken_factory", "settings": {}}])
        with pytest.raises(hc.HrbenchError) as info:
            list(c.benchmark(bad))
        err = info.value
        assert err.code == -32603 and err.data["name"] == "InternalError"
        text = str(err) + json.dumps(err.data)
        assert "RuntimeError" in text
        assert "/secret/path" not in text and "Traceback" not in text and ".py" not in text
        still_serving(c)
    assert "boom" in shared_daemon.read_log()  # the details are in the log


def test_ten_megabyte_payloads(shared_daemon: Daemon) -> None:
    big = "x" * (10 * 1024 * 1024)
    with shared_daemon.client() as c:
        c.send_raw(request("benchmark", {"runs": big}))
        reply = c.recv_raw()
        assert reply["error"]["code"] == -32602 and "$.runs" in reply["error"]["message"]
        assert len(reply["error"]["message"]) < 1000
        assert c.score(big, label="x").failure_kind == "wrong"
        still_serving(c)


def test_oversized_message_is_refused(home, calls_file) -> None:
    d = Daemon(home, max_message_mb=1).start()
    try:
        with d.client() as c:
            c.send_raw(request("score", {"output": "x" * (2 * 1024 * 1024), "label": "x"}))
            reply = c.recv_raw()
            assert reply["error"]["code"] == -32600 and "exceeds" in reply["error"]["message"]
            still_serving(c)
    finally:
        d.stop()


def test_two_clients_at_once_share_one_daemon_and_cache(daemon: Daemon, calls_file) -> None:
    results: dict[str, list[p.Row]] = {}
    errors: list[BaseException] = []

    def run(name: str, n: int) -> None:
        try:
            with daemon.client() as c:
                stream = c.benchmark(
                    spec(n=n, name=name, arms=[{"kind": "prompt", "name": name, "template": "{item}"}])
                )
                results[name] = list(stream)
                assert stream.result is not None and stream.result.n_rows == n * 5
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(f"arm{k}", 20)) for k in range(2)]
    for t in threads:
        t.start()
    with daemon.client() as c:  # a third client is served meanwhile
        for _ in range(20):
            assert c.score("a", label="a").correct
    for t in threads:
        t.join(slow(60))
    assert not errors, errors
    assert {k: len(v) for k, v in results.items()} == {"arm0": 100, "arm1": 100}
    assert all(r.arm == name for name, rows in results.items() for r in rows)
    calls_before = len(calls_file.read_text().splitlines())
    with daemon.client() as c:  # the same arm again, from a new client: all answers from the shared cache
        rows = list(c.benchmark(spec(n=20, arms=[{"kind": "prompt", "name": "arm0", "template": "{item}"}])))
        assert len(rows) == 100
        assert c.cache_stats()["entries"] >= 200
    assert len(calls_file.read_text().splitlines()) == calls_before


def test_status_and_shutdown(daemon: Daemon) -> None:
    with daemon.client() as c:
        st = c.status()
        assert st.transport == "unix" and st.connections >= 1 and st.home == str(daemon.home)
        c.shutdown()
    assert daemon.proc is not None
    assert daemon.proc.wait(slow(15)) == 0
    assert not daemon.socket.exists()


def test_stop_daemon_returns_once_the_process_has_exited(home: Path) -> None:
    from hrbench_client.client import daemon_status, start_daemon, stop_daemon

    pid = start_daemon(home)  # a child of this process: stop_daemon must reap it, not wait on a zombie
    assert stop_daemon(home) is True
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert daemon_status(home) is None
    again = start_daemon(home)  # the state dir's lock is free again (no stale lock refuses it)
    assert again != pid and stop_daemon(home) is True
    assert stop_daemon(home) is False


def test_rows_notifications_decode_into_protocol_rows(shared_daemon: Daemon) -> None:
    with shared_daemon.client() as c:
        stream = c.benchmark(spec(n=3))
        rows = list(stream)
        assert all(isinstance(r, p.Row) for r in rows)
        assert stream.result is not None and stream.id == stream.result.id
        assert stream.done == stream.total == 15
        assert msgspec.structs.asdict(rows[0]).keys() == set(p.Row.__struct_fields__)
