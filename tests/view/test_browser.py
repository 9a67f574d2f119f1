"""``hrb view`` in a real headless Chromium (Debian's /usr/bin/chromium driven by Playwright).

Run by ``make test-browser`` (which installs Chromium and Playwright), excluded from ``make
test``. On a benchmark made from the shipped SQuAD 2.0 runs (four Llama-3.2-3B pipelines'
answers, plus one arm that gets the baseline's answers through a model client, so its cells
have traces) it opens the list, searches, opens the benchmark, checks the numbers shown equal
``hrbench.stats.report``'s, filters to disagreements, opens a cell's trace, compares two
benchmarks and opens the ``hrb report --html`` file with the network blocked. Screenshots go
to ``out/view-*.png``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from hrbench.records import Row, run_output
from hrbench.stats import report
from hrbench_client import protocol as p
from tests._benches import mock_spec, run, squad_spec
from tests._slow import slow
from tests.conftest import data_dir
from tests.server._daemon import Daemon
from tests.view.conftest import View

pytestmark = pytest.mark.browser

OUT = Path(__file__).resolve().parents[2] / "out"
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def _p(v: float | None) -> str:
    return "-" if v is None else "<0.001" if v < 0.001 else f"{v:.3f}"


@pytest.fixture(scope="module")
def squad(shared_daemon: Daemon) -> dict[str, Any]:
    """Two benchmarks of the shipped SQuAD runs on the same 50 questions (one arm with traces)."""
    data = data_dir()
    params = squad_spec(data)
    questions = {}
    for line in (data / "squad2-dev-llama32-3b" / "questions.jsonl").read_text().splitlines():
        q = json.loads(line)
        questions[q["qid"]] = q["question"]
    baseline = {}
    for line in (data / "squad2-dev-llama32-3b" / "runs" / "baseline_raw_50.jsonl").read_text().splitlines():
        r = json.loads(line)
        baseline[questions[r["qid"]]] = r["prediction"]
    params = msgspec.structs.replace(
        params,
        arms=[*params.arms, p.PromptArmSpec(name="baseline_via_model", template="{question}")],
        client=p.MockClientSpec(replies=baseline, default="NO ANSWER", model="llama-3.2-3b-answers"),
    )
    with shared_daemon.client() as c:
        first = run(c, params)
        second = run(c, msgspec.structs.replace(params, name="squad2-shared-50-again"))
        rows = [msgspec.convert(msgspec.to_builtins(r), Row) for r in c.rows(first).rows]
    return {"id": first, "again": second, "rows": rows, "baseline": baseline}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright  # installed by make test-browser

    with tempfile.TemporaryDirectory() as profile, sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            args=FLAGS,
            headless=True,
            viewport={"width": 1280, "height": 900},
        )
        try:
            yield ctx
        finally:
            ctx.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    pg = browser.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    yield pg
    pg.close()
    assert errors == []


def _ready(page: Any) -> None:
    page.wait_for_selector("body[data-ready]")


def _check_metrics(page: Any, view: Any) -> None:
    """The metric columns show the stored summary's metric means."""
    for arm in view.arms:
        for name, value in arm.metrics.items():
            cell = page.locator(f'#arms tr[data-arm="{arm.arm}"] [data-k="metric-{name}"]')
            assert cell.text_content() == _f(value)


def _check_arm_table(page: Any, rep: Any) -> None:
    shown = page.eval_on_selector_all(
        "#arms tbody tr",
        "trs => trs.map(tr => [tr.dataset.arm, ...['accuracy', 'interval', 'n_runs']"
        ".map(k => tr.querySelector(`[data-k=${k}]`).textContent)])",
    )
    assert shown == [
        [a.arm, _f(a.accuracy), f"[{_f(a.ci_low)}, {_f(a.ci_high)}]", str(a.n_runs)] for a in rep.arms
    ]


def _check_differences(page: Any, rep: Any, against: str) -> None:
    expect = []
    for c in rep.comparisons:
        if against not in (c.arm_a, c.arm_b):
            continue
        turned = c.arm_a == against  # report() has (against, other): the view shows other - against
        diff, lo, hi = (
            (0.0 - c.diff, 0.0 - c.ci_high, 0.0 - c.ci_low) if turned else (c.diff, c.ci_low, c.ci_high)
        )
        other = c.arm_b if turned else c.arm_a
        expect.append((other, [other, _f(diff), f"[{_f(lo)}, {_f(hi)}]", _p(c.p_value), _p(c.p_holm)]))
    order = [a.arm for a in rep.arms]
    expect.sort(key=lambda e: order.index(e[0]))
    shown = page.eval_on_selector_all(
        "#differences tbody tr",
        "trs => trs.map(tr => [tr.dataset.arm, ...['diff', 'interval', 'p_value', 'p_holm']"
        ".map(k => tr.querySelector(`[data-k=${k}]`).textContent)])",
    )
    assert shown == [e[1] for e in expect]
    # the forest plot draws the same numbers
    drawn = page.evaluate(
        "Chart.getChart('forest').data.datasets[0].data.map(p => [p.d.arm, p.x, p.xMin, p.xMax])"
    )
    assert [[a, _f(x), _f(lo), _f(hi)] for a, x, lo, hi in drawn] == [
        [e[0], e[1][1], *e[1][2][1:-1].split(", ")] for e in expect
    ]


