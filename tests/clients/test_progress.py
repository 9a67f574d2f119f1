"""``hrb bench``'s progress line: rows done, rate, ETA, spend against the cap."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrbench_client.cli.progress import progress_line, usd_text
from tests._slow import slow
from tests.server._daemon import Daemon


@given(
    total=st.integers(0, 10**7),
    frac=st.floats(0, 1),
    rate=st.one_of(st.none(), st.floats(0.01, 1e6)),
    usd=st.one_of(st.none(), st.floats(0, 1e4)),
    max_usd=st.one_of(st.none(), st.floats(0, 1e4)),
    width=st.integers(1, 80),
)
def test_progress_line_family(
    total: int, frac: float, rate: float | None, usd: float | None, max_usd: float | None, width: int
) -> None:
    done = int(total * frac)
    line = progress_line("bench", done, total, rate, usd, max_usd, width=width)
    bar = re.match(r"bench \[([#.]*)\] (\d+)/(\d+) rows", line)
    assert bar is not None and len(bar.group(1)) == width
    assert (int(bar.group(2)), int(bar.group(3))) == (done, total)
    assert bar.group(1).count("#") == (min(width, width * done // total) if total else width)
    assert ("rows/s" in line) == bool(rate)
    eta = re.search(r"ETA (?:(\d+)h(\d\d)m|(\d+)m(\d\d)s|(\d+)s)", line)
    assert (eta is not None) == bool(rate and done < total)
    if eta is not None and rate:
        h, hm, m, ms, s = (int(g) if g else 0 for g in eta.groups())
        shown = h * 3600 + hm * 60 + m * 60 + ms + s
        exact = (total - done) / rate
        assert abs(shown - exact) <= (60 if h else 0.5) + 1e-9 * exact
    if usd is None:
        assert "$" not in line
    else:
        assert f"${usd_text(usd)}" in line
        assert (" of $" in line) == (max_usd is not None)
        if max_usd is not None:
            assert line.endswith(f"${usd_text(usd)} of ${max_usd:.2f}")


def test_hrb_bench_draws_rate_eta_and_spend_on_a_terminal(tmp_path: Path) -> None:
    spec = tmp_path / "slow.toml"
    spec.write_text(
        'name = "bar"\nruns = 5\nconcurrency = 1\ncache = false\n'
        '[reference]\nitems = ["a", "b", "c", "d", "e", "f"]\nlabels = ["yes", "yes", "no", "no", "yes", "no"]\n'
        '[[arms]]\nkind = "prompt"\nname = "ask"\ntemplate = "{item}?"\n'
        '[client]\nkind = "mock"\nreply = "yes"\ndelay_s = 0.03\n'
        "[governor]\nmax_usd = 1.5\n"
    )
    daemon = Daemon(tmp_path / "home").start()
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "hrbench_client.cli", "--home", str(daemon.home), "--no-autostart"]
            + ["bench", "--no-rows", str(spec)],
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=slow(120),
        )
        os.close(follower)
        err = b""
        while select.select([leader], [], [], 0.5)[0]:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
    finally:
        os.close(leader)
        daemon.stop()
    assert proc.returncode == 0
    bars = [x.strip() for x in err.decode().replace("\x1b[K", "").split("\r") if x.startswith("bench [")]
    assert any(
        re.fullmatch(r"bench \[#*\.+\] \d+/30 rows  [\d.]+ rows/s  ETA \d+s  \$0\.0000 of \$1\.50", x)
        for x in bars
    )
    assert re.fullmatch(r"bench \[#{30}\] 30/30 rows  [\d.]+ rows/s  \$0\.0000 of \$1\.50", bars[-1]), bars


@pytest.mark.parametrize(
    "usd", [0.0, 1e-09, 3.7e-06, 4.1e-06, 0.00131, 0.0099, 0.01, 0.1234, 12.5, 1234.56789]
)
def test_hrbs_usd_text_is_the_librarys(usd: float) -> None:
    """The client keeps its own copy (it imports no hrbench); the two must print alike."""
    from hrbench.records import usd_text as library

    assert usd_text(usd) == library(usd)


PLAIN = re.compile(r"hrb: bench (\d+)/250 rows(?:  ([\d.]+) rows/s)?(?:  ETA (\w+))?  \$0\.0000 of \$1\.50")


def test_no_rows_on_a_pipe_prints_plain_progress_lines_and_no_waiting_line(tmp_path: Path) -> None:
    """`hrb bench --no-rows` with stderr not a terminal (a CI log): rows are scored for more than
    the 10 s after which `waiting: no row` is said, yet it is never said once rows are scored;
    plain progress lines come instead, every few seconds and at the end."""
    spec = tmp_path / "plain.toml"
    items = ", ".join(f'"i{k}"' for k in range(50))
    labels = ", ".join(['"yes"'] * 50)
    spec.write_text(
        'name = "plain"\nruns = 5\nconcurrency = 1\ncache = false\n'
        f"[reference]\nitems = [{items}]\nlabels = [{labels}]\n"
        '[[arms]]\nkind = "prompt"\nname = "ask"\ntemplate = "{item}?"\n'
        '[client]\nkind = "mock"\nreply = "yes"\ndelay_s = 0.05\n'
        "[governor]\nmax_usd = 1.5\n"
    )
    with Daemon(tmp_path / "home") as daemon:
        proc = subprocess.run(
            [sys.executable, "-m", "hrbench_client.cli", "--home", str(daemon.home), "--no-autostart"]
            + ["bench", "--no-rows", str(spec)],
            capture_output=True,
            text=True,
            timeout=slow(300),
        )
    assert proc.returncode == 0, proc.stderr
    # once rows are scored, no waiting line (before the first row, a loaded machine may rightly say one)
    lines = proc.stderr.splitlines()
    first = next(n for n, line in enumerate(lines) if (m := PLAIN.fullmatch(line)) and int(m.group(1)) > 0)
    assert not any("waiting: no row" in line for line in lines[first:]), proc.stderr
    assert "\r" not in proc.stderr and "\x1b" not in proc.stderr
    said = [line for line in proc.stderr.splitlines() if line.startswith("hrb: bench ")]
    got = [PLAIN.fullmatch(line) for line in said]
    assert all(got), said
    done = [int(m.group(1)) for m in got if m]
    assert 0 < done[0] < 250 and done[-1] == 250 and done == sorted(done) and len(done) >= 2, said
    assert all(m.group(2) and m.group(3) for m in got[:-1] if m), said  # rate and ETA on the way
    last = got[-1]
    assert last is not None and last.group(2) and last.group(3) is None, said  # done: no ETA
