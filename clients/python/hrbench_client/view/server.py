"""The ``hrb view`` server: a Starlette app on 127.0.0.1, a random port and a random token.

Every ``/api/...`` endpoint (:mod:`hrbench_client.view.api`) is one daemon call through
:class:`hrbench_client.client.Client` (run in a worker thread, on a connection of its own from a
small pool, each reopened if the daemon restarts), so a cheap page never waits for a slow one. The HTML pages are one shell
(:func:`hrbench_client.view.page_html`) that ``app.js`` fills from those endpoints.

Access: the first request carries ``?token=...`` (the URL ``hrb view`` prints) or a one-time
``?code=...`` (the private page the browser is started on: :func:`write_opener`); the server
answers it with a page that puts the server's session key in the tab's ``sessionStorage`` and
goes on to the same address without it. ``app.js`` sends that key in the
:data:`SESSION_HEADER` header of every ``/api/...`` request (a new tab of the same view gets it
from an open one over a ``BroadcastChannel``); an ``/api/...`` request without it gets 403. No
cookie is set: browsers send cookies to every port of a host, so another server on
``127.0.0.1`` would receive one, while ``sessionStorage``, ``BroadcastChannel`` and a header a
page sets stay with the page's origin, port included. The pages and ``/static/`` hold no data
and are served to anyone who reaches the port. Only requests whose ``Host`` is the server's
own address and port are answered (no DNS rebinding). The token and the session key are made
per server and die with it.

Needs the ``view`` extra (``pip install 'hrbench[view]'``: Starlette and uvicorn).
"""

from __future__ import annotations

import contextlib
import hmac
import html
import os
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from hrbench_client.errors import DaemonError
from hrbench_client.view import ASSETS, asset, page_html
from hrbench_client.view.api import ROUTES, endpoint

__all__ = ["KEEP_IDLE", "OneTimeCodes", "POOL_SIZE", "SESSION_HEADER", "make_app", "serve", "write_opener"]


POOL_SIZE = 16
"""Daemon connections the view has open at most: requests beyond this many at once wait their turn.

A browser sends at most 6 requests at once to one server; 16 serve a few tabs.
"""

KEEP_IDLE = 4
"""Idle daemon connections kept for the next requests (the others are closed when they finish)."""

SESSION_HEADER = "x-hrb-view-session"
"""The request header that carries the session key to ``/api/...`` (``app.js`` sets it)."""

SESSION_KEY = "hrb-view-session"
"""The ``sessionStorage`` key the page keeps the session key under."""

_HEADERS = {"referrer-policy": "no-referrer", "x-frame-options": "DENY", "x-content-type-options": "nosniff"}


class _Daemon:
    """A small pool of client connections, one per request in progress, each reopened after it broke.

    Rule (a cheap page never waits behind 8 others): a client answers one call at a time,
    so the view's requests each take a connection of their own, up to :data:`POOL_SIZE` at
    once (:data:`KEEP_IDLE` kept open between requests); the daemon answers them concurrently.
    """

    def __init__(self, connect: Callable[[], Any], size: int = POOL_SIZE) -> None:
        self.connect = connect
        self.lock = threading.Lock()
        self.slots = threading.BoundedSemaphore(size)
        self.idle: list[Any] = []
        self.closed = False

    def call(self, fn: Callable[[Any], Any]) -> Any:
        with self.slots:
            with self.lock:
                client = self.idle.pop() if self.idle else None
            try:
                for attempt in (0, 1):
                    if client is None:
                        client = self.connect()
                    try:
                        return fn(client)
                    except DaemonError:
                        client.close()
                        client = None
                        if attempt:
                            raise
                raise AssertionError("unreachable")
            finally:
                if client is not None:
                    with self.lock:
                        keep = not self.closed and len(self.idle) < KEEP_IDLE
                        if keep:
                            self.idle.append(client)
                    if not keep:
                        client.close()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            idle, self.idle = self.idle, []
        for client in idle:
            client.close()


