"""``python -m hrbench.testing`` as a stand-in local server: a known port, served until stopped."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import urllib.request

from tests._slow import slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_it_serves_on_the_port_asked_with_no_stdin_until_terminated() -> None:
    port = _free_port()
    # a shell's background job: standard input is /dev/null, which ended the server at once before
    proc = subprocess.Popen(
        [sys.executable, "-m", "hrbench.testing", "--port", str(port), "--forever"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == f"PORT {port}"
        body = json.dumps(
            {"model": "m", "messages": [{"role": "user", "content": "[[reply:Paris]] capital?"}]}
        )
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            data=body.encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=slow(30)) as resp:
            reply = json.load(resp)
        assert reply["choices"][0]["message"]["content"] == "Paris"
        assert proc.poll() is None  # still serving after its stdin ended
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=slow(30)) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
