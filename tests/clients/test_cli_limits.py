"""`hrb bench` limits from the command line, stop notes and a closed pipe."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.clients.test_cli import HRB, _bench_file, _bench_id, _stop_daemon, hrb, lines  # noqa: F401


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


def test_a_benchmark_served_wholly_from_the_cache_lists_no_calls_not_an_unknown_use(tmp_path: Path) -> None:
    # its use is not listed as "calls - of 400", which reads as unknown: it made none
    spec = _bench_file(tmp_path)
    first = _bench_id(spec)
    again = _bench_id(spec)  # every reply from the cache the first run filled
    listed = {b["id"]: b for b in lines(hrb("ls").stdout)}
    assert listed[first]["calls"] == 30 and listed[first]["tokens"] > 0
    assert (listed[again]["calls"], listed[again]["usd"], listed[again]["tokens"]) == (0, 0.0, 0)
    text = hrb("ls", "--text").stdout
    assert "limits (the defaults): calls 0 of 400, usd 0.0000 of 5, tokens 0 of no cap" in text
    assert " - of " not in text


def test_a_closed_output_pipe_exits_141_with_the_resume_hint(tmp_path: Path) -> None:
    spec = _bench_file(tmp_path, runs=40, extra="concurrency = 1")
    spec.write_text(spec.read_text().replace('reply = "x"', 'reply = "x"\ndelay_s = 0.05'))
    proc = subprocess.Popen(
        [*HRB, "bench", str(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert json.loads(proc.stdout.readline())  # `| head -1`: one row read, then the reader is gone
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=slow(120)) == 141, err
    (bench_id,) = re.findall(r"hrb bench --resume (\w+)", err)
    assert "was cancelled" in err
    (listed,) = lines(hrb("ls").stdout)
    assert listed["id"] == bench_id and listed["status"] in ("cancelled", "interrupted")


def _priced_spec(tmp_path: Path, srv: LoopbackServer, extra: str) -> Path:
    spec = _bench_file(tmp_path, extra=f"concurrency = 1\n{extra}")
    client = (
        f'kind = "openai"\nmodel = "loopback-1"\nbase_url = "{srv.base_url}"\nmax_tokens = 10\n'
        "price = {input = 100.0, output = 100.0}"
    )
    spec.write_text(spec.read_text().replace('kind = "mock"\nreply = "x"', client))
    return spec


@pytest.mark.parametrize(
    ("governor", "flag"),
    [
        ("max_usd = 0.01", "--max-usd USD"),
        ("max_usd = 0.0043", "--max-usd USD"),
        ("max_calls = 4", "--max-calls N"),
        ("max_tokens = 60", "--max-tokens N"),
        ("max_calls = 400\nmax_usd = 0.007", "--max-usd USD"),
        # a token stop with a call cap says --max-tokens N in hrb ls too, not --max-calls N
        ("max_calls = 1000\nmax_tokens = 60", "--max-tokens N"),
        ("max_calls = 13\nmax_usd = 5.0\nmax_tokens = 100000", "--max-calls N"),
        ("max_calls = 1000\nmax_usd = 0.01\nmax_tokens = 100000", "--max-usd USD"),
        ("max_calls = 1000\nmax_usd = 5.0\nmax_tokens = 100", "--max-tokens N"),
    ],
)
def test_a_budget_stop_names_the_flag_of_the_cap_that_stopped_it(
    tmp_path: Path, governor: str, flag: str
) -> None:
    """Every surface shows one stop note, written by one function."""
    with LoopbackServer() as srv:
        proc = hrb(
            "bench", str(_priced_spec(tmp_path, srv, f"[governor]\n{governor}")), "--no-rows", check_rc=4
        )
        result = lines(proc.stdout)[-1]
        note = result["stop_note"]
        assert note.endswith(f"--resume {result['id']} {flag}`"), note
        assert f"hrb: budget stopped: {note}" in proc.stderr.splitlines()
        assert "$-" not in proc.stderr
        for need, left in re.findall(
            r"worst case \(\$([\d.]+)\) is more than the \$([\d.]+) left", proc.stderr
        ):
            assert float(need) > float(left) and need != left  # shown with digits enough to differ
        (listed,) = lines(hrb("ls").stdout)
        assert listed["stop_note"] == note
        assert lines(hrb("report", result["id"], "--descriptive").stdout)[0]["stop_note"] == note
        assert f"Budget stopped: {note}" in hrb("report", result["id"], "--descriptive", "--text").stdout
        page = tmp_path / "page.html"
        hrb("report", result["id"], "--descriptive", "--html", str(page))
        assert json.dumps(note)[1:-1] in page.read_text()  # the view's banner, from the same data
        # following the advice finishes it: the flag named raises the cap that stopped it
        more = {"--max-calls N": "100000", "--max-usd USD": "1000", "--max-tokens N": "100000000"}[flag]
        hrb("bench", "--resume", result["id"], flag.split()[0], more, "--no-rows", check_rc=0)


@pytest.mark.parametrize(("given", "spent_key"), [("--max-calls", "calls"), ("--max-usd", "usd")])
def test_a_resume_limit_below_what_was_spent_is_refused(tmp_path: Path, given: str, spent_key: str) -> None:
    with LoopbackServer() as srv:
        spec = _priced_spec(tmp_path, srv, "[governor]\nmax_calls = 6")
        bench_id = lines(hrb("bench", str(spec), "--no-rows", check_rc=4).stdout)[-1]["id"]
        (before,) = lines(hrb("ls").stdout)
        low = before[spent_key] / 2 if spent_key == "usd" else before[spent_key] - 1
        err = hrb("bench", "--resume", bench_id, given, f"{low:g}", "--no-rows", check_rc=2).stderr
        assert (
            f"governor.{given[2:].replace('-', '_')}" in err and f"{low:g}" in err and "already spent" in err
        )
        (after,) = lines(hrb("ls").stdout)
        assert (after["max_calls"], after["max_usd"], after["calls"]) == (6, before["max_usd"], 6)
        hrb("bench", "--resume", bench_id, given, str(before[spent_key] * 10), "--no-rows", check_rc=None)


# the warning is the daemon's answer to the spec, whatever the store holds and the calls made
@pytest.mark.usefixtures("shared_home")
@pytest.mark.parametrize(
    ("client", "governor", "warned"),
    [
        ("openai", "[governor]\n", True),  # an empty table: no limit at all on a billing model
        ("openai", "", False),  # the defaults
        ("openai", "[governor]\nmax_calls = 100\n", False),
        ("openai", "[governor]\nmax_usd = 1.0\n", False),
        ("replay", "[governor]\n", True),  # a replay that falls back to a billing model
        ("mock", "[governor]\n", False),
    ],
)
def test_hrb_bench_warns_when_a_billing_model_runs_with_no_limit(
    tmp_path: Path, client: str, governor: str, warned: bool
) -> None:
    with LoopbackServer() as srv:
        spec = (
            _bench_file(tmp_path, extra=governor)
            if client == "mock"
            else _priced_spec(tmp_path, srv, governor)
        )
        if client == "replay":
            text = spec.read_text().replace(
                "[client]\n",
                '[client]\nkind = "replay"\nrecording = "r1"\nstrict = false\n[client.fallback]\n',
            )
            spec.write_text(text)
        proc = hrb("bench", str(spec), "--no-rows", check_rc=None)
    assert proc.returncode in (0, 4), proc.stderr
    assert ("runs with no limit at all" in proc.stderr) == warned, proc.stderr


def test_no_example_spec_ships_an_empty_governor() -> None:
    import tomllib

    examples = sorted((Path(__file__).parents[2] / "examples").glob("*.toml"))
    assert len(examples) >= 4
    for path in examples:
        governor = tomllib.loads(path.read_text()).get("governor")
        assert governor is None or any(v is not None for v in governor.values()), path


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        ("quota429", "openai: quota exhausted (HTTP 429)"),
        ("quota", "openai: quota exhausted (HTTP 402)"),
        ("unauthorized", "openai: HTTP 401"),
    ],
)
def test_a_provider_quota_or_key_refusal_is_an_error_exit_3_never_a_budget_stop(
    tmp_path: Path, fault: str, cause: str
) -> None:
    """A 429 insufficient_quota is a run error (exit 3), not a budget stop (exit 4, "resume with higher limits")."""
    with LoopbackServer() as srv:
        srv.push(*[fault] * 100)
        spec = _priced_spec(tmp_path, srv, "[governor]\nmax_calls = 1000\nmax_usd = 5.0")
        proc = hrb("bench", str(spec), "--no-rows", check_rc=3)
        sent = len(srv.requests)
    result = lines(proc.stdout)[-1]
    assert sent == 1  # concurrency 1: the first refusal, then nothing more is sent
    assert result["status"] == "errors"  # never budget_stopped
    assert "budget" not in (result.get("stop_note") or "")
    assert f"15 x {cause.split(' (')[0]}" in proc.stderr, proc.stderr  # per arm, one cause: the provider's
    assert cause in proc.stderr and "budget stop" not in proc.stderr
    assert "resume with higher limits" not in proc.stderr
    if fault.startswith("quota"):
        assert "until credit is added or the quota raised" in proc.stderr
    (listed,) = lines(hrb("ls").stdout)
    assert listed["status"] == "errors" and listed["calls"] == 1
    assert "quota exhausted" in listed["stop_note"] or "HTTP 401" in listed["stop_note"]
