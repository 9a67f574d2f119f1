"""`hrb export ID --format inspect`, `hrb rows ID --format inspect-scores`, and other tools' results as arms in `hrb bench`.

Through the daemon, as a user runs them. That Inspect itself reads what is written is checked
in ``tests/interop`` (``make test-interop``).
"""

from __future__ import annotations

import json
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401

DATA = Path(__file__).resolve().parents[1] / "unit" / "interop" / "data"


def test_hrb_export_writes_one_inspect_log_per_arm(tmp_path: Path, shared_bench_id: str) -> None:
    bid = shared_bench_id  # the module's one benchmark (conftest), only read here
    rows = lines(hrb("rows", bid).stdout)
    out = tmp_path / "logs"
    proc = hrb("export", bid, "--format", "inspect", "-o", str(out), "--name", "letters")
    got = lines(proc.stdout)[0]
    names = [Path(x).name for x in got["paths"]]
    assert got["id"] == bid and [n.split("_")[1:3] for n in names] == [
        ["letters", "ask"],
        ["letters", "ask2"],
    ]
    assert proc.stderr.count("wrote ") == 2
    log = json.loads((out / names[0]).read_text())
    assert log["version"] == 2 and log["eval"]["task"] == "letters" and log["eval"]["run_id"] == bid
    assert log["eval"]["model"] == "mock" and log["eval"]["created"].endswith("+00:00")
    # named as Inspect names its logs (it lists a .json log only so): created, task, arm, task id
    stamp = log["eval"]["created"].replace(":", "-").replace("+", "-")
    assert names[0] == f"{stamp}_letters_ask_{log['eval']['task_id']}.json" and "plan" in log
    mine = {(r["item"], r["draw_index"]): r for r in rows if r["arm"] == "ask"}
    assert len(log["samples"]) == len(mine) == 15
    for s in log["samples"]:
        r = mine[(str(s["id"]), s["epoch"])]
        assert s["scores"]["exact_normalised"]["value"] == ("C" if r["correct"] else "I")
        assert s["output"]["completion"] == "x" and s["input"] == {1: "a", 2: "b", 3: "c"}[s["id"]]
    assert (
        log["results"]["scores"][0]["metrics"]["accuracy"]["value"]
        == sum(r["correct"] for r in mine.values()) / 15
    )
    [cmp] = log["results"]["metadata"]["comparisons"]
    assert (cmp["arm_a"], cmp["arm_b"]) == ("ask", "ask2")
    # --log-format eval: Inspect's zip, under the same name but its suffix; the same samples
    zipped = lines(hrb("export", bid, "-o", str(out), "--name", "letters", "--log-format", "eval").stdout)[0]
    assert [Path(x).name for x in zipped["paths"]] == [n.removesuffix(".json") + ".eval" for n in names]
    with zipfile.ZipFile(zipped["paths"][0]) as zf:
        assert json.loads(zf.read("header.json"))["eval"] == log["eval"]
        assert len([n for n in zf.namelist() if n.startswith("samples/")]) == 15
    assert "invalid choice: 'zip'" in hrb("export", bid, "--log-format", "zip", check_rc=2).stderr
    # the default folder is the current one's; an unknown id is bad input
    assert "no stored benchmark" in hrb("export", "nosuchid", "-o", str(out), check_rc=2).stderr


def test_hrb_rows_inspect_scores(shared_bench_id: str) -> None:
    bid = shared_bench_id  # the module's one benchmark (conftest), only read here
    rows = lines(hrb("rows", bid, "--arm", "ask").stdout)
    recs = lines(hrb("rows", bid, "--arm", "ask", "--format", "inspect-scores").stdout)
    labelled = [r for r in rows if r["correct"] is not None]
    assert len(recs) == len(labelled) == 15
    assert [(x["sample_id"], x["epoch"], x["value"], x["explanation"]) for x in recs] == [
        (r["item"], r["draw_index"], "C" if r["correct"] else "I", r["failure_kind"]) for r in labelled
    ]
    assert recs[0]["metadata"]["arm"] == "ask"
    assert {x["scorer"] for x in recs} == {"exact_normalised"}  # the scorer's own name


@pytest.mark.usefixtures("shared_home")  # outputs arms call no model: no cache, nothing counted
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
    # the tokens the log records, not paid here: in the summary, the rows and the report
    assert (arm["tokens_in"], arm["usd"], arm["usd_list"], arm["usd_from_log"]) == (24, 0.0, None, 6)
    rows = lines(hrb("rows", out["id"]).stdout)
    assert {(r["usd"], r["usd_provenance"]) for r in rows} == {(0.0, "log")} and sum(
        r["tokens_in"] for r in rows
    ) == 24
    report = hrb("report", out["id"], "--descriptive", "--text").stdout
    assert "From the log, not paid here: the usd_list of inspect-mock (6 runs)" in report
    # Inspect's log records no total_cost (mockllm/model): NA, said in the summary and the report
    assert "usd_list of inspect-mock is NA: its log records no cost" in out["text"]
    assert "usd_list of inspect-mock is - (NA): its log records no cost" in report
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


