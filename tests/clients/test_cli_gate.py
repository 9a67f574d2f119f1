"""`hrb gate`: a planted regression fails (exit 1), noise passes (exit 0), no comparison is exit 3,
through a real daemon with loopback providers; the Markdown and JUnit files it writes on every exit
(bad input and a missing daemon included), read back by junitparser and rendered by markdown-it-py."""

from __future__ import annotations

import json
import random
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from junitparser import Error, Failure, JUnitXml, TestCase
from markdown_it import MarkdownIt
from markdown_it.token import Token

from hrbench.testing import LoopbackServer
from hrbench_client.cli.gate import gate_junit, gate_markdown
from tests.clients.test_cli import ON_SHARED, _stop_daemon, hrb, lines  # noqa: F401

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
    bench(tmp_path, "one", wrong=[], items=range(10, 12), runs=1)  # its 2 items in one cluster
    xml = tmp_path / "gate.xml"
    proc = hrb("gate", "one", "--baseline", "high", "--junit", str(xml), check_rc=3)
    assert "cannot compare: " in proc.stderr and "one cluster" in proc.stderr
    assert ET.parse(xml).getroot().find("./testsuite/testcase/error") is not None
    assert "no stored benchmark" in hrb("gate", "high", "--baseline", "nothing-such", check_rc=2).stderr
    miss = hrb("gate", "high", "--baseline", "low", "--arm", "other", check_rc=3)
    assert "arm 'other' is not in the candidate (its arms: ask)" in miss.stderr
    # no item in common: a baseline of another reference is bad input, never a comparison that failed
    other = hrb("gate", "high", "--baseline", "low", "--junit", str(xml), check_rc=2)
    assert (
        "baseline: holds 0 of the 6 items the candidate" in other.stderr
        and "another reference" in other.stderr
    )


# --- the reports on every exit, names kept whole (shared cases H4-07, H4-08, H4-10, H4-11) ---

CI_BASELINE = Path(__file__).resolve().parents[2] / "examples" / "ci" / "baseline.jsonl"
"""12 items x 5 runs in 5 clusters; the model misses one item (td) on every run."""

ODD_NAME = 'a<b&"c" | d]]>'
"""An arm name with XML's special characters and a table cell's '|' (a promptfoo arm is 'PROVIDER | PROMPT')."""


def ci_candidate(tmp_path: Path, wrong: Iterable[str], arm: str | None = None, name: str = "cand") -> Path:
    """The CI baseline's rows with the items ``wrong`` wrong on every run (and the arm renamed)."""
    bad, out = set(wrong), []
    for line in CI_BASELINE.read_text().splitlines():
        row = json.loads(line)
        if row["item"] in bad:
            row.update(correct=False, outcome="i do not know", failure_kind="wrong")
        out.append({**row, "arm": arm or row["arm"]})
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    return path


def junit(path: Path) -> tuple[tuple[int, int, int], TestCase]:
    """``(tests, failures, errors)`` of a JUnit file as junitparser reads it, and its one test case."""
    xml = JUnitXml.fromfile(str(path))
    ((case,),) = [list(suite) for suite in xml]
    return (xml.tests, xml.failures, xml.errors), case


def _parse(markdown: str) -> list[Token]:
    return MarkdownIt("commonmark").enable("table").parse(markdown)  # GitHub's flavour: GFM tables, HTML


def _shown(tok: Token) -> str:
    """An inline token's text as a reader sees it: code and text as they are, ``<br>`` a line break."""
    return "".join(
        "\n" if c.type in ("softbreak", "hardbreak") or (c.type == "html_inline" and c.content == "<br>")
        else c.content
        for c in tok.children or []
    )  # fmt: skip


def table(markdown: str) -> dict[str, str]:
    """A rendered summary's table (markdown-it-py, GFM tables): each row's first cell -> its second, as shown."""
    cells: list[str] = []
    rows: dict[str, str] = {}
    for tok in _parse(markdown):
        if tok.type == "tr_open":
            cells = []
        elif tok.type == "inline":
            cells.append(_shown(tok))
        elif tok.type == "tr_close":
            assert len(cells) == 2, cells  # a '|' that was not escaped makes a third cell
            rows[cells[0]] = cells[1]
    return rows


def paragraphs(markdown: str) -> list[str]:
    """A rendered summary's paragraphs, as shown."""
    toks = _parse(markdown)
    return [_shown(toks[i + 1]) for i, t in enumerate(toks) if t.type == "paragraph_open"]


