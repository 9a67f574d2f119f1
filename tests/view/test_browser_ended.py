"""``hrb view`` in headless Chromium: a cancelled benchmark's banner, and why runs were never scored.

Rules (docs/guides/shell.md, "A benchmark that ended early"; docs/guides/budgets.md, "What a
report says of a stopped benchmark"): the page of a cancelled benchmark says under its header
that it was cancelled, how many runs finished and the command that resumes it, as `hrb report`
does; an arm whose runs ended in errors is said to measure the errors, not the budget.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.server._daemon import Daemon
from tests.view.conftest import View
from tests.view.test_browser import _ready, browser, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


def _hrb(daemon: Daemon, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "hrbench_client.cli", "--home", str(daemon.home), "--no-autostart", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=slow(180))


def _open(page: Any, view: View, bench_id: str) -> None:  # noqa: F811
    page.goto(view.url)  # its token gives the tab the session key, which opens the other pages
    _ready(page)
    page.goto(f"{view.base}/b/{bench_id}")
    page.wait_for_selector("#matrix-count[data-n]")
    _ready(page)


def test_a_cancelled_benchmark_page_says_so_with_its_resume_command(
    page: Any,  # noqa: F811
    view: View,
    shared_daemon: Daemon,
    tmp_path: Path,
) -> None:
    with LoopbackServer(latency_s=0.2) as srv:
        spec = tmp_path / "s.toml"
        items = ", ".join(f'q{i} = "Say x {i}. [[reply:x]]"' for i in range(8))
        labels = ", ".join(f'q{i} = "x"' for i in range(8))
        spec.write_text(
            f'name = "cut"\nruns = 5\nconcurrency = 1\n[reference]\nitems = {{{items}}}\nlabels = {{{labels}}}\n'
            f'[client]\nkind = "openai"\nmodel = "loop"\nbase_url = "{srv.base_url}"\napi_key_env = false\n'
            '[[arms]]\nkind = "prompt"\nname = "plain"\ntemplate = "{item}"\n'
        )
        sent = _hrb(shared_daemon, "bench", str(spec), "--detach")
        assert sent.returncode == 0, sent.stderr
        bid = json.loads(sent.stdout.splitlines()[-1])["id"]
        deadline = time.monotonic() + slow(60)
        while time.monotonic() < deadline and len(_hrb(shared_daemon, "rows", bid).stdout.splitlines()) < 3:
            time.sleep(0.1)
        assert _hrb(shared_daemon, "cancel", bid).returncode == 0
    done = len(_hrb(shared_daemon, "rows", bid).stdout.splitlines())
    _open(page, view, bid)
    banner = page.locator("#ended-early")
    assert banner.count() == 1
    assert banner.text_content() == (
        f"Cancelled: benchmark {bid} was cancelled with {done} of 40 runs finished: its report is descriptive of "
        f"those runs; resume it with `hrb bench --resume {bid}`"
    )
    assert page.locator("#budget-stopped").count() == 0


def test_runs_that_ended_in_errors_are_said_to_measure_the_errors(
    page: Any,  # noqa: F811
    view: View,
    shared_daemon: Daemon,
    tmp_path: Path,
) -> None:
    (tmp_path / "outs.jsonl").write_text(
        "".join(json.dumps({"item": f"q{i}", "output": "x"}) + "\n" for i in range(1, 6))
    )
    spec = tmp_path / "s.toml"
    items = ", ".join(f'q{i} = "Say x {i}."' for i in range(6))
    labels = ", ".join(f'q{i} = "x"' for i in range(6))
    spec.write_text(
        f'name = "gaps"\nruns = 1\nscorer = "exact"\n[reference]\nitems = {{{items}}}\nlabels = {{{labels}}}\n'
        f'[[arms]]\nkind = "outputs"\nname = "offline"\nmissing = "error"\npath = "{tmp_path / "outs.jsonl"}"\n'
    )
    proc = _hrb(shared_daemon, "bench", str(spec), "--no-rows")
    assert proc.returncode == 3, proc.stderr  # runs ended in errors
    bid = json.loads(proc.stdout.splitlines()[-1])["id"]
    _open(page, view, bid)
    note = page.locator('p[data-unscored-note="offline"]')
    assert note.count() == 1
    assert note.text_content() == (
        "* offline: rests on 1 of 6 run(s) never scored (1 ended in an error), counted wrong: they measure the "
        "errors, not the arm."
    )
