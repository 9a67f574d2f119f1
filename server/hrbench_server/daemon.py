"""Transports: stdio for editors and tools, a shared daemon on a Unix socket (and loopback TCP).

- :func:`serve_stdio`: one connection on stdin/stdout. File descriptor 1 is moved aside for
  the protocol and pointed at stderr, so a stray ``print`` (in user arm code, say) lands on
  stderr and never corrupts the stream.
- :func:`serve_daemon`: our own accept loop on a Unix socket created with 0600 permissions in
  the state directory; each connection gets its own pygls server, so many clients work at once
  (stock pygls TCP serves one). An exclusive lock on ``daemon.lock`` keeps one daemon per state
  directory. ``--tcp 127.0.0.1:PORT`` adds a loopback TCP listener whose clients must send the
  token of the 0600 file ``daemon.token`` first; a non-loopback address is refused.

Importing this module is cheap: a bad ``--tcp`` is refused before the library is imported, a bad
environment (:func:`environment_problem`) before pygls; pygls and the methods are imported once
the daemon can start, and each method's heavy parts (the runner, statistics, numpy, the price
package) on its first call (:mod:`hrbench_server.methods`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import gc
import ipaddress
import json
import logging
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrbench_client import _paths
from hrbench_server.framing import DEFAULT_MAX_MESSAGE_BYTES

if TYPE_CHECKING:
    from hrbench_server.app import App

__all__ = ["parse_tcp", "read_token", "serve_daemon", "serve_stdio"]

logger = logging.getLogger("hrbench_server")


SWITCH_INTERVAL_S = 0.001
"""How long the event loop may hold the interpreter while another thread waits for it (seconds;
Python's default is 0.005).

The daemon's writer threads (rows, the governor's ledger) give the interpreter up at each SQLite
call and wait for it again, and a runner whose calls answer at once never gives it up of its own:
each wait lasted the whole interval. A streamed batch of ~1,000 rows took 12-23 ms to write
(5 ms steps) instead of 3 (``bench/daemon.py``); the loop gives the interpreter up a few
hundred times more per 100,000 rows.
"""


MALLOC_ARENAS = 2
"""The C heaps (glibc's malloc arenas) the daemon's threads share, unless ``MALLOC_ARENA_MAX`` is set.

glibc gives threads up to 8 heaps per core, each kept with its free holes: under 8 clients the
daemon's worker threads (SQLite, statistics, the row writer) spread over them and its resident
memory grew by 1.8 MB a minute after warm-up, while what Python held stayed flat
(``bench/soak.py``; glibc's ``mallopt(3)``, ``M_ARENA_MAX``). With 2 it levels off.
"""


def _limit_malloc_arenas() -> None:
    """Cap glibc's malloc arenas at :data:`MALLOC_ARENAS` (before any thread starts); elsewhere nothing."""
    if os.environ.get("MALLOC_ARENA_MAX"):  # the user's own setting wins (glibc read it at start)
        return
    import ctypes  # here: only the daemon needs it

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS): its own allocator
        return
    mallopt(-8, MALLOC_ARENAS)  # M_ARENA_MAX


def _setup_process() -> None:
    """The daemon's log, umask, switch interval (:data:`SWITCH_INTERVAL_S`) and C heaps (:data:`MALLOC_ARENAS`).

    The log on stderr leaves pygls's and the HTTP clients' chatter out; the umask is private.
    """
    _limit_malloc_arenas()
    os.umask(0o077)  # every file the daemon writes (database, WAL, log, exports) is private
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("pygls").setLevel(logging.WARNING)
    # pygls logs every error response with a traceback; ours are expected (bad params, library
    # errors) and internal errors are logged by hrbench_server.errors.
    logging.getLogger("pygls.protocol").setLevel(logging.CRITICAL)
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # the README says retries log nothing (no bare "WARNING stamina: stamina.retry_scheduled"
    # lines in daemon.log): each attempt is in its run's
    # trace, which says why it failed; the daemon's log leaves stamina's lines out
    logging.getLogger("stamina").propagate = False


def _route_warnings() -> None:
    """Library warnings to the running handler's result (:func:`hrbench_server.app.route_warnings`)."""
    from hrbench_server.app import route_warnings

    route_warnings()


def parse_tcp(value: str) -> tuple[str, int]:
    """Parse ``HOST:PORT`` and refuse any host that is not a loopback address.

    Args:
        value: ``127.0.0.1:8765``, ``[::1]:8765`` or ``localhost:8765``.

    Returns:
        ``(host, port)``.

    Raises:
        ValueError: a malformed value or a non-loopback host.

    Example:
        >>> parse_tcp("127.0.0.1:0")
        ('127.0.0.1', 0)
    """
    host, sep, port_s = value.rpartition(":")
    if not sep or not port_s.isdigit():
        raise ValueError(f"--tcp expects HOST:PORT, got {value!r}")
    host = host.strip("[]")
    if host == "localhost":
        host = "127.0.0.1"
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(f"--tcp needs a loopback IP address (127.0.0.1 or ::1), got {host!r}") from None
    if not addr.is_loopback:
        raise ValueError(
            f"refusing to listen on {host}: only loopback addresses (127.0.0.1, ::1) are allowed"
        )
    port = int(port_s)
    if port > 65535:
        raise ValueError(f"port out of range: {port}")
    return host, port


def read_token(home: Path, create: bool = False) -> str:
    """The TCP token (created with 0600 permissions when asked and missing)."""
    path = _paths.token_path(home)
    if create and not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(32))
    os.chmod(path, 0o600)
    return str(path.read_text().strip())


