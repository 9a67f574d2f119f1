"""`hrb bench --batch`, `hrb batches` and `hrb cancel BATCH_ID` against the loopback's batch API."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrbench.testing import LoopbackServer
from hrbench.testing._loopback import Script
from tests._slow import slow
from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def srv() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        server.set(price=(1.0, 2.0))
        yield server


def _spec(tmp_path: Path, srv: LoopbackServer) -> Path:
    spec = tmp_path / "capitals.toml"
    spec.write_text(
        'runs = 5\n[reference]\nitems = { q1 = "France", q2 = "Peru" }\nlabels = { q1 = "Paris", q2 = "Lima" }\n'
        f'[client]\nkind = "openai"\nmodel = "loopback-1"\nbase_url = "{srv.base_url}"\napi_key_env = false\n'
        "price = { input = 1.0, output = 2.0 }\n"
        '[[arms]]\nkind = "prompt"\nname = "ask"\ntemplate = "Capital of {item}?"\n'
    )
    return spec


def test_bench_batch_lists_its_batch_and_cancel_stops_it_at_the_provider(
    tmp_path: Path, srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HRBENCH_CANCEL_GRACE_S", "0")  # the daemon's end at teardown does not wait
    srv.batches.script(Script(steps=(("validating", 0.0), ("in_progress", 600.0)), cancel_done=0.5))
    submitted = lines(hrb("bench", str(_spec(tmp_path, srv)), "--batch", "--detach").stdout)[-1]
    bench_id = submitted["id"]
    deadline = time.monotonic() + slow(60)
    # listed from before its upload ("preparing", kept so that a crash cannot orphan it); wait for the upload
    while not (listed := lines(hrb("batches").stdout)) or listed[0]["state"] == "preparing":
        assert time.monotonic() < deadline, f"no batch listed as uploaded: {listed}"
        time.sleep(0.1)
    (batch,) = listed
    assert batch["benchmark"] == bench_id and batch["lines"] == 10 and batch["live"] is True
    assert batch["id"] == srv.batches.created[0] and batch["state"] in ("validating", "in_progress")
    text = hrb("batches", bench_id, "--text").stdout
    assert batch["id"] in text and "0/10 lines done" in text and f"benchmark {bench_id}" in text
    proc = hrb("cancel", batch["id"])
    (cancelled,) = lines(proc.stdout)
    assert cancelled["id"] == batch["id"] and cancelled["state"] in ("cancelling", "cancelled")
    assert f"cancelled batch {batch['id']} of benchmark {bench_id}" in proc.stderr
    deadline = time.monotonic() + slow(30)
    while srv.batches.state_of(batch["id"]) != "cancelled":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert len(srv.batches.created) == 1 and len(srv.bills) == 5  # half its lines were done by then


def test_batch_flags_and_ids_are_refused_clearly(tmp_path: Path, srv: LoopbackServer) -> None:
    said = hrb("bench", "--resume", "abcd", "--batch", check_rc=2).stderr
    assert "--batch is a new benchmark's" in said
    said = hrb("cancel", "batch_nope", check_rc=2).stderr
    assert "batch_nope" in said
    bad = _spec(tmp_path, srv)
    bad.write_text(bad.read_text() + '[batch]\nexpired = "later"\n')
    said = hrb("bench", str(bad), check_rc=2).stderr
    assert "batch.expired" in said and "later" in said