@ON_SHARED
def test_H4_07_a_drop_twelve_items_cannot_tell_from_noise_passes(tmp_path: Path) -> None:
    """H4-07: one item of 12 wrong on every run (-0.083) passes at max_drop 0.02, alpha 0.05."""
    cand, xml, md = ci_candidate(tmp_path, {"pe"}), tmp_path / "gate.xml", tmp_path / "gate.md"
    proc = hrb(
        "gate", str(cand), "--baseline", str(CI_BASELINE), "--max-drop", "0.02", "--alpha", "0.05",
        "--junit", str(xml), "--markdown", str(md), check_rc=0,
    )  # fmt: skip
    assert "candidate - baseline = -0.083, 90% interval [-0.422, +0.244] on 12 items (arm ask)" in proc.stdout
    counts, case = junit(xml)
    assert counts == (1, 0, 0) and case.is_passed
    assert table(md.read_text())["90% interval"] == "[-0.422, +0.244]"


@ON_SHARED
def test_H4_08_a_drop_shown_fails_with_one_junit_failure_and_names_escaped(tmp_path: Path) -> None:
    """H4-08: 8 of 12 items wrong on every run (-0.667) is exit 1 and one JUnit failure; XML names escaped."""
    wrong = {"fr", "pe", "fj", "jp", "ca", "ke", "no", "cl"}
    arm = ODD_NAME + "\x1b[0m"  # and a control character, which XML 1.0 cannot hold as it is
    cand = ci_candidate(tmp_path, wrong, arm=arm, name="cand <&>")
    base = ci_candidate(tmp_path, set(), arm=arm, name="base")
    xml = tmp_path / "gate.xml"
    proc = hrb("gate", str(cand), "--baseline", str(base), "--junit", str(xml), check_rc=1)
    assert proc.stdout.startswith("gate FAIL: candidate - baseline = -0.667, 90% interval [-0.900, -0.148]")
    counts, case = junit(xml)
    assert counts == (1, 1, 0) and not case.is_passed
    assert case.name == f"{cand} vs {base} (arm {ODD_NAME}\\x1b[0m)"
    (failure,) = case.result
    assert isinstance(failure, Failure) and failure.message.startswith(
        "candidate is worse by more than 0.020"
    )


BAD_BASELINES: dict[str, tuple[str, bytes]] = {
    "random bytes": ("jsonl", bytes(random.Random(44).randrange(256) for _ in range(4096))),
    "a text file named .parquet": ("parquet", b"cluster,item,arm,run,correct\neurope,fr,ask,1,True\n"),
    "an empty file": ("jsonl", b""),
    "a JSON array of non-rows": ("jsonl", b'[1, "two", {"three": 3}]\n'),
    "a CSV missing columns": ("csv", b"item,arm\nfr,ask\npe,ask\n"),
}


@ON_SHARED
@pytest.mark.parametrize("case", list(BAD_BASELINES))
def test_H4_10_bad_input_is_exit_2_with_both_reports_naming_the_file(tmp_path: Path, case: str) -> None:
    """H4-10: a baseline that is not a rows file is exit 2, and --junit and --markdown are still written.

    The daemon reads the file: whatever it holds, the reason names the file (never an internal error).
    """
    suffix, data = BAD_BASELINES[case]
    bad = tmp_path / f"bad.{suffix}"
    bad.write_bytes(data)
    xml, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    proc = hrb(
        "gate",
        str(CI_BASELINE),
        "--baseline",
        str(bad),
        "--junit",
        str(xml),
        "--markdown",
        str(md),
        check_rc=2,
    )
    assert proc.stderr.startswith("hrb: ConfigError: baseline: ") and f"(got {str(bad)!r})" in proc.stderr
    assert "internal" not in proc.stderr.lower()
    counts, tc = junit(xml)
    assert counts == (1, 0, 1)
    (error,) = tc.result
    assert isinstance(error, Error) and error.type == "ConfigError" and str(bad) in error.message
    text = md.read_text()
    assert text.startswith("## hrbench gate: BAD INPUT\n") and table(text)["baseline"] == str(bad)


