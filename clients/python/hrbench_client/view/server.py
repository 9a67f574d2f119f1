"""The ``hrb view`` server: a Starlette app on 127.0.0.1, a random port and a random token.

Every ``/api/...`` endpoint is one daemon call through :class:`hrbench_client.client.Client`
(run in a worker thread; one connection, reopened if the daemon restarts). The HTML pages are
one shell (:func:`hrbench_client.view.page_html`) that ``app.js`` fills from those endpoints.

Access: the first request carries ``?token=...`` (the URL ``hrb view`` prints); the server then
sets a same-site, HTTP-only cookie so links and fetches need not repeat it. Any other request
gets 403. Only ``127.0.0.1``/``localhost`` Host headers are answered (no DNS rebinding).

Needs the ``view`` extra (``pip install 'hrbench[view]'``: Starlette and uvicorn).
"""

from __future__ import annotations

import contextlib
import hmac
import secrets
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from hrbench_client.errors import ConfigError, DaemonError, HrbenchError, InvalidParams, NotFound
from hrbench_client.view import ASSETS, asset, page_html

__all__ = ["make_app", "serve"]


class _Daemon:
    """One client connection shared by the worker threads, reopened after a broken connection."""

    def __init__(self, connect: Callable[[], Any]) -> None:
        self.connect = connect
        self.lock = threading.Lock()
        self.client: Any = None

    def call(self, fn: Callable[[Any], Any]) -> Any:
        with self.lock:
            for attempt in (0, 1):
                if self.client is None:
                    self.client = self.connect()
                try:
                    return fn(self.client)
                except DaemonError:
                    self.client.close()
                    self.client = None
                    if attempt:
                        raise
            raise AssertionError("unreachable")

    def close(self) -> None:
        with self.lock:
            if self.client is not None:
                self.client.close()
                self.client = None


def _status(exc: HrbenchError) -> int:
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, (ConfigError, InvalidParams)):
        return 400
    return 502 if isinstance(exc, DaemonError) else 500


class _Token(BaseHTTPMiddleware):
    def __init__(self, app: Any, token: str) -> None:
        super().__init__(app)
        self.token = token
        self.cookie = "hrb_view_" + token[:8]

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        given = request.query_params.get("token")
        if given is not None and hmac.compare_digest(given, self.token):
            response = await call_next(request)
            response.set_cookie(self.cookie, self.token, httponly=True, samesite="strict")
            return response
        if hmac.compare_digest(request.cookies.get(self.cookie, ""), self.token):
            return await call_next(request)
        return JSONResponse({"error": "open the URL hrb view printed (it carries the access token)"}, 403)


def _float(request: Request, name: str, default: float) -> float:
    value = request.query_params.get(name)
    if value is None or value == "":
        return default
    try:
        return float(value)
    except ValueError:
        raise ConfigError(f"{name}: not a number: {value!r}") from None


def make_app(connect: Callable[[], Any], token: str) -> Starlette:
    """The ASGI app of ``hrb view``.

    Args:
        connect: returns a connected :class:`~hrbench_client.client.Client` (called again if the
            connection breaks).
        token: the access token the first request must carry as ``?token=``.

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

    def endpoint(build: Callable[[Request], Callable[[Any], Any]]) -> Callable[[Request], Any]:
        async def handler(request: Request) -> Response:
            try:
                call = build(request)
                result = await run_in_threadpool(daemon.call, call)
            except HrbenchError as exc:
                return JSONResponse({"error": str(exc), "name": type(exc).__name__}, _status(exc))
            return Response(msgspec.json.encode(result), media_type="application/json")

        return handler

    def q(request: Request, name: str) -> str | None:
        return request.query_params.get(name) or None

    def required(request: Request, name: str) -> str:
        value = q(request, name)
        if value is None:
            raise ConfigError(f"{name}: missing (give ?{name}=...)")
        return value

    def settings(request: Request) -> dict[str, Any]:
        out: dict[str, Any] = {"level": _float(request, "level", 0.95)}
        if q(request, "method"):
            out["method"] = q(request, "method")
        return out

    def benchmarks(r: Request) -> Callable[[Any], Any]:
        search = q(r, "search")
        return lambda c: {"benchmarks": c.benchmarks(search=search)}

    def view(r: Request) -> Callable[[Any], Any]:
        bid, against, kw = r.path_params["id"], q(r, "against"), settings(r)
        return lambda c: c.view(bid, against, **kw)

    def matrix(r: Request) -> Callable[[Any], Any]:
        bid = r.path_params["id"]
        filters: dict[str, Any] = {k: q(r, k) for k in ("cluster", "failure_kind", "split")}
        filters["disagree"] = q(r, "disagree") in ("1", "true", "on")
        return lambda c: c.matrix(bid, **filters)

    def cell(r: Request) -> Callable[[Any], Any]:
        bid, item, arm = r.path_params["id"], required(r, "item"), required(r, "arm")
        return lambda c: c.cell(bid, item, arm)

    def compare(r: Request) -> Callable[[Any], Any]:
        a, b, kw = required(r, "a"), required(r, "b"), settings(r)
        return lambda c: c.compare_benchmarks(a, b, **kw)

    routes = [
        Route("/", html),
        Route("/b/{id}", html),
        Route("/b/{id}/cell", html),
        Route("/compare", html),
        Route("/static/{name}", static),
        Route("/api/benchmarks", endpoint(benchmarks)),
        Route("/api/benchmark/{id}", endpoint(view)),
        Route("/api/benchmark/{id}/matrix", endpoint(matrix)),
        Route("/api/benchmark/{id}/cell", endpoint(cell)),
        Route("/api/compare", endpoint(compare)),
    ]
    middleware = [
        Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost"]),
        Middleware(_Token, token=token),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        daemon.close()

    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)


def _open_browser(url: str) -> bool:
    """Open ``url`` in a graphical browser when one is available; never raises."""
    import os
    import webbrowser

    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        return False  # no screen: a console browser would take over the terminal
    try:
        return webbrowser.open(url)
    except Exception:  # noqa: BLE001 - a browser that fails to start is not our error
        return False


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

    Args:
        connect: as for :func:`make_app`.
        path: the page the printed URL opens (``/`` or ``/b/ID``).
        host: the loopback address to listen on.
        port: the port; 0 for a free one.
        open_browser: open the URL in a browser when one is available (never fails without).
        out: where to print the URL (default stdout).
    """
    import uvicorn

    token = secrets.token_urlsafe(24)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    url = f"http://{host}:{sock.getsockname()[1]}{path}?token={token}"
    app = make_app(connect, token)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False))
    print(url, file=out or sys.stdout, flush=True)
    if open_browser:
        _open_browser(url)
    server.run(sockets=[sock])
