"""`hrb bench` limits from the command line, stop notes and a closed pipe (newcomer findings)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.clients.test_cli import HRB, _bench_file, _stop_daemon, hrb, lines  # noqa: F401


@pytest.mark.parametrize(
    ("extra", "flags", "want"),
    [
        # a flag replaces that one limit; the spec's others stay
        ("[governor]\nmax_calls = 7\n", ("--max-usd", "0.5"), (7, 0.5, False)),
        ("[governor]\nmax_usd = 1.5\n", ("--max-calls", "20"), (20, 1.5, False)),
        ("[governor]\nmax_tokens = 900\n", ("--max-calls", "20"), (20, None, False)),
        # no [governor]: the defaults stay for the limits not given (seed 002: 400 calls, 5 USD)
        ("", ("--max-calls", "50"), (50, 5.0, True)),
        ("", ("--max-usd", "1"), (400, 1.0, False)),  # a USD cap given is strict
        ("", ("--max-tokens", "900"), (400, 5.0, True)),
    ],
)
def test_a_limit_flag_on_a_fresh_run_replaces_only_that_limit(
    tmp_path: Path, extra: str, flags: tuple[str, str], want: tuple[object, ...]
) -> None:
    spec = _bench_file(tmp_path, extra=extra)
    proc = hrb("bench", str(spec), "--no-rows", *flags, check_rc=None)
    assert proc.returncode in (0, 4), proc.stderr
    (listed,) = lines(hrb("ls").stdout)
    assert (listed["max_calls"], listed["max_usd"], listed["default_limits"]) == want
    if want[0] == 7:  # the spec's call cap still stops it
        assert proc.returncode == 4 and listed["calls"] == 7


@pytest.mark.parametrize("detach", [False, True])
def test_a_closed_output_pipe_exits_141_with_the_resume_hint(tmp_path: Path, detach: bool) -> None:
    spec = _bench_file(tmp_path, runs=40, extra="concurrency = 1")
    spec.write_text(spec.read_text().replace('reply = "x"', 'reply = "x"\ndelay_s = 0.05'))
    proc = subprocess.Popen(
        [*HRB, "bench", str(spec), *(["--detach"] if detach else [])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert json.loads(proc.stdout.readline())  # `| head -1`: one row read, then the reader is gone
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 141, err
    (bench_id,) = re.findall(r"hrb bench --resume (\w+)", err)
    assert ("runs on detached" if detach else "was cancelled") in err
    if not detach:
        (listed,) = lines(hrb("ls").stdout)
        assert listed["id"] == bench_id and listed["status"] in ("cancelled", "interrupted")
