"""Small faults in `hrb` (polish): unknown arms and ids, binary output to a terminal."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._slow import slow
from tests.clients.test_cli import HRB, _bench_file, _bench_id, _stop_daemon, hrb, lines  # noqa: F401
from tests.server._daemon import Daemon


@pytest.fixture
def bench_id(tmp_path: Path) -> str:
    return _bench_id(_bench_file(tmp_path))


@contextlib.contextmanager
def _home(home: Path) -> Iterator[None]:
    """``hrb`` (and every subprocess) on state directory ``home`` inside the block."""
    before = os.environ.get("HRBENCH_HOME")
    os.environ["HRBENCH_HOME"] = str(home)
    try:
        yield
    finally:
        if before is None:
            del os.environ["HRBENCH_HOME"]
        else:
            os.environ["HRBENCH_HOME"] = before


@pytest.fixture(scope="module")
def _shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """One daemon and one benchmark for the module's read-only tests (a daemon start and a
    benchmark cost seconds on a loaded machine)."""
    base = tmp_path_factory.mktemp("polish")
    with Daemon(base / "home") as d:
        with _home(d.home):
            yield d.home, _bench_id(_bench_file(base))


@pytest.fixture
def shared_bench_id(_shared: tuple[Path, str]) -> Iterator[str]:
    """The module's benchmark, ``hrb`` on its daemon for this test (for tests that only read it).

    Set and restored here, not by ``monkeypatch``: ``_stop_daemon``'s teardown, after this
    one's, then stops the daemon of the test's private home, never the shared one.
    """
    home, bench_id = _shared
    with _home(home):
        yield bench_id


@pytest.mark.parametrize("arm", ["nosuch", "ASK", "ask "])
def test_rows_of_an_unknown_arm_exit_2_naming_it_and_the_arms(shared_bench_id: str, arm: str) -> None:
    bench_id = shared_bench_id
    err = hrb("rows", bench_id, "--arm", arm, check_rc=2).stderr
    assert "ConfigError" in err and repr(arm) in err and "arms: ask, ask2)" in err
    assert len(lines(hrb("rows", bench_id, "--arm", "ask2").stdout)) == 15


@pytest.mark.parametrize("item", ["nosuch", "Q1", "q1 "])
def test_rows_of_an_unknown_item_exit_2_naming_it(shared_bench_id: str, item: str) -> None:
    bench_id = shared_bench_id
    err = hrb("rows", bench_id, "--item", item, check_rc=2).stderr  # printed nothing, exit 0
    assert "ConfigError" in err and repr(item) in err and "not an item" in err
    assert len(lines(hrb("rows", bench_id, "--item", "1").stdout)) == 10  # two arms x 5 runs (ids 1-3)


@pytest.mark.parametrize("order", [("good", "nosuch"), ("nosuch", "good"), ("good", "nosuch", "other")])
def test_rm_deletes_nothing_when_one_id_is_unknown(bench_id: str, order: tuple[str, ...]) -> None:
    ids = [bench_id if x == "good" else x for x in order]
    err = hrb("rm", *ids, check_rc=2).stderr
    assert "'nosuch'" in err and "nothing was deleted" in err and repr(bench_id) not in err
    assert ("'other'" in err) == ("other" in order)
    assert [b["id"] for b in lines(hrb("ls").stdout)] == [bench_id]
    gone = lines(hrb("rm", bench_id, bench_id[:8]).stdout)  # one benchmark named twice: deleted once
    assert [g["id"] for g in gone] == [bench_id] and gone[0]["rows"] == 30
    assert lines(hrb("ls").stdout) == []


def _rows_on_a_terminal(bench_id: str, *args: str) -> tuple[int, str]:
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [*HRB, "rows", bench_id, *args],
            stdout=follower,
            stderr=subprocess.PIPE,
            text=True,
            timeout=slow(120),
        )
    finally:
        os.close(follower)
        os.close(leader)
    return proc.returncode, proc.stderr


def test_binary_rows_refuse_a_terminal_but_not_a_pipe_or_file(shared_bench_id: str, tmp_path: Path) -> None:
    bench_id = shared_bench_id
    rc, err = _rows_on_a_terminal(bench_id, "--format", "parquet")
    assert rc == 2 and "give -o FILE" in err and "parquet" in err
    for fmt in ("jsonl", "csv"):  # text formats print to a terminal
        assert _rows_on_a_terminal(bench_id, "--format", fmt)[0] == 0
    out = tmp_path / "r.parquet"
    assert _rows_on_a_terminal(bench_id, "--format", "parquet", "-o", str(out))[0] == 0
    assert out.read_bytes()[:4] == b"PAR1"
    piped = subprocess.run(
        [*HRB, "rows", bench_id, "--format", "parquet"], capture_output=True, timeout=slow(120)
    )
    assert piped.returncode == 0 and piped.stdout[:4] == b"PAR1"
    assert json.loads(hrb("rows", bench_id, "--limit", "1").stdout)["arm"] == "ask"


def test_cache_stats_prints_what_its_help_says(bench_id: str) -> None:
    from hrbench_client.cli.parser import CACHE_STATS

    stats = lines(hrb("cache", "stats").stdout)[0]
    named = [w.split()[0] for w in CACHE_STATS.replace(" and ", ", ").split(", ")]
    assert sorted(stats) == sorted(named)
    assert CACHE_STATS in " ".join(hrb("cache", "--help").stdout.split())
    assert stats["entries"] == 30 and stats["bytes"] > 0  # 3 items x 2 arms x 5 runs, a draw each
    hrb("gc", "--older-than", "0s")
    assert lines(hrb("cache", "stats").stdout)[0]["bytes"] == 0


@pytest.mark.parametrize(
    ("extra", "want"),
    [
        ("", (400, 5.0, True)),  # seed 002: the default limits (400 calls, 5 USD)
        ("[governor]\nmax_usd = 1.5\n", (None, 1.5, False)),
        ("[governor]\nmax_calls = 70\n", (70, None, False)),
    ],
)
def test_ls_shows_the_limits_in_force_marking_the_defaults(
    tmp_path: Path, extra: str, want: tuple[int | None, float | None, bool]
) -> None:
    bench_id = _bench_id(_bench_file(tmp_path, extra=extra))
    (listed,) = lines(hrb("ls").stdout)
    assert listed["id"] == bench_id and listed["calls"] == 30
    assert (listed["max_calls"], listed["max_usd"], listed["default_limits"]) == want
    assert listed["usd"] == 0.0  # the mock's price is 0, as the report says


@pytest.mark.parametrize("model", ["unpriced-model", "gpt-unknown-zz"])
def test_ls_usd_is_na_like_the_report_for_a_model_with_no_price(tmp_path: Path, model: str) -> None:
    spec = _bench_file(tmp_path, extra="[governor]\nmax_calls = 100\n")  # no USD cap: an unpriced model runs
    spec.write_text(spec.read_text().replace('reply = "x"', f'reply = "x"\nmodel = "{model}"'))
    bench_id = _bench_id(spec)
    report = lines(hrb("report", bench_id).stdout)[0]
    assert {a["usd"] for a in report["arms"]} == {None}  # seed 002: NA when the model has no price
    (listed,) = lines(hrb("ls").stdout)
    assert listed["usd"] is None and listed["calls"] == 30


def test_ls_shows_the_limits_of_a_resume(tmp_path: Path) -> None:
    spec = _bench_file(tmp_path, extra="[governor]\nmax_calls = 10\n")
    bench_id = lines(hrb("bench", str(spec), "--no-rows", check_rc=4).stdout)[-1]["id"]  # a budget stop
    assert lines(hrb("ls").stdout)[0]["max_calls"] == 10
    hrb("bench", "--resume", bench_id, "--max-calls", "40", "--no-rows")
    (listed,) = lines(hrb("ls").stdout)
    assert (listed["max_calls"], listed["default_limits"], listed["rows"], listed["calls"]) == (
        40,
        False,
        30,
        30,
    )
    assert listed["status"] == "done" and listed["max_usd"] is None
