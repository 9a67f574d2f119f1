"""``bench/overhead.py`` prints a peer's ratio only for a run that counts (``bench/_peers.py``).

A peer's run counts when it succeeded and scored every row right: an inspect_ai run offline,
whose ``mockllm/model`` could not fetch tiktoken's encoding, errors on every sample, and its time
to fail is no throughput. The logs here are real Inspect logs (inspect-ai 0.3.285, JSON format)
of ``bench/_peers.py``'s task, 2 samples x 1 epoch on ``mockllm/model``:
``inspect_ok.json`` with the shipped encoding in ``TIKTOKEN_CACHE_DIR`` (``bench/_peers.py
--items 2 --runs 1 --repeat 1 --warmup 0 --only inspect_ai --write-logs DIR``), and
``inspect_offline_errors.json.gz`` the same task run without it, offline (every sample errors
on tiktoken's download).
"""

from __future__ import annotations

import gzip
import importlib
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).with_name("data")
CAPITALS = ROOT / "tests" / "unit" / "interop" / "data" / "inspect_capitals.json"


def _bench(name: str) -> ModuleType:
    """A module of ``bench/``; the folder is on the import path only while it is imported.

    (``bench/`` holds ``coverage.py``, ``ray.py`` and ``stats.py``: left on the path, they would
    hide the packages of those names.)
    """
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "bench"))


peers = _bench("_peers")
overhead = _bench("overhead")
timing = _bench("_timing")


def _log(name: str) -> dict[str, Any]:
    path = DATA / name
    raw = gzip.decompress(path.read_bytes()) if name.endswith(".gz") else path.read_bytes()
    return json.loads(raw)


def test_an_inspect_run_that_errored_offline_does_not_count() -> None:
    why = peers.inspect_problem(_log("inspect_offline_errors.json.gz"), rows=2)
    assert why is not None
    assert "status 'error'" in why and "2 samples errored" in why
    assert "first error: ConnectionError" in why and "openaipublic" in why  # tiktoken's download


def test_an_inspect_run_that_scored_every_row_right_counts() -> None:
    assert peers.inspect_problem(_log("inspect_ok.json"), rows=2) is None


@pytest.mark.parametrize(
    ("log", "rows", "want"),
    [
        ("inspect_ok.json", 3, "2 of 3 samples in the log"),
        (str(CAPITALS), 6, "1 samples scored wrong"),  # Inspect's own log: Peru answered Cusco once
    ],
)
def test_an_inspect_run_short_of_rows_or_right_answers_does_not_count(log: str, rows: int, want: str) -> None:
    data = json.loads(Path(log).read_text()) if log.startswith("/") else _log(log)
    assert peers.inspect_problem(data, rows=rows) == want


def test_dspy_rows_without_a_prediction_or_scored_wrong_do_not_count() -> None:
    ok = ({"question": "q"}, {"answer": "Paris"}, True)
    failed = ({"question": "q"}, {}, 0.0)  # Evaluate's empty Prediction and failure_score
    wrong = ({"question": "q"}, {"answer": "Lyon"}, False)
    assert peers.dspy_problem([ok, ok], rows=2) is None
    assert peers.dspy_problem([ok, failed, wrong], rows=4) == (
        "3 of 4 examples in the result; 1 examples failed (no prediction: the program or the metric "
        "raised); 1 examples scored wrong"
    )


def _ours() -> dict[str, Any]:
    return {"async": timing.Timing(rows=2, wall_s=0.001, cpu_s=0.001, repeats=3, warmups=1)}


def test_a_failed_peer_gets_no_ratio() -> None:
    found = {"inspect_ai": peers.measure("inspect_ai", _raise_failed, "eval()")}
    [line] = overhead.peer_lines(found, _ours())
    assert "FAILED" in line and "2 samples errored" in line and "no ratio" in line
    assert "faster" not in line


def _raise_failed() -> dict[str, Any]:
    raise peers.PeerFailed(peers.inspect_problem(_log("inspect_offline_errors.json.gz"), rows=2))


@pytest.mark.parametrize(
    ("figures", "want"),
    [
        ({"rows": 2, "wall_s": 0.5, "cpu_s": 0.1, "repeats": 3, "warmups": 1}, "500.0x faster by wall time"),
        (
            {"rows": 2, "wall_s": 0.5, "cpu_s": 0.1, "repeats": 1, "warmups": 0},
            "not hrbench's 2, 1, 3; no ratio",
        ),
        (
            {"rows": 4, "wall_s": 0.5, "cpu_s": 0.1, "repeats": 3, "warmups": 1},
            "not hrbench's 2, 1, 3; no ratio",
        ),
        ({"wall_s": 0.5}, "figures unreadable"),
    ],
)
def test_a_ratio_only_for_the_same_rows_warmups_and_timed_runs(figures: dict[str, Any], want: str) -> None:
    [line] = overhead.peer_lines({"dspy": {**figures, "does": "Evaluate"}}, _ours())
    assert want in line


def test_timed_checks_every_run_outside_the_timing_and_keeps_the_least() -> None:
    made: list[int] = []
    checked: list[int] = []

    def run() -> int:
        made.append(len(made))
        return 5

    t = timing.timed(run, lambda n: checked.append(n) or n, repeats=3, warmups=2)
    assert (len(made), checked, t.rows, t.repeats, t.warmups) == (5, [5] * 5, 5, 3, 2)
    with pytest.raises(ValueError, match="different numbers of rows"):
        timing.timed(iter([1, 2, 3]).__next__, lambda n: n, repeats=2)
    with pytest.raises(peers.PeerFailed):
        timing.timed(lambda: 1, lambda n: (_ for _ in ()).throw(peers.PeerFailed("no")), repeats=1)
