"""``hrb view``'s server and ``hrb report --html``, without a browser: a real daemon, a real
``hrb view`` subprocess, plain HTTP. Every endpoint must answer what the daemon's read method
answers (the view is a thin client)."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import msgspec
import pytest

from hrbench_client.view import ASSETS
from tests._slow import slow
from tests.server._daemon import Daemon
from tests.view.conftest import View


def test_the_token_gives_a_session_key_the_api_needs_and_no_cookie(view: View) -> None:
    plain = urllib.request.build_opener()
    refused = [
        "/api/benchmarks",
        f"/?token={'x' * 32}",
        f"/?code={'x' * 32}",
        f"/api/benchmarks?token={view.url[-32:]}",
    ]
    for path in refused:
        with pytest.raises(urllib.error.HTTPError) as err:
            plain.open(view.base + path, timeout=slow(10))
        err.value.close()
        assert err.value.code == 403, path
    wrong = urllib.request.Request(view.base + "/api/benchmarks", headers={"x-hrb-view-session": "x" * 43})
    with pytest.raises(urllib.error.HTTPError) as err:
        plain.open(wrong, timeout=slow(10))
    err.value.close()
    assert err.value.code == 403
    for path in ("/", "/b/x", "/static/app.js"):  # the shell and its scripts hold no data
        with plain.open(view.base + path, timeout=slow(10)) as r:
            assert r.status == 200 and r.headers["set-cookie"] is None
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{32}", view.url)
    with plain.open(view.url, timeout=slow(10)) as r:  # the link: a page that keeps the key, no cookie
        page = r.read().decode()
        assert r.headers["set-cookie"] is None and r.headers["cache-control"] == "no-store"
    assert view.session in page and view.url.split("token=")[1] not in page
    assert 'location.replace("/")' in page
    assert view.get("/api/benchmarks")["benchmarks"]  # the opener sends the key in its header


def test_only_the_views_own_host_and_port_are_answered(view: View) -> None:
    port = int(view.base.rsplit(":", 1)[1])
    answered = {f"127.0.0.1:{port}": 200, f"localhost:{port}": 200}
    refused = ["attacker.example", f"attacker.example:{port}", "127.0.0.1", f"localhost:{port + 1}"]
    for host in [*answered, *refused]:
        req = urllib.request.Request(view.base + "/api/benchmarks", headers={"Host": host})
        try:
            with view.opener.open(req, timeout=slow(10)) as r:
                code = r.status
        except urllib.error.HTTPError as err:
            err.close()
            code = err.code
        assert code == answered.get(host, 400), host


def test_endpoints_answer_what_the_daemon_answers(
    view: View, shared_daemon: Daemon, mock_ids: tuple[str, str]
) -> None:
    a, b = mock_ids
    q = urllib.parse.quote
    with shared_daemon.client() as c:
        expect = {
            "/api/benchmarks": {"benchmarks": c.benchmarks()},
            "/api/benchmarks?search=VIEW-B": {"benchmarks": c.benchmarks(search="view-b")},
            f"/api/benchmark/{a}": c.view(a),
            f"/api/benchmark/{a}?against=flaky&level=0.9": c.view(a, "flaky", level=0.9),
            f"/api/benchmark/{a}/matrix": c.matrix(a),
            f"/api/benchmark/{a}/matrix?disagree=1&split=test": c.matrix(a, disagree=True, split="test"),
            f"/api/benchmark/{a}/matrix?cluster=c1&failure_kind=wrong": c.matrix(
                a, cluster="c1", failure_kind="wrong"
            ),
            f"/api/benchmark/{a}/cell?item=q2&arm={q('ask')}": c.cell(a, "q2", "ask"),
            f"/api/compare?a={a}&b={b}": c.compare_benchmarks(a, b),
        }
    for path, want in expect.items():
        assert view.get(path) == msgspec.to_builtins(want), path
    assert len(expect["/api/benchmarks?search=VIEW-B"]["benchmarks"]) == 1  # type: ignore[index]


@pytest.mark.parametrize(
    ("path", "code", "name"),
    [
        ("/api/benchmark/nope", 404, "NotFound"),
        ("/api/benchmark/{a}/cell?item=q2&arm=nobody", 404, "NotFound"),
        ("/api/benchmark/{a}/cell?item=q2", 400, "ConfigError"),
        ("/api/benchmark/{a}?level=high", 400, "ConfigError"),
        ("/api/benchmark/{a}?level=7", 400, "InvalidParams"),
        ("/api/benchmark/{a}?against=nobody", 400, "ConfigError"),
        ("/api/compare?a={a}", 400, "ConfigError"),
        ("/static/secrets.txt", 404, None),
    ],
)
def test_bad_requests_get_a_named_error(
    view: View, mock_ids: tuple[str, str], path: str, code: int, name: str | None
) -> None:
    with pytest.raises(urllib.error.HTTPError) as err:
        view.get(path.format(a=mock_ids[0]))
    assert err.value.code == code
    body = msgspec.json.decode(err.value.read())
    err.value.close()
    assert body["error"] and body.get("name") == name


def test_pages_and_assets_need_no_network(view: View) -> None:
    with view.opener.open(view.base + "/b/x/cell?item=a&arm=b", timeout=slow(10)) as r:
        shell = r.read().decode()
    refs = re.findall(r'(?:src|href)="([^"]*)"', shell)
    assert refs and all(ref.startswith(("/static/", "data:")) for ref in refs), refs
    for name, media in ASSETS.items():
        with view.opener.open(f"{view.base}/static/{name}", timeout=slow(10)) as r:
            body = r.read()
            assert r.headers["content-type"] == media and len(body) > 1000
        assert b"sourceMappingURL" not in body
    app_js = (Path(__file__).parents[2] / "clients/python/hrbench_client/view/static/app.js").read_text()
    assert not re.search(r"fetch\([\"'`]https?:", app_js)


def _hrb(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hrbench_client.cli", "--home", str(home), "--no-autostart", *args],
        capture_output=True,
        text=True,
        timeout=slow(120),
    )


def test_view_opens_a_benchmark_by_name_or_id(shared_daemon: Daemon, mock_ids: tuple[str, str]) -> None:
    for target in ("mock-view-b", mock_ids[1]):
        v = View(shared_daemon.home, target)
        try:
            assert f"/b/{mock_ids[1]}?token=" in v.url
            assert v.get(f"/api/benchmark/{mock_ids[1]}")["benchmark"]["name"] == "mock-view-b"
        finally:
            v.stop()
    res = _hrb(shared_daemon.home, "view", "no-such-benchmark", "--no-browser")
    assert res.returncode == 2 and "no-such-benchmark" in res.stderr  # NotFound, as for every command


def test_report_html_is_one_self_contained_file(
    shared_daemon: Daemon, mock_ids: tuple[str, str], tmp_path: Path
) -> None:
    a = mock_ids[0]
    out = tmp_path / "page.html"
    res = _hrb(shared_daemon.home, "report", a, "--html", str(out))
    assert res.returncode == 0, res.stderr
    assert msgspec.json.decode(res.stdout) == {"html": str(out)}
    text = out.read_text()
    assert not re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="(?!data:)', text)
    config = re.search(r"<script>window\.HRB = (.*?);</script>", text)
    assert config is not None
    data = msgspec.json.decode(config.group(1))
    assert data["static"] is True
    data = data["data"]
    with shared_daemon.client() as c:
        assert data["views"]["steady"] == msgspec.to_builtins(c.view(a))
        assert data["views"]["ask"] == msgspec.to_builtins(c.view(a, "ask"))
        assert data["matrix"] == msgspec.to_builtins(c.matrix(a))
    assert set(data["views"]) == {"steady", "flaky", "same", "ask"}
    bad = _hrb(shared_daemon.home, "report", a, "--html", str(tmp_path / "no" / "dir" / "x.html"))
    assert bad.returncode == 2 and "--html" in bad.stderr
