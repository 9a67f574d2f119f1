"""`hrb report` of a judged benchmark through a real daemon: the judge-agreement section.

The arm and the judge both ask a loopback provider. The judge's draws of one row reply the
verdicts below in turn, so the confusion table and the flips are the ones counted by hand (the
same table as ``tests/unit/stats/test_agreement.py``, which checks the library alone).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter
from pathlib import Path

from hrbench.testing import LoopbackServer
from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401

# the same six items, outputs and judge draws as the library's hand-counted tables
from tests.unit.stats.test_agreement import COUNTRIES, LABELS, OUTPUTS, VERDICTS


def _provider() -> LoopbackServer:
    asked: Counter[str] = Counter()  # the judge's draws of one answer so far (one event loop: no lock)

    def reply(prompt: str, seed: object, call: int) -> str:
        graded = re.search(r"Answer to grade: (.*)", prompt)
        if graded is None:
            return OUTPUTS[prompt.strip()]
        answer = graded.group(1)
        asked[answer] += 1
        return {"C": "CORRECT", "I": "INCORRECT"}[VERDICTS[answer][asked[answer] - 1]]

    return LoopbackServer(reply_fn=reply)


def _spec(path: Path, base_url: str, scorer: str) -> Path:
    client = f'kind = "openai"\nmodel = "loopback-1"\nbase_url = "{base_url}"\nmax_attempts = 1\n'
    judge = (
        "" if scorer != "judge" else "[scorer_settings]\njudge_runs = 3\n[scorer_settings.client]\n" + client
    )
    path.write_text(
        textwrap.dedent(f"""\
        name = "{path.stem}"
        runs = 1
        scorer = "{scorer}"
        [reference]
        items = {json.dumps(COUNTRIES).replace('":', '" =')}
        labels = {json.dumps(LABELS).replace('":', '" =')}
        [client]
        """)
        + client
        + '[[arms]]\nkind = "prompt"\nname = "ask"\ntemplate = "{item}"\n'
        + judge
    )
    return path


def test_hrb_report_of_a_judged_benchmark_has_the_hand_counted_judge_section(tmp_path: Path) -> None:
    with _provider() as srv:
        out = hrb("bench", str(_spec(tmp_path / "judged.toml", srv.base_url, "judge")), "--no-rows")
        judged = lines(out.stdout)[-1]["id"]
        plain = lines(
            hrb("bench", str(_spec(tmp_path / "plain.toml", srv.base_url, "exact")), "--no-rows").stdout
        )
    text = hrb("report", judged, "--descriptive", "--text").stdout
    assert "Judge agreement:" in text
    assert "agrees with exact_normalised on 4 of 6 rows: 0.667 [" in text
    assert "both right 2, judge only 1, exact_normalised only 1, both wrong 2" in text
    assert "3 of 6 rows judged 3 times flipped between draws: 0.500" in text
    section = lines(hrb("report", judged, "--descriptive").stdout)[0]["judge"]
    assert section["confusion"] == {"both_right": 2, "judge_only": 1, "reference_only": 1, "both_wrong": 2}
    assert (section["agree"], section["n"], section["flipped"], section["n_multi"]) == (4, 6, 3, 6)
    assert section["ci_low"] < 4 / 6 < section["ci_high"] and section["reference"] == "exact_normalised"
    md = hrb("report", judged, "--descriptive", "--format", "markdown").stdout
    assert "**Judge agreement**" in md and "- both right 2, judge only 1" in md
    # the page `hrb view` shows (saved whole by --html) carries the section too
    page = tmp_path / "judged.html"
    hrb("report", judged, "--html", str(page))
    assert '"both_right":2,"judge_only":1,"reference_only":1,"both_wrong":2' in page.read_text()
    # a benchmark no judge scored has no such section
    other = plain[-1]["id"]
    assert "Judge agreement" not in hrb("report", other, "--descriptive", "--text").stdout
    assert lines(hrb("report", other, "--descriptive").stdout)[0]["judge"] is None
