"""``hrb view`` in headless Chromium: the arm table shows pass^k and the flip rate with their intervals.

Run by ``make test-browser`` with the other browser tests, on the mock benchmark of 5 runs whose
``flaky`` arm answers some items differently from run to run.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.server._daemon import Daemon
from tests.view.conftest import View
from tests.view.test_browser import _ready, browser, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


def test_the_arm_table_shows_pass_k_and_the_flip_rate_as_the_report_has_them(
    page: Any,  # noqa: F811
    view: View,
    shared_daemon: Daemon,
    mock_ids: tuple[str, str],
) -> None:
    with shared_daemon.client() as c:
        want = {a.arm: a for a in c.view(mock_ids[0]).arms}
    page.goto(view.url)
    _ready(page)
    page.goto(f"{view.base}/b/{mock_ids[0]}")
    page.wait_for_selector("#arms tbody tr")
    _ready(page)
    heads = page.eval_on_selector_all("#arms thead th", "ths => ths.map(th => th.textContent)")
    assert "pass^5" in heads and "flip rate" in heads
    cells = page.eval_on_selector_all(
        "#arms tbody tr",
        "trs => trs.map(tr => [tr.dataset.arm, ...['pass_k', 'pass_k_interval', 'flip_rate', 'flip_rate_interval']"
        ".map(k => tr.querySelector(`[data-k=${k}]`).textContent)])",
    )
    assert {arm for arm, *_ in cells} == set(want)
    for arm, pass_k, pass_iv, flip, flip_iv in cells:
        a = want[arm]
        assert a.pass_k_runs == 5 and a.pass_k is not None and a.flip_rate is not None
        assert pass_k == f"{a.pass_k:.3f}" and flip == f"{a.flip_rate:.3f}"
        assert pass_iv == f"[{a.pass_k_low:.3f}, {a.pass_k_high:.3f}]"
        assert flip_iv == f"[{a.flip_rate_low:.3f}, {a.flip_rate_high:.3f}]"
    assert (
        want["flaky"].flip_rate > 0 == want["steady"].flip_rate
    )  # the flaky arm flips, the steady one never
