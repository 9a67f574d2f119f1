"""What users see of a trace does not depend on the form it was stored in, through a real daemon.

The store keeps each trace step without its default fields (``hrbench.records.Step``); traces
stored with every field still read the same. Both forms of one benchmark give the same
``hrb rows --traces`` lines and CSV, the same Inspect logs (``hrb export``), the same view of a
cell (``benchmark/cell``) and the same decoded ``hrbench_client.protocol.Step`` objects, each
step with every field. A benchmark run by the daemon stores its traces in the compact form.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import msgspec
import pytest

from hrbench.records import Row
from hrbench.store import Store
from hrbench_client import protocol as p
from hrbench_client.client import Client
from tests._slow import slow
from tests._traces import full_json, rich_trace
from tests.server._daemon import Daemon

SPEC = {"params": {"name": "form"}, "arms": [{"kind": "prompt", "name": "a", "template": "{item}"}]}


def _hrb(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "hrbench_client.cli", "--home", str(home), "--no-autostart", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=slow(120))
    assert out.returncode == 0, out.stderr
    return out


def _rows(bid: str) -> list[Row]:
    return [
        Row(
            cluster="c",
            item=item,
            arm="a",
            run=1,
            split="test",
            correct=True,
            outcome="Paris",
            failure_kind=None,
            ledger_id=f"{bid}/a/{item}/1",
            tokens_in=15,
            usd=0.001,
        )  # fmt: skip
        for item in ("q1", "q2")
    ]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory):
    home = tmp_path_factory.mktemp("trace-form") / "home"
    home.mkdir()
    store = Store(home / "hrbench.sqlite3")
    for bid in ("full", "compact"):
        store.benchmark_put(bid, SPEC, "", "done")
    rows = _rows("full")
    store.row_batch_put(
        "full",
        [0, 1],
        msgspec.json.encode(rows),
        full_json({r.ledger_id: rich_trace(r.ledger_id) for r in rows}),
        fresh=2,
    )
    rows = _rows("compact")
    store.rows_put("compact", list(enumerate(rows)), {r.ledger_id: rich_trace(r.ledger_id) for r in rows})
    store.close()
    with Daemon(home) as d:
        yield d


def _same(text: str, bid: str) -> str:
    return text.replace(f"{bid}/a/", "BID/a/")


def test_both_forms_are_stored_as_written(daemon: Daemon) -> None:
    with sqlite3.connect(daemon.home / "hrbench.sqlite3") as conn:
        blobs = dict(conn.execute("SELECT benchmark_id, traces FROM row_batches"))
    assert b'"tool_calls":null' in blobs["full"]
    assert b'"tool_calls":null' not in blobs["compact"] and len(blobs["compact"]) < 0.75 * len(blobs["full"])


def test_rows_with_traces_read_the_same_from_either_form(daemon: Daemon) -> None:
    for args in ([], ["--format", "csv"]):
        full, compact = (
            _hrb(daemon.home, "rows", bid, "--traces", *args).stdout for bid in ("full", "compact")
        )
        assert _same(full, "full") == _same(compact, "compact")
    lines = [
        json.loads(line) for line in _hrb(daemon.home, "rows", "compact", "--traces").stdout.splitlines()
    ]
    steps = [s for line in lines for s in line["trace"]]
    assert len(steps) == 12 and all(list(s) == list(p.Step.__struct_fields__) for s in steps)
    assert steps[-1] == {**dict.fromkeys(p.Step.__struct_fields__), "ledger_id": "compact/a/q2/1", "kind": "note",
                         "source": "output", "text": "Paris", "usd": 0.0, "seconds": 0.0}  # fmt: skip
    got = list(
        csv.DictReader(
            io.StringIO(_hrb(daemon.home, "rows", "compact", "--traces", "--format", "csv").stdout)
        )
    )
    assert [json.loads(r["trace"]) for r in got] == [line["trace"] for line in lines]


def test_the_client_decodes_the_same_steps_from_either_form(daemon: Daemon) -> None:
    got: dict[str, Any] = {}
    with Client.connect_unix(daemon.socket) as c:
        for bid in ("full", "compact"):
            res = c.call("benchmark/rows", {"id": bid, "traces": True}, p.BenchmarkRowsResult)
            cell = c.call("benchmark/cell", {"id": bid, "item": "q1", "arm": "a"}, p.BenchmarkCellResult)
            got[bid] = (res.traces, cell.runs)
    want = {
        lid: msgspec.convert(msgspec.to_builtins(rich_trace(lid), builtin_types=None), list[p.Step])
        for lid in ("compact/a/q1/1", "compact/a/q2/1")
    }
    assert got["compact"][0] == want
    full, compact = (_same(msgspec.json.encode(got[bid]).decode(), bid) for bid in ("full", "compact"))
    assert full == compact
    assert got["compact"][1][0].trace == want["compact/a/q1/1"]


def test_inspect_logs_are_the_same_from_either_form(daemon: Daemon, tmp_path: Path) -> None:
    logs = {}
    for bid in ("full", "compact"):
        out = json.loads(_hrb(daemon.home, "export", bid, "-o", str(tmp_path / bid)).stdout)
        (path,) = out["paths"]
        log = json.loads(Path(path).read_text())
        for key in ("eval", "stats"):
            log.pop(key, None)  # when each was written, and its ids
        logs[bid] = _same(json.dumps(log["samples"], sort_keys=True), bid)
    assert logs["full"] == logs["compact"] and '"Paris"' in logs["compact"]


def test_a_benchmark_run_by_the_daemon_stores_compact_traces(daemon: Daemon, tmp_path: Path) -> None:
    spec = tmp_path / "mock.toml"
    spec.write_text(
        textwrap.dedent(
            """
            name = "mock"
            runs = 5
            [reference]
            items = {q1 = "France", q2 = "Peru"}
            labels = ["Paris", "Lima"]
            [client]
            kind = "mock"
            reply = "Paris"
            [[arms]]
            kind = "prompt"
            name = "ask"
            template = "Capital of {item}"
            """
        )
    )
    _hrb(daemon.home, "bench", str(spec), "--no-rows")
    with sqlite3.connect(daemon.home / "hrbench.sqlite3") as conn:
        (bid,) = conn.execute(
            "SELECT id FROM benchmarks WHERE json_extract(spec, '$.params.name')='mock'"
        ).fetchone()
        blobs = [
            json.loads(b)
            for (b,) in conn.execute("SELECT traces FROM row_batches WHERE benchmark_id=?", [bid])
        ]
    stored = [s for blob in blobs for trace in blob.values() for s in trace]
    assert len(stored) == 20 and all("tool_calls" not in s and "error" not in s for s in stored)
    lines = [json.loads(line) for line in _hrb(daemon.home, "rows", bid, "--traces").stdout.splitlines()]
    steps = [s for line in lines for s in line["trace"]]
    assert len(steps) == 20 and all(list(s) == list(p.Step.__struct_fields__) for s in steps)
    assert {s["error"] for s in steps} == {None} and {s["text"] for s in steps} == {"Paris"}