@ON_SHARED
@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["--baseline", "no-such-benchmark"], "NotFound: baseline: no file and no stored benchmark"),
        (
            ["--baseline", str(CI_BASELINE), "--max-drop", "5"],
            "argument --max-drop: expected a number from 0 to 1",
        ),
        (
            ["--baseline", str(CI_BASELINE), "--max-drop", "1"],
            "invalid: --max-drop 1: must be below 1",
        ),
        (["--baseline", str(CI_BASELINE), "--bogus"], "unrecognized arguments: --bogus"),
        ([], "the following arguments are required: --baseline"),
    ],
)
def test_every_kind_of_bad_input_writes_an_errored_report(tmp_path: Path, args: list[str], why: str) -> None:
    xml, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    proc = hrb("gate", str(CI_BASELINE), *args, "--junit", str(xml), "--markdown", str(md), check_rc=2)
    assert why in proc.stderr
    counts, case = junit(xml)
    (error,) = case.result
    assert counts == (1, 0, 1) and why in error.message and case.name.startswith(str(CI_BASELINE))
    assert md.read_text().startswith("## hrbench gate: BAD INPUT\n")
    # as rendered: '<' escaped, the names the message quotes between backticks shown as code
    assert why.replace("`", "") in paragraphs(md.read_text())[0]


def test_no_daemon_is_exit_3_with_an_errored_report(tmp_path: Path) -> None:
    xml, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    proc = hrb(
        "gate",
        "new",
        "--baseline",
        "old",
        "--no-autostart",
        "--junit",
        str(xml),
        "--markdown",
        str(md),
        check_rc=3,
    )
    assert "DaemonError: no hrbench daemon is running" in proc.stderr
    counts, case = junit(xml)
    (error,) = case.result
    assert counts == (1, 0, 1) and error.type == "DaemonError" and case.name == "new vs old"
    assert md.read_text().startswith(
        "## hrbench gate: ERROR\n\nExit 3 (error): DaemonError: no hrbench daemon"
    )


@ON_SHARED
def test_H4_11_a_markdown_cell_keeps_a_name_with_a_pipe_whole(tmp_path: Path) -> None:
    """H4-11: the arm 'a<b&"c" | d]]>' is shown whole in the rendered candidate cell (GFM tables)."""
    cand = ci_candidate(tmp_path, {"pe"}, arm=ODD_NAME, name="cand")
    base = ci_candidate(tmp_path, set(), arm=ODD_NAME, name="base")
    md = tmp_path / "gate.md"
    hrb("gate", str(cand), "--baseline", str(base), "--markdown", str(md), check_rc=0)
    cells = table(md.read_text())
    assert "d]]>" in cells["candidate"]
    assert cells["candidate"] == f"{cand} (arm {ODD_NAME})"
    assert cells["difference (candidate - baseline)"] == "-0.083"


@pytest.mark.parametrize(
    "name",
    [
        ODD_NAME,
        "x`y``z",
        "`q`",
        " padded ",
        "two\nlines",
        "a\\|b",
        "ends\\",
        "*not* _emphasis_ [link](x) $x$",
        "|",
    ],
)
def test_any_name_stays_whole_in_the_rendered_markdown_and_the_junit_file(tmp_path: Path, name: str) -> None:
    from hrbench_client.protocol import GateResult

    r = GateResult(
        decision="fail", reason=f"arm {name!r} is worse", candidate=f"c {name}", baseline=name, arm_candidate=name,
        arm_baseline=name + "2", diff=-0.2, ci_low=-0.3, ci_high=-0.1, confidence=0.95, max_drop=0.02, alpha=0.05,
    )  # fmt: skip
    cells = table(gate_markdown(r))
    assert cells["candidate"] == f"c {name} (arms {name} vs {name}2)"
    assert cells["baseline"] == name
    assert paragraphs(gate_markdown(r)) == [f"arm {name!r} is worse"]
    path = tmp_path / "gate.xml"
    path.write_bytes(gate_junit(r))
    _, case = junit(path)
    assert case.name == f"c {name} vs {name} (arms {name} vs {name}2)"


@ON_SHARED
def test_a_report_that_cannot_be_written_is_exit_2_and_the_other_report_says_so(tmp_path: Path) -> None:
    md, xml = tmp_path / "gate.md", tmp_path / "no-such-folder" / "gate.xml"
    args = ["--baseline", str(CI_BASELINE), "--junit", str(xml), "--markdown", str(md)]
    proc = hrb("gate", str(CI_BASELINE), *args, check_rc=2)
    assert proc.stderr == f"hrb: --junit {xml}: cannot write the file: No such file or directory\n"
    assert paragraphs(md.read_text()) == [
        f"Exit 2 (bad input): --junit {xml}: cannot write the file: No such file or directory"
    ]


