"""``hrb view``'s access token never reaches a command line another local user can read.

A real ``hrb view`` subprocess on a real daemon opens "the browser": a recorder named by
``BROWSER`` that keeps its argv and every process's command line at that moment. The browser
must get a private local file (0600 in a 0700 folder) carrying a one-time code, never the
token; the code gives the session key once (no cookie); without the key every API request is
refused; the file and its folder go with the server.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import msgspec
import pytest

from tests._slow import slow
from tests.server._daemon import Daemon
from tests.view.conftest import SESSION, View

RECORDER = """#!{python}
import json, os, sys
cmdlines = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            with open(f"/proc/{{pid}}/cmdline", "rb") as f:
                cmdlines.append(f.read().replace(b"\\0", b" ").decode(errors="replace"))
        except OSError:
            pass
with open({out!r}, "w") as f:
    json.dump({{"argv": sys.argv[1:], "cmdlines": cmdlines}}, f)
"""


def _cmdlines() -> list[str]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                out.append(
                    Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                )
            except OSError:
                pass
    return out


def _refused(url: str) -> int:
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.build_opener().open(url, timeout=slow(10))
    err.value.close()
    return err.value.code


def test_the_browser_gets_a_private_one_time_page_never_the_token(
    shared_daemon: Daemon, mock_ids: tuple[str, str], tmp_path: Path
) -> None:
    record = tmp_path / "browser.json"
    recorder = tmp_path / "browser"
    recorder.write_text(RECORDER.format(python=sys.executable, out=str(record)))
    recorder.chmod(0o700)
    view = View(shared_daemon.home, browser=str(recorder))
    try:
        token = urllib.parse.parse_qs(urllib.parse.urlsplit(view.url).query)["token"][0]
        deadline = time.monotonic() + slow(10)
        while not record.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        seen = json.loads(record.read_text())

        # the browser was started on a file, and no process's command line holds the token
        (arg,) = seen["argv"]
        assert arg.startswith("file://") and token not in arg
        page = Path(urllib.parse.unquote(urllib.parse.urlsplit(arg).path))
        assert stat.S_IMODE(page.stat().st_mode) == 0o600 and page.stat().st_uid == os.getuid()
        assert stat.S_IMODE(page.parent.stat().st_mode) == 0o700
        code_url = re.search(r'location\.replace\("([^"]+)"\)', page.read_text())
        assert code_url is not None
        code = urllib.parse.parse_qs(urllib.parse.urlsplit(code_url.group(1)).query)["code"][0]
        assert code != token and code_url.group(1).startswith(view.base + "/?code=")
        for cmdlines in (seen["cmdlines"], _cmdlines()):  # while the browser ran, and now
            assert any("hrbench_client.cli" in c for c in cmdlines)
            assert not [c for c in cmdlines if token in c or code in c]

        # no data is answered without the session key the token or the code gives
        for path in ("/api/benchmarks", f"/api/benchmark/{mock_ids[0]}"):
            assert _refused(view.base + path) == 403

        # the code gives the session key once (no cookie); the page goes on without the code
        with urllib.request.urlopen(code_url.group(1), timeout=slow(10)) as r:
            assert r.status == 200 and r.headers["set-cookie"] is None
            shown = r.read().decode()
        assert 'location.replace("/")' in shown and token not in shown and code not in shown
        found = SESSION.search(shown)
        assert found is not None and found.group(1) == view.session
        assert not page.exists()  # spent: the file that held it is gone
        req = urllib.request.Request(
            view.base + "/api/benchmarks", headers={"x-hrb-view-session": found.group(1)}
        )
        with urllib.request.urlopen(req, timeout=slow(10)) as r:
            names = [b["name"] for b in msgspec.json.decode(r.read())["benchmarks"]]
        assert "mock-view-a" in names
        assert _refused(code_url.group(1)) == 403  # a code works once
        folder = page.parent
    finally:
        view.stop()
    assert not folder.exists()  # the server took its folder with it
