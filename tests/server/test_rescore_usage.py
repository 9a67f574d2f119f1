"""A re-score counts each call's tokens, USD and seconds once, through a real daemon.

The path: every run of a benchmark ends in an error because the user's own scorer raised;
they fix it and run ``hrb bench --resume ID --retry-errors``. The runs are made again with every
reply from the cache (no request sent); no row may count its call's tokens twice (the cached
reply's, and the bill paid before), nor take the re-score's time as its ``seconds``. A loopback server counts what it served; the rows, the summary and the view's
arm table must say the same, and each row keeps the seconds of the run it replaces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hrbench.testing import LoopbackServer
from tests.server._daemon import Daemon

pytestmark = pytest.mark.timeout(180)

PRICE = (1.0, 2.0)  # USD per million input and output tokens, as the server bills

SCORER = """
from pathlib import Path

BROKEN = Path(__file__).with_name("broken")


def starts_right(item, output, label):
    if BROKEN.exists():
        raise RuntimeError("not written yet")
    return output.strip().lower().startswith(label.lower())
"""


def _spec(folder: Path, base_url: str) -> dict[str, Any]:
    return {
        "arms": [
            {"kind": "prompt", "name": "ask", "template": "Capital of {item}? [[reply:Paris is the answer]]"}
        ],
        "reference": {
            "items": {"q1": "France", "q2": "Peru", "q3": "Chad"},
            "labels": {"q1": "Paris", "q2": "Lima", "q3": "N'Djamena"},
        },
        "client": {
            "kind": "openai",
            "model": "loopback-1",
            "base_url": base_url,
            "api_key_env": None,
            "max_attempts": 1,
            "price": {"input": PRICE[0], "output": PRICE[1]},
        },
        "scorer": "own_scorer:starts_right",
        "runs": 5,
        "python_path": [str(folder)],
    }


def _served(srv: LoopbackServer) -> tuple[int, int, float]:
    return (
        sum(b.tokens_in for b in srv.bills),
        sum(b.tokens_out for b in srv.bills),
        sum(b.usd for b in srv.bills),
    )


def test_retry_errors_served_from_the_cache_counts_each_call_once(home: Path, tmp_path: Path) -> None:
    (tmp_path / "own_scorer.py").write_text(SCORER)
    (tmp_path / "broken").touch()
    with LoopbackServer(latency_s=0.05) as srv:
        srv.set(price=PRICE)
        d = Daemon(home).start()
        try:
            with d.client() as c:
                first = c.benchmark(_spec(tmp_path, srv.base_url))
                list(first)
                assert first.result is not None and first.result.status == "errors"
                bid = first.result.id
                before = {r.ledger_id: r for r in c.rows(bid).rows}
                sent = len(srv.requests)
                (tmp_path / "broken").unlink()  # the scorer is fixed
                again = c.resume(bid, retry_errors=True)
                list(again)
                rows = c.rows(bid).rows
                view = c.view(bid)
        finally:
            d.stop()
        served_in, served_out, billed = _served(srv)
    assert again.result is not None and again.result.status == "done"
    assert len(srv.requests) == sent == 15  # the re-score sent nothing: every reply from the cache
    assert {r.failure_kind for r in before.values()} == {"error"} and len(rows) == 15
    assert {r.item: r.correct for r in rows} == {"q1": True, "q2": False, "q3": False}
    # each call's tokens and USD once, as the server served and billed them
    assert (sum(r.tokens_in for r in rows), sum(r.tokens_out for r in rows)) == (served_in, served_out)
    assert sum(r.usd or 0.0 for r in rows) == pytest.approx(billed, abs=1e-12)
    summary = again.result.summary[0]
    assert (summary.tokens_in, summary.tokens_out) == (served_in, served_out)
    assert summary.usd == pytest.approx(billed, abs=1e-12)
    arm = view.arms[0]
    assert (arm.tokens_in, arm.tokens_out) == (served_in, served_out)
    assert arm.usd == pytest.approx(billed, abs=1e-12)
    assert arm.seconds == pytest.approx(sum(r.seconds for r in before.values()))
    # and each row keeps the run's time, not the re-score's: at least the server's latency
    assert [r.seconds for r in rows] == [before[r.ledger_id].seconds for r in rows]
    assert min(r.seconds for r in rows) >= 0.05
