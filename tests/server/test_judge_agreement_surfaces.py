"""Judge agreement through a real daemon: the report and the view compare on the text the judge graded.

An arm that reads its answer out of a chatty reply, and an outputs arm (outputs made
elsewhere, no request in its trace), are judged by a strict judge. The exact scorer, held to
the judge on the same rows, must read the same text: every row agrees (it was 0 of 20 for the
extracting arm, whose last model reply is the chatter, and no row at all for the outputs arm).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hrbench_client.view import benchmark_html
from tests.server._daemon import Daemon

pytestmark = pytest.mark.timeout(180)

MODULE = """
import re

CAPITALS = {"France": "Paris", "Peru": "Lima", "Chad": "N'Djamena", "Fiji": "Suva"}


def model(messages, params):
    country = messages[-1]["content"]
    return f"Let me think about {country}. Final answer: {CAPITALS[country]}"


def judge(messages, params):
    graded = re.search(r"Answer to grade: (.*)", messages[-1]["content"]).group(1)
    return "CORRECT" if graded in CAPITALS.values() else "INCORRECT"


def extract(item, ctx):
    return ctx.call(item).text.rpartition("Final answer: ")[2]
"""


def _spec(folder: Path) -> dict[str, Any]:
    return {
        "arms": [
            {"kind": "import", "path": "judged_mod:extract", "name": "extract"},
            {
                "kind": "outputs",
                "name": "elsewhere",
                "outputs": {"q1": "Paris", "q2": "Lima", "q3": "Lyon", "q4": "Suva"},
            },
        ],
        "reference": {
            "items": {"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Fiji"},
            "labels": {"q1": "Paris", "q2": "Lima", "q3": "N'Djamena", "q4": "Suva"},
        },
        "client": {"kind": "mock", "function": "judged_mod:model"},
        "scorer": "judge",
        "scorer_settings": {"client": {"kind": "mock", "function": "judged_mod:judge"}},
        "runs": 5,
        "python_path": [str(folder)],
    }


def test_the_daemon_s_report_and_view_compare_the_judge_on_the_arm_s_output(
    home: Path, tmp_path: Path
) -> None:
    (tmp_path / "judged_mod.py").write_text(MODULE)
    d = Daemon(home).start()
    try:
        with d.client() as c:
            stream = c.benchmark(_spec(tmp_path))
            rows = list(stream)
            assert stream.result is not None and stream.result.status == "done"
            bid = stream.result.id
            rep = c.report(bid)
            view = c.view(bid)
            page = benchmark_html(c, bid)
    finally:
        d.stop()
    assert len(rows) == 40
    want = {"both_right": 35, "judge_only": 0, "reference_only": 0, "both_wrong": 5}  # Lyon is wrong
    judge = rep["judge"]
    assert (judge["agree"], judge["n"], judge["skipped"]) == (40, 40, 0) and judge["confusion"] == want
    assert "agrees with exact_normalised on 40 of 40 rows" in rep["text"]
    assert "agrees with exact_normalised on 40 of 40 rows" in rep["markdown"]
    assert view.report is not None and view.report["judge"]["confusion"] == want
    assert '"both_right":35,"judge_only":0,"reference_only":0,"both_wrong":5' in page
