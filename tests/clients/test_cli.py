"""The `hrb` command end to end (it autostarts a daemon on the test's private HRBENCH_HOME; a
test that needs no daemon of its own uses the module's shared one: ``ON_SHARED``)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrbench_client import _paths
from tests._procs import interruptible, stop_daemon
from tests._slow import slow

HRB = [sys.executable, "-m", "hrbench_client.cli"]


def hrb(*args: str, input: str | None = None, check_rc: int | None = 0) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*HRB, *args], input=input, capture_output=True, text=True, timeout=slow(120))
    if check_rc is not None:
        assert proc.returncode == check_rc, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


ON_SHARED = pytest.mark.usefixtures("shared_home")
"""For a test that needs no daemon of its own: it does not start, stop or kill one, count the
calls made or read the whole store (`hrb ls`, `hrb ref list`), so the module's shared daemon
(conftest) answers it; a reply its benchmark gets from that daemon's cache is the mock's same
reply, which changes nothing it checks."""


@pytest.fixture(autouse=True)
def _stop_daemon() -> Iterator[None]:
    yield
    stop_daemon(_paths.home())  # not `hrb daemon stop`: it waits for init to reap the daemon


def test_help() -> None:
    out = hrb("--help").stdout
    for cmd in ("score", "bench", "eval", "ref", "rows", "report", "daemon", "serve"):
        assert cmd in out
    assert "exit codes" in out


@ON_SHARED
def test_score_one_liner_and_exit_codes() -> None:
    got = lines(hrb("score", "--scorer", "exact", "--label", "Paris", "  paris ").stdout)
    assert got == [{"correct": True, "outcome": "paris", "failure_kind": None, "scorer": "exact_normalised"}]
    assert (
        lines(hrb("score", "--check", "--label", "Paris", "Lyon", check_rc=1).stdout)[0]["failure_kind"]
        == "wrong"
    )
    assert (
        lines(hrb("score", "--label", "Paris", "--label", "Lutetia", "lutetia").stdout)[0]["correct"] is True
    )
    assert lines(hrb("score", "--label-json", "100000", "1e+05").stdout)[0]["correct"] is False
    stdin = '{"output": "a", "label": "a"}\n\n{"output": "b", "label": ["x", "b"]}\n{"output": null, "label": "x"}\n'
    got = lines(hrb("score", "--check", input=stdin, check_rc=1).stdout)
    assert [g["correct"] for g in got] == [True, True, False]
    assert hrb("score", "--scorer", "nope", "--label", "a", "a", check_rc=2).stderr.startswith(
        "hrb: ConfigError"
    )
    assert "not JSON" in hrb("score", input="{oops\n", check_rc=2).stderr
    assert hrb("score", "--settings", "[1]", "--label", "a", "a", check_rc=2).returncode == 2
    hrb("frobnicate", check_rc=2)


@ON_SHARED
def test_bench_file_rows_report_and_resume_flags(tmp_path: Path) -> None:
    (tmp_path / "my_arms.py").write_text(
        textwrap.dedent("""
        def shout(item, ctx):
            return str(item).upper()
    """)
    )
    (tmp_path / "outputs.jsonl").write_text(
        "".join(json.dumps({"item": f"q{i}", "output": "FRANCE" if i == 0 else "x"}) + "\n" for i in range(3))
    )
    spec = tmp_path / "bench.toml"
    spec.write_text(
        textwrap.dedent("""
        runs = 5
        [reference]
        items = {q0 = "france", q1 = "peru", q2 = "chad"}
        labels = ["FRANCE", "PERU", "CHAD!"]
        [[arms]]
        kind = "import"
        path = "my_arms:shout"
        [[arms]]
        kind = "outputs"
        name = "fixed"
        path = "outputs.jsonl"
        [governor]
        max_calls = 10
    """)
    )
    out = lines(hrb("bench", str(spec)).stdout)
    rows, result = out[:-1], out[-1]
    assert len(rows) == 30 and {r["arm"] for r in rows} == {"shout", "fixed"}
    assert result["status"] == "done" and [s["accuracy"] for s in result["summary"]] == [
        pytest.approx(2 / 3),
        pytest.approx(1 / 3),
    ]
    stored = lines(hrb("rows", result["id"]).stdout)
    assert len(stored) == 30
    assert "trace" in lines(hrb("rows", result["id"], "--limit", "1", "--traces").stdout)[0]
    report = lines(hrb("report", result["id"]).stdout)[0]
    assert [a["arm"] for a in report["arms"]] == ["shout", "fixed"]
    assert "accuracy" in hrb("report", result["id"], "--text").stdout
    again = lines(hrb("bench", "--resume", result["id"], "--no-rows").stdout)
    assert again == [{**result, "n_resumed": 30, "warnings": again[0]["warnings"]}]
    hrb("report", "0123456789abcdef", check_rc=2)  # an unknown id is bad input: exit 2


def test_invalid_bench_files_are_usage_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('runs = "five"\n')
    assert "at `$.runs`" in hrb("bench", str(bad), check_rc=2).stderr
    bad.write_text("rusn = 5\n")
    assert "unknown field `rusn` - at `$`" in hrb("bench", str(bad), check_rc=2).stderr
    bad.write_text('[[arms]]\nkind = "promt"\nname = "a"\ntemplate = "{item}"\n')
    err = hrb("bench", str(bad), check_rc=2).stderr
    assert (
        "arms[0].kind: unknown value; did you mean 'prompt'? expected one of prompt, reading, outputs, import"
        in err
    )
    bad.write_text('[client]\nkind = "mok"\n')
    err = hrb("bench", str(bad), check_rc=2).stderr
    assert (
        "client.kind: unknown value; did you mean 'mock'? expected one of openai, anthropic, replay, mock"
        in err
    )
    bad.write_text("runs = [\n")
    assert "not valid TOML" in hrb("bench", str(bad), check_rc=2).stderr
    assert "cannot read" in hrb("bench", str(tmp_path / "missing.toml"), check_rc=2).stderr
    hrb("bench", check_rc=2)


def _eval_file(tmp_path: Path) -> Path:
    """An evaluate() spec whose mock always answers "positive": mean score 0.5."""
    (tmp_path / "data.jsonl").write_text(
        '{"text": "great", "sentiment": "positive"}\n{"text": "bad", "sentiment": "negative"}\n'
    )
    spec = tmp_path / "eval.toml"
    spec.write_text(
        textwrap.dedent("""
        data = "data.jsonl"
        metric = {name = "exact_match", field = "sentiment"}
        [module]
        signature = "text -> sentiment: enum('positive', 'negative')"
        [client]
        kind = "mock"
        reply = '{"sentiment": "positive"}'
    """)
    )
    return spec


@ON_SHARED
def test_eval_file(tmp_path: Path) -> None:
    spec = _eval_file(tmp_path)
    out = lines(hrb("eval", str(spec)).stdout)[0]
    assert out["mean_score"] == 0.5


def test_references(tmp_path: Path) -> None:
    f = tmp_path / "ref.jsonl"
    f.write_text(
        '{"id": "a", "item": "France", "label": "Paris"}\n{"id": "b", "item": "Peru", "label": "Lima"}\n'
    )
    put = lines(hrb("ref", "put", "capitals", str(f)).stdout)[0]
    assert put["n_items"] == 2 and put["name"] == "capitals"
    assert lines(hrb("ref", "list").stdout)[0]["hash"] == put["hash"]
    assert lines(hrb("ref", "get", "capitals").stdout)[0]["labels"] == {"a": "Paris", "b": "Lima"}
    hrb("ref", "get", "nothing-here", check_rc=2)


def test_daemon_lifecycle_and_tcp_refusal() -> None:
    assert lines(hrb("--no-autostart", "status", check_rc=1).stdout) == [{"running": False}]
    started = lines(hrb("daemon", "start").stdout)[0]
    assert started["running"] is True
    status = lines(hrb("daemon", "status").stdout)[0]
    assert status["running"] is True and status["pid"] == started["pid"]
    assert status["running_benchmarks"] == []
    assert lines(hrb("daemon", "stop").stdout)[0] == {"stopped": True}
    with pytest.raises(ProcessLookupError):  # `stop` returns once the process has exited
        os.kill(started["pid"], 0)
    assert lines(hrb("daemon", "status", check_rc=1).stdout) == [{"running": False}]
    assert lines(hrb("daemon", "stop").stdout)[0] == {"stopped": False}
    hrb("--no-autostart", "score", "--label", "a", "a", check_rc=3)
    assert "loopback" in hrb("daemon", "start", "--tcp", "0.0.0.0:8765", check_rc=2).stderr


def test_serve_stdio() -> None:
    body = b'{"jsonrpc":"2.0","id":7,"method":"score","params":{"output":" Paris","label":"paris"}}'
    proc = subprocess.run(
        [*HRB, "serve", "--stdio"],
        input=b"Content-Length: %d\r\n\r\n%s" % (len(body), body),
        capture_output=True,
        timeout=slow(60),
    )
    assert proc.returncode == 0
    head, _, rest = proc.stdout.partition(b"\r\n\r\n")
    assert head.startswith(b"Content-Length:")
    assert json.loads(rest)["result"]["correct"] is True


@ON_SHARED
def test_score_fast_path_matches_the_full_path() -> None:
    from hrbench_client.cli import _fast

    assert _fast._parse(["score", "--label", "a", "x"]) is not None
    for argv in (
        ["score", "--label=a", "x"],
        ["score", "-h"],
        ["score"],
        ["score", "--label", "a", "--", "-x"],
        ["--no-autostart", "score", "x"],
        ["score", "--scorer", "a", "--scorer", "b", "x"],
        ["score", "a", "b"],
    ):
        assert _fast._parse(argv) is None, argv
    fast = hrb("score", "--label", "Paris", "--label", "Lutetia", "--item", '{"q": 1}', " paris ")
    full = hrb("score", "--label=Paris", "--label=Lutetia", '--item={"q": 1}', " paris ")
    assert fast.stdout == full.stdout and json.loads(fast.stdout)["correct"] is True
    assert (
        hrb("score", "--check", "--label", "x", "y", check_rc=1).stdout
        == hrb("score", "--check", "--label=x", "y", check_rc=1).stdout
    )
    slow_err = hrb("score", "--scorer=nope", "--label", "a", "a", check_rc=2).stderr
    assert hrb("score", "--scorer", "nope", "--label", "a", "a", check_rc=2).stderr == slow_err
    slow_err = hrb("score", "--scorer=foo.bar:baz", "--label", "a", "a", check_rc=2).stderr
    assert hrb("score", "--scorer", "foo.bar:baz", "--label", "a", "a", check_rc=2).stderr == slow_err


GATED = """
import asyncio, os


