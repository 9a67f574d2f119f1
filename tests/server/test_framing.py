"""JSON-RPC 2.0 and LSP framing conformance against a real daemon process (cases R07a-R07g).

Every framing fault gets an error reply (or a clean close) and the connection, the daemon and
the other connections keep serving.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._examples import examples
from tests._slow import slow
from tests.server._daemon import Daemon
from tests.server._wire import RawConn, frame, req, score

# -- the shared cases, by id ------------------------------------------------------------------


@pytest.mark.parametrize(
    "output",
    ["Straße \u202f€—", "Straße", "x\u202fy", "€—", "日本語", "emoji 🎉 ok", "a\u0301", "\u2212 5"],
)
def test_R07a_content_length_counts_bytes(shared_daemon: Daemon, output: str) -> None:
    """Case R07a: Content-Length counts bytes, in requests and replies."""
    body = score(5, output=output, label=output)
    assert len(body) > len(body.decode())  # the request's Content-Length is in bytes, not characters
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(body))
        got = c.recv_frame()
        assert got is not None
        headers, reply = got
        assert int(headers["content-length"]) == len(reply)
        msg = json.loads(reply)
        assert msg["id"] == 5 and msg["result"]["correct"] is True


@given(text=st.text(min_size=1, max_size=40).filter(lambda s: s.strip()))
@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_R07a_family_any_text_round_trips_with_byte_lengths(shared_daemon: Daemon, text: str) -> None:
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(score(1, output=text, label="x")) + frame(score(2)))
        first, second = c.recv(), c.recv()
        assert first["id"] == 1 and "result" in first
        assert second == {"jsonrpc": "2.0", "id": 2, **{"result": second["result"]}}
        assert second["result"]["correct"] is True


@pytest.mark.parametrize(
    "head",
    [
        b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n",
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n",
        b"content-length: %d\r\ncontent-type: application/vscode-jsonrpc; charset=utf8\r\n\r\n",
        b"CONTENT-LENGTH:%d\r\n\r\n",
        b"Content-Length:    %d   \r\n\r\n",
        b"Content-Length: %d\n\n",
    ],
)
def test_R07b_content_type_and_header_spellings(shared_daemon: Daemon, head: bytes) -> None:
    """Case R07b: a Content-Type header (either order), any case, bare LF line ends."""
    body = score(3)
    with RawConn(shared_daemon.socket) as c:
        c.send(head % len(body) + body)
        assert c.recv() == {"jsonrpc": "2.0", "id": 3, "result": c_result(True)}


def c_result(correct: bool) -> dict[str, Any]:
    return {"correct": correct, "outcome": "paris", "failure_kind": None, "scorer": "exact_normalised"}


def test_R07c_batch_gets_one_array_of_responses(shared_daemon: Daemon) -> None:
    """Case R07c: a batch gets one array of the two responses; the notification none."""
    batch = b"[%s,%s,%s]" % (score(5), score(6, output="Lyon"), req("status", id=None))
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(batch))
        replies = c.recv()
        assert isinstance(replies, list) and len(replies) == 2
        by_id = {r["id"]: r for r in replies}
        assert by_id[5]["result"]["correct"] is True and by_id[6]["result"]["correct"] is False


def test_R07d_empty_batch_is_one_invalid_request(shared_daemon: Daemon) -> None:
    """Case R07d: `[]` gets one -32600 error (not an array)."""
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(b"[]") + frame(score(2)))
        err = c.recv()
        assert isinstance(err, dict) and err["id"] is None and err["error"]["code"] == -32600
        assert c.recv()["id"] == 2


def test_R07e_header_block_without_content_length(shared_daemon: Daemon) -> None:
    """Case R07e: a header block without Content-Length gets an error with its id."""
    with RawConn(shared_daemon.socket) as c:
        c.send(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + req("status", id=10))
        c.send(frame(score(11)))
        err = c.recv()
        assert err["id"] == 10 and err["error"]["code"] == -32600
        assert "Content-Length" in err["error"]["message"]
        assert c.recv() == {"jsonrpc": "2.0", "id": 11, "result": c_result(True)}


def test_R07g_no_response_to_a_notification(shared_daemon: Daemon) -> None:
    """Case R07g: a notification with bad params gets no reply."""
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(req("score", {"output": 3, "bogus": True}, id=None)) + frame(score(7)))
        assert c.recv() == {"jsonrpc": "2.0", "id": 7, "result": c_result(True)}


# -- batches as a family ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([b"1", b"2", b"3"], [(None, -32600)] * 3),  # JSON-RPC 2.0's own example
        ([score(1), b'"x"'], [(1, None), (None, -32600)]),
        ([score(1), req("nope", id=2)], [(1, None), (2, -32601)]),
        ([score(1), req("score", {"output": 1}, id="s")], [(1, None), ("s", -32602)]),
        (
            [req("status", id=1), req("reference/list", {}, id=2), req("cache/stats", id=3)],
            [(1, None), (2, None), (3, None)],
        ),
        ([req("reference/list", {}, 1), req("reference/list", {}, 1)], [(1, None), (1, -32600)]),
        (
            [
                b'{"jsonrpc": "2.0", "method": "status"}',
                b'{"jsonrpc": "2.0", "id": 9, "method": "score", "params": null}',
            ],
            [(9, -32602)],
        ),
    ],
)
def test_batches(shared_daemon: Daemon, items: list[bytes], expected: list[tuple[Any, int | None]]) -> None:
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(b"[" + b", ".join(items) + b"]"))
        replies = c.recv()
        assert isinstance(replies, list)
        got = sorted(((r["id"], r.get("error", {}).get("code")) for r in replies), key=repr)
        assert got == sorted(expected, key=repr)
        assert all(r["jsonrpc"] == "2.0" for r in replies)


def test_a_batch_of_notifications_gets_nothing(shared_daemon: Daemon) -> None:
    notes = b"[%s, %s]" % (req("status", id=None), req("score", {"output": "a", "label": "a"}, id=None))
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(notes) + frame(score(4)))
        assert c.recv()["id"] == 4  # the first thing back answers the request after the batch


# -- framing faults: an error, then the same connection keeps serving ---------------------------

GOOD = score(99)


def _deep(n: int) -> bytes:
    return b'{"jsonrpc": "2.0", "id": 5, "method": "score", "params": {"output": "x", "label": %s}}' % (
        b"[" * n + b"]" * n
    )


FAULTS: dict[str, tuple[bytes, int, Any]] = {
    # name: (bytes sent before a good request, error code, id the error carries)
    "missing": (b"Content-Type: x\r\n\r\n" + score(5), -32600, 5),
    "non-numeric": (b"Content-Length: abc\r\n\r\n" + score(5), -32600, 5),
    "fraction": (b"Content-Length: 1.5e2\r\n\r\n" + score(5), -32600, 5),
    "hex": (b"Content-Length: 0x40\r\n\r\n" + score(5), -32600, 5),
    "plus-sign": (b"Content-Length: +%d\r\n\r\n" % len(score(5)) + score(5), -32600, 5),
    "negative": (b"Content-Length: -5\r\n\r\n" + score(5), -32600, 5),
    "empty-value": (b"Content-Length: \r\n\r\n" + score(5), -32600, 5),
    "too-short": (b"Content-Length: %d\r\n\r\n" % (len(score(5)) - 9) + score(5), -32700, 5),
    "too-long": (b"Content-Length: %d\r\n\r\n" % (len(score(5)) + 9) + score(5), -32600, 5),
    "unframed": (score(5) + b"\n", -32600, 5),
    "unframed-crlf-twice": (score(5) + b"\r\n" + score(6) + b"\r\n", -32600, 5),
    "garbage": (b"hello daemon\r\n", -32700, None),
    "invalid-json": (frame(b'{"jsonrpc": "2.0", "id": 5, "method": "score", "params": {oops}}'), -32700, 5),
    "not-utf8": (frame(b'{"jsonrpc": "2.0", "id": 5, "method": "\xff\xfe"}'), -32700, 5),
    "long-header-line": (b"X-Junk: " + b"a" * (2 << 20) + b"\r\n" + frame(score(5)), -32600, 5),
    "long-line-no-colon": (
        b"Content-Type: " + b"b" * (1 << 20) + b"\r\nContent-Length: %d\r\n\r\n" % len(score(5)) + score(5),
        -32600,
        5,
    ),
    "header-without-colon": (b"Content-Length: %d\r\nbogus\r\n\r\n" % len(score(5)) + score(5), -32600, 5),
    "nesting-1000": (frame(_deep(1000)), -32600, 5),
    "nesting-100000": (frame(_deep(100_000)), -32600, 5),
    "batch-nesting": (frame(b"[" + _deep(5000) + b"]"), -32600, 5),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_framing_faults_get_an_error_and_the_connection_keeps_serving(
    shared_daemon: Daemon, name: str
) -> None:
    sent, code, msg_id = FAULTS[name]
    with RawConn(shared_daemon.socket) as c, RawConn(shared_daemon.socket) as other:
        c.send(sent + frame(GOOD))
        err = c.recv()
        assert err["error"]["code"] == code, err
        assert err["id"] == msg_id
        assert err["error"]["data"]["name"] in ("ParseError", "InvalidRequest")
        if code == -32600 and name not in ("nesting-1000", "nesting-100000", "batch-nesting"):
            assert "Content-Length" in err["error"]["message"] or "header" in err["error"]["message"]
        while (reply := c.recv())["id"] != 99:  # a second unframed request gets its own error
            assert reply["error"]["code"] == code
        assert reply["result"]["correct"] is True
        other.send(frame(score(1)))
        assert other.recv()["result"]["correct"] is True


def test_too_long_content_length_alone_is_answered_after_a_stall(shared_daemon: Daemon) -> None:
    body = score(8)
    with RawConn(shared_daemon.socket) as c:
        c.send(b"Content-Length: %d\r\n\r\n" % (len(body) + 50) + body)  # and nothing more comes
        err = c.recv()
        assert err["id"] == 8 and err["error"]["code"] == -32600
        assert f"has {len(body)} bytes" in err["error"]["message"]
        c.send(frame(GOOD))
        assert c.recv()["id"] == 99


def test_a_lone_unframed_request_is_answered_not_ignored(shared_daemon: Daemon) -> None:
    with RawConn(shared_daemon.socket) as c:
        c.send(req("status", id="nd-1") + b"\n")
        err = c.recv()
        assert err["id"] == "nd-1" and "Content-Length" in err["error"]["message"]


def test_faults_over_stdio_keep_the_server_alive(tmp_path: Path) -> None:
    stdin = b"".join(FAULTS[k][0] for k in ("nesting-100000", "long-header-line", "missing", "too-short"))
    stdin += frame(GOOD) + frame(req("shutdown", id=100))
    proc = subprocess.run(
        [sys.executable, "-m", "hrbench_server", "--home", str(tmp_path / "h"), "serve", "--stdio"],
        input=stdin,
        capture_output=True,
        timeout=slow(60),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    replies = []
    out = proc.stdout
    while out:
        head, _, rest = out.partition(b"\r\n\r\n")
        n = int(head.split(b":")[1])
        replies.append(json.loads(rest[:n]))
        out = rest[n:]
    assert [(r["id"], "error" in r) for r in replies] == [(5, True)] * 4 + [(99, False), (100, False)]


# -- fuzz -------------------------------------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
    max_leaves=8,
)
_bodies = st.one_of(
    st.builds(lambda i: score(i), st.integers(0, 10**6)),
    st.builds(
        lambda m, p, i: req(m, p, i),
        st.sampled_from(["score", "status", "nope", "exit", "initialize"]),
        _json_values,
        st.integers(0, 99) | st.none(),
    ),
    st.builds(lambda v: json.dumps(v).encode(), _json_values),
    st.binary(max_size=40),
)


@st.composite
def _frames(draw: st.DrawFn) -> bytes:
    body = draw(_bodies)
    kind = draw(st.sampled_from(["ok", "ok", "short", "long", "bad", "none", "raw", "ctype"]))
    if kind == "ok":
        return frame(body)
    if kind == "short":
        return b"Content-Length: %d\r\n\r\n" % max(0, len(body) - draw(st.integers(1, 10))) + body
    if kind == "long":
        return b"Content-Length: %d\r\n\r\n" % (len(body) + draw(st.integers(1, 10))) + body
    if kind == "bad":
        value = draw(st.sampled_from([b"-1", b"x", b"", b"1e3", b"99999999999999999999"]))
        return b"Content-Length: " + value + b"\r\n\r\n" + body
    if kind == "none":
        return b"Content-Type: a\r\n\r\n" + body
    if kind == "ctype":
        return frame(body, Content_Type="application/vscode-jsonrpc; charset=utf-8")
    return body


@given(frames=st.lists(_frames(), min_size=1, max_size=6))
@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_fuzz_random_frames_never_break_the_daemon(shared_daemon: Daemon, frames: list[bytes]) -> None:
    with RawConn(shared_daemon.socket, timeout_s=slow(30)) as c:
        c.send(b"".join(frames))
        c.shut_write()  # end of input: the daemon answers what it can, then closes
        while (got := c.recv_frame()) is not None:
            headers, body = got
            msg = json.loads(body)
            for r in msg if isinstance(msg, list) else [msg]:
                assert r["jsonrpc"] == "2.0"
                assert ("result" in r) != ("error" in r) or "method" in r
    with RawConn(shared_daemon.socket) as other:
        other.send(frame(score(1)))
        assert other.recv()["result"]["correct"] is True
    assert shared_daemon.proc is not None and shared_daemon.proc.poll() is None


def test_a_content_length_over_the_limit_is_answered_at_once(home: Path) -> None:
    d = Daemon(home, max_message_mb=1).start()
    try:
        length = 3 << 20
        body = score(8, output="x" * length)[:length]
        with RawConn(d.socket, timeout_s=slow(10)) as c:
            c.send(b"Content-Length: %d\r\n\r\n" % length + body[:500])  # the rest is not sent yet
            err = c.recv()  # before: no answer until all 3 MB arrived
            assert err["id"] == 8 and err["error"]["code"] == -32600
            assert (
                f"`Content-Length` {length} exceeds the largest body accepted, {1 << 20} bytes"
                in (err["error"]["message"])
            )
            c.send(body[500:] + frame(GOOD))  # the body is dropped whole, then the connection serves
            assert c.recv()["result"]["correct"] is True
    finally:
        d.stop()