def test_hrb_ref_put_reads_other_tools_results_as_a_specs_reference_does(tmp_path: Path) -> None:
    """`hrb ref put NAME FILE --format inspect|lm-eval|promptfoo`, through the daemon's reference/put."""
    hashes = {}
    for fmt, path, ids, label in (
        ("inspect", DATA / "inspect_capitals.eval", ["q1", "q2", "3"], "Paris"),
        ("lm-eval", DATA / "samples_arith_2026-12-02T05-00-00.jsonl", ["0", "1", "2"], "7"),
        ("promptfoo", DATA / "promptfoo_capitals.json", ["q1", "q2"], "Paris"),
    ):
        info = lines(hrb("ref", "put", f"from-{fmt}", str(path), "--format", fmt).stdout)[0]
        assert info["n_items"] == len(ids) and info["new"] is True, fmt
        hashes[fmt] = info["hash"]
        got = lines(hrb("ref", "get", f"from-{fmt}").stdout)[0]
        assert sorted(got["items"]) == sorted(ids) and got["labels"][ids[0]] == label, fmt
        # a spec's [reference] of the same file is the same content (the same hash)
        spec = tmp_path / f"ref-{fmt}.toml"
        spec.write_text(f'[reference]\npath = "{path}"\nformat = "{fmt}"\n')
        assert lines(hrb("ref", "put", f"spec-{fmt}", str(spec)).stdout)[0]["hash"] == info["hash"], fmt
    # what `hrb ref get` prints is a reference file again
    printed = tmp_path / "printed.json"
    printed.write_text(hrb("ref", "get", "from-promptfoo").stdout)
    again = lines(hrb("ref", "put", "printed", str(printed)).stdout)[0]
    assert again["hash"] == hashes["promptfoo"] and again["new"] is False
    err = hrb(
        "ref", "put", "x", str(DATA / "inspect_capitals.eval"), "--format", "promptfoo", check_rc=2
    ).stderr
    assert (
        f"{DATA / 'inspect_capitals.eval'}: is not promptfoo results: not UTF-8 text" in err
    )  # an .eval is a zip


def _question_ids(tmp_path: Path, drop: int | None = None) -> Path:
    """The promptfoo results with each test's id under `question_id` (result ``drop`` without one)."""
    data = json.loads((DATA / "promptfoo_capitals.json").read_text())
    for n, r in enumerate(data["results"]["results"]):
        for where in (r["vars"], r["testCase"]["vars"]):
            qid = where.pop("id")
            if n != drop:
                where["question_id"] = qid
    path = tmp_path / f"promptfoo-{drop}.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.usefixtures("shared_home")  # its reference names are its own; no model is called
def test_promptfoo_ids_from_a_named_variable_through_the_daemon(tmp_path: Path) -> None:
    results = _question_ids(tmp_path)
    put = hrb("ref", "put", "pf-qid", str(results), "--format", "promptfoo", "--id-var", "question_id")
    assert lines(put.stdout)[0]["n_items"] == 2
    assert sorted(lines(hrb("ref", "get", "pf-qid").stdout)[0]["items"]) == ["q1", "q2"]
    toml = tmp_path / "pf-ref.toml"  # a spec's [reference] with id_var: the same content
    toml.write_text(f'[reference]\npath = "{results}"\nformat = "promptfoo"\nid_var = "question_id"\n')
    assert lines(hrb("ref", "put", "pf-toml", str(toml)).stdout)[0]["hash"] == lines(put.stdout)[0]["hash"]
    spec = tmp_path / "pf.toml"
    spec.write_text(
        textwrap.dedent(f"""
        runs = 2
        reference = "pf-qid"
        [[arms]]
        kind = "outputs"
        name = "bad"
        path = "{results}"
        format = "promptfoo"
        source_arm = "echo-bad | capital: {{{{country}}}}"
        id_var = "question_id"
    """)
    )
    rows = lines(hrb("bench", str(spec), check_rc=3).stdout)[:-1]  # 3: a run promptfoo recorded as failed
    assert sorted((r["item"], r["run"], r["correct"], r["failure_kind"]) for r in rows) == [
        ("q1", 1, True, None), ("q1", 2, False, "error"), ("q2", 1, False, "wrong"), ("q2", 2, True, None),
    ]  # fmt: skip
    # the default variable, `id`, is in no test: refused, naming the field and its value
    err = hrb("ref", "put", "pf-id", str(results), "--format", "promptfoo", check_rc=2).stderr
    assert "reference.id_var: results.results[0] (test 0) of " in err and "has no variable 'id'" in err
    dropped = _question_ids(tmp_path, drop=3)
    spec.write_text(spec.read_text().replace(str(results), str(dropped)))
    err = hrb("bench", str(spec), check_rc=2).stderr
    assert "arms[0].id_var: results.results[3] (test 1) of " in err and "its vars: country, expected" in err
    log = str(DATA / "inspect_capitals.eval")
    err = hrb("ref", "put", "x", log, "--format", "inspect", "--id-var", "q", check_rc=2).stderr
    assert "reference.id_var: names a promptfoo test variable" in err
    err = hrb("ref", "put", "x", str(spec), "--id-var", "q", check_rc=2).stderr
    assert "--id-var is for a results file; in a TOML file give id_var in [reference]" in err
