"""JSON-RPC ids over the daemon's real Unix socket (case S13a).

JSON-RPC 2.0 §4-5: every request (a message with an id) gets exactly one response carrying that
id; a Number id may have a fraction. Raw frames, as no client of ours would send them.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests._slow import slow
from tests.server._daemon import Daemon, spec
from tests.server._wire import RawConn, frame, req


def _reply_bytes(c: RawConn) -> bytes:
    """The next response's body as sent (notifications skipped): ids are compared as text."""
    while True:
        got = c.recv_frame()
        assert got is not None, "the daemon closed the connection"
        if b'"method"' not in got[1][:64] or json.loads(got[1]).get("method") is None:
            return got[1]


def _only_answer_left(c: RawConn, msg_id: int) -> None:
    """Nothing else is queued before the answer to a fresh request: no second response came."""
    c.send(frame(req("status", id=msg_id)))
    assert json.loads(_reply_bytes(c))["id"] == msg_id


def test_S13a_cancel_request_sent_with_an_id_gets_one_response(shared_daemon: Daemon) -> None:
    """Case S13a: ``$/cancelRequest`` sent as a request (id 101) is answered, once; id 900 too."""
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(b'{"jsonrpc":"2.0","id":101,"method":"$/cancelRequest","params":{"id":99}}'))
        c.send(frame(b'{"jsonrpc":"2.0","id":900,"method":"status"}'))
        first, second = json.loads(_reply_bytes(c)), json.loads(_reply_bytes(c))
        assert first == {"jsonrpc": "2.0", "id": 101, "result": None}
        assert second["id"] == 900 and second["result"]["protocol_version"] >= 1
        _only_answer_left(c, 901)


def test_S13a_cancel_notification_still_gets_no_response(shared_daemon: Daemon) -> None:
    """The same cancel without an id is a notification (LSP's form): nothing comes back."""
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(b'{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":99}}'))
        _only_answer_left(c, 902)


def test_S13a_cancel_request_in_a_batch_is_in_the_batch_answer(shared_daemon: Daemon) -> None:
    batch = b"[%s,%s]" % (
        b'{"jsonrpc":"2.0","id":"c-1","method":"$/cancelRequest","params":{"id":"gone"}}',
        req("status", id=5),
    )
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(batch))
        replies = json.loads(_reply_bytes(c))
        assert len(replies) == 2 and {r["id"] for r in replies} == {5, "c-1"}
        assert next(r for r in replies if r["id"] == "c-1") == {"jsonrpc": "2.0", "id": "c-1", "result": None}


def test_S13a_cancel_request_with_bad_params_is_still_answered_invalid_params(shared_daemon: Daemon) -> None:
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(b'{"jsonrpc":"2.0","id":103,"method":"$/cancelRequest","params":{"nope":1}}'))
        err = json.loads(_reply_bytes(c))
        assert err["id"] == 103 and err["error"]["code"] == -32602
        _only_answer_left(c, 904)


# Number ids with a fraction or an exponent: echoed exactly as sent (JSON-RPC 2.0 §4 allows them).
FRACTIONAL = ["104.0", "104.5", "-3.25", "0.5", "1e2", "1.5E+3", "2.5e-1", "0.10000000000000000001", "-0.0"]


