"""One way to hold a request's share of the budget: the local governor and a Ray worker's share it.

The Ray executor's workers see the cluster's governor through a proxy (an actor behind it); the
proxy once carried its own copy of the governor's ``try_reserve``, ``gate`` and the first step
of ``settle``. Both now take them from :mod:`hrbench.runner._reservation`.
"""

from __future__ import annotations

import pytest

from hrbench.errors import BudgetRefused
from hrbench.runner import Governor
from hrbench.runner._reservation import Admitting, Gate, Reservation, booked
from hrbench.runner.ray._worker import RemoteGovernor


def test_a_settlement_books_the_reply_once_and_a_lost_one_at_its_worst_case() -> None:
    r = Reservation(usd=0.25, tokens=40)
    assert booked(r, 0.01, 7, lost=False) == (0.01, 7)
    assert r.settled
    assert booked(r, 0.01, 7, lost=False) is None  # settled already: nothing more to book
    lost = Reservation(usd=0.25, tokens=40)
    assert booked(lost, 0.0, 0, lost=True) == (0.25, 40)


@pytest.mark.parametrize("name", ["try_reserve", "gate"])
def test_the_ray_workers_governor_takes_the_governors_own_steps(name: str) -> None:
    assert issubclass(Governor, Admitting) and issubclass(RemoteGovernor, Admitting)
    assert name not in vars(Governor) and name not in vars(RemoteGovernor)
    assert getattr(Governor, name) is getattr(RemoteGovernor, name) is getattr(Admitting, name)


class _Actor:
    """A stand-in for the Ray actor: its ``remote`` calls answer at once (no Ray here)."""

    def __init__(self, gov: Governor) -> None:
        self.gov, self.open, self.n = gov, {}, 0
        outer = self

        class _Call:
            def __init__(self, fn):  # type: ignore[no-untyped-def]
                self.remote = fn

        def reserve(usd, tokens):  # type: ignore[no-untyped-def]
            try:
                r = outer.gov.reserve(usd, tokens)
            except BudgetRefused as exc:
                return (exc.limit, str(exc))
            outer.n += 1
            outer.open[outer.n] = r
            return outer.n

        def settle(number, usd, tokens, sent=True):  # type: ignore[no-untyped-def]
            outer.gov.settle(outer.open.pop(number), usd, tokens, sent=sent)

        self.reserve, self.settle = _Call(reserve), _Call(settle)


class _Ray:
    @staticmethod
    def get(value):  # type: ignore[no-untyped-def]
        return value


def test_a_workers_gate_reserves_and_settles_as_the_local_one_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hrbench.runner.ray._worker.load_ray", lambda: _Ray())
    limits = {"max_calls": 3, "max_usd": 1.0, "max_tokens": None}
    local, behind = Governor(**limits), Governor(**limits)
    remote = RemoteGovernor(_Actor(behind), limits, from_defaults=False)
    for gov in (local, remote):
        gate = gov.gate(0.25, 40)
        assert isinstance(gate, Gate)
        gate.attempt()
        gate.lost()  # written whole, reply lost: booked at its worst case
        gate.attempt()
        gate.settle(0.01, 7)
        assert gov.try_reserve(0.5, 0) is not None
        assert gov.try_reserve(0.5, 0) is None  # the call cap: 3 calls
    remote.settled()
    assert (behind.calls, round(behind.usd, 6), behind.tokens) == (
        local.calls,
        round(local.usd, 6),
        local.tokens,
    )
    assert (local.calls, round(local.usd, 6), local.tokens) == (3, 0.26, 47)
