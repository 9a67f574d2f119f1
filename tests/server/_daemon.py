"""Start, stop and kill a real daemon subprocess for end-to-end tests."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from hrbench_client import _paths
from hrbench_client.client import Client
from hrbench_client.client.starting import NotReady, ProcessExited, wait_ready
from tests._slow import slow

HERE = Path(__file__).resolve().parent


class Daemon:
    """A ``python -m hrbench_server daemon`` child process on a private state directory."""

    def __init__(
        self,
        home: Path,
        *,
        tcp: str | None = None,
        max_message_mb: float | None = None,
        env: dict[str, str] | None = None,
        allow_code_over_tcp: bool = False,
        idle_exit_s: float | None = None,
    ) -> None:
        self.home = home
        self.tcp = tcp
        self.allow_code_over_tcp = allow_code_over_tcp
        self.max_message_mb = max_message_mb
        self.idle_exit_s = idle_exit_s
        self.env = {**os.environ, "HRBENCH_HOME": str(home), **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = home.parent / f"{home.name}-daemon.log"

    def __enter__(self) -> Daemon:
        """Start it unless started: ``with Daemon(home) as d:`` stops it on every path."""
        return self if self.proc is not None else self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()  # kills it when it does not stop in time

    @property
    def socket(self) -> Path:
        return _paths.socket_path(self.home)

    def command(self) -> list[str]:
        cmd = [sys.executable, "-P", "-m", "hrbench_server", "--home", str(self.home)]
        if self.max_message_mb is not None:
            cmd += ["--max-message-mb", str(self.max_message_mb)]
        cmd.append("daemon")
        if self.tcp:
            cmd += ["--tcp", self.tcp]
        if self.allow_code_over_tcp:
            cmd.append("--allow-code-over-tcp")
        if self.idle_exit_s is not None:
            cmd += ["--idle-exit", str(self.idle_exit_s)]
        return cmd

    def start(self, timeout_s: float | None = None) -> Daemon:
        """Start the daemon and wait until it answers: while it runs and gets CPU time, however
        busy the machine (:func:`hrbench_client.client.starting.wait_ready`), or up to
        ``timeout_s`` seconds when given.

        Raises:
            RuntimeError: it exited, or did not answer: it is then killed (a start that gave up
                must not leave the daemon running).
        """
        self.home.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log, "ab")  # noqa: SIM115 - the child keeps it
        self.proc = subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=self.env
        )
        log.close()
        try:
            self._wait_ready(timeout_s)
        except BaseException:  # a timeout, pytest-timeout's interruption, Ctrl-C: never left running
            self.kill()
            raise
        return self

    def _wait_ready(self, timeout_s: float | None) -> None:
        assert self.proc is not None

        def answers() -> bool | None:
            with contextlib.suppress(OSError):
                with Client.connect_unix(self.socket, slow(5.0)) as c:
                    c.status()
                    return True
            return None

        try:
            wait_ready(self.proc, answers, timeout_s=timeout_s)
        except ProcessExited as exc:
            raise RuntimeError(f"daemon exited with {exc.returncode}: {self.log.read_text()}") from None
        except NotReady as exc:
            raise RuntimeError(f"daemon did not answer {exc}: {self.log.read_text()}") from None

    def client(self, timeout_s: float | None = 60.0) -> Client:
        """A client on the daemon's socket; ``timeout_s`` (each reply's wait) times ``slow``."""
        return Client.connect_unix(self.socket, None if timeout_s is None else slow(timeout_s))

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=slow(10))

    def stop(self) -> int | None:
        """Shut the daemon down (SIGKILL after ``slow(15)`` s); its exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            with contextlib.suppress(Exception):
                with self.client(5.0) as c:
                    c.shutdown()
            try:
                self.proc.wait(timeout=slow(15))
            except subprocess.TimeoutExpired:
                pass
            finally:
                self.kill()  # still up after 15 s, or the test's own timeout interrupted the wait
        return self.proc.returncode

    def read_log(self) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        extra = _paths.log_path(self.home)
        if extra.exists():
            text += extra.read_text(errors="replace")
        return text


def zombie(pid: int) -> bool:
    """Whether process ``pid`` has died, every thread of it, but is not reaped yet (Linux).

    ``kill(pid, 0)`` still succeeds on it. The main thread shows ``Z`` as soon as it has
    exited, while the process's other threads (a daemon's workers, numpy's) may still be
    exiting and holding its files: the process is dead once the main thread is its only task.
    """
    with open(f"/proc/{pid}/stat") as f:
        state = f.read().rsplit(")", 1)[1].split()[0]
    return state == "Z" and os.listdir(f"/proc/{pid}/task") == [str(pid)]


def spec(**kw: Any) -> dict[str, Any]:
    """A small benchmark spec: one prompt arm on `n` items with a mock from `_mocks`."""
    n = kw.pop("n", 4)
    items = {f"q{i}": f"item{i}" for i in range(n)}
    labels = {f"q{i}": f"answer item{i}" for i in range(n)}
    out: dict[str, Any] = {
        "arms": [{"kind": "prompt", "name": "ask", "template": "{item}"}],
        "reference": {"items": items, "labels": labels},
        "client": {"kind": "mock", "function": "_mocks:answer"},
        "runs": 5,
        "governor": {},
        "python_path": [str(HERE)],
    }
    out.update(kw)
    return out


def stored_ledger(home: Path, bench_id: str) -> dict[str, Any]:
    """Benchmark ``bench_id``'s governor ledger as the store in ``home`` holds it (asserted present).

    Read with the library's own :class:`~hrbench.store.Store`, so it works while the daemon
    runs, after it was killed, and with no daemon at all.
    """
    from hrbench.store import Store

    store = Store(home / "hrbench.sqlite3")
    try:
        led = store.ledger_get(bench_id)
    finally:
        store.close()
    assert led is not None, f"no ledger for benchmark {bench_id} in {home}"
    return led
