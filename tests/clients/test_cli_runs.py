"""`hrb bench` with runs that failed, a daemon stopped under it, the limits `hrb ls` shows and the
shell's HRBENCH_MAX_* variables, against real daemons and loopback servers."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from hrbench.runner._benchmark import MISSING_OUTPUT_ADVICE
from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.clients.test_cli import HRB, _bench_file, _stop_daemon, hrb, lines  # noqa: F401

LIMIT_VARIABLES = ("HRBENCH_MAX_CALLS", "HRBENCH_MAX_USD", "HRBENCH_MAX_TOKENS")


def _hrb_env(*args: str, env: dict[str, str], check_rc: int | None = 0) -> subprocess.CompletedProcess[str]:
    """`hrb` run in a shell that has ``env`` on top of this one's (the limit variables cleared)."""
    full = {k: v for k, v in os.environ.items() if k not in LIMIT_VARIABLES} | env
    proc = subprocess.run([*HRB, *args], capture_output=True, text=True, timeout=slow(120), env=full)
    if check_rc is not None:
        assert proc.returncode == check_rc, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def _openai_spec(tmp_path: Path, base_url: str, extra: str = "") -> Path:
    spec = _bench_file(tmp_path, extra=f"concurrency = 1\n{extra}")
    client = f'kind = "openai"\nmodel = "loopback-1"\nbase_url = "{base_url}"\nmax_attempts = 1'
    spec.write_text(spec.read_text().replace('kind = "mock"\nreply = "x"', client))
    return spec


def test_hrb_bench_exits_3_when_every_run_failed_and_ls_says_errors(tmp_path: Path) -> None:
    with LoopbackServer() as srv:
        dead = srv.base_url  # nothing listens there once it stopped
    proc = hrb("bench", str(_openai_spec(tmp_path, dead)), "--no-rows", check_rc=3)
    result = lines(proc.stdout)[-1]
    assert result["status"] == "errors"
    assert "30 run(s) ended in errors" in proc.stderr
    assert f"run them again with: hrb bench --resume {result['id']} --retry-errors" in proc.stderr
    (listed,) = lines(hrb("ls").stdout)
    assert listed["status"] == "errors"
    assert listed["stop_note"].startswith(
        f"30 of 30 runs ended in errors and count as wrong; commonest cause: openai: cannot connect to {dead} (30 runs, arms 'ask', 'ask2')"
    )
    table = hrb("ls", "--text").stdout
    assert f"Runs failed: {listed['stop_note']}" in table
    report = hrb("report", result["id"], "--text", "--descriptive").stdout
    assert "Status: errors" in report and f"Runs failed: {listed['stop_note']}" in report


@pytest.mark.parametrize("failed", [2, 29])
def test_hrb_bench_exits_3_on_partial_failures_and_retry_errors_finishes_it(
    tmp_path: Path, failed: int
) -> None:
    with LoopbackServer() as srv:
        srv.push(*["500"] * failed)
        spec = _openai_spec(tmp_path, srv.base_url)
        proc = hrb("bench", str(spec), "--no-rows", check_rc=3)
        bid = lines(proc.stdout)[-1]["id"]
        (listed,) = lines(hrb("ls").stdout)
        assert (listed["status"], listed["rows"]) == ("errors", 30)
        assert listed["stop_note"].startswith(f"{failed} of 30 runs ended in errors")
        assert listed["stop_note"].endswith(f"`hrb bench --resume {bid} --retry-errors`")
        hrb("bench", "--resume", bid, "--no-rows", check_rc=3)  # kept as they are: still errors
        assert len(srv.requests) == 30
        done = lines(hrb("bench", "--resume", bid, "--retry-errors", "--no-rows").stdout)[-1]
        assert (done["status"], done["n_resumed"]) == ("done", 30 - failed)
        assert len(srv.requests) == 30 + failed
    (listed,) = lines(hrb("ls").stdout)
    assert (listed["status"], listed["stop_note"], listed["calls"]) == ("done", None, 30 + failed)


def test_retry_errors_without_resume_is_a_usage_error(tmp_path: Path) -> None:
    err = hrb("bench", str(_bench_file(tmp_path)), "--retry-errors", check_rc=2).stderr
    assert "--retry-errors" in err and "--resume ID" in err


