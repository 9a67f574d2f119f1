"""``hrb view`` in headless Chromium: an arm the cache served plots at its list price.

Run by ``make test-browser`` with the other browser tests. A priced benchmark is run twice on
one daemon; the second pays nothing (every reply from the cache), and its page must show the
cost per run the first paid, beside USD paid $0, and plot the arms there, told apart.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests._benches import priced_spec, run
from tests.server._daemon import Daemon
from tests.view.conftest import View
from tests.view.test_browser import OUT, _ready, browser, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


def test_a_cached_arm_is_shown_and_plotted_at_its_list_price(
    page: Any,  # noqa: F811
    view: View,
    shared_daemon: Daemon,
) -> None:
    with shared_daemon.client() as c:
        paid = run(c, priced_spec("browser-priced-paid"))
        cached = run(c, priced_spec("browser-priced-cached"))
        first, again = c.view(paid), c.view(cached)
    page.goto(view.url)  # its token gives the tab the session key, which opens the other pages
    _ready(page)
    page.goto(f"{view.base}/b/{cached}")
    page.wait_for_selector("#matrix-count[data-n]")
    _ready(page)
    cells = page.eval_on_selector_all(
        "#arms tbody tr",
        "trs => trs.map(tr => [tr.dataset.arm, ...['usd', 'usd_list', 'usd_per_run']"
        ".map(k => tr.querySelector(`[data-k=${k}]`).textContent)])",
    )
    ask, wordy = cells
    assert ask[1] == wordy[1] == "$0.0000"  # paid nothing
    assert ask[3] != wordy[3] and "e-06" in ask[3] and "e-06" in wordy[3]  # told apart
    for arm, a in zip(cells, first.arms, strict=True):
        assert float(arm[3].lstrip("$")) == pytest.approx(a.usd_per_run, rel=0.01)  # as when it paid
        assert float(arm[2].lstrip("$")) == pytest.approx(a.usd, rel=0.01)
    assert page.locator("#no-cost").count() == 0
    xs = page.evaluate(
        "Chart.getChart(document.getElementById('cost')).data.datasets[0].data.map(p => [p.label, p.x])"
    )
    assert xs == [[a.arm, pytest.approx(a.usd_per_run)] for a in again.arms]
    assert [x for _, x in xs] == pytest.approx([a.usd_per_run for a in first.arms])
    page.screenshot(path=str(OUT / "view-list-price.png"), full_page=True)