@ON_SHARED
def test_several_arms_and_no_arm_named_is_bad_input_exit_2(tmp_path: Path) -> None:
    both = tmp_path / "two.jsonl"
    both.write_text(
        ci_candidate(tmp_path, [], arm="x", name="x").read_text()
        + ci_candidate(tmp_path, [], arm="y", name="y").read_text()
    )
    xml, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    proc = hrb(
        "gate", str(both), "--baseline", str(both), "--junit", str(xml), "--markdown", str(md), check_rc=2
    )
    assert "several arms (candidate: x, y; baseline: x, y)" in proc.stderr and "`--arm`" in proc.stderr
    assert md.read_text().startswith("## hrbench gate: BAD INPUT\n")
    assert hrb("gate", str(both), "--baseline", str(both), "--arm", "y", check_rc=0).returncode == 0


@ON_SHARED
def test_a_command_the_reason_quotes_is_a_code_span_in_the_markdown(tmp_path: Path) -> None:
    """The bad-input summary shows `hrb rows ID -o FILE` as code, not as escaped backticks."""
    bad, md = tmp_path / "empty.jsonl", tmp_path / "gate.md"
    bad.write_bytes(b"")
    hrb("gate", str(CI_BASELINE), "--baseline", str(bad), "--markdown", str(md), check_rc=2)
    text = md.read_text()
    said = "Exit 2 (bad input): ConfigError: baseline: is empty (0 bytes); a rows file is what {} writes (got {})"
    # as written: the command a code span, the path's '_' escaped; as rendered: the text as the terminal shows it
    assert text.splitlines()[2] == said.format("`hrb rows ID -o FILE`", repr(str(bad)).replace("_", "\\_"))
    assert paragraphs(text)[0] == said.format("hrb rows ID -o FILE", repr(str(bad)))
    inline = next(t for t in _parse(text) if t.type == "inline" and "Exit 2" in t.content)
    assert [c.content for c in inline.children or [] if c.type == "code_inline"] == ["hrb rows ID -o FILE"]


def ci_rows(tmp_path: Path, items: set[str], name: str) -> Path:
    """The CI baseline's rows of the items ``items`` only."""
    path = tmp_path / f"{name}.jsonl"
    kept = [line for line in CI_BASELINE.read_text().splitlines() if json.loads(line)["item"] in items]
    path.write_text("".join(line + "\n" for line in kept))
    return path


@ON_SHARED
def test_a_baseline_of_part_of_the_candidates_items_is_said_on_every_report_or_refused(
    tmp_path: Path,
) -> None:
    """The CI rows (12 items) held to a baseline of 8 of them: every report says 8 of 12; of 5: exit 2."""
    cand = ci_candidate(tmp_path, {"pe"})
    part = ci_rows(tmp_path, {"fr", "pe", "td", "fj", "jp", "ca", "ke", "no"}, "part")
    xml, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    args = ("gate", str(cand), "--baseline", str(part), "--junit", str(xml), "--markdown", str(md))
    line = hrb(*args, check_rc=0).stdout
    assert " on 8 of the candidate's 12 items (arm ask); 4 of them are not in the baseline; no drop" in line
    shown = table(md.read_text())
    assert (
        shown["items both ran (clusters)"] == "8 of the candidate's 12 (5); 4 of them are not in the baseline"
    )
    assert (
        "decided on 8 of the candidate's 12 items; 4 of them are not in the baseline"
        in paragraphs(md.read_text())[0]
    )
    assert "on 8 of the candidate's 12 items" in junit(xml)[1].system_out
    (res,) = lines(hrb(*args, "--json", check_rc=0).stdout)
    assert (res["n_items"], res["n_items_candidate"], res["n_items_not_in_baseline"]) == (8, 12, 4)
    assert res["coverage"] == "4 of them are not in the baseline"

    few = ci_rows(tmp_path, {"fr", "pe", "td", "fj", "jp"}, "few")
    proc = hrb(
        "gate", str(cand), "--baseline", str(few), "--junit", str(xml), "--markdown", str(md), check_rc=2
    )
    why = f"baseline: holds 5 of the 12 items the candidate {str(cand)!r} ran (arm 'ask'); 7 are not in it"
    assert proc.stderr.startswith(f"hrb: ConfigError: {why}") and f"(got {str(few)!r})" in proc.stderr
    assert "another reference" in proc.stderr
    counts, case = junit(xml)
    (error,) = case.result
    assert counts == (1, 0, 1) and isinstance(error, Error) and why in error.message
    assert md.read_text().startswith("## hrbench gate: BAD INPUT\n") and why in paragraphs(md.read_text())[0]
