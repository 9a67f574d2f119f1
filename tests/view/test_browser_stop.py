"""``hrb view`` in headless Chromium: the banner of a benchmark that stopped when sure.

Run by ``make test-browser`` with the other browser tests. ``hrb bench --stop rank`` runs a
benchmark with a clear winner on a loopback model server through a real daemon; it stops early,
and its page must say so: that it stopped when sure, which arm won, the clusters run of how
many, the sequential test's method, the confidence sequence, and that the per-arm intervals are
conditional on the clusters run (no fixed-sample p shown). Its header, its line in the list and
its item x arm matrix count the items the report counts (the clusters run to the stop), of the
reference's items, and the matrix says how many items of cancelled clusters it leaves out.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.clients.test_cli_stop import N_CLUSTERS, PER, _spec
from tests.server._daemon import Daemon
from tests.view.conftest import View
from tests.view.test_browser import OUT, _ready, browser, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def srv() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        server.set(latency_s=0.01)  # replies take a while: clusters are in flight at the stop
        yield server


def _f(v: float) -> str:
    return f"{v:.3f}"


def test_the_page_shows_a_benchmark_that_stopped_when_sure(
    page: Any,  # noqa: F811
    view: View,
    shared_daemon: Daemon,
    srv: LoopbackServer,
    tmp_path: Path,
) -> None:
    hrb = [sys.executable, "-m", "hrbench_client.cli", "--home", str(shared_daemon.home), "--no-autostart"]
    proc = subprocess.run(
        [*hrb, "bench", str(_spec(tmp_path, srv)), "--no-rows", "--stop", "rank", "--alpha", "0.05"]
        + ["--stop-seed", "3"],
        check=True,
        capture_output=True,
        text=True,
        timeout=slow(120),
    )
    result = json.loads(proc.stdout.splitlines()[-1])
    bench_id = result["id"]
    with shared_daemon.client() as c:
        shown = c.view(bench_id)
    assert shown.report is not None
    stop = shown.report["stop"]
    assert stop["reason"] == "decided" and stop["winner"] == "good"
    assert 2 <= stop["clusters"] < N_CLUSTERS == stop["of"] and stop["method"]
    (pair,) = stop["pairs"]

    reported, of = stop["clusters"] * PER, N_CLUSTERS * PER
    with shared_daemon.client() as c:
        matrix = c.matrix(bench_id)
        (listed,) = [b for b in c.benchmarks() if b.id == bench_id]
    assert shown.benchmark.n_items == listed.n_items == matrix.n_items_total == reported
    assert shown.benchmark.n_items_of == listed.n_items_of == of
    assert (matrix.n_items_cancelled > 0) == (stop["unreported_rows"] > 0)

    page.goto(view.url)  # its token gives the tab the session key, which opens the other pages
    _ready(page)
    assert (
        page.text_content(f'#benchmarks tr[data-id="{bench_id}"] [data-k=n_items]') == f"{reported} of {of}"
    )
    page.goto(f"{view.base}/b/{bench_id}")
    page.wait_for_selector("#matrix-count[data-n]")
    _ready(page)
    banner = page.locator("#stopped-when-sure")
    assert banner.count() == 1
    assert banner.get_attribute("data-reason") == "decided"
    assert banner.get_attribute("data-clusters") == str(stop["clusters"])
    assert banner.get_attribute("data-of") == str(N_CLUSTERS)

    # the headline: stopped when sure, the winner, the clusters run of how many, the runs' share
    share = math.floor(stop["row_share"] * 100 + 0.5)  # as the page's Math.round
    cancelled = stop["unreported_rows"]
    cut = (
        f", {cancelled} of them in clusters cancelled at the stop, paid and not reported" if cancelled else ""
    )
    assert page.text_content("#stopped-when-sure > b") == (
        f"Stopped when sure: good is better, after {stop['clusters']} of {N_CLUSTERS} clusters "
        f"({share}% of the full run's runs{cut})."
    )

    # the pair: its difference, confidence sequence, e-value and the arm it decided for
    row = page.locator('#stop-pairs tbody tr[data-pair="good-bad"]')
    assert row.count() == 1 and page.locator("#stop-pairs tbody tr").count() == 1
    assert row.locator("td").first.text_content() == "good − bad"
    assert row.locator("[data-k=diff]").text_content() == _f(pair["diff"])
    assert row.locator("[data-k=cs]").text_content() == f"[{_f(pair['cs_low'])}, {_f(pair['cs_high'])}]"
    assert 0 < pair["cs_low"] <= pair["diff"] <= pair["cs_high"]  # the sequence excludes 0: good is better
    assert row.locator("td").last.text_content() == "good"
    assert "confidence sequence" in page.text_content("#stop-pairs thead")

    # the method, and the fixed-sample numbers marked conditional, not valid after stopping
    note = page.text_content("#stopped-when-sure > p.muted")
    assert note.startswith(
        f"Sequential test {stop['method']}, alpha 0.05, clusters in a seeded order (seed 3); "
    )
    assert "the confidence sequence and anytime p hold at every look" in note
    assert "Per-arm intervals are conditional on the clusters run" in note
    assert "no fixed-sample interval or p (not valid after stopping)" in note
    if cancelled:
        assert f"{cancelled} run(s) of clusters cancelled at the stop are kept, not reportable" in note
    assert all(a["n_items"] == stop["clusters"] * PER for a in shown.report["arms"])
    p_shown = page.eval_on_selector_all(
        "#differences tbody tr",
        "trs => trs.map(tr => [...tr.querySelectorAll('[data-k=p_value], [data-k=p_holm], [data-k=interval]')]"
        ".map(td => td.textContent))",
    )
    assert p_shown and all(cells == ["-", "-", "-"] for cells in p_shown)

    # the header and the matrix count the items reported, as the arm table and the report do
    assert page.text_content("#shape") == f"2 arm(s) × {reported} of {of} item(s) × 5 run(s)"
    count = page.locator("#matrix-count")
    assert count.get_attribute("data-n") == count.get_attribute("data-total") == str(reported)
    assert count.text_content() == f"{reported} of {reported} items"
    assert page.locator("#matrix tbody tr").count() == reported
    left_out = page.locator("#matrix-cancelled")
    if matrix.n_items_cancelled:
        assert left_out.get_attribute("data-n") == str(matrix.n_items_cancelled)
        assert left_out.text_content() == (
            f"{matrix.n_items_cancelled} item(s) of clusters cancelled at the stop are left out: "
            "their runs are kept and paid, not reported."
        )
    else:
        assert left_out.count() == 0
    OUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUT / "view-stopped-when-sure.png"), full_page=True)


def test_the_page_of_a_stop_that_ran_to_its_most_clusters_says_the_pair_it_decided(
    page: Any,  # noqa: F811
    view: View,
    shared_daemon: Daemon,
    srv: LoopbackServer,
    tmp_path: Path,
) -> None:
    """goal tolerance, unreachable: reason max_clusters, winner good; the banner says both, as the report does."""
    hrb = [sys.executable, "-m", "hrbench_client.cli", "--home", str(shared_daemon.home), "--no-autostart"]
    args = ["--no-rows", "--stop", "tolerance", "--tolerance", "0.001", "--max-clusters", "6"]
    proc = subprocess.run(
        [*hrb, "bench", str(_spec(tmp_path, srv, n_clusters=8)), *args, "--stop-method", "symmetric"],
        check=True,
        capture_output=True,
        text=True,
        timeout=slow(120),
    )
    bench_id = json.loads(proc.stdout.splitlines()[-1])["id"]
    with shared_daemon.client() as c:
        shown = c.view(bench_id)
    assert shown.report is not None
    stop = shown.report["stop"]
    assert (stop["reason"], stop["winner"], stop["fixed_valid"]) == ("max_clusters", "good", True)
    page.goto(view.url)
    page.goto(f"{view.base}/b/{bench_id}")
    page.wait_for_selector("#stopped-when-sure")
    _ready(page)
    banner = page.text_content("#stopped-when-sure > b")
    assert (
        banner == stop["headline"] and "; good was decided better" in banner and "Not decided" not in banner
    )
    note = page.text_content("#stopped-when-sure > p.muted")
    assert (
        "the paired differences below are the fixed design's, shown to describe the difference, not to decide it"
        in note
        and "not valid after stopping" not in note
    )