@pytest.mark.parametrize("raw_id", FRACTIONAL)
def test_S13a_fractional_number_id_is_echoed_as_sent(shared_daemon: Daemon, raw_id: str) -> None:
    rid = raw_id.encode()
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(b'{"jsonrpc":"2.0","id":%s,"method":"score","params":{"output":"a","label":"a"}}' % rid))
        body = _reply_bytes(c)
        assert body.startswith(b'{"jsonrpc":"2.0","id":%s,"result":' % rid), body
        assert json.loads(body)["result"]["correct"] is True


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b'{"jsonrpc":"2.0","id":%s,"method":"no/such/method"}', -32601),  # pygls's dispatch
        (b'{"jsonrpc":"2.0","id":%s,"method":"score","params":{"output":1}}', -32602),  # msgspec's path
        (b'{"jsonrpc":"1.0","id":%s,"method":"status"}', -32600),  # refused before dispatch
        (b'{"jsonrpc":"2.0","id":%s,"method":"score","params":{"output":"x"', -32700),  # cut: find_id
        (b'{"jsonrpc":"2.0","id":%s,"method":"$/cancelRequest","params":{"id":1.5}}', None),  # answered null
    ],
)
def test_S13a_fractional_id_rides_every_kind_of_answer(
    shared_daemon: Daemon, body: bytes, code: int | None
) -> None:
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(body % b"104.5"))
        out = _reply_bytes(c)
        assert out.startswith(b'{"jsonrpc":"2.0","id":104.5,'), out
        msg = json.loads(out)
        assert (msg.get("error") or {}).get("code") == code, msg
        if code is None:
            assert msg["result"] is None
        _only_answer_left(c, 905)


def test_S13a_fractional_ids_in_a_batch_are_echoed(shared_daemon: Daemon) -> None:
    batch = b'[{"jsonrpc":"2.0","id":7.5,"method":"status"},{"jsonrpc":"2.0","id":1e1,"method":"nope"}]'
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(batch))
        out = _reply_bytes(c)
        assert b'"id":7.5,"result"' in out and b'"id":1e1,"error"' in out, out
        assert len(json.loads(out)) == 2


@pytest.mark.parametrize(
    ("raw_id", "needle"),
    [
        (b"true", "got `bool` - at `$.id`"),
        (b"{}", "got `object` - at `$.id`"),
        (b"[1]", "got `array` - at `$.id`"),
        (b"null", "not null"),
        (b"1e999", "out of range"),
    ],
)
def test_an_id_that_cannot_be_echoed_is_refused_with_id_null(
    shared_daemon: Daemon, raw_id: bytes, needle: str
) -> None:
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(b'{"jsonrpc":"2.0","id":%s,"method":"status"}' % raw_id))
        err = json.loads(_reply_bytes(c))
        assert err["id"] is None and err["error"]["code"] == -32600, err
        assert needle in err["error"]["message"]
        _only_answer_left(c, 906)


def test_S13a_a_cancel_naming_a_fractional_id_cancels_that_request(home: Path, tmp_path: Path) -> None:
    """A benchmark sent with id 104.5 is cancelled by ``{"id": 104.5}``; each request gets one answer."""
    gate = tmp_path / "gate"  # never opened: the benchmark's one call waits until it is cancelled
    with Daemon(home, env={"HRB_GATE_FILE": str(gate), "HRBENCH_CANCEL_GRACE_S": "0"}) as d:
        with RawConn(d.socket) as c, d.client(10.0) as watcher:
            params = spec(n=1, runs=1, client={"kind": "mock", "function": "_mocks:gated"})
            c.send(
                frame(
                    json.dumps(
                        {"jsonrpc": "2.0", "id": 104.5, "method": "benchmark", "params": params}
                    ).encode()
                )
            )
            deadline = time.monotonic() + slow(30)
            while not watcher.status().running:
                assert time.monotonic() < deadline, "the benchmark did not start"
                time.sleep(0.02)
            c.send(frame(b'{"jsonrpc":"2.0","id":7.25,"method":"$/cancelRequest","params":{"id":104.5}}'))
            answers = {}
            while len(answers) < 2:
                out = _reply_bytes(c)
                msg = json.loads(out)
                assert msg["id"] not in answers, f"a second response for id {msg['id']}"
                answers[msg["id"]] = (out, msg)
            cancel_out, cancel = answers[7.25]
            assert cancel_out.startswith(b'{"jsonrpc":"2.0","id":7.25,') and cancel["result"] is None
            bench_out, bench = answers[104.5]
            assert bench_out.startswith(b'{"jsonrpc":"2.0","id":104.5,"error":'), bench_out
            assert "cancel" in bench["error"]["message"].lower()
            _only_answer_left(c, 907)