def test_browse_a_squad_benchmark(
    page: Any, view: View, squad: dict[str, Any], shared_daemon: Daemon
) -> None:
    OUT.mkdir(exist_ok=True)
    bench_id = squad["id"]
    rep = report(squad["rows"], descriptive=True)

    # the list, then a search
    page.goto(view.url)
    _ready(page)
    assert page.locator(f'#benchmarks tr[data-id="{bench_id}"]').count() == 1
    page.screenshot(path=str(OUT / "view-list.png"), full_page=True)
    page.fill("#search", "shared-50-AGAIN")
    page.wait_for_function("document.querySelectorAll('#benchmarks tr').length === 1")
    assert page.locator("#benchmarks tr").get_attribute("data-id") == squad["again"]
    page.fill("#search", "squad2-shared-50")
    page.wait_for_function("document.querySelectorAll('#benchmarks tr').length === 2")

    # one benchmark: descriptive only, the arm table and differences are report()'s numbers
    page.click(f'#benchmarks tr[data-id="{bench_id}"] a.name')
    page.wait_for_selector("#matrix-count[data-n]")
    assert rep.descriptive
    assert "Descriptive only" in page.text_content("#descriptive")
    for header in ("#arms thead", "#differences thead"):
        assert "(descriptive only)" in page.text_content(header)
    _check_arm_table(page, rep)
    _check_differences(page, rep, "baseline_raw")
    with shared_daemon.client() as c:
        _check_metrics(page, c.view(bench_id))
    page.screenshot(path=str(OUT / "view-benchmark.png"), full_page=True)
    page.screenshot(
        path=str(OUT / "view-benchmark-top.png"), clip={"x": 0, "y": 0, "width": 1280, "height": 900}
    )

    # against another arm
    page.select_option("#against", "pipeline_v2_final")
    page.wait_for_function(
        "document.querySelector('#differences thead').textContent.includes('pipeline_v2_final')"
    )
    _check_differences(page, rep, "pipeline_v2_final")

    # the matrix filtered to disagreements: the items the daemon's filter returns
    n_all = int(page.get_attribute("#matrix-count", "data-n"))
    assert n_all == 50
    page.check("#f-disagree")
    with shared_daemon.client() as c:
        want = c.matrix(bench_id, disagree=True)
    page.wait_for_function(f"document.querySelector('#matrix-count').dataset.n === '{want.n_items}'")
    assert 0 < want.n_items < 50
    shown = page.eval_on_selector_all("#matrix tbody tr", "trs => trs.map(tr => tr.dataset.item)")
    assert shown == [i.item for i in want.items]
    page.select_option("#f-failure_kind", "not_in_document")
    with shared_daemon.client() as c:
        both = c.matrix(bench_id, disagree=True, failure_kind="not_in_document")
    page.wait_for_function(f"document.querySelector('#matrix-count').dataset.n === '{both.n_items}'")
    page.select_option("#f-failure_kind", "")
    page.locator("#matrix-title").scroll_into_view_if_needed()
    page.screenshot(path=str(OUT / "view-disagree.png"))

    # a cell of the arm with traces: the request, the reply, the command
    item = next(i for i in want.items if i.cells[-1] is not None)
    page.click(f'#matrix tr[data-item="{item.item}"] td[data-arm="baseline_via_model"] a')
    page.wait_for_selector("#command")
    _ready(page)
    with shared_daemon.client() as c:
        cell = c.cell(bench_id, item.item, "baseline_via_model")
    assert page.text_content("#command") == cell.command
    step = cell.runs[0].trace[0]
    question = step.messages[0]["content"]  # type: ignore[index]
    assert page.text_content(".step pre") == question
    assert page.text_content(".step pre.reply") == squad["baseline"][question] == step.text
    assert "source live" in page.text_content(".step .muted")
    # the arm's output as its scorer received it, kept with the run (hrb rows' output column)
    assert page.text_content("[data-run] pre.output") == run_output(cell.runs[0].trace) == step.text
    assert page.text_content("[data-run] [data-k=correct]") == (
        "right" if cell.runs[0].row.correct else "wrong"
    )
    page.screenshot(path=str(OUT / "view-cell.png"), full_page=True)

    # two benchmarks on the same reference: the same answers, so every difference is 0
    page.goto(f"{view.base}/compare?a={bench_id}&b={squad['again']}")
    _ready(page)
    diffs = page.eval_on_selector_all(
        "#differences tbody tr [data-k=diff]", "tds => tds.map(td => td.textContent)"
    )
    assert diffs == ["0.000"] * 5
    assert "Descriptive only" in page.text_content("main")
    # each benchmark by name and id, and the direction in words (never a bare "mycaps - mycaps")
    title = page.text_content("#title")
    assert f"({squad['again'][:8]}) against" in title and title.endswith(f"({bench_id[:8]})")
    direction = page.text_content("#direction")
    assert "A positive difference means the arm scored higher in" in direction
    assert direction.index(squad["again"][:8]) < direction.index(bench_id[:8])
    page.screenshot(path=str(OUT / "view-compare.png"), full_page=True)


