"""The docs' blocks share one daemon and one loopback model server per test process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrbench.testing import LoopbackServer
from tests import _procs
from tests._slow import slow
from tests.docs import _blocks, _site


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_site.Site]:
    """A state folder with a daemon started in it, and a loopback OpenAI-compatible server."""
    home = tmp_path_factory.mktemp("docs-home")
    with LoopbackServer(reply_fn=_site.reply) as srv:
        site = _site.Site(home=home, base_url=srv.base_url)
        subprocess.run(
            [sys.executable, "-m", "hrbench_client.cli", "daemon", "start", "--idle-exit", "10m"],
            env=site.environment(),
            check=True,
            capture_output=True,
            timeout=slow(60),
        )
        try:
            yield site
        finally:
            _procs.stop_daemon(home)


@pytest.fixture
def page_dir(tmp_path: Path, docs_site: _site.Site) -> Iterator[Path]:
    """A page's working folder; a daemon a block restarted (after `hrb daemon stop`) is stopped after it."""
    shared = _procs.daemon_of(docs_site.home)
    try:
        yield _site.workdir(tmp_path)
    finally:
        now = _procs.daemon_of(docs_site.home)
        if now is not None and now != shared:
            _procs.stop_daemon(docs_site.home)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say how many of the docs' code blocks the suite runs as written."""
    reports = [r for key in ("passed", "failed") for r in terminalreporter.stats.get(key, [])]
    if not any(getattr(r, "nodeid", "").startswith("tests/docs/test_blocks.py") for r in reports):
        return  # a run of other tests only
    c = _blocks.counts()
    ran = sum(v for k, v in c.items() if k in _blocks.RUN)
    detail = ", ".join(f"{v} {k}" for k, v in sorted(c.items()) if k in _blocks.RUN)
    terminalreporter.write_line(
        f"docs: {ran} code blocks run as written ({detail}), {c.get('file', 0)} written as files, "
        f"{c.get('no-run', 0)} marked no-run, {c.get('not code', 0)} output or diagrams"
    )
