"""The suite's time limits scale with the machine's load by themselves: `make test` needs no flag.

On a machine at load 13-27 (2 cores), waits written for an idle one failed by the hundred unless
``HRBENCH_TEST_SLOW=3`` was set. :func:`tests._slow.slow` and the per-test timeout now multiply
every limit by the load per core measured when the limit is set, and hypothesis examples have no
wall-clock deadline.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from tests import _slow


@pytest.mark.parametrize(
    ("load", "cores", "want"),
    [(0.3, 2, 1.0), (2.0, 2, 1.0), (8.0, 2, 4.0), (27.0, 2, 13.5), (400.0, 2, 20.0)],
)
def test_waits_scale_with_the_load_per_core(
    monkeypatch: pytest.MonkeyPatch, load: float, cores: int, want: float
) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    monkeypatch.setattr(_slow, "STEAL", 1.0)
    monkeypatch.setattr(_slow, "FACTOR", None)
    assert _slow.current() == pytest.approx(want)
    assert _slow.slow(30) == pytest.approx(30 * want)
    monkeypatch.setattr(_slow, "FACTOR", 3.0)  # HRBENCH_TEST_SLOW=3 sets it, whatever the load
    assert _slow.current() == 3.0


def test_stolen_cpu_stretches_the_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (2.0, 2.0, 2.0))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_slow, "FACTOR", None)
    ticks = iter([(1000, 100), (2000, 600)])  # half the CPU stolen between the two reads
    monkeypatch.setattr(_slow, "_cpu_ticks", lambda: next(ticks))
    monkeypatch.setattr(_slow.time, "sleep", lambda s: None)
    steal = _slow.steal_factor()
    assert steal == pytest.approx(2.0)
    monkeypatch.setattr(_slow, "STEAL", steal)
    assert _slow.slow(10) == pytest.approx(20.0)


def test_the_per_test_timeout_scales_with_the_load(
    monkeypatch: pytest.MonkeyPatch, pytestconfig: pytest.Config
) -> None:
    import pytest_timeout

    guard = pytestconfig.pluginmanager.get_plugin("hrbench-process-guard")
    seen: list[float] = []
    monkeypatch.setattr(
        pytest_timeout, "pytest_timeout_set_timer", lambda item, settings: seen.append(settings.timeout)
    )
    monkeypatch.setattr(_slow, "current", lambda: 4.0)
    settings_ = pytest_timeout.Settings(
        timeout=120, method="signal", func_only=False, disable_debugger_detection=False
    )
    guard.pytest_timeout_set_timer(item=None, settings=settings_)
    assert seen == [480.0]


def test_property_tests_have_no_wall_clock_deadline() -> None:
    assert settings.default.deadline is None
    assert settings().deadline is None  # a test's own @settings(max_examples=...) inherits it
