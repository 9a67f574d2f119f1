"""Faults a first user meets, end to end through `hrb` and a real daemon (it autostarts one
on the test's private HRBENCH_HOME; a refusal is answered by the module's shared daemon,
``shared_home`` in conftest): warnings on stderr, outputs files that do not cover the
reference, a misspelt recording, relative HRBENCH_DATA, JSON lines line numbers, full field
paths, bad environment values at daemon start."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrbench_client import _paths
from tests._procs import stop_daemon
from tests._slow import slow

HRB = [sys.executable, "-m", "hrbench_client.cli"]
ROOT = Path(__file__).resolve().parents[2]


def hrb(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HRB, *args],
        capture_output=True,
        text=True,
        timeout=slow(180),
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(autouse=True)
def _stop_daemon() -> Iterator[None]:
    yield
    stop_daemon(_paths.home())  # not `hrb daemon stop`: it waits for init to reap the daemon


def _spec(tmp_path: Path, body: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


REF2 = '[reference]\nitems = {q1 = "France", q2 = "Peru"}\nlabels = {q1 = "Paris", q2 = "Lima"}\n'


# -- C: every warning on stderr ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "warning"),
    [
        (  # refnolabel.toml: no item has a label
            'runs = 5\n[reference]\nitems = {q1 = "France"}\n[client]\nkind = "mock"\necho = true\n'
            '[[arms]]\nkind = "prompt"\nname = "echo"\ntemplate = "{item}"\n[governor]\nmax_calls = 100\n',
            "NoLabelsWarning",
        ),
        (  # one run per item
            "runs = 1\n"
            + REF2
            + '[[arms]]\nkind = "outputs"\nname = "o"\noutputs = {q1 = "Paris", q2 = "Lima"}\n',
            "FewRunsWarning",
        ),
    ],
)
def test_every_warning_of_a_benchmark_is_printed_on_stderr_once(
    tmp_path: Path, body: str, warning: str
) -> None:
    proc = hrb("bench", str(_spec(tmp_path, body)))
    assert proc.returncode == 0, proc.stderr
    said = [line for line in proc.stderr.splitlines() if line.startswith("hrb: warning: ")]
    assert [w for w in said if warning in w] and len(said) == len(set(said)), proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    for w in result["warnings"]:  # each warning of the result line, once, on stderr
        assert proc.stderr.count(w) == 1, (w, proc.stderr)


# -- A: outputs that do not cover the reference, through the daemon -----------------------------


@pytest.mark.usefixtures("shared_home")  # a refusal: the module's daemon answers it
@pytest.mark.parametrize(
    ("arm", "field", "said"),
    [
        (
            'outputs = {q1 = ["Paris", "Paris"], q2 = "Lima"}',
            "arms[0].outputs",
            "fewer outputs than the 5 run(s): 'q1'",
        ),
        ('outputs = {q1 = "Paris"}', "arms[0].outputs", "1 of 2 item(s) run have no output: 'q2'"),
        (
            'outputs = {q1 = "Paris", q2 = "Lima", q3 = "x"}',
            "arms[0].outputs",
            "1 of 3 output id(s) match no item",
        ),
        (
            'path = "p.jsonl"\nid_field = "id"',
            "arms[0].path",
            "arm 'o', p.jsonl: 1 of 2 item(s) run have no output",
        ),
        (
            'path = "o.jsonl"',
            "arms[0].path",
            "arm 'o', o.jsonl: 1 item(s) have fewer outputs than the 5 run(s)",
        ),
    ],
)
def test_outputs_that_do_not_give_every_run_an_output_exit_2(
    tmp_path: Path, arm: str, field: str, said: str
) -> None:
    (tmp_path / "p.jsonl").write_text(
        '{"id": "q1", "prediction": "Paris"}\n{"id": "zz", "prediction": "x"}\n'
    )
    (tmp_path / "o.jsonl").write_text(
        '{"item": "q1", "run": 1, "output": "Paris"}\n{"item": "q2", "output": "Lima"}\n'
    )
    proc = hrb(
        "bench",
        str(_spec(tmp_path, "runs = 5\n" + REF2 + f'[[arms]]\nkind = "outputs"\nname = "o"\n{arm}\n')),
    )
    assert proc.returncode == 2, proc.stderr
    assert f"{field}: " in proc.stderr and said in proc.stderr, proc.stderr
    assert proc.stdout == ""


@pytest.mark.usefixtures("shared_home")  # a refusal: the module's daemon answers it
def test_an_outputs_file_of_another_sample_is_refused(data: Path, tmp_path: Path) -> None:
    """bad/outs3.toml: course_sample_50 against the baseline_raw_50 ids gave 49 silent parse failures."""
    runs = data / "squad2-dev-llama32-3b" / "runs"
    body = (
        f'runs = 1\nscorer = "answer_contains"\n[reference]\npath = "{data}/squad2-dev-llama32-3b/questions.jsonl"\n'
        f'format = "squad"\nids_from = "{runs}/baseline_raw_50.jsonl"\nid_field = "qid"\n'
        f'[[arms]]\nkind = "outputs"\nname = "base"\npath = "{runs}/course_sample_50.jsonl"\nid_field = "qid"\n'
    )
    proc = hrb("bench", str(_spec(tmp_path, body)))
    assert proc.returncode == 2, proc.stderr
    assert (
        "arms[0].path: arm 'base', course_sample_50.jsonl: 49 of 50 item(s) run have no output" in proc.stderr
    )


# -- D: a misspelt recording ----------------------------------------------------------------------


@pytest.mark.usefixtures("shared_home")  # the only recording the module's daemon has is this test's
def test_a_replay_of_a_recording_that_does_not_exist_is_refused_with_the_closest_names(
    tmp_path: Path,
) -> None:
    record = _spec(
        tmp_path,
        'name = "rec"\nruns = 5\nrecord = "squad-rec"\n' + REF2 + '[client]\nkind = "mock"\necho = true\n'
        '[[arms]]\nkind = "prompt"\nname = "p"\ntemplate = "{item}"\n[governor]\nmax_calls = 100\n',
        "rec.toml",
    )
    assert hrb("bench", str(record)).returncode == 0
    replay = _spec(
        tmp_path,
        "runs = 5\n" + REF2 + '[client]\nkind = "replay"\nrecording = "squad-rec-2"\n'
        '[[arms]]\nkind = "prompt"\nname = "p"\ntemplate = "{item}"\n',
    )
    proc = hrb("bench", str(replay))
    assert proc.returncode == 2, proc.stderr
    assert "client.recording: no recording has this name; did you mean 'squad-rec'?" in proc.stderr
    assert "'squad-rec-2'" in proc.stderr and proc.stdout == ""
    ok = hrb("bench", str(_spec(tmp_path, replay.read_text().replace("squad-rec-2", "squad-rec"))))
    assert ok.returncode == 0, ok.stderr  # the right name replays


# -- E: a relative HRBENCH_DATA is the shell's ---------------------------------------------------


def test_the_command_in_the_shared_specs_header_runs_as_written(data: Path, tmp_path: Path) -> None:
    """`cd hrbench && HRBENCH_DATA=../shared/data hrb bench examples/squad2-shared-50.toml`."""
    repo = tmp_path / "hrbench"
    (repo / "examples").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "squad2-shared-50.toml", repo / "examples")
    assert (
        "HRBENCH_DATA=../shared/data hrb bench examples/squad2-shared-50.toml"
        in (repo / "examples" / "squad2-shared-50.toml").read_text()
    )
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(data)
    proc = hrb("bench", "examples/squad2-shared-50.toml", cwd=repo, env={"HRBENCH_DATA": "../shared/data"})
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["n_rows"] == 4 * 50
    # a path written in the spec stays relative to the spec's folder
    (repo / "examples" / "mine.jsonl").write_text('{"id": "q1", "item": "France", "label": "Paris"}\n')
    own = _spec(
        repo / "examples",
        'runs = 5\n[reference]\npath = "mine.jsonl"\n[[arms]]\nkind = "outputs"\nname = "o"\noutputs = {q1 = "Paris"}\n',
    )
    assert hrb("bench", str(own.relative_to(repo)), cwd=repo).returncode == 0


# -- F, G: the file's real line and the full field path ------------------------------------------


@pytest.mark.usefixtures("shared_home")  # a refusal: the module's daemon answers it
@pytest.mark.parametrize("bad_line", [2, 3, 5])
def test_a_bad_json_lines_reference_names_the_file_and_its_real_line(tmp_path: Path, bad_line: int) -> None:
    lines = [json.dumps({"id": f"q{i}", "item": "x", "label": "y"}) for i in range(1, 6)]
    lines[bad_line - 1] = lines[bad_line - 1][:-5]  # truncated
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n")
    body = '[reference]\npath = "r.jsonl"\n[[arms]]\nkind = "outputs"\nname = "o"\noutputs = {q1 = "y"}\n'
    proc = hrb("bench", str(_spec(tmp_path, body)))
    assert proc.returncode == 2
    assert f"reference.path: r.jsonl line {bad_line} is not JSON" in proc.stderr, proc.stderr


@pytest.mark.usefixtures("shared_home")  # a refusal: the module's daemon answers it
@pytest.mark.parametrize(
    ("arms", "field"),
    [
        ('[[arms]]\nkind = "import"\npath = "no_such_module_q:fn"\n', "arms[0].path: cannot import module"),
        (
            '[[arms]]\nkind = "outputs"\nname = "a"\noutputs = {q1 = "P", q2 = "L"}\n'
            '[[arms]]\nkind = "import"\npath = "json:no_such_attr"\n',
            "arms[1].path: module 'json' has no attribute",
        ),
        (
            '[[arms]]\nkind = "outputs"\nname = "o"\npath = "p.jsonl"\nprediction_field = "predicton"\n',
            "arms[0].prediction_field: ",
        ),
    ],
)
def test_spec_errors_name_the_full_dotted_path(tmp_path: Path, arms: str, field: str) -> None:
    (tmp_path / "p.jsonl").write_text('{"id": "q1", "prediction": "Paris"}\n')
    proc = hrb("bench", str(_spec(tmp_path, "runs = 5\n" + REF2 + arms)))
    assert proc.returncode == 2 and field in proc.stderr, proc.stderr


@pytest.mark.usefixtures("shared_home")  # a refusal: the module's daemon answers it
def test_a_squad_file_read_as_tatqa_names_reference_path(data: Path, tmp_path: Path) -> None:
    body = (
        f'[reference]\npath = "{data}/squad2-dev-llama32-3b/questions.jsonl"\nformat = "tatqa"\n'
        '[[arms]]\nkind = "outputs"\nname = "o"\noutputs = {q1 = "P"}\n'
    )
    proc = hrb("bench", str(_spec(tmp_path, body)))
    assert proc.returncode == 2 and "hrb: ConfigError: reference.path: " in proc.stderr, proc.stderr


# -- H: a bad environment value at daemon start ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("HRBENCH_MAX_CALLS", "abc", "HRBENCH_MAX_CALLS: expected a number (got 'abc')"),
        ("HRBENCH_MAX_USD", "five", "HRBENCH_MAX_USD: expected a number (got 'five')"),
        ("HRBENCH_PRICES", "{tmp}/nope.json", "HRBENCH_PRICES: cannot read the price table"),
        ("HRBENCH_PRICES", "{tmp}/bad.json", "HRBENCH_PRICES={tmp}/bad.json: prices.m: expected input"),
        # every cancel and the daemon's stop read it (a bad one would leave a Ctrl-C undone)
        (
            "HRBENCH_CANCEL_GRACE_S",
            "soon",
            "HRBENCH_CANCEL_GRACE_S: expected a number of seconds >= 0 (got 'soon')",
        ),
        (
            "HRBENCH_CANCEL_GRACE_S",
            "-1",
            "HRBENCH_CANCEL_GRACE_S: expected a number of seconds >= 0 (got '-1')",
        ),
    ],
)
def test_a_bad_environment_value_is_refused_at_daemon_start(
    tmp_path: Path, name: str, value: str, said: str
) -> None:
    (tmp_path / "bad.json").write_text('{"models": {"m": {"input": "a"}}}')
    value, said = value.format(tmp=tmp_path), said.format(tmp=tmp_path)
    proc = hrb("daemon", "start", env={name: value})
    assert proc.returncode == 2, proc.stderr
    assert said in proc.stderr, proc.stderr
    assert hrb("daemon", "status").returncode == 1  # nothing left running
    good = hrb("daemon", "start")  # without it, the daemon starts
    assert good.returncode == 0, good.stderr


# -- H: a silent wait says so ---------------------------------------------------------------------


def test_a_benchmark_with_no_row_for_a_while_prints_a_plain_waiting_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An endpoint that never answers does not leave `hrb bench` silent for minutes."""
    import time

    from hrbench_client.cli.progress import _Progress, _Waiting

    progress = _Progress("bench")
    progress.on = False  # not a terminal: the line is printed all the same
    with _Waiting(progress, every=0.2) as waiting:
        deadline = time.monotonic() + slow(60)
        while "hrb: waiting: no row for" not in capsys.readouterr().err:  # noqa: ASYNC110
            assert time.monotonic() < deadline, "no waiting line within 60 s"
            time.sleep(0.05)
        waiting.row()
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b" not in err  # plain lines, no terminal control


def test_report_text_says_none_for_an_arm_without_failures(tmp_path: Path) -> None:
    """`failures by kind: ... careful: ` ended with nothing after the arm's name."""
    body = (
        "runs = 5\n"
        + REF2
        + '[[arms]]\nkind = "outputs"\nname = "plain"\noutputs = {q1 = "Paris", q2 = "Lyon"}\n'
        '[[arms]]\nkind = "outputs"\nname = "careful"\noutputs = {q1 = "Paris", q2 = "Lima"}\n'
    )
    proc = hrb("bench", str(_spec(tmp_path, body)))
    assert proc.returncode == 0, proc.stderr
    bench_id = json.loads(proc.stdout.splitlines()[-1])["id"]
    text = hrb("report", bench_id, "--text", "--descriptive").stdout
    (line,) = [x for x in text.splitlines() if "failures by kind" in x]
    assert line.strip() == "failures by kind: plain: wrong 5; careful: none", text
