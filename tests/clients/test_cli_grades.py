"""`hrb grades` end to end: a loopback judge scripted by a confusion matrix, a few human grades, PPI++.

Two arms answer 60 capitals questions in 20 clusters from a loopback provider; which answers
are right is scripted per item (the human truth); a wrong answer of arm ``a`` is "somewhere N",
of arm ``b`` "elsewhere N". The judge asks the same provider, which replies by a confusion
matrix: it calls arm ``b``'s wrong answers in the first 24 items CORRECT (a judge lenient with
one arm's style) and is right otherwise. ``hrb grades next`` draws the
rows to grade, a person (here: the script's truth) fills ``correct`` in, ``hrb grades put``
keeps them, and ``hrb report`` then holds the human-graded section, with the same numbers as
the library gives on the same rows and grades. A rerun of the same spec (every reply from the
cache) finds the grades again; a judge that agrees poorly falls back to the human-only interval.
"""

from __future__ import annotations

import csv
import json
import re
import textwrap
from pathlib import Path

from hrbench.records import Row
from hrbench.stats import ppi_estimate
from hrbench.testing import LoopbackServer
from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401

N = 60
ITEMS = {f"q{i:02d}": f"country {i}" for i in range(N)}
LABELS = {f"q{i:02d}": f"capital {i}" for i in range(N)}
CLUSTERS = {f"q{i:02d}": f"c{i // 3}" for i in range(N)}
RIGHT = {  # the human truth: is the arm's answer right on the item?
    "a": {q: i % 3 != 0 for i, q in enumerate(ITEMS)},
    "b": {q: i % 4 != 0 for i, q in enumerate(ITEMS)},
}


WRONG = {"a": "somewhere", "b": "elsewhere"}


def _judge_says(answer: str, poor: bool) -> bool:
    """The confusion matrix: lenient with arm b's wrong answers in the first 24 items; a coin when ``poor``."""
    word, i = answer.split()[0], int(answer.split()[-1])
    if poor:
        return (i * 7 + len(word)) % 3 == 0
    return word == "capital" or (word == "elsewhere" and i < 24)


def _provider(poor: bool = False) -> LoopbackServer:
    def reply(prompt: str, seed: object, call: int) -> str:
        graded = re.search(r"Answer to grade: (.*)", prompt)
        if graded is None:  # an arm's request: "<arm> country <i>"
            arm, i = prompt.split()[0], int(prompt.split()[-1])
            return f"capital {i}" if RIGHT[arm][f"q{i:02d}"] else f"{WRONG[arm]} {i}"
        return "CORRECT" if _judge_says(graded.group(1).strip(), poor) else "INCORRECT"

    return LoopbackServer(reply_fn=reply)


def _spec(path: Path, base_url: str, arms: tuple[str, ...] = ("a", "b")) -> Path:
    client = f'kind = "openai"\nmodel = "loopback-1"\nbase_url = "{base_url}"\nmax_attempts = 1\n'
    table = lambda d: "{ " + ", ".join(f'{k} = "{v}"' for k, v in d.items()) + " }"  # noqa: E731
    arm_tables = "".join(
        f'[[arms]]\nkind = "prompt"\nname = "{a}"\ntemplate = "{a} {{item}}"\n' for a in arms
    )
    path.write_text(
        textwrap.dedent(f"""\
        name = "{path.stem}"
        runs = 1
        scorer = "judge"
        [reference]
        items = {table(ITEMS)}
        labels = {table(LABELS)}
        cluster = {table(CLUSTERS)}
        [client]
        """)
        + client
        + arm_tables
        + "[scorer_settings]\n[scorer_settings.client]\n"
        + client
    )
    return path


