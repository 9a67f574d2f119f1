"""Shared in-flight calls through a real daemon.

Three clients submit the same benchmark at the same moment on a cold cache: the loopback
server (which counts what it receives) is asked each distinct request once; the other two
benchmarks are served the replies as cache hits.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.server._daemon import Daemon, spec

pytestmark = pytest.mark.timeout(120)


def test_three_simultaneous_identical_benchmarks_pay_once(home: Path) -> None:
    items, runs = 6, 2
    with LoopbackServer(latency_s=0.3) as srv:
        client = {"kind": "openai", "model": "loopback-1", "base_url": srv.base_url, "api_key_env": None}
        bench = spec(n=items, runs=runs, client=client, concurrency=items)
        d = Daemon(home).start()
        try:
            start = threading.Barrier(3)
            got: dict[int, tuple[str, list[Any], dict[str, Any]]] = {}

            def submit(i: int) -> None:
                with d.client() as c:
                    start.wait()
                    stream = c.benchmark(bench)
                    rows = list(stream)
                    stored = c.rows(stream.id or "", traces=True)
                    got[i] = (stream.id or "", rows, stored.traces or {})

            threads = [threading.Thread(target=submit, args=(i,)) for i in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(slow(90))
        finally:
            d.stop()
        assert sorted(got) == [0, 1, 2], d.read_log()
        distinct = items * runs
        assert len(srv.requests) == distinct  # 1x, not 3x
        assert len({bid for bid, _, _ in got.values()}) == 3  # three benchmarks
        for _, rows, _ in got.values():
            assert len(rows) == distinct and not [r for r in rows if r.failure_kind == "error"]
        steps = [
            s for _, _, traces in got.values() for t in traces.values() for s in t if s.kind == "request"
        ]
        assert Counter(s.source for s in steps) == {"live": distinct, "cache": 2 * distinct}
        assert all(s.usd == 0.0 for s in steps if s.source == "cache")