async def answer(messages, params):
    \"\"\"Item a's runs answer at once; every other waits until the gate file exists.\"\"\"
    while messages[-1]["content"] != "a" and not os.path.exists({gate!r}):
        await asyncio.sleep(0.02)
    return "x"
"""


def test_ctrl_c_cancels_a_bench_and_resume_finishes_it(tmp_path: Path) -> None:
    # The Ctrl-C must land while the benchmark runs, whatever the machine's load: every item
    # but the first waits on a gate that opens only after hrb has exited.
    gate = tmp_path / "open"
    (tmp_path / "gated_model.py").write_text(GATED.format(gate=str(gate)))
    spec = tmp_path / "slow.toml"
    spec.write_text(
        textwrap.dedent(f"""
        runs = 5
        concurrency = 2
        python_path = [{str(tmp_path)!r}]
        [reference]
        items = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
        labels = ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]
        [client]
        kind = "mock"
        function = "gated_model:answer"
        [[arms]]
        kind = "prompt"
        name = "ask"
        template = "{{item}}"
        [governor]
    """)
    )
    env = {**os.environ, "HRBENCH_CANCEL_GRACE_S": "0.2"}  # the gated requests in flight are not waited for
    proc = subprocess.Popen(
        [*HRB, "bench", str(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=interruptible,  # a Ctrl-C reaches hrb however the suite was started
    )
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=slow(60))
    finally:  # stopped and its pipes closed on every path, a timeout included
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "hrb bench --resume" in err
    bench_id = err.rsplit("--resume", 1)[1].split()[0]
    assert first["ledger_id"].startswith(bench_id)
    gate.touch()
    done = lines(hrb("bench", "--resume", bench_id, "--no-rows").stdout)[0]
    assert done["status"] == "done" and done["n_rows"] == 50 and 1 <= done["n_resumed"] < 50


def _bench_file(tmp_path: Path, *, runs: int = 5, extra: str = "", labels: str = '["x", "y", "x"]') -> Path:
    spec = tmp_path / f"bench{runs}.toml"
    spec.write_text(
        f"runs = {runs}\n{extra}\n"
        + textwrap.dedent(f"""
        [reference]
        items = ["a", "b", "c"]
        labels = {labels}
        [client]
        kind = "mock"
        reply = "x"
        [[arms]]
        kind = "prompt"
        name = "ask"
        template = "{{item}}"
        [[arms]]
        kind = "prompt"
        name = "ask2"
        template = "Q: {{item}}"
    """)
    )
    return spec


def _bench_id(spec: Path) -> str:
    return str(lines(hrb("bench", str(spec), "--no-rows").stdout)[-1]["id"])


def test_invalid_input_exits_2_and_daemon_errors_exit_3(tmp_path: Path, shared_bench_id: str) -> None:
    epilog = hrb("--help").stdout
    for needle in ("ConfigError", "ReferenceValueError", "SignatureError", "TooFewRunsError", "130"):
        assert needle in epilog
    # a spec the daemon rejects: the ConfigError family
    bad_scorer = _bench_file(tmp_path, extra='scorer = "exactt"')
    assert "ConfigError" in hrb("bench", str(bad_scorer), check_rc=2).stderr
    few_labels = _bench_file(tmp_path, labels='["x"]')
    assert "ReferenceValueError" in hrb("bench", str(few_labels), check_rc=2).stderr
    # report settings
    bench_id = shared_bench_id
    assert "method" in hrb("report", bench_id, "--method", "bogus", check_rc=2).stderr
    # a field an option gave is said by the option, as a value out of range is
    assert hrb("report", bench_id, "--level", "1.5", check_rc=2).stderr == (
        "hrb: invalid: --level 1.5: must be a number between 0 and 1, e.g. 0.95\n"
    )
    assert "nope" in hrb("report", bench_id, "--compare", "ask", "nope", check_rc=2).stderr
    assert (
        "(did you mean 'ask2'? arms: "
        in hrb("report", bench_id, "--compare", "ask", "ask22", check_rc=2).stderr
    )
    pair = lines(hrb("report", bench_id, "--compare", "ask", "ask2").stdout)
    assert len(pair) == 1 and (pair[0]["arm_a"], pair[0]["arm_b"]) == (
        "ask",
        "ask2",
    )  # only the pair asked for
    # scorer settings and imports (the fast path and the full one agree)
    for pre in ([], ["--check"]):
        hrb("score", *pre, "--settings", '{"bogus": 1}', "--label", "a", "a", check_rc=2)
        hrb("score", *pre, "--scorer", "foo.bar:baz", "--label", "a", "a", check_rc=2)
    # an id that names nothing stored is the caller's input too: exit 2, not 3
    assert "NotFound" in hrb("report", "0123456789abcdef", check_rc=2).stderr


@ON_SHARED
def test_report_of_too_few_runs_hints_at_descriptive(tmp_path: Path) -> None:
    bench_id = _bench_id(_bench_file(tmp_path, runs=2))
    err = hrb("report", bench_id, check_rc=2).stderr
    assert err.startswith("hrb: TooFewRunsError:") and err.count("--descriptive") == 1  # said once
    assert lines(hrb("report", bench_id, "--descriptive").stdout)[0]["descriptive"] is True


def test_report_help_lists_the_choices() -> None:
    out = " ".join(hrb("report", "--help").stdout.split())
    assert "cluster" in out and "bootstrap" in out and "between 0 and 1" in out and "--plot" in out


def test_report_plot_is_written_where_the_caller_is(tmp_path: Path, shared_bench_id: str) -> None:
    pytest.importorskip("matplotlib")
    bench_id = shared_bench_id
    here = tmp_path / "here"
    here.mkdir()
    proc = subprocess.run(
        [*HRB, "report", bench_id, "--plot", "out.png"],
        cwd=here,
        capture_output=True,
        text=True,
        timeout=slow(120),
    )
    assert proc.returncode == 0, proc.stderr
    png = here / "out.png"
    assert lines(proc.stdout)[0]["plot"] == str(png)
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    text = hrb("report", bench_id, "--text", "--plot", str(tmp_path / "t.png")).stdout
    assert str(tmp_path / "t.png") in text and (tmp_path / "t.png").exists()
    assert "plot" in hrb("report", bench_id, "--plot", str(tmp_path / "no" / "x.png"), check_rc=2).stderr


@ON_SHARED
def test_score_stdin_prints_every_verdict_before_a_bad_line() -> None:
    good = [
        '{"output": "a", "label": "a"}',
        "",
        '{"output": "b", "label": "c"}',
        '{"output": "d", "label": "d"}',
    ]
    for bad, message in (
        ('{"output": 1, "label": "b"}', "stdin line 5: Expected `str | null`, got `int` - at `$.output`"),
        ('{"outpt": "b", "label": "b"}', "stdin line 5: Object contains unknown field `outpt` - at `$`"),
        ("{oops", "stdin line 5: not JSON"),
        ("[1]", "stdin line 5: expected an object"),
        ('{"output": "b", "label": "b", "scorer": "nope"}', "hrb: ConfigError: stdin line 5: scorer"),
    ):
        stdin = "\n".join([*good, bad, '{"output": "e", "label": "e"}']) + "\n"
        proc = hrb("score", "--check", input=stdin, check_rc=2)
        assert [r["correct"] for r in lines(proc.stdout)] == [True, False, True], bad
        assert message in proc.stderr, (bad, proc.stderr)
        assert proc.stderr.count("\n") == 1, proc.stderr


@ON_SHARED
def test_seed003_example_spec_through_hrb_eval() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "sentiment.toml"
    out = lines(hrb("eval", str(example)).stdout)[0]
    assert out["mean_score"] == 0.75
    assert out["scores"] == [1.0, 1.0, 1.0, 0.0]
    assert out["n_evaluated"] == 4 and out["n_errors"] == 0


# -- exit codes that say what happened ---------------------------------------------------


def test_bench_budget_stop_exits_4_with_the_resume_command(tmp_path: Path) -> None:
    spec = _bench_file(tmp_path, extra="[governor]\nmax_calls = 4")
    proc = hrb("bench", str(spec), "--no-rows", check_rc=4)
    result = lines(proc.stdout)[-1]
    assert "budget stop: 26 run(s) were stopped by the governor" in proc.stderr
    assert "call_cap_reached" in proc.stderr
    command = f"hrb bench --resume {result['id']} --max-calls N"
    assert command in proc.stderr
    again = hrb("bench", "--resume", result["id"], "--max-calls", "100", "--no-rows")
    done = lines(again.stdout)[-1]
    assert done["n_resumed"] == 4 and sum(s["budget_stop"] for s in done["summary"]) == 0


@ON_SHARED
def test_bench_runs_ending_in_errors_exit_3_with_a_summary(tmp_path: Path) -> None:
    (tmp_path / "flaky_arms.py").write_text(
        "def flaky(item, ctx):\n    if ctx.run == 2:\n        raise KeyError('typo')\n    return 'x'\n"
    )
    spec = tmp_path / "errs.toml"
    spec.write_text(
        textwrap.dedent("""
        runs = 5
        [reference]
        items = ["a", "b"]
        labels = ["x", "x"]
        [[arms]]
        kind = "import"
        path = "flaky_arms:flaky"
    """)
    )
    proc = hrb("bench", str(spec), "--no-rows", check_rc=3)
    assert "2 run(s) ended in errors" in proc.stderr
    assert "arm 'flaky': 2 of 10 run(s) raised or failed (2 x KeyError)" in proc.stderr


@ON_SHARED
@pytest.mark.parametrize(("acc", "rc"), [("0.9", 1), ("0.5", 0), ("2", 2)])
def test_bench_and_eval_fail_under(tmp_path: Path, acc: str, rc: int) -> None:
    spec = _bench_file(tmp_path)  # accuracy 2/3 for both arms
    proc = hrb("bench", str(spec), "--no-rows", "--fail-under", acc, check_rc=rc)
    if rc == 1:
        assert "accuracy under --fail-under 0.9: ask 0.667, ask2 0.667" in proc.stderr
    hrb("eval", str(_eval_file(tmp_path)), "--fail-under", acc, check_rc=rc)  # 0.5 is not under 0.5


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_plot_and_html_files_get_the_callers_mode(
    tmp_path: Path, shared_bench_id: str, umask: int, mode: int
) -> None:
    # --plot and --html files get the caller's umask, not the daemon's (077): never 0600 beside 0644
    bench_id = shared_bench_id
    png, page = tmp_path / "r.png", tmp_path / "r.html"
    for flag, path in (("--plot", png), ("--html", page)):
        proc = subprocess.run(
            [*HRB, "report", bench_id, flag, str(path)],
            capture_output=True,
            text=True,
            timeout=slow(120),
            umask=umask,
        )
        assert proc.returncode == 0, proc.stderr
        assert stat.S_IMODE(path.stat().st_mode) == mode, (flag, oct(path.stat().st_mode))
    assert stat.S_IMODE((Path(os.environ["HRBENCH_HOME"]) / "hrbench.sqlite3").stat().st_mode) == 0o600


@ON_SHARED
def test_fail_under_fails_when_nothing_was_measured(tmp_path: Path) -> None:
    # --fail-under must not pass (exit 0) on accuracy NA; a gate that measured
    # nothing fails (exit 1), for an unlabelled reference and for one whose items are all on dev
    arm = (
        '[client]\nkind = "mock"\nreply = "x"\n[[arms]]\nkind = "prompt"\nname = "ask"\ntemplate = "{item}"\n'
    )
    specs = {
        "nolabels": 'runs = 5\n[reference]\nitems = ["a", "b"]\n',
        "dev": 'runs = 5\nsplit = "dev"\n[reference]\nitems = ["a", "b"]\nlabels = ["x", "x"]\nsplit = "dev"\n',
    }
    for name, head in specs.items():
        spec = tmp_path / f"{name}.toml"
        spec.write_text(head + arm)
        err = hrb("bench", str(spec), "--no-rows", "--fail-under", "0.9", check_rc=1).stderr
        assert "accuracy is NA, nothing was measured, so --fail-under 0.9 fails: ask" in err, err
        hrb("bench", str(spec), "--no-rows", check_rc=0)  # without the gate: scored, exit 0
    empty = tmp_path / "empty.toml"
    empty.write_text(_eval_file(tmp_path).read_text().replace('data = "data.jsonl"', "data = []"))
    err = hrb("eval", str(empty), "--fail-under", "0.5", check_rc=1).stderr
    assert "mean score is NA, nothing was scored, so --fail-under 0.5 fails" in err, err
