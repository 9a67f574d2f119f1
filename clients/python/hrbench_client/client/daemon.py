"""The daemon's life cycle: start, status, stop, and :func:`connect` (which starts one on demand)."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrbench_client import _paths
from hrbench_client import protocol as p
from hrbench_client.client.connection import Client
from hrbench_client.client.transport import _server_command
from hrbench_client.errors import DaemonError, HrbenchError, InvalidParams

if TYPE_CHECKING:
    import subprocess

__all__ = [
    "DEFAULT_IDLE_EXIT_S",
    "autostart_idle_exit_s",
    "connect",
    "daemon_status",
    "start_daemon",
    "stop_daemon",
]

# The daemons this process started, by pid: kept so that they are reaped (no zombie for
# stop_daemon to wait on) and their Popen is not collected while they run (a ResourceWarning).
_STARTED: dict[int, subprocess.Popen[bytes]] = {}


def _try_unix(state: Path, timeout_s: float | None) -> Client | None:
    """A connection to the daemon's socket; ``None`` when none answers.

    Raises:
        DaemonError: the socket or its directory is not safely ours (see
            :func:`hrbench_client._paths.check_socket_dir`): nothing is sent there.
    """
    try:
        return Client.connect_unix(_paths.check_socket(state), timeout_s)
    except _paths.UnsafeDirectory as exc:
        raise DaemonError(str(exc)) from None
    except (FileNotFoundError, ConnectionRefusedError):
        return None


def start_daemon(
    home: str | os.PathLike[str] | None = None,
    *,
    tcp: str | None = None,
    timeout_s: float = 20.0,
    env: dict[str, str] | None = None,
    idle_exit_s: float | None = None,
    allow_code_over_tcp: bool = False,
) -> int:
    """Start a daemon for ``home`` (detached) unless one answers; returns its pid.

    The daemon runs in the state directory with ``python -P`` (the caller's directory is
    never on its import path).

    Args:
        home: the state directory.
        tcp: also listen on this loopback ``HOST:PORT``.
        timeout_s: how long to wait for it to answer.
        env: the daemon's environment (default: this process's).
        idle_exit_s: the daemon stops after this many seconds without a client or a running
            benchmark; ``None`` keeps it up until stopped.
        allow_code_over_tcp: let TCP clients send import-path specs (code; see the README's
            trust model).

    Raises:
        DaemonError: the daemon did not come up within ``timeout_s`` (its log says why); the
            daemon this call started is then stopped, never left running.
    """
    import subprocess

    state = _paths.home(home)
    existing = daemon_status(state)
    if existing is not None:
        return existing.pid
    log = _paths.log_path(state)
    try:
        state.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError as exc:  # read-only, full, not ours: advice, not a raw OSError
        raise DaemonError(_unusable_home(state, exc)) from None
    cmd = [*_server_command(), "--home", str(state), "daemon"]
    if tcp:
        cmd += ["--tcp", tcp]
    if allow_code_over_tcp:
        cmd.append("--allow-code-over-tcp")
    if idle_exit_s is not None:
        cmd += ["--idle-exit", repr(float(idle_exit_s))]
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
            close_fds=True,
            env=env,
            cwd=state,  # never the caller's directory (and -P keeps it off the import path)
        )
    finally:
        os.close(fd)
    _STARTED[proc.pid] = proc
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = daemon_status(state)
        if status is not None:
            return status.pid
        rc = proc.poll()
        if rc is not None:
            _STARTED.pop(proc.pid, None)
            if rc == 2:  # a bad argument or environment value: the log's last line names it
                raise InvalidParams(f"the daemon refused to start{_last_line(log)}")
            if rc != 3:  # 3: another daemon won the race; wait for it
                raise DaemonError(f"the daemon exited with code {rc}{_last_line(log)}; see {log}")
        time.sleep(0.02)
    stopped = _stop_unanswering(proc)
    raise DaemonError(f"no daemon answered within {timeout_s} s; {stopped}; see {log}")


def _unusable_home(state: Path, exc: OSError) -> str:
    """Why no daemon can start for the state folder ``state``, and what to do.

    Example:
        >>> print(_unusable_home(Path("/ro/hrbench"), OSError(30, "Read-only file system", "/ro/hrbench")))
        no daemon runs for the state folder /ro/hrbench and none can start there: Read-only file system (/ro/hrbench); the daemon keeps its database, socket and log in it. Make it writable (and free space if the disk is full), or point HRBENCH_HOME (or --home) at another folder
    """
    why = exc.strerror or type(exc).__name__
    return (
        f"no daemon runs for the state folder {state} and none can start there: {why} "
        f"({exc.filename or state}); the daemon keeps its database, socket and log in it. Make it "
        "writable (and free space if the disk is full), or point HRBENCH_HOME (or --home) at another folder"
    )


def _stop_unanswering(proc: Any) -> str:
    """Stop the daemon this call started when it never answered.

    A start that timed out never leaves its daemon running. SIGTERM, then SIGKILL after 5 s; the process is reaped. Returns what happened, for the error.
    """
    import subprocess

    _STARTED.pop(proc.pid, None)
    if proc.poll() is not None:
        return f"the daemon it started had exited (code {proc.returncode})"
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)
    return f"the daemon it started (pid {proc.pid}) was stopped"


def _last_line(log: Path) -> str:
    """``": <the log's last line>"``: why the daemon refused to start (it says so last)."""
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return f": {lines[-1]}" if lines else ""


def daemon_status(home: str | os.PathLike[str] | None = None) -> p.StatusResult | None:
    """The running daemon's status, or ``None`` when none answers."""
    state = _paths.home(home)
    client = _try_unix(state, 5.0)
    if client is None:
        return None
    try:
        with client:
            return client.status()
    except (DaemonError, OSError):
        return None


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still exists (a daemon this process started is reaped here)."""
    proc = _STARTED.get(pid)
    if proc is not None:
        if proc.poll() is None:
            return True
        del _STARTED[pid]
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_daemon(home: str | os.PathLike[str] | None = None, *, timeout_s: float = 15.0) -> bool:
    """Stop the daemon of ``home``; returns ``False`` when none was running.

    Returns once the daemon's process has exited (its socket and lock are then free for a new
    daemon); after ``timeout_s`` it sends SIGTERM and waits up to 5 s more. A daemon that runs
    benchmarks stops each as ``hrb cancel`` does (the requests already sent finish first,
    within its cancel grace), so ``timeout_s`` then counts from the end of that grace.
    """
    import json
    import signal

    state = _paths.home(home)
    client = _try_unix(state, 5.0)
    pid = None
    grace_s = 0.0
    if client is not None:
        with client:
            with contextlib.suppress(HrbenchError, OSError):
                status = client.status()
                pid = status.pid
                if status.running:
                    grace_s = status.cancel_grace_s or 0.0
                client.shutdown()
    else:
        try:
            pid = int(json.loads(_paths.pid_path(state).read_text())["pid"])
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError, KeyError):
            return False

    def gone() -> bool:
        if pid is not None:
            return not _pid_alive(pid)
        return not _paths.socket_path(state).exists() and not _paths.pid_path(state).exists()

    deadline = time.monotonic() + grace_s + timeout_s
    while time.monotonic() < deadline:
        if gone():
            return True
        time.sleep(0.02)
    if pid is not None:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and not gone():
            time.sleep(0.02)
    return True


DEFAULT_IDLE_EXIT_S = 600.0
"""How long a daemon started on demand (``connect``, any ``hrb`` command) waits without a client
before it exits; ``$HRBENCH_IDLE_EXIT`` (seconds; ``0`` or ``never`` to keep it) overrides it."""


def autostart_idle_exit_s() -> float | None:
    """The idle timeout of a daemon started on demand: ``$HRBENCH_IDLE_EXIT`` or 600 s.

    Raises:
        DaemonError: ``$HRBENCH_IDLE_EXIT`` is neither a number of seconds nor ``never``.

    Example:
        >>> os.environ["HRBENCH_IDLE_EXIT"] = "never"; autostart_idle_exit_s() is None
        True
        >>> os.environ["HRBENCH_IDLE_EXIT"] = "90"; autostart_idle_exit_s()
        90.0
        >>> del os.environ["HRBENCH_IDLE_EXIT"]
    """
    text = os.environ.get("HRBENCH_IDLE_EXIT", "").strip().lower()
    if not text:
        return DEFAULT_IDLE_EXIT_S
    if text in ("never", "0"):
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise DaemonError(f"HRBENCH_IDLE_EXIT must be a number of seconds or `never` (got {text!r})")
    return value


def connect(
    home: str | os.PathLike[str] | None = None,
    *,
    autostart: bool = True,
    timeout_s: float | None = None,
    tcp: bool = False,
) -> Client:
    """Connect to the daemon of ``home`` (``$HRBENCH_HOME`` or the user state dir).

    Args:
        home: the state directory.
        autostart: start a daemon when none answers (not with ``tcp``); it stops after
            :func:`autostart_idle_exit_s` seconds with no client and no running benchmark.
        timeout_s: socket timeout for each read (``None``: wait as long as a benchmark takes).
        tcp: use the daemon's loopback TCP listener (started with ``--tcp``) and the token
            file of the state directory instead of the Unix socket.

    Raises:
        DaemonError: no daemon answers and ``autostart`` is false, or it failed to start.
    """
    state = _paths.home(home)
    if tcp:
        import json

        try:
            addr = json.loads(_paths.pid_path(state).read_text())["tcp"]
            token = _paths.token_path(state).read_text().strip()
        except (OSError, ValueError, KeyError, TypeError):
            addr = None
        if not addr:
            raise DaemonError(
                f"no daemon with a TCP listener runs for {state} (`hrb daemon start --tcp ...`)"
            )
        host, _, port = addr.rpartition(":")
        return Client.connect_tcp(host.strip("[]"), int(port), token, timeout_s)
    client = _try_unix(state, timeout_s)
    if client is not None:
        return client
    if not autostart:
        raise DaemonError(f"no hrbench daemon is running for {state} (start one with `hrb daemon start`)")
    start_daemon(state, idle_exit_s=autostart_idle_exit_s())
    client = _try_unix(state, timeout_s)
    if client is None:
        raise DaemonError(f"the daemon for {state} started but does not accept connections")
    return client
