"""``hrb view`` in headless Chromium: reasoning_exhausted counted per arm, the frontier drawn and tabled.

Run by ``make test-browser``. The agents example runs on a daemon against a loopback server; its
page must count the high effort's exhausted runs in the arm table, draw the cost-accuracy
frontier on the chart and list its step with the paired difference the report gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from hrbench.testing import LoopbackServer
from hrbench_client.cli.bench import bench_params
from tests.server._daemon import Daemon
from tests.view.conftest import View
from tests.view.test_browser import OUT, _ready, browser, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_page_counts_exhausted_runs_and_shows_the_frontier(
    page: Any,  # noqa: F811
    view: View,
    shared_daemon: Daemon,
) -> None:
    params = bench_params(str(EXAMPLES / "agents.toml"))
    with LoopbackServer() as srv, shared_daemon.client() as c:
        params = msgspec.structs.replace(
            params,
            name="browser-agents",
            client=msgspec.structs.replace(params.client, base_url=srv.base_url),
        )
        stream = c.benchmark(params)
        list(stream)
        assert stream.result is not None
        bench_id = stream.result.id
        rep = c.report(bench_id)
    page.goto(view.url)
    _ready(page)
    page.goto(f"{view.base}/b/{bench_id}")
    page.wait_for_selector("#frontier tbody tr")
    _ready(page)
    failures = page.locator('#arms tr[data-arm="think-high"] [data-k="failures"]').text_content()
    assert failures == "reasoning_exhausted 15"
    (step,) = rep["frontier"]
    row = page.locator(f'#frontier tr[data-step="{step["cheaper"]}>{step["dearer"]}"]')
    assert row.locator('[data-k="diff"]').text_content() == f"{step['diff']:.3f}"
    assert row.locator('[data-k="reads"]').text_content() == step["reads"]
    line = page.evaluate(
        "Chart.getChart(document.getElementById('cost')).data.datasets[1].data.map(p => p.label)"
    )
    assert line == ["search", "lookup"]  # the frontier, cheapest first
    page.screenshot(path=str(OUT / "view-frontier.png"), full_page=True)
