"""The view's API and the daemon's report compare arms by list price, whatever the cache served.

A new user found an arm served from the cache plotted at $0 per run with no accuracy per USD:
cost per run and accuracy per USD read what was paid. Here a priced benchmark is run twice on
one daemon; the second pays nothing (every reply from the cache) and must cost per run what
the first did, with what was paid (0) beside it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests._benches import cost_row, priced_spec, run
from tests.server._daemon import Daemon

COSTS = (
    "usd_per_run",
    "usd_per_run_low",
    "usd_per_run_high",
    "accuracy_per_usd",
    "accuracy_per_usd_low",
    "accuracy_per_usd_high",
)


@pytest.fixture(scope="module")
def paid_then_cached(shared_daemon: Daemon) -> Iterator[tuple[Daemon, str, str]]:
    with shared_daemon.client() as c:
        paid = run(c, priced_spec("priced-paid"))
        cached = run(c, priced_spec("priced-cached"))
    yield shared_daemon, paid, cached


def test_the_view_prices_a_cached_arm_as_when_it_paid(paid_then_cached: tuple[Daemon, str, str]) -> None:
    d, paid, cached = paid_then_cached
    with d.client() as c:
        first, again = c.view(paid), c.view(cached)
    for a, b in zip(first.arms, again.arms, strict=True):
        assert a.usd is not None and a.usd > 0 and a.usd_list == pytest.approx(a.usd)
        assert (b.usd, b.usd_list) == (0.0, pytest.approx(a.usd))  # paid nothing, listed the same
        assert b.usd_per_run is not None and b.usd_per_run > 0
        assert b.accuracy_per_usd is not None and b.accuracy_per_usd > 0
        for k in COSTS:
            assert getattr(b, k) == pytest.approx(getattr(a, k)), k
    cheap, dear = again.arms
    assert (cheap.arm, dear.arm) == ("ask", "wordy") and cheap.usd_per_run < dear.usd_per_run


def test_the_daemons_report_prices_a_cached_arm_as_when_it_paid(
    paid_then_cached: tuple[Daemon, str, str],
) -> None:
    d, paid, cached = paid_then_cached
    with d.client() as c:
        first, again = c.report(paid), c.report(cached)
    for a, b in zip(first["arms"], again["arms"], strict=True):
        assert b["usd"] == 0.0 and b["usd_list"] == pytest.approx(a["usd"])
        for k in COSTS:
            assert b[k] == pytest.approx(a[k]), k
    # the text's cost rows differ only in the usd paid column
    for arm in ("ask", "wordy"):
        was, now = (cost_row(rep["text"], arm) for rep in (first, again))
        assert now[3] == "0.0000" and was[3] != "0.0000"  # usd paid
        assert was[:3] + was[4:] == now[:3] + now[4:]  # usd_list, usd/run, acc/usd and intervals
