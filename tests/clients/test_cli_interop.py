"""`hrb export ID --format inspect`, `hrb rows ID --format inspect-scores`, and other tools' results as arms in `hrb bench`.

Through the daemon, as a user runs them. That Inspect itself reads what is written is checked
in ``tests/interop`` (``make test-interop``).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.clients.test_cli import _bench_file, _bench_id, _stop_daemon, hrb, lines  # noqa: F401

DATA = Path(__file__).resolve().parents[1] / "unit" / "reading" / "data"


def test_hrb_export_writes_one_inspect_log_per_arm(tmp_path: Path) -> None:
    bid = _bench_id(_bench_file(tmp_path))
    rows = lines(hrb("rows", bid).stdout)
    out = tmp_path / "logs"
    proc = hrb("export", bid, "--format", "inspect", "-o", str(out), "--name", "letters")
    got = lines(proc.stdout)[0]
    assert got["id"] == bid and [Path(x).name for x in got["paths"]] == [
        "letters_ask.json",
        "letters_ask2.json",
    ]
    assert proc.stderr.count("wrote ") == 2
    log = json.loads((out / "letters_ask.json").read_text())
    assert log["version"] == 2 and log["eval"]["task"] == "letters" and log["eval"]["run_id"] == bid
    assert log["eval"]["model"] == "mock" and log["eval"]["created"].endswith("+00:00")
    mine = {(r["item"], r["draw_index"]): r for r in rows if r["arm"] == "ask"}
    assert len(log["samples"]) == len(mine) == 15
    for s in log["samples"]:
        r = mine[(s["id"], s["epoch"])]
        assert s["scores"]["exact_normalised"]["value"] == ("C" if r["correct"] else "I")
        assert s["output"]["completion"] == "x" and s["input"] == {"1": "a", "2": "b", "3": "c"}[s["id"]]
    assert (
        log["results"]["scores"][0]["metrics"]["accuracy"]["value"]
        == sum(r["correct"] for r in mine.values()) / 15
    )
    [cmp] = log["results"]["metadata"]["comparisons"]
    assert (cmp["arm_a"], cmp["arm_b"]) == ("ask", "ask2")
    # the default folder is the current one's; an unknown id is bad input
    assert "no stored benchmark" in hrb("export", "nosuchid", "-o", str(out), check_rc=2).stderr


def test_hrb_rows_inspect_scores(tmp_path: Path) -> None:
    bid = _bench_id(_bench_file(tmp_path))
    rows = lines(hrb("rows", bid, "--arm", "ask").stdout)
    recs = lines(hrb("rows", bid, "--arm", "ask", "--format", "inspect-scores").stdout)
    labelled = [r for r in rows if r["correct"] is not None]
    assert len(recs) == len(labelled) == 15
    assert [(x["sample_id"], x["epoch"], x["value"], x["explanation"]) for x in recs] == [
        (r["item"], r["draw_index"], "C" if r["correct"] else "I", r["failure_kind"]) for r in labelled
    ]
    assert (
        recs[0]["metadata"]["arm"] == "ask" and recs[0]["scorer"] == "exact"
    )  # hrb rows knows the spec only


def test_hrb_bench_scores_an_inspect_log_and_lm_eval_samples(tmp_path: Path) -> None:
    spec = tmp_path / "imported.toml"
    spec.write_text(
        textwrap.dedent(f"""
        runs = 2
        [reference]
        path = "{DATA / "inspect_capitals.eval"}"
        format = "inspect"
        [[arms]]
        kind = "outputs"
        name = "inspect-mock"
        path = "{DATA / "inspect_capitals.eval"}"
        format = "inspect"
    """)
    )
    out = lines(hrb("bench", str(spec), "--no-rows").stdout)[-1]
    [arm] = out["summary"]
    assert arm["arm"] == "inspect-mock" and arm["runs"] == 6 and arm["wrong"] == 1
    bad = tmp_path / "bad.toml"
    bad.write_text(
        textwrap.dedent(f"""
        runs = 2
        [reference]
        items = {{ "0" = "a", "1" = "b" }}
        labels = {{ "0" = "7", "1" = "12" }}
        [[arms]]
        kind = "outputs"
        name = "lm"
        path = "{DATA / "samples_arith_2026-12-02T05-00-00.jsonl"}"
        format = "lm-eval"
    """)
    )
    err = hrb("bench", str(bad), "--no-rows", check_rc=2).stderr
    assert "holds 2 arms" in err and "strict-match" in err
