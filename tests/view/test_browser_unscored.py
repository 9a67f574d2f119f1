"""``hrb view`` in headless Chromium: a benchmark the budget stopped flags what rests on stopped runs.

Rule (docs/guides/budgets.md, "What a report says of a stopped benchmark"): runs the budget
stopped count wrong in each arm's accuracy (seed 002), so every interval resting on them is
marked where it is shown: the page's arm table marks such an interval with `*` and the report's
note as its title, says under the table that those figures measure the budget, not the arm, and
marks each difference whose items were cut to those both arms had scored alike.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.server._daemon import Daemon
from tests.view.conftest import View
from tests.view.test_browser import OUT, _ready, browser, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


def _spec(tmp_path: Path, srv: LoopbackServer) -> Path:
    """Two model arms and one outputs arm on 8 items in 4 clusters, 5 runs each, stopped after 30 calls."""
    items = {f"q{i}": f"Say x{i}. [[reply:x{i}]]" for i in range(8)}
    (tmp_path / "ref.jsonl").write_text(
        "".join(
            json.dumps({"id": k, "item": v, "label": f"x{k[1:]}", "cluster": f"c{int(k[1:]) // 2}"}) + "\n"
            for k, v in items.items()
        )
    )
    (tmp_path / "outs.jsonl").write_text(
        "".join(json.dumps({"item": k, "output": f"x{k[1:]}"}) + "\n" for k in items)
    )
    spec = tmp_path / "s.toml"
    spec.write_text(
        f'name = "stopped"\nruns = 5\nscorer = "exact"\n[reference]\npath = "{tmp_path / "ref.jsonl"}"\n'
        f'[client]\nkind = "openai"\nmodel = "loop"\nbase_url = "{srv.base_url}"\napi_key_env = false\n'
        '[[arms]]\nkind = "prompt"\nname = "plain"\ntemplate = "{item}"\n'
        '[[arms]]\nkind = "prompt"\nname = "hedge"\ntemplate = "Briefly. {item}"\n'
        f'[[arms]]\nkind = "outputs"\nname = "offline"\npath = "{tmp_path / "outs.jsonl"}"\n'
        "[governor]\nmax_calls = 30\n"
    )
    return spec


def test_the_page_marks_what_rests_on_budget_stopped_runs(
    page: Any,  # noqa: F811
    view: View,
    shared_daemon: Daemon,
    tmp_path: Path,
) -> None:
    hrb = [sys.executable, "-m", "hrbench_client.cli", "--home", str(shared_daemon.home), "--no-autostart"]
    with LoopbackServer() as srv:
        proc = subprocess.run(
            [*hrb, "bench", str(_spec(tmp_path, srv)), "--no-rows"],
            capture_output=True,
            text=True,
            timeout=slow(180),
        )
    assert proc.returncode == 4, proc.stderr  # a budget stop
    bench_id = json.loads(proc.stdout.splitlines()[-1])["id"]
    with shared_daemon.client() as c:
        shown = c.view(bench_id)
    assert shown.report is not None
    arms = {a["arm"]: a for a in shown.report["arms"]}
    flagged = {name for name, a in arms.items() if a.get("unscored_note")}
    assert flagged and "offline" not in flagged  # the outputs arm made no call: nothing of it stopped
    assert all(arms[name]["budget_stop"] > 0 for name in flagged)
    assert any(d.get("unscored_note") for d in shown.report["comparisons"])  # a pair cut to fewer items

    page.goto(view.url)  # its token gives the tab the session key, which opens the other pages
    _ready(page)
    page.goto(f"{view.base}/b/{bench_id}")
    page.wait_for_selector("#matrix-count[data-n]")
    _ready(page)
    marked = page.eval_on_selector_all(
        "[data-k=interval][data-unscored]", "tds => tds.map(td => [td.textContent, td.title])"
    )
    assert marked and all(text.endswith(" *") for text, _ in marked)
    assert {title for _, title in marked} == {arms[name]["unscored_note"] for name in flagged}
    unmarked = page.eval_on_selector_all("#arms [data-k=interval]:not([data-unscored])", "tds => tds.length")
    assert unmarked >= 1  # the outputs arm's interval is shown plain
    for name in flagged:
        banner = page.locator(f'p[data-unscored-note="{name}"]').first
        assert banner.count() == 1
        assert banner.text_content() == (
            f"* {name}: {arms[name]['unscored_note']}: they measure the budget, not the arm."
        )
    # a difference cut to the items both arms had scored alike: its items marked, a banner says why
    cut = page.eval_on_selector_all(
        "#differences tbody tr:has([data-k=n_items][data-unscored])",
        "trs => trs.map(tr => [tr.dataset.arm, tr.querySelector('[data-k=n_items]').textContent])",
    )
    assert cut and all(items.endswith(" *") for _, items in cut)
    for arm, _ in cut:
        note = page.locator(f'#differences ~ p[data-unscored-note="{arm}"]')
        assert note.count() == 1 and (note.text_content() or "").startswith(f"* {arm} − ")
    OUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUT / "view-budget-stopped.png"), full_page=True)
