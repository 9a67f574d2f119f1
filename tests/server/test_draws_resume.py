"""Duplicate draws stay refused across ``--retry-errors``, through a real daemon (seed 002: each run is a draw).

A provider that gives one response id per prompt (``LoopbackServer.same_ids``) makes runs 2-5
of every item duplicates of run 1. The first benchmark is refused; no retry may accept one more
duplicate from the cache, until it ends ``done``. The kept runs' draws, read from the stored
traces, seed the check, and the stop note does not advise ``--retry-errors``.
"""

from __future__ import annotations

from typing import Any

import pytest

from hrbench.testing import LoopbackServer
from hrbench_client.errors import ConfigError, DuplicateDrawError
from tests.server._daemon import Daemon, spec

pytestmark = pytest.mark.timeout(180)


def test_retry_errors_never_launders_a_duplicate_draw(shared_daemon: Daemon) -> None:
    with LoopbackServer() as srv:
        srv.set(same_ids=True)
        client: dict[str, Any] = {"kind": "openai", "model": "loopback-1", "base_url": srv.base_url}
        with shared_daemon.client() as c:
            with pytest.raises(DuplicateDrawError, match="not distinct draws") as first:
                list(c.benchmark(spec(n=2, runs=5, client=client, name="sameid-draws")))
            bid = first.value.context["benchmark"]
            assert "`--retry-errors` serves them the same replies" in str(first.value)
            for _ in range(3):
                sent = len(srv.requests)
                with pytest.raises(DuplicateDrawError, match="not distinct draws"):
                    list(c.resume(bid, retry_errors=True))
                rows = c.rows(bid).rows
                errors = [r.failure_kind == "error" for r in sorted(rows, key=lambda r: (r.item, r.run))]
                assert errors == [False, *[True] * 4] * 2  # run 1 of each item kept, 2-5 refused
                assert len(srv.requests) == sent  # served from the cache, and refused again
            listing = {b.id: b for b in c.benchmarks()}[bid]
    assert listing.status == "refused"
    assert listing.stop_note is not None
    assert "8 of them were not distinct draws" in listing.stop_note
    assert "--retry-errors`" not in listing.stop_note.replace("`--retry-errors` serves", "")


def test_items_with_the_same_payload_are_refused_before_any_call(shared_daemon: Daemon) -> None:
    """Refused up front naming the items, not a DuplicateDrawError after the calls."""
    with LoopbackServer() as srv:
        client: dict[str, Any] = {"kind": "openai", "model": "loopback-1", "base_url": srv.base_url}
        items = {"q1": "France", "q2": "Peru", "q3": "France"}
        with shared_daemon.client() as c:
            with pytest.raises(ConfigError, match="items with the same payload") as err:
                list(c.benchmark(spec(client=client, reference={"items": items}, name="dupitems")))
            assert err.value.field == "reference.items" and "'q1' = 'q3'" in str(err.value)
            assert not [b for b in c.benchmarks() if b.name == "dupitems"]  # nothing stored
        assert srv.requests == []
