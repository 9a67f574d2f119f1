"""The stdio transport: nothing but protocol on stdout, even when arm code prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import hrbench_client as hc
from hrbench_client.client import Client
from tests._slow import slow
from tests.server._daemon import HERE, spec


def test_stdio_scores_streams_and_keeps_stdout_clean(tmp_path: Path) -> None:
    with Client.spawn_stdio(tmp_path / "home") as c:
        assert c.status().transport == "stdio"
        assert c.score("  paris ", label="Paris").correct is True
        with pytest.raises(hc.InvalidParams, match=r"\$\.output"):
            c.call("score", {"output": 3})
        noisy = spec(n=3, arms=[{"kind": "import", "path": "_mocks:noisy_arm", "name": "noisy"}])
        stream = c.benchmark(noisy)
        rows = list(stream)
        assert len(rows) == 15 and all(r.correct for r in rows)
        assert stream.result is not None and stream.result.status == "done"
        assert c.status().connections == 1


def test_stdio_raw_stdout_is_only_framed_json(tmp_path: Path) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"benchmark","params":%s}' % (
        __import__("json")
        .dumps(spec(n=1, runs=1, arms=[{"kind": "import", "path": "_mocks:noisy_arm"}]))
        .encode()
    )
    bye = b'{"jsonrpc":"2.0","id":2,"method":"shutdown"}'
    stdin = b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(b), b) for b in (body, bye))
    proc = subprocess.run(
        [sys.executable, "-m", "hrbench_server", "--home", str(tmp_path / "h"), "serve", "--stdio"],
        input=stdin,
        capture_output=True,
        timeout=slow(60),
        check=True,
    )
    out = proc.stdout
    assert b"NOISE" not in out and b"NOISE on stdout" in proc.stderr
    n = 0
    while out:  # every byte belongs to a Content-Length frame of JSON
        head, sep, rest = out.partition(b"\r\n\r\n")
        assert sep and head.startswith(b"Content-Length: ")
        length = int(head.split(b":")[1])
        __import__("json").loads(rest[:length])
        out = rest[length:]
        n += 1
    assert n >= 3  # progress, row, result, shutdown reply
    assert str(HERE)  # the arm module came from the tests folder via python_path


def test_stdio_reads_requests_from_a_file_and_writes_replies_to_a_file(tmp_path: Path) -> None:
    # `hrb serve --stdio < requests > replies`: stdin and stdout regular files, not pipes. The
    # event loop refuses files as pipes; the refused file objects were dropped, which closed
    # their descriptors, so nothing was read or written.
    import json

    bodies = [
        b'{"jsonrpc":"2.0","id":1,"method":"status"}',
        b'{"jsonrpc":"2.0","id":2,"method":"score","params":{"output":"  paris ","label":"Paris"}}',
    ]
    requests = tmp_path / "requests"
    requests.write_bytes(b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(b), b) for b in bodies))
    replies = tmp_path / "replies"
    with requests.open("rb") as stdin, replies.open("wb") as stdout:
        proc = subprocess.run(
            [sys.executable, "-m", "hrbench_server", "--home", str(tmp_path / "h"), "serve", "--stdio"],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            timeout=slow(60),
        )
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    out, got = replies.read_bytes(), {}
    while out:
        head, _, rest = out.partition(b"\r\n\r\n")
        length = int(head.split(b":")[1])
        msg = json.loads(rest[:length])
        got[msg["id"]] = msg["result"]
        out = rest[length:]
    assert got[1]["transport"] == "stdio"
    assert got[2]["correct"] is True
