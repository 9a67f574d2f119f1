"""A refused reservation waits for the requests in flight before refusing.

Against a real loopback server: with many requests in flight, their worst-case reservations
fill a token cap their settled use leaves mostly free. A request is refused only when, with
nothing in flight, its worst case still does not fit, and the refusal says so in tokens.
"""

from __future__ import annotations

import re
import warnings

import pytest

import hrbench as hb
from hrbench.testing import LoopbackServer

REF = hb.Reference({f"q{i}": f"item {i} " * 40 for i in range(8)}, labels=["x"] * 8)
WHY = re.compile(
    r"the next request's worst case \(([\d,]+) tokens\) is more than the ([\d,]+) left "
    r"\(([\d,]+) spent, ([\d,]+) reserved by requests in flight, cap ([\d,]+)\)"
)


def _arm(kind: str) -> hb.Arm:
    if kind == "sync":
        return hb.Arm("ask", lambda item, ctx: ctx.call(item).text)

    async def ask(item: str, ctx: hb.Context) -> str:
        return (await ctx.acall(item)).text

    return hb.Arm("ask", ask)


def _num(text: str) -> int:
    return int(text.replace(",", ""))


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize(("cap", "concurrency"), [(2_000, 8), (4_000, 16), (1_500, 4), (100, 8)])
def test_a_request_is_refused_only_when_nothing_in_flight_could_make_room(
    kind: str, cap: int, concurrency: int
) -> None:
    with LoopbackServer(latency_s=0.01) as srv:
        client = hb.OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env=None)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            bench = hb.benchmark(
                _arm(kind),
                REF,
                runs=5,
                client=client,
                governor=hb.Governor(max_tokens=cap),
                concurrency=concurrency,
            )
    assert bench.governor["tokens"] <= cap  # never passed (SPEC section 6)
    refusals = [s.error for s in bench.trace if s.source == "refused"]
    assert bench.stopped == len(refusals) > 0
    for error in refusals:
        m = WHY.search(error or "")
        assert m is not None, error
        need, left, spent, held, shown_cap = map(_num, m.groups())
        assert shown_cap == cap and left == max(0, cap - spent - held)
        assert need > cap - spent  # it would not fit even with nothing in flight
    (warning,) = [w for w in got if issubclass(w.category, hb.BudgetStoppedWarning)]
    assert "it was refused because the next request's worst case" in str(warning.message)
    assert len(srv.requests) == bench.governor["calls"]


def test_the_messages_of_each_cap_say_why() -> None:
    gov = hb.Governor(max_calls=2, max_usd=0.01, max_tokens=5000)
    gov.tokens, gov.usd = 1976, 0.002
    with pytest.raises(hb.BudgetRefused, match=r"worst case \(3,100 tokens\) is more than the 3,024 left"):
        gov.reserve(tokens=3100)
    with pytest.raises(hb.BudgetRefused, match=r"worst case \(\$0\.0084\) is more than the \$0\.0080 left"):
        gov.reserve(usd=0.0084)
    gov.calls = 2
    with pytest.raises(hb.BudgetRefused, match="all 2 calls are used"):
        gov.reserve()


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_reserved_request_that_cannot_connect_gives_its_call_back(kind: str) -> None:
    """The waiting path hands the client a callback that still gives back unsent calls."""
    client = hb.OpenAIClient("loopback-1", base_url="http://127.0.0.1:9/v1", api_key_env=None, max_attempts=1)
    ref = hb.Reference({"q1": "a"}, labels=["x"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(_arm(kind), ref, runs=5, client=client, governor=hb.Governor(max_tokens=10**6))
    assert {r.failure_kind for r in bench.rows} == {"error"}
    assert bench.governor["calls"] == 0 and bench.governor["tokens"] == 0