@pytest.mark.slow  # a daemon stopped mid-benchmark: `make test-slow`
def test_hrb_daemon_stop_mid_benchmark_says_so_with_the_resume_command(tmp_path: Path) -> None:
    """`hrb daemon stop` during `hrb bench` says more than "cancelled": the stop and the resume command."""
    spec = _bench_file(tmp_path, runs=40, extra="concurrency = 1")
    spec.write_text(spec.read_text().replace('reply = "x"', 'reply = "x"\ndelay_s = 0.05'))
    hrb("daemon", "start")
    proc = subprocess.Popen(
        [*HRB, "bench", str(spec)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert json.loads(proc.stdout.readline())  # it runs
    hrb("daemon", "stop")
    out, err = proc.communicate(timeout=slow(120))
    assert proc.returncode == 3, err
    m = re.search(
        r"the daemon was stopped by a shutdown request \(`hrb daemon stop`\) while benchmark (\w+) ran: "
        r"(\d+) of 240 runs are done and saved\. Resume it with: hrb bench --resume (\w+)",
        err,
    )
    assert m is not None and m.group(1) == m.group(3), err
    bid, saved = m.group(1), int(m.group(2))
    assert 1 <= saved < 240 and saved == 1 + len(out.splitlines())  # every row it printed is saved
    assert "cancelled;" not in err
    (listed,) = lines(hrb("ls").stdout)
    assert (listed["id"], listed["status"], listed["rows"]) == (bid, "interrupted", saved)
    spec.write_text(spec.read_text().replace("delay_s = 0.05", "delay_s = 0.0"))
    again = lines(hrb("bench", "--resume", bid, "--no-rows").stdout)[-1]
    assert (again["status"], again["n_resumed"], again["n_rows"]) == ("done", saved, 240)


@pytest.mark.parametrize(
    ("extra", "flags", "want"),
    [
        ("[governor]\nmax_tokens = 90000\n", (), (None, None, 90000, False)),
        ("", ("--max-tokens", "80000"), (400, 5.0, 80000, True)),
        ("", (), (400, 5.0, None, True)),
    ],
)
def test_hrb_ls_shows_max_tokens_like_the_other_limits(
    tmp_path: Path, extra: str, flags: tuple[str, ...], want: tuple[object, ...]
) -> None:
    hrb("bench", str(_bench_file(tmp_path, extra=extra)), "--no-rows", *flags)
    (listed,) = lines(hrb("ls").stdout)
    assert (listed["max_calls"], listed["max_usd"], listed["max_tokens"], listed["default_limits"]) == want
    table = hrb("ls", "--text").stdout
    head = "limits (the defaults)" if want[3] else "limits"
    tokens = "no cap" if want[2] is None else str(want[2])
    assert f"{head}: calls " in table and f", tokens {listed['tokens'] or '-'} of {tokens}" in table


@pytest.mark.parametrize(
    ("extra", "flags", "env", "want", "said"),
    [
        (
            "",
            (),
            {"HRBENCH_MAX_CALLS": "4"},
            (4, 5.0, True),
            "HRBENCH_MAX_CALLS=4 from this shell is a default limit",
        ),
        (
            "",
            ("--max-calls", "6"),
            {"HRBENCH_MAX_CALLS": "4", "HRBENCH_MAX_USD": "2"},
            (6, 2.0, True),
            "HRBENCH_MAX_USD=2 from this shell is a default limit of this benchmark (the spec has no [governor]); "
            "HRBENCH_MAX_CALLS from this shell is replaced by the flag given",
        ),
        (
            "[governor]\nmax_calls = 100\n",
            (),
            {"HRBENCH_MAX_CALLS": "4"},
            (100, None, False),
            "HRBENCH_MAX_CALLS=4 from this shell is not used: the spec's [governor] sets the limits",
        ),
    ],
)
def test_the_shells_hrbench_max_variables_reach_a_running_daemon(
    tmp_path: Path,
    extra: str,
    flags: tuple[str, ...],
    env: dict[str, str],
    want: tuple[object, ...],
    said: str,
) -> None:
    """HRBENCH_MAX_CALLS set in the shell running `hrb bench` is never ignored silently."""
    _hrb_env("daemon", "start", env={})  # a daemon started before, without them
    proc = _hrb_env(
        "bench", str(_bench_file(tmp_path, extra=extra)), "--no-rows", *flags, env=env, check_rc=None
    )
    assert f"note: {said}" in proc.stderr
    (listed,) = lines(hrb("ls").stdout)
    assert (listed["max_calls"], listed["max_usd"], listed["default_limits"]) == want
    assert listed["calls"] == min(30, int(listed["max_calls"]))  # the limit in force held
    stopped = 30 - min(30, int(listed["max_calls"]))
    assert proc.returncode == (4 if stopped else 0), proc.stderr
    resumed = _hrb_env("bench", "--resume", listed["id"], "--no-rows", env=env, check_rc=None)
    assert "from this shell is not used: a resume keeps the limits in force" in resumed.stderr


def test_a_bad_hrbench_max_value_from_the_shell_is_named(tmp_path: Path) -> None:
    _hrb_env("daemon", "start", env={})
    err = _hrb_env("bench", str(_bench_file(tmp_path)), env={"HRBENCH_MAX_CALLS": "many"}, check_rc=2).stderr
    assert "HRBENCH_MAX_CALLS" in err and "'many'" in err


@pytest.mark.parametrize(("flags", "most"), [((), 1), (("--concurrency", "4"), 4)])
def test_hrb_bench_resume_keeps_the_specs_concurrency(
    tmp_path: Path, flags: tuple[str, ...], most: int
) -> None:
    """`hrb bench --resume ID` keeps the spec's concurrency (1), not 16 at once."""
    with LoopbackServer(latency_s=0.05) as srv:
        spec = _openai_spec(tmp_path, srv.base_url, "[governor]\nmax_calls = 2\n")  # concurrency = 1
        bid = lines(hrb("bench", str(spec), "--no-rows", check_rc=4).stdout)[-1]["id"]
        srv.reset()
        hrb("bench", "--resume", bid, "--max-calls", "100", "--no-rows", *flags)
        assert 1 <= srv.max_in_flight <= most


def test_hrb_bench_concurrency_flag(tmp_path: Path) -> None:
    from hrbench.store import Store
    from hrbench_client import _paths

    bid = lines(hrb("bench", str(_bench_file(tmp_path)), "--no-rows", "--concurrency", "3").stdout)[-1]["id"]
    store = Store(_paths.home() / "hrbench.sqlite3")
    stored = store.benchmark_get(bid)
    store.close()
    assert stored is not None and stored["spec"]["params"]["concurrency"] == 3
    assert (
        "--concurrency" in hrb("bench", str(_bench_file(tmp_path)), "--concurrency", "0", check_rc=2).stderr
    )


def test_a_missing_output_is_named_as_the_cause_in_bench_ls_and_report(tmp_path: Path) -> None:
    """The TAT-QA demo (`missing = "error"`) printed "commonest cause: LookupError (5 runs)"; the
    cause names the item the outputs leave out and the arms lack it, on every surface."""
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"item": "a", "output": "x"}\n{"item": "b", "output": "y"}\n')
    arms = "".join(
        f'[[arms]]\nkind = "outputs"\nname = "{name}"\npath = "{preds}"\nmissing = "error"\n'
        for name in ("f", "g")
    )
    spec = tmp_path / "partial.toml"
    spec.write_text(
        f'runs = 5\n[reference]\nitems = {{ a = "A", b = "B", c = "C" }}\nlabels = ["x", "y", "x"]\n{arms}'
    )
    proc = hrb("bench", str(spec), "--no-rows", check_rc=3)
    bid = lines(proc.stdout)[-1]["id"]
    cause = "no output for item 'c'"
    assert (
        f"5 x {cause}); first: item 'c', run 1: LookupError: {cause}: the outputs of arm 'f' (p.jsonl)"
        in proc.stderr
    )
    note = (
        f"10 of 30 runs ended in errors and count as wrong; commonest cause: {cause} "
        f"(10 runs, arms 'f', 'g'); 10 of them had no output to score: {MISSING_OUTPUT_ADVICE}"
    )  # (no --retry-errors, which reads the same outputs)
    # the last line advises no retry either: every error run lacks an output
    assert "hrb bench --resume" not in proc.stderr.strip().splitlines()[-1]
    assert "would fail these runs the same way" in proc.stderr.strip().splitlines()[-1]
    (listed,) = lines(hrb("ls").stdout)
    assert (listed["status"], listed["stop_note"]) == ("errors", note)
    assert f"Runs failed: {note}" in hrb("ls", "--text").stdout
    assert json.loads(hrb("report", bid, "--descriptive").stdout)["stop_note"] == note
    assert f"Runs failed: {note}" in hrb("report", bid, "--text", "--descriptive").stdout


def test_the_causes_hrb_advises_no_retry_for_are_the_librarys() -> None:
    from hrbench.runner import DUPLICATE_CAUSE
    from hrbench.runner._benchmark import MISSING_OUTPUT_CAUSE
    from hrbench_client.cli.bench import NOT_RETRIED_CAUSES

    assert NOT_RETRIED_CAUSES == (DUPLICATE_CAUSE, MISSING_OUTPUT_CAUSE)
