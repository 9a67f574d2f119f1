"""A benchmark that is finishing is listed `running`, then `done`; never `interrupted`.

A benchmark that has just run to its end is never listed `interrupted`: were the daemon to
drop it from its running benchmarks before it had stored its end, in between its record would
say `running` while no task ran it, which is what `interrupted` means (a daemon that died
under it). The in-between lasts as long as storing the end takes: here the submitting client
reads nothing while the daemon streams it about 8 MB of rows (twice the daemon's write buffer per
connection), so the daemon waits for the reader (back-pressure) after every row is saved, and
another connection lists the benchmarks meanwhile.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hrbench_server.rpc import WRITE_BUFFER_BYTES
from tests._slow import slow
from tests.server._daemon import Daemon, spec

pytestmark = pytest.mark.timeout(120)

ITEMS = 200
RUNS = 5
ID_CHARS = 2 * WRITE_BUFFER_BYTES // (2 * ITEMS * RUNS)  # a row carries its item id twice


def test_a_finishing_benchmark_is_listed_running_until_its_end_is_stored(home: Path) -> None:
    d = Daemon(home).start()
    try:
        with d.client() as c, d.client() as other:
            big = spec(n=ITEMS, runs=RUNS)  # long item ids: about 8 kB a row on the wire
            big["reference"]["items"] = {f"{i:04d}-" + "x" * ID_CHARS: f"item{i}" for i in range(ITEMS)}
            big["reference"]["labels"] = {k: "answer " + v for k, v in big["reference"]["items"].items()}
            stream = c.benchmark(big)
            bench_id = stream.started()  # from here on, nothing is read from this connection
            deadline = time.monotonic() + slow(60)
            while (b := next(b for b in other.benchmarks() if b.id == bench_id)).rows < ITEMS * RUNS:
                assert time.monotonic() < deadline
                time.sleep(0.01)
            time.sleep(0.3)  # every row is saved; the daemon waits for the reader to store the end
            finishing = [b.status for b in other.benchmarks() if b.id == bench_id]
            list(stream)  # the reader reads: the daemon stores the end and answers
            assert stream.result is not None and stream.result.status == "done"
            done = [b.status for b in other.benchmarks() if b.id == bench_id]
    finally:
        d.stop()
    assert (b.status, finishing, done) == ("running", ["running"], ["done"])