def test_the_html_report_opens_offline(
    page: Any, squad: dict[str, Any], shared_daemon: Daemon, tmp_path: Path
) -> None:
    out = tmp_path / "squad.html"
    subprocess.run(
        [sys.executable, "-m", "hrbench_client.cli", "--home", str(shared_daemon.home), "--no-autostart"]
        + ["report", squad["id"], "--html", str(out)],
        check=True,
        capture_output=True,
        timeout=slow(120),
    )
    asked: list[str] = []

    def block(route: Any) -> None:
        asked.append(route.request.url)
        route.abort()

    page.route("http*://**/*", block)
    page.goto(out.as_uri())
    _ready(page)
    page.wait_for_selector("#matrix-count[data-n]")
    rep = report(squad["rows"], descriptive=True)
    _check_arm_table(page, rep)
    _check_differences(page, rep, "baseline_raw")
    page.select_option("#against", "early_pipeline")
    page.wait_for_function(
        "document.querySelector('#differences thead').textContent.includes('early_pipeline')"
    )
    _check_differences(page, rep, "early_pipeline")
    page.check("#f-disagree")
    with shared_daemon.client() as c:
        n = c.matrix(squad["id"], disagree=True).n_items
    assert page.get_attribute("#matrix-count", "data-n") == str(n)
    assert asked == []
    page.screenshot(path=str(OUT / "view-html-report.png"), full_page=True)


def test_the_list_shows_live_progress(page: Any, view: View, shared_daemon: Daemon) -> None:
    spec = mock_spec("live-progress")
    spec["arms"] = [{"kind": "prompt", "name": "ask", "template": "{item}?"}]
    # 55 rows at 0.9 s: about 50 s, so a slow, loaded machine still sees it running (at 0.4 s it
    # could finish before the page had measured a rate); closing the stream cancels it
    spec["client"] = {"kind": "mock", "reply": "yes", "delay_s": 0.9}
    spec["concurrency"] = 1
    spec["governor"] = {"max_usd": 3.0}
    spec["stream"] = False  # no row notifications pile up unread while the page is checked
    spec["cache"] = False  # every call waits its delay, whatever ran before on this daemon
    with shared_daemon.client() as c:
        stream = c.benchmark(spec)
        try:
            page.goto(view.url.replace("/?", "/?search=live-progress&"))
            _ready(page)
            page.wait_for_function(
                "(document.querySelector('[data-k=progress]') || {}).textContent?.includes('rows/s')",
                timeout=slow(30_000),
            )
            text = page.text_content("[data-k=progress]")
            assert re.fullmatch(r"\d+/55 rows · [\d.]+ rows/s · ETA \d+s · \$0\.0000 of \$3\.00", text), text
            page.screenshot(path=str(OUT / "view-live.png"))
        finally:
            stream.close()


@pytest.mark.parametrize(
    ("governor", "client", "banner", "label"),
    [
        # every run fails: the model server's port is dead
        ({}, "dead", "#runs-failed", "Runs failed: "),
        ({"max_calls": 3}, "mock", "#budget-stopped", "Budget stopped: "),
    ],
)
def test_the_page_shows_why_a_benchmark_is_not_done(
    page: Any,
    shared_daemon: Daemon,
    tmp_path: Path,
    governor: dict[str, Any],
    client: str,
    banner: str,
    label: str,
) -> None:
    from hrbench.testing import LoopbackServer

    with LoopbackServer() as srv:
        dead = srv.base_url
    spec = {
        "name": f"not-done-{client}",
        "runs": 5,
        "reference": {"items": {"q1": "France", "q2": "Peru"}, "labels": ["Paris", "Lima"]},
        "arms": [{"kind": "prompt", "name": "ask", "template": "Capital of {item}?"}],
        "client": (
            {"kind": "openai", "model": "m", "base_url": dead, "api_key_env": None, "max_attempts": 1}
            if client == "dead"
            else {"kind": "mock", "reply": "Paris"}
        ),
        "governor": governor,
    }
    with shared_daemon.client() as c:
        stream = c.benchmark(spec)
        list(stream)
        assert stream.result is not None and stream.result.status in ("errors", "budget_stopped")
        listing = {b.id: b for b in c.benchmarks()}[stream.result.id]
    assert listing.stop_note
    out = tmp_path / "page.html"
    subprocess.run(
        [sys.executable, "-m", "hrbench_client.cli", "--home", str(shared_daemon.home), "--no-autostart"]
        + ["report", stream.result.id, "--html", str(out)],
        check=True,
        capture_output=True,
        timeout=slow(120),
    )
    page.goto(out.as_uri())
    _ready(page)
    assert page.text_content(banner) == label + listing.stop_note
    assert page.text_content('[data-k="status"]') == listing.status