def test_grades_next_put_report_and_a_rerun_from_the_cache(tmp_path: Path) -> None:
    with _provider() as srv:
        spec = _spec(tmp_path / "judged.toml", srv.base_url)
        bid = lines(hrb("bench", str(spec), "--no-rows").stdout)[-1]["id"]
        todo = tmp_path / "todo.csv"
        err = hrb("grades", "next", bid, "-k", "24", "-o", str(todo)).stderr
        assert "24 row(s) to grade written to" in err and f"hrb grades put {bid} {todo}" in err
        with todo.open(newline="") as f:
            picked = list(csv.DictReader(f))
        assert len(picked) == 24 and {p["arm"] for p in picked} == {"a", "b"}
        assert all(p["correct"] == "" and 0 < float(p["pi"]) <= 1 for p in picked)
        assert all(p["label"] == LABELS[p["item"]] for p in picked)
        assert all(p["output"].split()[-1] == str(int(p["item"][1:])) for p in picked)  # the arm's answer
        for p in picked:  # the person grades: the script's truth
            p["correct"] = "right" if RIGHT[p["arm"]][p["item"]] else "wrong"
        with todo.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(picked[0]))
            w.writeheader()
            w.writerows(picked)
        put = lines(hrb("grades", "put", bid, str(todo), "--grader", "ann").stdout)[0]
        assert (put["stored"], put["replaced"], put["n_graded"]) == (24, 0, 24)
        rep = lines(hrb("report", bid, "--descriptive").stdout)[0]
        human = rep["human"]
        assert human["n_grades"] == 24 and human["graders"] == ["ann"] and not human["fallback"]
        # the library on the same rows and grades gives the same numbers
        rows = [
            Row(**{k: v for k, v in r.items() if k not in ("trace", "scorer", "output")})
            for r in lines(hrb("rows", bid).stdout)
        ]
        grades = lines(hrb("grades", "list", bid).stdout)
        lib = ppi_estimate(rows, grades)
        assert lib is not None
        for got, want in zip(human["pairs"] + human["arms"], lib.pairs + lib.arms, strict=True):
            assert got["estimate"] == want.estimate and got["ci_low"] == want.ci_low
        # the judge alone sees arm b far ahead; the humans by 0.083 (truth: a 0.667, b 0.750 on all)
        pair = human["pairs"][0]
        assert (pair["arm_a"], pair["arm_b"]) == ("a", "b")
        assert pair["judge"] < -0.1 and pair["ci_low"] < -0.083 < pair["ci_high"]
        text = hrb("report", bid, "--descriptive", "--text").stdout
        assert "Human-graded (PPI++, 95%): 24 grade(s) by ann" in text
        # a rerun of the same spec, every reply from the cache, finds the grades of its rows
        again = lines(hrb("bench", str(spec), "--no-rows").stdout)[-1]["id"]
        assert again != bid
        assert len(lines(hrb("grades", "list", again).stdout)) == 24
        assert (
            lines(hrb("report", again, "--descriptive").stdout)[0]["human"]["pairs"][0]["estimate"]
            == pair["estimate"]
        )


def test_a_judge_that_agrees_poorly_falls_back_to_the_human_only_interval(tmp_path: Path) -> None:
    with _provider(poor=True) as srv:
        bid = lines(hrb("bench", str(_spec(tmp_path / "coin.toml", srv.base_url)), "--no-rows").stdout)[-1][
            "id"
        ]
    grades = [
        {"item": q, "arm": a, "run": 1, "correct": RIGHT[a][q]} for a in ("a", "b") for q in list(ITEMS)[::3]
    ]
    path = tmp_path / "grades.jsonl"
    path.write_text("".join(json.dumps(g) + "\n" for g in grades))
    hrb("grades", "put", bid, str(path))
    human = lines(hrb("report", bid, "--descriptive").stdout)[0]["human"]
    assert human["fallback"] and human["kappa"] < 0.4
    assert all(
        e["method"] == "human-only" and e["lam"] == [0.0] * len(e["lam"])
        for e in human["arms"] + human["pairs"]
    )
    assert all(e["ci_low"] == e["human_low"] for e in human["arms"] + human["pairs"])
    assert "agrees poorly with the 40 human grades" in hrb("report", bid, "--descriptive", "--text").stdout


