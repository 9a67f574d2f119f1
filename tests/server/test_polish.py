"""A newcomer's small faults seen through a real daemon (polish): reference/put's answer."""

from __future__ import annotations

import uuid

import pytest

from tests.server._daemon import Daemon


@pytest.mark.parametrize("name", [None, "polish-ref"])
def test_reference_put_says_whether_the_content_is_new_and_when(
    shared_daemon: Daemon, name: str | None
) -> None:
    ref = {"items": {"a": uuid.uuid4().hex}, "labels": ["x"]}  # content no other test stores
    with shared_daemon.client() as c:
        first = c.references.put(ref, name=name)
        again = c.references.put(ref, name=name)
        other = c.references.put(ref, name=f"polish-other-{uuid.uuid4().hex[:6]}")
        listed = {(r.hash, r.name): r.created for r in c.references.list()}
    assert (first.new, again.new, other.new) == (True, False, False)
    assert first.hash == again.hash == other.hash
    assert again.created is not None and again.created.endswith("+00:00")
    assert listed[(other.hash, other.name)] == other.created
    if name is not None:
        assert listed[(again.hash, name)] == again.created