class OneTimeCodes:
    """Codes that each let one request in, once: the browser's way in without the token in its command line.

    Every local user can read a process's command line (``ps``), so the browser is never
    started on a URL that lets it in: ``hrb view`` starts it on a private local file (mode 0600
    in a 0700 folder) that sends it to ``?code=...``; the server answers that request with the
    session key (kept by the tab, never in a cookie) and forgets the code.
    """

    def __init__(self, on_spent: Callable[[], None] | None = None) -> None:
        self.lock = threading.Lock()
        self.codes: set[str] = set()
        self.on_spent = on_spent

    def new(self) -> str:
        """A fresh code (URL-safe, 32 characters)."""
        code = secrets.token_urlsafe(24)
        with self.lock:
            self.codes.add(code)
        return code

    def clear(self) -> None:
        """Forget every code (none can be used after)."""
        with self.lock:
            self.codes.clear()
        if self.on_spent is not None:
            with contextlib.suppress(Exception):
                self.on_spent()

    def take(self, given: str) -> bool:
        """Whether ``given`` is a live code; it is dead afterwards."""
        with self.lock:
            found = next((c for c in self.codes if hmac.compare_digest(c, given)), None)
            if found is None:
                return False
            self.codes.discard(found)
        if self.on_spent is not None:
            with contextlib.suppress(Exception):
                self.on_spent()
        return True


def _let_in(session: str, target: str) -> str:
    """A page that keeps ``session`` in the tab's ``sessionStorage`` and goes on to ``target`` (same site)."""
    key = msgspec.json.encode(SESSION_KEY).decode()
    js = msgspec.json.encode(target).decode().replace("<", "\\u003c")
    return (
        '<!doctype html>\n<meta charset="utf-8">\n<title>hrb view</title>\n'
        f"<script>sessionStorage.setItem({key}, {msgspec.json.encode(session).decode()}); "
        f"location.replace({js});</script>\n"
    )


class _Access(BaseHTTPMiddleware):
    """The view's door: its own Host only; ``?token=``/``?code=`` give the session key; ``/api/`` needs it."""

    def __init__(
        self, app: Any, token: str, session: str, hosts: frozenset[str] | None, codes: OneTimeCodes | None
    ) -> None:
        super().__init__(app)
        self.token = token
        self.session = session
        self.hosts = hosts
        self.codes = codes

    def _host_ok(self, request: Request) -> bool:
        host = request.headers.get("host", "")
        if self.hosts is not None:
            return host in self.hosts
        return host.rsplit(":", 1)[0] in ("127.0.0.1", "localhost")

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if not self._host_ok(request):  # DNS rebinding: a name that is not this server's
            return JSONResponse({"error": "Invalid host header"}, 400, headers=_HEADERS)
        code, given = request.query_params.get("code"), request.query_params.get("token")
        if code is not None or given is not None:
            ok = (code is not None and self.codes is not None and self.codes.take(code)) or (
                given is not None and hmac.compare_digest(given, self.token)
            )
            if not ok or request.url.path.startswith("/api/"):
                return JSONResponse(
                    {
                        "error": "this link was used already or is not this server's: open the URL hrb view printed"
                    },
                    403,
                    headers=_HEADERS,
                )
            rest = urllib.parse.urlencode(
                [(k, v) for k, v in request.query_params.multi_items() if k not in ("code", "token")]
            )
            target = "/" + request.url.path.lstrip("/") + (f"?{rest}" if rest else "")  # never "//host"
            page = _let_in(self.session, target)
            return HTMLResponse(page, headers={**_HEADERS, "cache-control": "no-store"})
        if request.url.path.startswith("/api/") and not hmac.compare_digest(
            request.headers.get(SESSION_HEADER, ""), self.session
        ):
            return JSONResponse(
                {"error": "open the URL hrb view printed (it carries the access token)"},
                403,
                headers=_HEADERS,
            )
        response = await call_next(request)
        response.headers.update(_HEADERS)
        return response


