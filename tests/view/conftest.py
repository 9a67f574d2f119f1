from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests._benches import mock_spec, run
from tests._slow import slow
from tests.server._daemon import Daemon
from tests.server.conftest import shared_daemon

__all__ = ["View", "mock_ids", "shared_daemon", "view"]


SESSION = re.compile(r'sessionStorage\.setItem\("hrb-view-session", "([\w-]+)"\)')
"""The session key in the page the view answers a link with (what ``app.js`` then sends)."""


class View:
    """A real ``hrb view --no-browser`` subprocess and an HTTP opener that sends its session key."""

    def __init__(self, home: Path, target: str | None = None, browser: str | None = None) -> None:
        """``browser``: a command ``hrb view`` opens the page with (``BROWSER``; a screen is faked)."""
        cmd = [sys.executable, "-m", "hrbench_client.cli", "--home", str(home), "--no-autostart", "view"]
        cmd += [target] if target else []
        env = None
        if browser is None:
            cmd.append("--no-browser")
        else:
            env = {**os.environ, "BROWSER": browser, "DISPLAY": os.environ.get("DISPLAY") or ":0"}
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:  # a view that never answered is stopped, not left serving
            self._wait_url()
        except BaseException:
            self.stop()
            raise

    def _wait_url(self) -> None:
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url:
            raise RuntimeError(
                f"hrb view printed no URL: {self.proc.stderr.read() if self.proc.stderr else ''}"
            )
        self.base = self.url.split("?")[0].rsplit("/", 2)[0] if "/b/" in self.url else self.url.split("/?")[0]
        self.opener = urllib.request.build_opener()
        self.session = self.wait()
        self.opener.addheaders.append(("x-hrb-view-session", self.session))

    def wait(self) -> str:
        """Open the printed URL (once it answers) as a browser would: the session key it gives."""
        import time

        deadline = time.monotonic() + slow(10)
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(self.url, timeout=slow(10)) as r:
                    found = SESSION.search(r.read().decode())
                    if r.status == 200 and found:
                        return found.group(1)
            time.sleep(0.02)
        raise RuntimeError("hrb view did not answer")

    def get(self, path: str) -> Any:
        with self.opener.open(self.base + path, timeout=slow(60)) as r:
            return msgspec.json.decode(r.read())

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=slow(15))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=slow(5))
        for f in (self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()


@pytest.fixture(scope="module")
def mock_ids(shared_daemon: Daemon) -> tuple[str, str]:
    spec = mock_spec("mock-view-a")
    spec["arms"].append({"kind": "prompt", "name": "ask", "template": "{item}?"})
    spec["client"] = {
        "kind": "mock",
        "replies": {"question 2?": "no", "question 3?": "yes"},
        "default": "maybe",
    }
    with shared_daemon.client() as c:
        return run(c, spec), run(c, {**spec, "name": "mock-view-b"})


@pytest.fixture(scope="module")
def view(shared_daemon: Daemon, mock_ids: tuple[str, str]) -> Iterator[View]:
    v = View(shared_daemon.home)
    try:
        yield v
    finally:
        v.stop()