def test_bad_grades_files_are_exit_2_naming_the_place(tmp_path: Path) -> None:
    with _provider() as srv:
        bid = lines(hrb("bench", str(_spec(tmp_path / "b.toml", srv.base_url)), "--no-rows").stdout)[-1]["id"]
    cases = {
        "bad.csv": ("item,arm,run,correct\nq01,a,1,maybe\n", "line 2: `correct` must be true or false"),
        "nocol.csv": ("item,arm,run\nq01,a,1\n", "has no correct"),
        "row.jsonl": ('{"item": "q01", "arm": "a", "run": 9, "correct": true}\n', "does not have"),
        "arm.jsonl": ('{"item": "q01", "arm": "zz", "run": 1, "correct": true}\n', "is not an arm"),
        "bin.csv": (b"\x1f\x8b\x08\x00\xff\xfe".decode("latin-1"), "is not UTF-8"),
        "json.jsonl": ("{not json\n", "line 1 is not JSON"),
    }
    for name, (body, said) in cases.items():
        p = tmp_path / name
        p.write_bytes(body.encode("latin-1") if name == "bin.csv" else body.encode())
        proc = hrb("grades", "put", bid, str(p), check_rc=2)
        assert said in proc.stderr, (name, proc.stderr)
    assert lines(hrb("grades", "list", bid).stdout) == []
    assert "k" in hrb("grades", "next", bid, "-k", "0", check_rc=2).stderr


def test_a_spec_names_its_grades_file(tmp_path: Path) -> None:
    with _provider() as srv:
        spec = _spec(tmp_path / "with-grades.toml", srv.base_url)
        (tmp_path / "g.csv").write_text(
            "item,arm,run,correct\n"
            + "".join(f"q{i:02d},a,1,{RIGHT['a'][f'q{i:02d}']}\n" for i in range(0, 60, 4))
        )
        spec.write_text('grades = "g.csv"\n' + spec.read_text())  # relative to the spec
        proc = hrb("bench", str(spec), "--no-rows")
    bid = lines(proc.stdout)[-1]["id"]
    assert f"grades: 15 kept from {tmp_path / 'g.csv'}" in proc.stderr
    assert len(lines(hrb("grades", "list", bid).stdout)) == 15
    assert lines(hrb("report", bid, "--descriptive").stdout)[0]["human"]["n_grades"] == 15


def test_the_gate_reads_the_stored_human_grades(tmp_path: Path) -> None:
    with _provider() as srv:
        ids = {
            a: lines(
                hrb("bench", str(_spec(tmp_path / f"only-{a}.toml", srv.base_url, (a,))), "--no-rows").stdout
            )[-1]["id"]
            for a in ("a", "b")
        }
    gate = ("gate", ids["a"], "--baseline", ids["b"], "--max-drop", "0.1", "--json")
    judged = json.loads(hrb(*gate, check_rc=None).stdout)
    assert judged["human"] is None and "humans" not in judged["reason"]
    assert judged["diff"] < -0.15  # the judge, lenient with b: a is 0.18 behind
    for a in ("a", "b"):  # a third of each arm's rows, drawn by `hrb grades next`, graded by hand
        todo = lines(hrb("grades", "next", ids[a], "-k", "20", "--format", "jsonl").stdout)
        path = tmp_path / f"grades-{a}.jsonl"
        path.write_text("".join(json.dumps({**r, "correct": RIGHT[a][r["item"]]}) + "\n" for r in todo))
        hrb("grades", "put", ids[a], str(path))
    graded = json.loads(hrb(*gate, check_rc=None).stdout)
    human = graded["human"]
    assert human is not None and human["n_graded"] == 40 and human["method"] in ("ppi++", "human-only")
    assert (graded["diff"], graded["ci_high"]) == (human["estimate"], human["ci_high"])
    assert "as humans grade it (PPI++ on 40 human grades)" in graded["reason"]
    truth = sum(RIGHT["a"].values()) / N - sum(RIGHT["b"].values()) / N  # -0.083
    assert abs(graded["diff"] - truth) < abs(judged["diff"] - truth)
