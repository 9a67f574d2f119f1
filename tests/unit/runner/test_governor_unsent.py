"""An attempt that could not connect is no call (calls are the requests the server received, never 101 for 100)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import hrbench as hb


@given(st.lists(st.booleans(), min_size=1, max_size=20), st.floats(0.0, 0.5))
def test_unsent_attempts_give_their_call_and_reservation_back(connected: list[bool], usd: float) -> None:
    gov = hb.Governor(max_calls=len(connected), max_usd=100.0)
    gate = gov.gate(usd=usd, tokens=7)
    for ok in connected:
        gate()  # a gate is the client's before_attempt
        if not ok:
            gate.unsent()
    gate.settle(0.0, 0)
    assert gov.calls == gate.attempts == sum(connected)
    snap = gov.snapshot()
    assert snap["usd"] == 0.0 and snap["tokens"] == 0  # nothing reserved is left over
    gate.unsent()  # after settling: nothing to give back
    assert gov.calls == sum(connected)
