"""`hrb` on references, the cache and odd outputs.

One daemon for the module (its own home), started by the module's fixture: one a test's first
command started would be the test's, stopped when that test ends (``tests/_procs.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.clients.test_cli import hrb, lines

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    h = tmp_path_factory.mktemp("cli-draws") / "home"
    try:
        hrb("daemon", "start", "--home", str(h))
        yield h
    finally:
        hrb("daemon", "stop", "--home", str(h), check_rc=None)


def _in(home: Path, *args: str, check_rc: int | None = 0) -> tuple[str, str]:
    proc = hrb(*args, "--home", str(home), check_rc=check_rc)
    return proc.stdout, proc.stderr


def _ref(path: Path, labels: tuple[str, str]) -> Path:
    path.write_text(
        "".join(
            json.dumps({"id": i, "item": c, "label": lab}) + "\n"
            for i, c, lab in zip(("q1", "q2"), ("France", "Peru"), labels, strict=True)
        )
    )
    return path


def test_ref_put_says_when_it_rebinds_a_name_and_a_bench_says_which_content_it_used(
    home: Path, tmp_path: Path
) -> None:
    """`hrb ref put caps` on a taken name says it now points at other content, never silently: a rerun scores other labels."""
    a, b = _ref(tmp_path / "a.jsonl", ("Paris", "Lima")), _ref(tmp_path / "b.jsonl", ("Paris", "Cusco"))
    out, err = _in(home, "ref", "put", "caps", str(a))
    first = json.loads(out)
    assert first["replaced"] is None and "now points at" not in err
    out, err = _in(home, "ref", "put", "caps", str(a))  # the same content again: nothing to say
    assert json.loads(out)["replaced"] is None and err == ""
    spec = tmp_path / "rb.toml"
    spec.write_text(
        'runs = 5\nreference = "caps"\n[[arms]]\nkind = "outputs"\nname = "fixed"\n'
        'outputs = { q1 = "Paris", q2 = "Lima" }\n[governor]\n'
    )
    out, err = _in(home, "bench", str(spec))
    assert lines(out)[-1]["summary"][0]["accuracy"] == 1.0 and "ReferenceRebound" not in err
    out, err = _in(home, "ref", "put", "caps", str(b))
    second = json.loads(out)
    assert second["replaced"] == first["hash"]
    assert f"reference 'caps' now points at {second['hash'][:12]} (was {first['hash'][:12]})" in err
    out, err = _in(home, "bench", str(spec))
    result = lines(out)[-1]
    assert result["reference_hash"] == second["hash"] and result["summary"][0]["accuracy"] == 0.5
    assert (
        f"hrb: warning: ReferenceReboundWarning: reference 'caps' resolves to {second['hash'][:12]} now, "
        f"but the previous benchmark named 'rb'"
    ) in err
    assert f"used {first['hash'][:12]}" in err
    out, err = _in(home, "bench", str(spec))  # the same content as the last one: nothing to say
    assert "ReferenceRebound" not in err


def _cached_bench(home: Path, tmp_path: Path, name: str, reply: str) -> dict:
    """A mock-client prompt benchmark over two items; its replies are cached."""
    spec = tmp_path / f"{name}.toml"
    spec.write_text(
        f'runs = 5\nname = "{name}"\n[reference]\nitems = {{ q1 = "{name}-a", q2 = "{name}-b" }}\n'
        f'labels = ["{reply}", "{reply}"]\n[client]\nkind = "mock"\nreply = "{reply}"\nmodel = "{name}-model"\n'
        f'[[arms]]\nkind = "prompt"\nname = "ask-{name}"\ntemplate = "say {{item}}"\n[governor]\n'
    )
    return lines(_in(home, "bench", str(spec))[0])[-1]


def test_cache_clear_deletes_all_or_by_model_arm_and_age(home: Path, tmp_path: Path) -> None:
    """Fresh draws need neither `cache = false` nor `hrb gc` (which deletes benchmarks): `hrb cache clear`."""
    _in(home, "cache", "clear")
    _cached_bench(home, tmp_path, "one", "x")
    _cached_bench(home, tmp_path, "two", "y")
    stats = json.loads(_in(home, "cache", "stats")[0])
    assert stats["entries"] == 20
    assert json.loads(_in(home, "cache", "clear", "--older-than", "1d")[0]) == {"deleted": 0}
    assert json.loads(_in(home, "cache", "clear", "--model", "one-model")[0]) == {"deleted": 10}
    assert json.loads(_in(home, "cache", "clear", "--arm", "ask-one")[0]) == {"deleted": 0}
    assert json.loads(_in(home, "cache", "clear", "--arm", "ask-two", "--model", "one-model")[0]) == {
        "deleted": 0
    }
    assert json.loads(_in(home, "cache", "clear")[0]) == {"deleted": 10}
    assert json.loads(_in(home, "cache", "stats")[0])["entries"] == 0
    assert any(b["name"] == "one" for b in lines(_in(home, "ls")[0]))  # benchmarks are kept
    _, err = _in(home, "cache", "stats", "--model", "m", check_rc=2)
    assert "choose what `hrb cache clear` deletes" in err
    _, err = _in(home, "cache", "clear", "--older-than", "soon", check_rc=2)
    assert "--older-than: expected an age" in err


@pytest.mark.parametrize("every", [10.0, 3.0])
def test_the_waiting_line_shows_the_time_since_the_last_row(every: float) -> None:
    """The line says the time since the last row, not `no row for 10 s` every time."""
    from hrbench_client.cli.progress import _Progress, _Waiting

    w = _Waiting(_Progress("bench"), every=every)
    w.row(now=100.0)
    said = [(t, w.line_at(100.0 + t)) for t in [x / 2 for x in range(0, int(every * 8) + 1)]]
    printed = [(t, line) for t, line in said if line is not None]
    assert [t for t, _ in printed] == [every * k for k in range(1, 5)]  # one line per `every` seconds
    assert [line.split(" s (")[0] for _, line in printed] == [
        f"hrb: waiting: no row for {every * k:.0f}" for k in range(1, 5)
    ]
    w.row(now=100.0 + every * 4.5)  # a row came: the count starts again
    assert w.line_at(100.0 + every * 5) is None
    line = w.line_at(100.0 + every * 5.5)
    assert line is not None and line.startswith(f"hrb: waiting: no row for {every:.0f} s")


@pytest.mark.parametrize("value", ["-22.22%", "-5", "-1,234.5", "-.5", "-0.5%", "-1e-3", "-3_000"])
def test_score_takes_a_negative_number_or_percent_without_dashes(value: str) -> None:
    """`hrb score -22.22%` needs no `--` before the output."""
    from hrbench_client.cli.parser import _parser

    args = _parser().parse_args(["score", value, "--label", value])
    assert (args.output, args.label) == (value, [value])
    args = _parser().parse_args(["score", "--label", value, value, "--check"])
    assert (args.output, args.label, args.check) == (value, [value], True)


@pytest.mark.parametrize("value", ["-abc", "-x1"])
def test_an_output_starting_with_dash_that_is_no_number_is_told_to_use_double_dash(value: str) -> None:
    proc = hrb("score", value, "--no-autostart", check_rc=2)
    assert "goes after `--`: hrb score -- -x" in proc.stderr


def test_score_a_negative_percent_end_to_end(home: Path) -> None:
    out, _ = _in(home, "score", "--scorer", "numeric", "--label", "-22.22%", "-22.22%", "--check")
    assert json.loads(out)["correct"] is True