def make_app(
    connect: Callable[[], Any],
    token: str,
    codes: OneTimeCodes | None = None,
    on_stop: Callable[[], None] | None = None,
    hosts: Iterable[str] | None = None,
) -> Starlette:
    """The ASGI app of ``hrb view``.

    Args:
        connect: returns a connected :class:`~hrbench_client.client.Client` (called again if the
            connection breaks; up to :data:`POOL_SIZE` are open at once).
        token: the access token the first request must carry as ``?token=``.
        codes: one-time codes a first request may carry as ``?code=`` instead (each answered,
            once, as ``?token=`` is: with a page that keeps the session key and goes on to the
            same address without it).
        on_stop: called when the server stops (before a signal that stopped it ends the process).
        hosts: the ``Host`` headers answered (``127.0.0.1:PORT``, ``localhost:PORT``); ``None``:
            ``127.0.0.1`` and ``localhost`` on any port.

    Returns:
        A Starlette app: pages ``/``, ``/b/{id}``, ``/b/{id}/cell?item=&arm=``,
        ``/compare?a=&b=``; JSON ``/api/benchmarks?search=``, ``/api/benchmark/{id}?against=``,
        ``/api/benchmark/{id}/matrix?cluster=&failure_kind=&split=&disagree=``,
        ``/api/benchmark/{id}/cell?item=&arm=``, ``/api/compare?a=&b=``; assets ``/static/...``.
        An error is JSON ``{"error", "name"}`` with 404 (unknown benchmark, item or arm), 400
        (bad parameter) or 502 (daemon unreachable).
    """
    daemon = _Daemon(connect)
    shell = page_html({}).encode()

    async def html(request: Request) -> Response:
        return HTMLResponse(shell, headers={"cache-control": "no-store"})

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return JSONResponse({"error": f"no asset {name!r}"}, 404)
        return Response(asset(name), media_type=ASSETS[name], headers={"cache-control": "max-age=3600"})

    routes = [
        Route("/", html),
        Route("/b/{id}", html),
        Route("/b/{id}/cell", html),
        Route("/compare", html),
        Route("/static/{name}", static),
        *(Route(path, endpoint(daemon.call, build)) for path, build in ROUTES),
    ]
    allowed = None if hosts is None else frozenset(hosts)
    session = secrets.token_urlsafe(32)  # what pages send; never the token, never a cookie
    middleware = [Middleware(_Access, token=token, session=session, hosts=allowed, codes=codes)]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            daemon.close()
            if on_stop is not None:
                on_stop()

    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)


def _has_screen() -> bool:
    """Whether a graphical browser can open (on Linux, a console browser would take over the terminal)."""
    return not sys.platform.startswith("linux") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def _open_browser(url: str) -> bool:
    """Open ``url`` in a graphical browser when one is available; never raises."""
    import webbrowser

    if not _has_screen():
        return False
    try:
        return webbrowser.open(url)
    except Exception:  # noqa: BLE001 - a browser that fails to start is not our error
        return False


def write_opener(folder: str, url: str) -> str:
    """Write the private page that sends a browser to ``url``; its path.

    The browser is started on this file, never on ``url``: a process's command line is
    readable by every local user (``ps``), a 0600 file in a 0700 folder only by its owner.

    Args:
        folder: a private folder (mode 0700) of this user.
        url: where the page goes (it carries a one-time code).

    Returns:
        The file's path (mode 0600).
    """
    path = os.path.join(folder, "open.html")
    quoted = html.escape(url)
    text = (
        '<!doctype html>\n<html>\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="refresh" content="1;url={quoted}">\n<title>hrb view</title>\n</head>\n<body>\n'
        f'<p>Opening <a href="{quoted}">hrb view</a>...</p>\n'
        f"<script>location.replace({msgspec.json.encode(url).decode()});</script>\n</body>\n</html>\n"
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def serve(
    connect: Callable[[], Any],
    *,
    path: str = "/",
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = True,
    out: Any = None,
) -> None:
    """Serve the view until interrupted; print its URL (with the token) first.

    The token is made for this server and dies with it. The printed URL carries it (to this
    terminal only); the browser is opened on a private local file (:func:`write_opener`) that
    carries a one-time code instead, so neither appears in a command line (``ps``). The file
    is deleted once the code is used, and its folder when the server stops.

    Args:
        connect: as for :func:`make_app`.
        path: the page the printed URL opens (``/`` or ``/b/ID``).
        host: the loopback address to listen on.
        port: the port; 0 for a free one.
        open_browser: open the view in a browser when one is available (never fails without).
        out: where to print the URL (default stdout).
    """
    import uvicorn

    token = secrets.token_urlsafe(24)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    base = f"http://{host}:{sock.getsockname()[1]}{path}"
    folder = tempfile.mkdtemp(prefix="hrb-view-") if open_browser and _has_screen() else None  # mode 0700
    opener = None if folder is None else os.path.join(folder, "open.html")

    def spent() -> None:
        if opener is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(opener)

    def remove() -> None:  # the app's shutdown: uvicorn ends the process by the signal that stopped it
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    codes = OneTimeCodes(on_spent=spent)
    port = sock.getsockname()[1]
    app = make_app(connect, token, codes, on_stop=remove, hosts=(f"{host}:{port}", f"localhost:{port}"))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False))
    print(f"{base}?token={token}", file=out or sys.stdout, flush=True)
    try:
        if folder is not None:
            page = write_opener(folder, f"{base}?code={codes.new()}")
            if not _open_browser(Path(page).as_uri()):
                codes.clear()  # no browser took it: no live code, no file
        server.run(sockets=[sock])
    finally:
        remove()
