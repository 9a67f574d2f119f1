"""`hrb gate`: a planted regression fails (exit 1), noise passes (exit 0), no comparison is exit 3,
through a real daemon with loopback providers; the Markdown and JUnit files it writes."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from xml.etree import ElementTree as ET

from hrbench.testing.loopback import LoopbackServer
from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401

N_ITEMS = 40


def answers(wrong: Iterable[int]) -> Callable[[str, object, int], str]:
    """A loopback reply: "yes" (the label) on every item ``q<i>`` but those in ``wrong``."""
    bad = {f"q{i}" for i in wrong}
    return lambda prompt, seed, call: "no" if prompt.strip() in bad else "yes"


def spec(tmp_path: Path, name: str, base_url: str, items: range = range(N_ITEMS), runs: int = 3) -> Path:
    """A benchmark file: items ``q<i>`` labelled "yes", in clusters of two, one arm on ``base_url``."""
    ids = [f"q{i}" for i in items]
    path = tmp_path / f"{name}.toml"
    path.write_text(
        textwrap.dedent(f"""\
        name = "{name}"
        runs = {runs}
        concurrency = 4
        [reference]
        labels = {json.dumps(["yes"] * len(ids))}
        cluster = {json.dumps([f"c{i // 2}" for i in items])}
        [reference.items]
        {"".join(f'{q} = "{q}"' + chr(10) + "        " for q in ids)}
        [client]
        kind = "openai"
        model = "loopback-1"
        base_url = "{base_url}"
        max_attempts = 1
        [[arms]]
        kind = "prompt"
        name = "ask"
        template = "{{item}}"
        """)
    )
    return path


def bench(tmp_path: Path, name: str, wrong: Iterable[int], **kw: object) -> str:
    """Run a benchmark named ``name`` whose model is wrong on ``wrong``; its id."""
    with LoopbackServer(reply_fn=answers(wrong)) as srv:
        out = hrb("bench", str(spec(tmp_path, name, srv.base_url, **kw)), "--no-rows").stdout  # type: ignore[arg-type]
    return str(lines(out)[-1]["id"])


def test_a_planted_regression_fails_and_noise_passes(tmp_path: Path) -> None:
    base = bench(tmp_path, "baseline", wrong=[3, 17, 25, 31])
    bench(tmp_path, "noise", wrong=[3, 8, 25, 33, 36])  # one item worse, 0.025 > max-drop: not shown
    bench(tmp_path, "regressed", wrong=range(0, N_ITEMS, 3))  # 14 wrong instead of 4
    md, xml = tmp_path / "gate.md", tmp_path / "gate.xml"

    bad = hrb("gate", "regressed", "--baseline", base, "--markdown", str(md), "--junit", str(xml), check_rc=1)
    line = bad.stdout.strip()
    assert line.startswith("gate FAIL: candidate - baseline = -0.250, 90% interval [")
    assert "on 40 items (arm ask); candidate is worse by more than 0.020" in line
    assert (
        "## hrbench gate: FAIL" in md.read_text()
        and "| accuracy (candidate / baseline) | 0.650 / 0.900 |" in md.read_text()
    )
    root = ET.parse(xml).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("1", "1", "0")
    assert root.find("./testsuite/testcase/failure") is not None

    ok = hrb("gate", "noise", "--baseline", "baseline", "--junit", str(xml), "--json", check_rc=0)
    (res,) = lines(ok.stdout)
    assert res["decision"] == "pass" and res["diff"] == -0.025 and res["n_items"] == 40
    assert res["ci_low"] < -0.025 < res["ci_high"] and res["ci_high"] > -0.02
    assert ET.parse(xml).getroot().get("failures") == "0"

    # the same regression against the baseline exported as a rows file
    rows = tmp_path / "baseline.jsonl"
    hrb("rows", base, "-o", str(rows))
    again = hrb("gate", "regressed", "--baseline", str(rows), "--json", check_rc=1)
    assert lines(again.stdout)[0]["diff"] == -0.25
    # a larger tolerated drop lets the same regression through
    hrb("gate", "regressed", "--baseline", str(rows), "--max-drop", "0.5", check_rc=0)


def test_no_comparison_is_exit_3_with_why_and_bad_input_is_exit_2(tmp_path: Path) -> None:
    bench(tmp_path, "low", wrong=[], items=range(0, 6), runs=1)
    bench(tmp_path, "high", wrong=[], items=range(10, 16), runs=1)
    xml = tmp_path / "gate.xml"
    proc = hrb("gate", "high", "--baseline", "low", "--junit", str(xml), check_rc=3)
    assert "cannot compare: no labelled item was run by both arms" in proc.stderr
    assert ET.parse(xml).getroot().find("./testsuite/testcase/error") is not None
    assert "no stored benchmark" in hrb("gate", "high", "--baseline", "nothing-such", check_rc=2).stderr
    miss = hrb("gate", "high", "--baseline", "low", "--arm", "other", check_rc=3)
    assert "arm 'other' is not in the candidate (its arms: ask)" in miss.stderr
