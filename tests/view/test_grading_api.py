"""The grading page's endpoints of ``hrb view`` (a real view server and daemon): hostile requests.

The POST takes JSON only (a form is 415), at most 4 MiB (a larger body is 413 before it is all
read), a body that is not grades is 400 naming the field, an unknown benchmark 404, a request
without the token 403; a good one is kept by the daemon.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests._benches import run
from tests._slow import slow
from tests.server._daemon import Daemon
from tests.server.test_grades import judged_spec
from tests.view.conftest import View


@pytest.fixture(scope="module")
def judged(shared_daemon: Daemon) -> str:
    with shared_daemon.client() as c:
        return run(c, judged_spec("graded-in-the-view"))


@pytest.fixture
def grading_view(shared_daemon: Daemon) -> Iterator[View]:
    v = View(shared_daemon.home)
    try:
        yield v
    finally:
        v.stop()


def _post(
    v: View, path: str, body: bytes, ctype: str = "application/json", opener: Any = None
) -> tuple[int, Any]:
    req = urllib.request.Request(v.base + path, data=body, method="POST", headers={"content-type": ctype})
    try:
        with (opener or v.opener).open(req, timeout=slow(60)) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read() or b"null")


def test_hostile_posts_are_refused_and_a_good_one_kept(
    grading_view: View, judged: str, shared_daemon: Daemon
) -> None:
    v, path = grading_view, f"/api/benchmark/{judged}/grades"
    nxt = v.get(f"/api/benchmark/{judged}/grades/next?k=3")
    assert len(nxt["rows"]) == 3 and nxt["rows"][0]["output"]
    row = nxt["rows"][0]
    good = {
        "grades": [
            {"item": row["item"], "arm": row["arm"], "run": row["run"], "correct": False, "pi": row["pi"]}
        ],
        "grader": "eve",
    }
    assert _post(v, path, b"grades=1", "application/x-www-form-urlencoded")[0] == 415
    status, body = _post(v, path, b"{" + b" " * (5 << 20) + b"}")
    assert status == 413 and "larger than" in body["error"]
    status, body = _post(
        v, path, b'{"grades": [{"item": "q1", "arm": "ask", "run": "one", "correct": true}]}'
    )
    assert status == 400 and "run" in body["error"]
    status, body = _post(v, path, b'{"grades": [], "grader": "eve"}')
    assert status == 400 and "grades" in body["error"]
    status, body = _post(v, path, b"\x1f\x8b\x08\x00 compressed")
    assert status == 400
    status, body = _post(v, "/api/benchmark/no-such-one/grades", json.dumps(good).encode())
    assert status == 404 and body["name"] == "NotFound"
    bare = urllib.request.build_opener()  # no token, no cookie
    assert _post(v, path, json.dumps(good).encode(), opener=bare)[0] == 403
    status, body = _post(v, path, json.dumps(good).encode())
    assert status == 200 and body["stored"] == 1
    with shared_daemon.client() as c:
        kept = [g for g in c.grades_get(judged).grades if g.grader == "eve"]
    assert [(g.item, g.correct) for g in kept] == [(row["item"], False)]
    with pytest.raises(urllib.error.HTTPError) as bad_k:
        v.get(f"/api/benchmark/{judged}/grades/next?k=x")
    assert bad_k.value.code == 400
    bad_k.value.close()
