"""Finding the end of a value sent without framing: linear time, and other clients not held.

Prints, each with its baseline and ratio, on a real daemon (its default 64 MB body limit):

1. a 60 MB JSON value sent without ``Content-Length`` (then the sender waits): seconds to its
   error reply vs the same 60 MB body framed (refused for its params), target under 2 s (a
   value that never ends cost 263 s at 60 MB when each read scanned the whole buffer again);
2. a 60 MB value that never ends (an unterminated string, then silence): seconds to its error
   reply, which waits for the 1 s stall, target under 2 s + the stall;
3. the worst ``score`` round trip on a second connection while 1. is read, vs the same round
   trip on the idle daemon, target within 0.3 s (it was held up to 2 s at a time).

Usage: ``python bench/framing.py [--mb N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import _common

from hrbench_client import _paths


def _conn(home: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(120)
    s.connect(str(_paths.socket_path(home)))
    return s


def _recv(s: socket.socket) -> dict[str, object]:
    f = s.makefile("rb")
    length = 0
    while (line := f.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return json.loads(f.read(length))


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _score(i: int) -> bytes:
    msg = {"jsonrpc": "2.0", "id": i, "method": "score", "params": {"output": "Paris", "label": "Paris"}}
    return _frame(json.dumps(msg).encode())


def _reply_s(home: Path, data: bytes) -> float:
    """Seconds from the first byte of ``data`` sent to the reply read (the sender then waits)."""
    with _conn(home) as s:
        t = time.perf_counter()
        s.sendall(data)
        reply = _recv(s)
        took = time.perf_counter() - t
    assert "error" in reply, reply
    return took


def _worst_score_s(home: Path, stop: threading.Event) -> list[float]:
    out: list[float] = []
    with _conn(home) as s:
        i = 0
        while not stop.is_set():
            i += 1
            t = time.perf_counter()
            s.sendall(_score(i))
            _recv(s)
            out.append(time.perf_counter() - t)
            time.sleep(0.005)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=60.0, help="size of the value (MB; default 60)")
    size = int(ap.parse_args().mb * 1_000_000)
    _common.header(
        f"framing: a {size / 1e6:.0f} MB JSON-RPC value sent to a real daemon (its 64 MB body limit)",
        {
            "unframed": "the value with no Content-Length header (the daemon must find its end), "
            "then the sender waits; 2.: a value that never ends",
            "framed": "the same value with its Content-Length (refused for its params): the baseline of 1.",
            "score": "`score` round trips on a second connection during 1.; baseline: the least of 50 on "
            "the idle daemon",
        },
        "each side: one untimed warm-up with a 1 MB value; then timed once, from the first byte sent to the "
        "error reply read",
    )
    head = b'{"jsonrpc": "2.0", "id": 1, "method": "status", "params": {"pad": "'
    value = head + b"x" * (size - len(head) - 3) + b'"}}'
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        cmd = [sys.executable, "-P", "-m", "hrbench_server", "--home", str(home), "daemon"]
        proc = _common.start_daemon(cmd, home, Path(tmp) / "daemon.log", env=dict(os.environ))
        try:
            idle = min(_worst_score_s_n(home, 50))
            small = head + b"x" * 1_000_000 + b'"}}'
            _reply_s(home, _frame(small))  # warm-up of both sides, untimed: 1 MB framed and unframed
            _reply_s(home, small + b"\n")
            framed = _reply_s(home, _frame(value))
            stop = threading.Event()
            lat: list[float] = []
            side = threading.Thread(target=lambda: lat.extend(_worst_score_s(home, stop)))
            side.start()
            time.sleep(0.1)
            unframed = _reply_s(home, value + b"\n")
            stop.set()
            side.join()
            never = _reply_s(home, value[:-3])
        finally:
            proc.terminate()
            proc.wait(30)
    mb = size / 1e6
    print(
        f"1. {mb:.0f} MB unframed value answered in {unframed:.2f} s; framed {framed:.2f} s "
        f"(ratio {unframed / framed:.2f}x); target < 2 s: {'ok' if unframed < 2 else 'MISSED'}"
    )
    print(
        f"2. {mb:.0f} MB value that never ends answered in {never:.2f} s (1 s of it the stall); "
        f"target < 3 s: {'ok' if never < 3 else 'MISSED'}"
    )
    worst = max(lat) if lat else float("nan")
    print(
        f"3. another client's score: worst {worst * 1000:.0f} ms during 1. ({len(lat)} round trips) vs "
        f"{idle * 1000:.1f} ms idle (ratio {worst / idle:.0f}x); target < 300 ms: "
        f"{'ok' if worst < 0.3 else 'MISSED'}"
    )
    return 0


def _worst_score_s_n(home: Path, n: int) -> list[float]:
    out = []
    with _conn(home) as s:
        for i in range(n):
            t = time.perf_counter()
            s.sendall(_score(i))
            _recv(s)
            out.append(time.perf_counter() - t)
    return out


if __name__ == "__main__":
    sys.exit(main())
