"""The grading page of ``hrb view`` in a real headless Chromium: keys right/wrong/skip, grades kept with the grader.

A benchmark a judge scored (a mock judge that calls every answer CORRECT) is graded by hand: the
page shows each drawn row's item, label and the arm's output, ``r`` keeps a right grade and ``w``
a wrong one under the grader's name (the daemon's ``grades/get`` reads them back), ``s`` skips
one; the benchmark's page then shows the human-graded section. Screenshot: ``out/view-grade.png``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests._benches import run
from tests.server._daemon import Daemon
from tests.view.conftest import View
from tests.view.test_browser import OUT, _ready, browser, page  # noqa: F401

pytestmark = pytest.mark.browser

ANSWERS = {f"country {i}": f"capital {i}" if i % 3 else f"nowhere {i}" for i in range(12)}


@pytest.fixture(scope="module")
def judged(shared_daemon: Daemon) -> str:
    spec = {
        "name": "graded-by-hand",
        "runs": 1,
        "scorer": "judge",
        "reference": {
            "items": {f"q{i}": f"country {i}" for i in range(12)},
            "labels": {f"q{i}": f"capital {i}" for i in range(12)},
            "cluster": {f"q{i}": f"c{i // 3}" for i in range(12)},
        },
        "arms": [{"kind": "prompt", "name": "ask", "template": "{item}"}],
        "client": {"kind": "mock", "replies": ANSWERS, "default": "?"},
        "scorer_settings": {"client": {"kind": "mock", "reply": "CORRECT"}},
    }
    with shared_daemon.client() as c:
        return run(c, spec)


@pytest.fixture
def grading_view(shared_daemon: Daemon) -> Iterator[View]:
    v = View(shared_daemon.home)
    try:
        yield v
    finally:
        v.stop()


def test_grade_rows_by_keyboard(page: Any, grading_view: View, judged: str, shared_daemon: Daemon) -> None:  # noqa: F811
    page.goto(grading_view.url)
    _ready(page)
    page.goto(f"{grading_view.base}/b/{judged}/grade?k=6")
    _ready(page)
    page.wait_for_selector("#grade-output")
    assert "0 graded, 0 skipped, 6 left of 6" in page.text_content("#grade-status")
    page.keyboard.press("r")  # no name yet: nothing is kept
    assert "Give your name first" in page.text_content("#grade-status")
    page.fill("#grader", "ann")
    page.dispatch_event("#grader", "change")
    page.click("h1")  # the keys are for the page, not the name field
    seen = []
    for key in ("r", "w", "s"):
        out = page.locator("#grade-output")
        row = (
            out.get_attribute("data-arm"),
            out.get_attribute("data-item"),
            int(out.get_attribute("data-run")),
        )
        item = page.text_content("#grade-item")
        assert ANSWERS[item.strip()] == out.text_content()  # the arm's output, as the judge graded it
        assert page.text_content("#grade-label") == f"capital {item.split()[-1]}"
        seen.append(row)
        page.screenshot(path=str(OUT / "view-grade.png")) if key == "r" else None
        page.keyboard.press(key)
        page.wait_for_function(
            "n => document.querySelector('#grade-status').textContent.includes(n)",
            arg=f"{len(seen) - (key == 's')} graded, {int(key == 's')} skipped",
        )
    with shared_daemon.client() as c:
        kept = {(g.arm, g.item, g.run): (g.correct, g.grader, g.pi) for g in c.grades_get(judged).grades}
    assert set(kept) == set(seen[:2])
    assert kept[seen[0]][:2] == (True, "ann") and kept[seen[1]][:2] == (False, "ann")
    assert all(0 < k[2] <= 1 for k in kept.values())  # drawn by stratum: the probability kept
    # the benchmark's page shows the human-graded section, and links to the grading page
    page.goto(f"{grading_view.base}/b/{judged}")
    _ready(page)
    assert page.get_attribute("#human-graded", "data-grades") == "2"
    assert page.get_attribute("#grade-link", "href") == f"/b/{judged}/grade"
