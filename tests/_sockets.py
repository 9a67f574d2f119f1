"""A TCP socket the tests left open when the session ends fails the run, naming the test that opened it.

A socket still open when its object is collected warns ``ResourceWarning: unclosed <socket ...>``;
the suite's ``filterwarnings = ["error"]`` turns that into a failure of the test during which it
is collected, but a socket something keeps alive to the end (a client made at import time, a
pool in a module's global) is collected only when the interpreter exits, after pytest has
restored the warning filters: the warning is printed and the run passes. :class:`SocketGuard`
records which test opened each socket and, when a process's session ends, collects garbage,
names each TCP socket still open with its test, closes it and fails the run (xdist workers
report to the controller, as :class:`tests._procs.ProcessGuard` does for processes).
"""

from __future__ import annotations

import gc
import socket
import weakref
from typing import Any

import pytest

_LEFT_KEY = "hrbench_sockets_left"
_TCP = (socket.AF_INET, socket.AF_INET6)


def open_tcp_sockets() -> list[socket.socket]:
    """Every TCP socket object of this process still open, after a garbage collection.

    Frozen objects (``tests/conftest.py`` freezes what collection made) are unfrozen first:
    :func:`gc.get_objects` does not list them.
    """
    gc.unfreeze()
    gc.collect()
    found = []
    for obj in gc.get_objects():
        if isinstance(obj, socket.socket):
            try:
                if obj.fileno() >= 0 and obj.family in _TCP and obj.type == socket.SOCK_STREAM:
                    found.append(obj)
            except OSError:
                continue
    return found


class SocketGuard:
    """The plugin: notes the test that opens each socket; fails a session that ends with one open."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.controller = getattr(config, "workerinput", None) is None
        self.runs_tests = not (self.controller and config.pluginmanager.has_plugin("dsession"))
        self.test = "collection"
        self.opened_by: weakref.WeakKeyDictionary[socket.socket, str] = weakref.WeakKeyDictionary()
        self.left: list[str] = []
        self._original_init: Any = None
        if self.runs_tests:
            self._hook_socket()

    def _hook_socket(self) -> None:
        original = self._original_init = socket.socket.__init__
        guard = self

        def __init__(sock: socket.socket, *args: Any, **kwargs: Any) -> None:
            original(sock, *args, **kwargs)
            guard.opened_by[sock] = guard.test

        socket.socket.__init__ = __init__  # type: ignore[method-assign]

    def describe(self, sock: socket.socket) -> str:
        """``<test that opened it>: <socket repr>``."""
        return f"{self.opened_by.get(sock, 'before the tests')}: {sock!r}"

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> None:
        self.test = item.nodeid

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        self.left += (getattr(node, "workeroutput", None) or {}).get(_LEFT_KEY, [])

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.runs_tests:
            for sock in open_tcp_sockets():
                self.left.append(self.describe(sock))
                sock.close()
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[_LEFT_KEY] = self.left
        elif self.left and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.controller or not self.left:
            return
        tr = terminalreporter
        tr.section("sockets left open at the end of the session", sep="=", red=True, bold=True)
        for line in sorted(self.left)[:30]:
            tr.line(line)
        tr.line(
            f"FAILED: {len(self.left)} TCP socket(s) the tests opened were still open when the session "
            "ended (closed now; the run fails): close each client, server and pool on every path",
            red=True,
            bold=True,
        )

    def pytest_unconfigure(self) -> None:
        if self._original_init is not None:
            socket.socket.__init__ = self._original_init  # type: ignore[method-assign]
            self._original_init = None
