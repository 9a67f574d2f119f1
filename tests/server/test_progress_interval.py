"""Progress reaches the caller at least every second while rows are scored, not only every 1% of rows.

A caller that asked for no rows (``stream = false``, ``hrb bench --no-rows``) learns that rows
are scored only from ``hrbench/progress``; on a large benchmark 1% of the rows can take minutes,
so the daemon also sends progress once :data:`~hrbench_server.bench_sink.PROGRESS_INTERVAL_S`
passed with rows scored since the last one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hrbench_client.errors import RequestCancelled
from tests.server._daemon import Daemon, spec


def test_progress_comes_between_the_one_percent_marks_while_rows_are_scored(home: Path) -> None:
    n_items, runs = 300, 5  # 1,500 rows: a progress every 15 rows by count, 1.5 s at 10 rows a second
    body: dict[str, Any] = {
        **spec(n=n_items, runs=runs, concurrency=1),
        "client": {"kind": "mock", "reply": "answer", "delay_s": 0.1},
        "cache": False,
        "stream": False,
    }
    seen: list[int] = []
    with Daemon(home) as d:
        with d.client() as c:
            holder: dict[str, Any] = {}

            def on_progress(done: int, total: int) -> None:
                assert total == n_items * runs
                seen.append(done)
                if len(seen) >= 5:  # enough to tell: stop the benchmark
                    holder["stream"].cancel()

            stream = holder["stream"] = c.benchmark(body, on_progress=on_progress)
            with pytest.raises(RequestCancelled):
                for _ in stream:
                    pass
    assert seen == sorted(seen) and seen[0] == 0, seen
    every = n_items * runs // 100
    assert any(done % every for done in seen), f"progress only at the 1% marks (every {every} rows): {seen}"
