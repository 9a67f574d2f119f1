"""A benchmark's rows in the daemon stay bounded whatever its runner does.

A runner whose calls never suspend (an instant mock, a warm cache) gives the event loop no turn
for tens of thousands of rows. The writer thread kept writing batches all the while, and each
written batch waited, framed, for a turn to be sent: the daemon held every row the runner made
before it suspended (bench/daemon.py: peak RSS 313 MB at 1,000,000 rows, +83% over 100,000).
Rows waiting, being written, or written and not yet sent now count together against MAX_PENDING.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec

from hrbench.records import Row
from hrbench.runner import Governor
from hrbench_server.app import App
from hrbench_server.bench_sink import MAX_PENDING, STORE_BATCH, Sink
from hrbench_server.rpc import RpcServer
from tests._slow import slow


class _Received:
    """The connection's far end: every byte the daemon writes (a reader that keeps up)."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data


def _rows_sent(data: bytes) -> list[str]:
    """The items of the rows in the ``hrbench/rows`` notifications among framed messages."""
    items, at = [], 0
    while at < len(data):
        head_end = data.index(b"\r\n\r\n", at)
        length = int(data[at:head_end].split(b":")[1])
        body = msgspec.json.decode(data[head_end + 4 : head_end + 4 + length])
        at = head_end + 4 + length
        if body.get("method") == "hrbench/rows":
            items += [r["item"] for r in body["params"]["rows"]]
    return items


async def _run_without_turns(home: Path, n: int) -> tuple[list[int], int, list[str]]:
    """Feed ``n`` rows to a sink as a never-suspending runner does; rows held after each one.

    Every write is let finish before the next row (the writer thread is quick), but the event
    loop gets a turn only when the sink hands back something to wait for.
    """
    app = App(home, "unix")
    server = RpcServer()
    received = _Received()
    server.protocol.set_writer(received)  # type: ignore[arg-type]
    sink = Sink(app, server.protocol, 1, "b1", n, 0, True, Governor(), snapshots=False)
    held = []
    try:
        for seq in range(n):
            row = Row(
                cluster=f"c{seq}", item=f"q{seq}", arm="a", run=1, split="test", correct=True,
                outcome="x", failure_kind=None,
            )  # fmt: skip
            wait = sink.on_row(seq, row, [])
            if sink._job is not None:
                sink._job.result(timeout=slow(60))  # written; the loop has had no turn
            if wait is not None:
                await wait
            held.append(seq + 1 - sink.done)  # made, and not yet sent to the caller
        await sink.flush()
    finally:
        await app.aclose()
    return held, sink.done, _rows_sent(bytes(received.data))


def test_rows_held_stay_below_max_pending_when_the_runner_never_suspends(tmp_path: Path) -> None:
    n = 3 * MAX_PENDING + STORE_BATCH // 2
    held, done, sent = asyncio.run(_run_without_turns(tmp_path / "home", n))
    # (checked as a batch fills: within one batch of it; was n, every row made until the end)
    assert max(held) <= MAX_PENDING + STORE_BATCH, max(held)
    assert max(held) >= MAX_PENDING - STORE_BATCH  # the runner is not held back sooner
    assert done == n
    assert sent == [f"q{i}" for i in range(n)]  # every row sent once, in order