def _write_private(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


# -- stdio ---------------------------------------------------------------------------------------


class _BlockingWriter:
    """A writer for a stdout that is not a pipe (a file): plain blocking writes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


async def _stdio_streams(in_fd: int, out_fd: int) -> tuple[asyncio.StreamReader, Any]:
    # One file object per descriptor, kept when the event loop refuses it: a refused one that
    # was dropped closed its descriptor, so `hrb serve --stdio < requests > replies` read and
    # wrote nothing (stdin and stdout files, not pipes).
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    source = os.fdopen(in_fd, "rb", buffering=0)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
    except ValueError:  # a regular file: feed the reader from a thread

        def pump() -> None:
            with source:
                while chunk := source.read(1 << 16):
                    loop.call_soon_threadsafe(reader.feed_data, chunk)
            loop.call_soon_threadsafe(reader.feed_eof)

        threading.Thread(target=pump, daemon=True).start()
    sink = os.fdopen(out_fd, "wb", buffering=0, closefd=False)
    try:
        transport, proto = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sink)
        writer: Any = asyncio.StreamWriter(transport, proto, None, loop)
    except ValueError:  # a regular file (or a terminal's pty is a pipe-like tty: accepted above)
        writer = _BlockingWriter(out_fd)
    return reader, writer


def environment_problem() -> str | None:
    """Why the environment the daemon was started in would refuse every benchmark, or ``None``.

    Rule (``HRBENCH_MAX_CALLS=abc hrb daemon start`` never comes up only to refuse every
    ``hrb bench`` with exit 2 until a restart): the environment overrides a
    daemon reads (``HRBENCH_MAX_CALLS``, ``HRBENCH_MAX_USD``, ``HRBENCH_MAX_TOKENS``, the price
    table ``HRBENCH_PRICES``, the cancel grace ``HRBENCH_CANCEL_GRACE_S``, which every cancel
    and the daemon's own stop read) are checked once at start; a bad one stops the start with exit 2,
    naming the variable and its value (``hrb`` prints it and exits 2). A running daemon's
    environment does not change, so it cannot be made unusable later.

    Returns:
        The message (``"HRBENCH_MAX_CALLS: expected a number (got 'abc')"``), or ``None``.
    """
    from hrbench.errors import ConfigError
    from hrbench.models import Pricing
    from hrbench.runner import default_governor
    from hrbench.runner.runtime import cancel_grace_s

    try:
        default_governor()
        cancel_grace_s()
    except ConfigError as exc:
        return str(exc)
    try:
        Pricing()  # HRBENCH_PRICES, read whole
    except ConfigError as exc:
        named = exc.field == "HRBENCH_PRICES"
        return str(exc) if named else f"HRBENCH_PRICES={os.environ.get('HRBENCH_PRICES')}: {exc}"
    return None


def serve_stdio(home: Path, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> int:
    """Serve one client on stdin/stdout until stdin closes, ``shutdown`` or LSP ``exit``.

    Returns:
        The exit code: 0, or 1 when an LSP client sent ``exit`` without ``shutdown`` first
        (the LSP base protocol's rule).
    """
    if (why := environment_problem()) is not None:
        print(f"hrbench: {why}", file=sys.stderr)
        return 2
    out_fd = os.dup(1)
    os.dup2(2, 1)  # anything else written to fd 1 goes to stderr
    sys.stdout = sys.stderr
    _setup_process()
    _route_warnings()
    from hrbench_server.app import App
    from hrbench_server.connection import serve_stream
    from hrbench_server.methods import register
    from hrbench_server.rpc import RpcServer

    async def main() -> int:
        app = App(home, "stdio")
        reader, writer = await _stdio_streams(0, out_fd)
        server = RpcServer()
        register(server, app)
        app.connections = 1
        conn = asyncio.create_task(serve_stream(server, reader, writer, max_bytes=max_bytes, keep_open=True))
        stop = asyncio.create_task(app.stop_event.wait())
        await asyncio.wait({conn, stop}, return_when=asyncio.FIRST_COMPLETED)
        proto = server.protocol
        if conn.done() and not proto.exit_requested:  # end of input: finish the requests in flight
            pending: list[Any] = [
                f for f in server.protocol._request_futures.values() if isinstance(f, asyncio.Future)
            ]
            if pending:
                await asyncio.wait(pending)
        await app.aclose()  # (after `shutdown`) cancels running benchmarks; their replies go out
        await server.protocol.drain()
        conn.cancel()
        stop.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await conn
        writer.close()
        return 1 if proto.exit_requested and not proto.shutdown_requested else 0

    return asyncio.run(main())


# -- daemon --------------------------------------------------------------------------------------


async def _exit_when_idle(app: App, idle_s: float) -> None:
    """Stop the daemon once it has had no connection and no running benchmark for ``idle_s``.

    Busy is sampled every ``min(1, idle_s / 4)`` seconds, so the daemon stops between
    ``idle_s`` and ``idle_s`` plus one tick after its last client left.
    """
    tick = min(1.0, max(idle_s / 4, 0.01))
    last_busy = time.monotonic()
    while True:
        await asyncio.sleep(tick)
        now = time.monotonic()
        if app.connections > 0 or app.running:
            last_busy = now
        elif now - last_busy >= idle_s:
            logger.info("idle for %.0f s with no client: stopping", now - last_busy)
            app.stop("its idle timeout")
            return


def _lock(home: Path) -> Any:
    fd = os.open(home / "daemon.lock", os.O_RDWR | os.O_CREAT, 0o600)
    f = os.fdopen(fd, "r+")  # held for the process's lifetime
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        return None
    return f


def _unusable(home: Path, exc: OSError) -> int:
    """Say why the state folder cannot be used (read-only, full, ...) and what to do; exit code 5."""
    why = exc.strerror or type(exc).__name__
    msg = (
        f"cannot use the state folder {home}: {why} ({exc.filename or home}). Make it writable "
        "(and free space if the disk is full), or point HRBENCH_HOME (or --home) at another folder"
    )
    logger.error("%s", msg)
    print(f"hrbench daemon: {msg}", file=sys.stderr)
    return 5


def serve_daemon(
    home: Path,
    tcp: str | None = None,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    idle_exit_s: float | None = None,
    *,
    allow_code_over_tcp: bool = False,
) -> int:
    """Run the shared daemon for ``home`` until ``shutdown``, SIGTERM or an idle timeout.

    Import-path specs (code) are served over the Unix socket; a TCP connection gets
    :class:`~hrbench.errors.CodeRefused` for them unless ``allow_code_over_tcp`` (SPEC §4).

    Args:
        home: the state directory.
        tcp: ``HOST:PORT`` of an extra loopback TCP listener.
        max_bytes: the largest request body accepted.
        idle_exit_s: stop after this many seconds with no connection and no running
            benchmark (``None``: never). Daemons the clients start on demand use it, so they
            do not outlive their users; ``hrb daemon start`` does not, unless asked.
        allow_code_over_tcp: serve import-path specs over TCP too.

    Returns:
        The exit code: 0 stopped cleanly (idle timeout included), 2 bad arguments (a
        non-loopback ``--tcp``) or a bad environment override (:func:`environment_problem`), 3 another daemon holds this state directory, 4 the state or
        socket directory is not safely ours (:func:`hrbench_client._paths.check_socket_dir`;
        the message says what to do), 5 the state folder cannot be written (read-only, full;
        the message says what to do).
    """
    _setup_process()
    opened = _open_daemon(home, tcp)
    if isinstance(opened, int):
        return opened
    tcp_addr, sock, lock, token = opened
    try:
        asyncio.run(_run_daemon(home, sock, tcp_addr, token, max_bytes, idle_exit_s, allow_code_over_tcp))
    finally:
        for path in (sock, _paths.pid_path(home)):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        lock.close()
    return 0


_Opened = tuple[tuple[str, int] | None, Path, Any, str | None]
"""What :func:`_open_daemon` holds for serving: the TCP address, the socket path, the lock, the token."""


def _open_daemon(home: Path, tcp: str | None) -> int | _Opened:
    """Check ``--tcp`` and the environment, make the socket folder, take the lock, read the token.

    Returns:
        The exit code :func:`serve_daemon` returns when the daemon cannot start (said on
        stderr and in the log), else what serving needs (:data:`_Opened`).
    """
    tcp_addr = None
    if tcp:  # first: it needs nothing imported
        try:
            tcp_addr = parse_tcp(tcp)
        except ValueError as exc:
            logger.error("%s", exc)
            print(f"hrbench daemon: {exc}", file=sys.stderr)
            return 2
    _route_warnings()
    if (why := environment_problem()) is not None:
        logger.error("%s", why)
        print(f"hrbench daemon: {why}", file=sys.stderr)
        return 2
    try:
        sock = Path(_paths.check_socket_dir(home, create=True))
    except _paths.UnsafeDirectory as exc:
        logger.error("%s", exc)
        print(f"hrbench daemon: {exc}", file=sys.stderr)
        return 4
    except OSError as exc:
        return _unusable(home, exc)
    try:
        lock = _lock(home)
        if lock is None:
            print(f"hrbench daemon: another daemon is running for {home}", file=sys.stderr)
            return 3
        with contextlib.suppress(FileNotFoundError):
            sock.unlink()  # stale: we hold the lock, so no daemon is serving it
        token = read_token(home, create=True) if tcp_addr else None
    except OSError as exc:
        return _unusable(home, exc)
    return tcp_addr, sock, lock, token


_OnConn = Callable[..., Awaitable[None]]


def _connection_handler(app: App, max_bytes: int, allow_code_over_tcp: bool) -> _OnConn:
    """The accept callback: one pygls server per connection, its methods registered."""
    from hrbench._util.files import Confinement, confinement
    from hrbench_server.connection import serve_stream
    from hrbench_server.methods import register
    from hrbench_server.rpc import RpcServer

    async def on_conn(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, token: str | None = None
    ) -> None:
        app.connections += 1
        if token is not None:  # TCP: this connection's task (and what it starts) may not run code
            from hrbench.specs import code_allowed

            code_allowed.set(allow_code_over_tcp)
            confinement.set(Confinement(str(app.home)))  # nor open files outside its exchange folders
        try:
            server = RpcServer()
            register(server, app)
            await serve_stream(server, reader, writer, max_bytes=max_bytes, token=token)
        except asyncio.CancelledError:
            pass  # the daemon is stopping; the connection task is the outermost
        finally:
            app.connections -= 1
            # the last client gone: tidy memory once this connection's objects are released
            asyncio.get_running_loop().call_soon(app.settle)

    return on_conn


async def _listen(
    on_conn: _OnConn, sock: Path, tcp_addr: tuple[str, int] | None, token: str | None
) -> tuple[list[asyncio.base_events.Server], dict[str, Any]]:
    """Listen on the Unix socket (0600) and on the TCP address when given.

    Returns:
        The servers, and the pid file's content so far (``tcp`` is the address bound).
    """
    old = os.umask(0o177)
    try:
        unix = await asyncio.start_unix_server(on_conn, path=str(sock), limit=1 << 20)
    finally:
        os.umask(old)
    os.chmod(sock, 0o600)
    servers: list[asyncio.base_events.Server] = [unix]
    info: dict[str, Any] = {"pid": os.getpid(), "socket": str(sock), "started": time.time(), "tcp": None}
    if tcp_addr:
        srv = await asyncio.start_server(
            functools.partial(on_conn, token=token), tcp_addr[0], tcp_addr[1], limit=1 << 20
        )
        servers.append(srv)
        host, port = srv.sockets[0].getsockname()[:2]
        info["tcp"] = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
    return servers, info


async def _run_daemon(
    home: Path,
    sock: Path,
    tcp_addr: tuple[str, int] | None,
    token: str | None,
    max_bytes: int,
    idle_exit_s: float | None,
    allow_code_over_tcp: bool,
) -> None:
    """Serve until the daemon is stopped (``shutdown``, a signal, the idle timeout), then close."""
    # No cyclic collection while the start-up imports run: the ~60k objects they make all live on
    # (the freeze below keeps them), and the collections they set off (lsprotocol's ~550 classes)
    # only scanned them again (the imports' CPU, median of 10 starts: 0.45-0.48 s -> 0.42 s).
    gc.disable()
    try:
        from hrbench_server.app import App

        app = App(home, "unix+tcp" if tcp_addr else "unix")
        app.idle_exit_s = idle_exit_s
        on_conn = _connection_handler(app, max_bytes, allow_code_over_tcp)  # imports pygls: before the freeze
    finally:
        gc.enable()
    app.freeze()  # start-up objects (modules, ~60k of them) to the permanent generation
    servers, info = await _listen(on_conn, sock, tcp_addr, token)
    info["idle_exit_s"] = idle_exit_s
    _write_private(_paths.pid_path(home), json.dumps(info))
    if idle_exit_s is not None:
        app.background.add(asyncio.create_task(_exit_when_idle(app, idle_exit_s)))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, app.stop, f"the signal {sig.name}")
    if os.environ.get("HRBENCH_TRACEMALLOC"):
        from hrbench_server import memtrace

        memtrace.install(loop)
    logger.info(
        "hrbench daemon %d serving %s%s",
        os.getpid(),
        sock,
        f" and tcp {info['tcp']}" if info["tcp"] else "",
    )
    await app.stop_event.wait()
    for s in servers:
        s.close()  # no new connections
    await app.aclose()  # running benchmarks are cancelled (resumable) and answered
    await asyncio.sleep(0.05)  # let the last replies go out
    logger.info("hrbench daemon %d stopped", os.getpid())
