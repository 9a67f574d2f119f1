"""``hrb view``'s credential never reaches another server on the same machine, in headless Chromium.

Browsers send a host's cookies to every port of it, so a view that let its pages in with a
cookie handed it to any other server on ``127.0.0.1`` the browser visited. The view's session
key lives in the tab's ``sessionStorage`` and goes out in a header its own script sets, both
bound to the view's origin (port included). Here Chromium opens the view through the private
one-time page ``hrb view`` starts the browser on, reloads it, opens a benchmark in a tab of its
own, then visits a second server on another port of 127.0.0.1 (started by the test, recording
every request's headers), whose page also fetches from itself: that server must receive no
cookie and no header holding the session key, the token or the code. The one-time link is
refused the second time; a tab opened when no tab of the view is left is refused its data.
"""

from __future__ import annotations

import http.server
import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._slow import slow
from tests.server._daemon import Daemon
from tests.view.conftest import View
from tests.view.test_access import RECORDER
from tests.view.test_browser import _ready, browser, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser

OTHER_PAGE = b"""<!doctype html><meta charset="utf-8"><title>another server</title>
<script>fetch("/probe", {credentials: "include"}).then(() => document.title = "probed");</script>
"""


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[dict[str, str]]

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
        body = OTHER_PAGE if self.path == "/" else b"{}"
        self.send_response(200)
        self.send_header("content-type", "text/html" if self.path == "/" else "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def other_server() -> Iterator[tuple[int, list[dict[str, str]]]]:
    """Another server on 127.0.0.1, a port of its own: every request's path and headers."""
    seen: list[dict[str, str]] = []
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=slow(10))


def _opened_view(home: Path, tmp_path: Path) -> tuple[View, str]:
    """``hrb view`` started with "the browser" a recorder: the view and the private page it got."""
    record = tmp_path / "browser.json"
    recorder = tmp_path / "browser"
    recorder.write_text(RECORDER.format(python=sys.executable, out=str(record)))
    recorder.chmod(0o700)
    view = View(home, browser=str(recorder))
    deadline = time.monotonic() + slow(10)
    while not record.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    (opener,) = json.loads(record.read_text())["argv"]
    return view, opener


def test_no_other_local_server_receives_the_views_credential(
    page: Any,  # noqa: F811
    browser: Any,  # noqa: F811
    shared_daemon: Daemon,
    mock_ids: tuple[str, str],
    other_server: tuple[int, list[dict[str, str]]],
    tmp_path: Path,
) -> None:
    port, seen = other_server
    view, opener = _opened_view(shared_daemon.home, tmp_path)
    try:
        code_url = re.search(r'location\.replace\("([^"]+)"\)', Path(opener[len("file://") :]).read_text())
        assert code_url is not None
        code = code_url.group(1).split("code=")[1]
        token = view.url.split("token=")[1]
        row = f'#benchmarks tr[data-id="{mock_ids[0]}"]'

        page.goto(opener)  # the private page -> ?code= -> the list, the code gone from the address
        page.wait_for_url(f"{view.base}/")
        _ready(page)
        assert page.locator(row).count() == 1
        key = page.evaluate("sessionStorage.getItem('hrb-view-session')")
        assert key and key == view.session and key not in (token, code)
        assert page.context.cookies(view.base) == []  # no cookie at all

        page.reload()  # a reload keeps working: the tab keeps its key
        _ready(page)
        assert page.locator(row).count() == 1

        other_tab = browser.new_page()  # a benchmark opened in a tab of its own gets the key
        other_tab.goto(f"{view.base}/b/{mock_ids[0]}")
        _ready(other_tab)
        assert other_tab.locator("#error").count() == 0 and other_tab.locator("#arms").count() == 1

        for tab in (page, other_tab):  # both tabs then visit the other server
            tab.goto(f"http://127.0.0.1:{port}/")
            tab.wait_for_function("document.title === 'probed'")
        other_tab.close()
        assert len(seen) >= 4 and {s["path"] for s in seen} >= {"/", "/probe"}
        secrets = (key, token, code)
        for request in seen:
            assert "cookie" not in request, request
            assert not [v for v in request.values() if any(s in v for s in secrets)], request

        again = browser.new_page()  # the one-time link, a second time
        try:
            response = again.goto(code_url.group(1))
            assert response is not None and response.status == 403
            # with no tab of the view left, a new one has no key: its data is refused
            again.goto(f"{view.base}/")
            _ready(again)
            assert "open the URL hrb view printed" in again.locator("#error").inner_text()
        finally:
            again.close()
    finally:
        view.stop()
