"""``hrb view`` in headless Chromium: the private page the browser is started on opens the view.

Run by ``make test-browser`` with the other browser tests. ``hrb view`` starts "the browser"
(a recorder named by ``BROWSER``) on a local file; Chromium opening that file must land on the
list of benchmarks with its data loaded (the one-time code gave the tab the session key, which
the page's own requests carry in a header), with neither the code nor the token left in the
address, and no cookie.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests._slow import slow
from tests.server._daemon import Daemon
from tests.view.conftest import View
from tests.view.test_access import RECORDER
from tests.view.test_browser import _ready, browser, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


def test_the_private_page_opens_the_view_in_chromium(
    page: Any,  # noqa: F811
    shared_daemon: Daemon,
    mock_ids: tuple[str, str],
    tmp_path: Path,
) -> None:
    record = tmp_path / "browser.json"
    recorder = tmp_path / "browser"
    recorder.write_text(RECORDER.format(python=sys.executable, out=str(record)))
    recorder.chmod(0o700)
    view = View(shared_daemon.home, browser=str(recorder))
    try:
        deadline = time.monotonic() + slow(10)
        while not record.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        (opener,) = json.loads(record.read_text())["argv"]
        page.goto(opener)
        page.wait_for_url(f"{view.base}/")
        _ready(page)
        assert page.locator(f'#benchmarks tr[data-id="{mock_ids[0]}"]').count() == 1
        assert "code=" not in page.url and "token=" not in page.url
        # the tab keeps the session key (not the token); no cookie is set
        assert page.evaluate("sessionStorage.getItem('hrb-view-session')") == view.session
        assert page.context.cookies(view.base) == []
    finally:
        view.stop()
