"""The daemon's ``grades/put``, ``grades/next`` and ``grades/get``, and the report's human-graded section.

A real daemon subprocess; a benchmark scored by a mock judge. Bad params are refused by name
(the daemon keeps serving): ``k`` out of range, neither or both of ``grades`` and ``path``, a
relative path, an unknown benchmark, a grade of a row the benchmark lacks, a file that is not
grades; over TCP a grades file is read only inside the state folder's exchange folders.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from hrbench.records import Row
from hrbench.stats import ppi_estimate
from hrbench_client.errors import ConfigError, InvalidParams, NotFound
from tests._benches import run
from tests.server._daemon import Daemon
from tests.server.test_tcp_files import _recorded, tcp_client

ANSWERS = {f"country {i}": f"capital {i}" if i % 3 else f"nowhere {i}" for i in range(30)}


def judged_spec(name: str) -> dict:
    return {
        "name": name,
        "runs": 1,
        "scorer": "judge",
        "reference": {
            "items": {f"q{i}": f"country {i}" for i in range(30)},
            "labels": {f"q{i}": f"capital {i}" for i in range(30)},
            "cluster": {f"q{i}": f"c{i // 3}" for i in range(30)},
        },
        "arms": [
            {"kind": "prompt", "name": "ask", "template": "{item}"},
            {"kind": "prompt", "name": "again", "template": "{item}"},
        ],
        "client": {"kind": "mock", "replies": ANSWERS, "default": "?"},
        "scorer_settings": {"client": {"kind": "mock", "reply": "CORRECT"}},
    }


@pytest.fixture(scope="module")
def judged(shared_daemon: Daemon) -> str:
    with shared_daemon.client() as c:
        return run(c, judged_spec("graded-on-the-wire"))


def test_put_next_get_and_the_report(shared_daemon: Daemon, judged: str, tmp_path: Path) -> None:
    with shared_daemon.client() as c:
        nxt = c.grades_next(judged, k=12, seed=3)
        assert len(nxt.rows) == 12 and nxt.n_graded == 0
        one = nxt.rows[0]
        assert one.label == f"capital {one.item[1:]}" and one.payload == f"country {one.item[1:]}"
        assert one.output == ANSWERS[one.payload] and one.output_source == "reply"
        truth = {r.item: r.output.startswith("capital") for r in nxt.rows}
        grades = [
            {"item": r.item, "arm": r.arm, "run": r.run, "correct": truth[r.item], "pi": r.pi}
            for r in nxt.rows[:8]
        ]
        put = c.grades_put(judged, grades, grader="ann")
        assert (put.stored, put.replaced, put.n_graded) == (8, 0, 8)
        f = tmp_path / "more.jsonl"
        f.write_text(
            "".join(
                json.dumps({"item": r.item, "arm": r.arm, "run": r.run, "correct": truth[r.item]}) + "\n"
                for r in nxt.rows[8:]
            )
        )
        assert c.grades_put(judged, path=str(f)).n_graded == 12
        kept = c.grades_get(judged).grades
        assert len(kept) == 12 and {g.grader for g in kept} == {"ann", "human"}
        assert not {(r.arm, r.item) for r in c.grades_next(judged, k=40).rows} & {
            (g.arm, g.item) for g in kept
        }
        rep = c.report(judged, descriptive=True)
        rows = [msgspec.convert(msgspec.to_builtins(r), Row) for r in c.rows(judged).rows]
    lib = ppi_estimate(rows, [msgspec.to_builtins(g) for g in kept])
    assert rep["human"]["n_grades"] == 12
    assert [e["estimate"] for e in rep["human"]["arms"]] == [e.estimate for e in lib.arms]
    assert "Human-graded (PPI++, 95%): 12 grade(s) by ann, human" in rep["text"]


def test_bad_params_are_refused_by_name(shared_daemon: Daemon, judged: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("item,arm,run,correct\nq1,ask,1,perhaps\n")
    with shared_daemon.client() as c:
        with pytest.raises(InvalidParams, match="k"):
            c.call("grades/next", {"id": judged, "k": 0}, dict)
        with pytest.raises(InvalidParams, match="k"):
            c.call("grades/next", {"id": judged, "k": 10_001}, dict)
        with pytest.raises(InvalidParams, match="correct"):
            c.call(
                "grades/put",
                {"id": judged, "grades": [{"item": "q1", "arm": "ask", "run": 1, "correct": "yes"}]},
                dict,
            )
        with pytest.raises(InvalidParams, match="pi"):
            c.grades_put(judged, [{"item": "q1", "arm": "ask", "run": 1, "correct": True, "pi": 2}])
        with pytest.raises(ConfigError, match="one of them"):
            c.grades_put(judged)
        with pytest.raises(ConfigError, match="absolute path"):
            c.grades_put(judged, path="relative.csv")
        with pytest.raises(ConfigError, match="line 2: `correct` must be true or false"):
            c.grades_put(judged, path=str(bad))
        with pytest.raises(ConfigError, match="cannot be read"):
            c.grades_put(judged, path=str(tmp_path / "missing.csv"))
        with pytest.raises(ConfigError, match="does not have"):
            c.grades_put(judged, [{"item": "q1", "arm": "ask", "run": 7, "correct": True}])
        with pytest.raises(NotFound, match="no stored benchmark"):
            c.grades_get("no-such-benchmark")
        assert c.status() is not None  # still serving


def test_over_tcp_a_grades_file_is_read_only_in_the_exchange_folders(tmp_path: Path) -> None:
    line = json.dumps({"item": "q1", "arm": "ask", "run": 1, "correct": True}) + "\n"
    with _recorded(tmp_path / "home") as d:
        with d.client() as c:
            bid = run(c, judged_spec("graded-over-tcp"))
        outside = tmp_path / "grades.jsonl"
        outside.write_text(line)
        (d.home / "imports").mkdir(exist_ok=True)
        inside = d.home / "imports" / "grades.jsonl"
        inside.write_text(line.replace('"q1"', '"q2"'))
        link = d.home / "imports" / "link.jsonl"
        link.symlink_to(outside)
        with tcp_client(d.home) as c:
            with pytest.raises(ConfigError, match="reads files only inside"):
                c.grades_put(bid, path=str(outside))
            with pytest.raises(ConfigError, match="symbolic link"):
                c.grades_put(bid, path=str(link))
            assert c.grades_put(bid, path=str(inside)).stored == 1
            assert c.grades_put(bid, [{"item": "q1", "arm": "ask", "run": 1, "correct": True}]).stored == 1
            assert {g.item for g in c.grades_get(bid).grades} == {"q1", "q2"}
