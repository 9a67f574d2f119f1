"""``hrb view`` of a benchmark run in batch mode: its provider batches, over HTTP and in headless Chromium.

``hrb bench --batch`` runs a benchmark through the loopback's batch API on a real daemon; the
view's JSON lists its batch with the state, lines and bill the store keeps, and its page (run
by ``make test-browser``) shows them in the "Provider batches" table.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.server._daemon import Daemon
from tests.view.conftest import View
from tests.view.test_browser import _ready, browser, page  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def srv() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        server.set(price=(1.0, 2.0))
        yield server


def _batch_bench(home: Path, srv: LoopbackServer, tmp_path: Path) -> str:
    spec = tmp_path / "batch.toml"
    spec.write_text(
        'runs = 5\n[reference]\nitems = { q1 = "France", q2 = "Peru" }\nlabels = { q1 = "Paris", q2 = "Lima" }\n'
        f'[client]\nkind = "openai"\nmodel = "loopback-1"\nbase_url = "{srv.base_url}"\napi_key_env = false\n'
        "price = { input = 1.0, output = 2.0 }\n"
        '[[arms]]\nkind = "prompt"\nname = "ask"\ntemplate = "Capital of {item}?"\n[batch]\npoll_s = 0.05\n'
    )
    hrb = [sys.executable, "-m", "hrbench_client.cli", "--home", str(home), "--no-autostart"]
    proc = subprocess.run(
        [*hrb, "bench", str(spec), "--no-rows"], check=True, capture_output=True, text=True, timeout=slow(120)
    )
    return str(json.loads(proc.stdout.splitlines()[-1])["id"])


def test_the_view_lists_a_batch_benchmarks_batches(
    shared_daemon: Daemon, srv: LoopbackServer, tmp_path: Path
) -> None:
    bench_id = _batch_bench(shared_daemon.home, srv, tmp_path)
    view = View(shared_daemon.home)
    try:
        got = view.get(f"/api/benchmark/{bench_id}/batches")
        with view.opener.open(view.base + "/static/app.js", timeout=slow(30)) as r:
            script = r.read()
    finally:
        view.stop()
    (batch,) = got["batches"]
    assert batch["benchmark"] == bench_id and batch["state"] == "completed" and batch["live"] is False
    assert (batch["lines"], batch["done"], batch["failed"]) == (10, 10, 0)
    assert batch["usd_billed"] == pytest.approx(sum(b.usd for b in srv.bills[-10:]))
    assert b'id: "batches"' in script


@pytest.mark.browser
def test_the_page_shows_the_provider_batches(
    page: Any,  # noqa: F811
    view: View,
    shared_daemon: Daemon,
    srv: LoopbackServer,
    tmp_path: Path,
) -> None:
    bench_id = _batch_bench(shared_daemon.home, srv, tmp_path)
    page.goto(view.url)
    _ready(page)
    page.goto(f"{view.base}/b/{bench_id}")
    page.wait_for_selector("#batches")
    _ready(page)
    table = page.locator("#batches")
    assert table.get_attribute("data-n") == "1"
    row = table.locator("tbody tr")
    assert row.count() == 1 and row.get_attribute("data-state") == "completed"
    assert row.locator("[data-k=lines]").text_content() == "10"
    assert row.locator("[data-k=done]").text_content() == "10"
    assert row.locator("[data-k=failed]").text_content() == "0"
