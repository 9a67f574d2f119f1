"""No test leaves a process behind: each is stopped when its test ends, and a leftover fails the run.

A helper whose daemon start times out (a busy machine) must still stop the process, or
``make test`` leaves daemons running (65 of them, 3.3 GB, once). :class:`ProcessGuard`
is a pytest plugin (registered by ``tests/conftest.py``) that knows every process the tests
start, three ways, so that a process one way loses another way still knows:

- its **owner mark**: each process the tests start has ``HRB_TEST_OWNER=<run>/<worker>/<owner>``
  in its environment (``<owner>`` is the test, ``t<n>``, or the module- or session-scoped
  fixture that started it; a pytest session a test runs appends its own, after a ``|``). It
  is in ``os.environ`` and a ``subprocess.Popen`` hook adds it to an explicit ``env=``, so a
  daemon that ``hrb`` starts detached (a grandchild, reparented to init) inherits it;
  ``/proc/<pid>/environ`` shows it;
- its **pid**: the ``Popen`` hook records each child's pid with its start time (a reused pid is
  never mistaken for it);
- its **pid file**: the hook records each state directory a child was given (``--home`` or
  ``HRBENCH_HOME``); a daemon writes ``daemon.pid`` there, which is read when the test ends.

When a test ends (after its fixtures' teardown, timeouts included: the check runs in a
``finally``), the processes it owns that still run are given a moment to exit, then SIGKILLed;
they are listed in the summary (the daemon a test auto-started in its private HRBENCH_HOME
is stopped by the ``_private_home`` fixture, as it always was, and is not listed). At the end
of the session (per xdist worker, then once more in the controlling process for workers that
died) any process of the run that still runs is killed and **fails the run**.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Generator, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests import _slow

OWNER = "HRB_TEST_OWNER"
"""The environment variable that marks the processes the tests start (``<run>/<worker>/<owner>``)."""

RUN = "HRB_TEST_RUN"
"""The run's id, set by the controlling pytest process for its xdist workers."""

_LEFT_KEY = "hrbench_left"
_KILLED_KEY = "hrbench_killed"


def _stat(pid: int) -> tuple[str, int] | None:
    """``(state, start time in clock ticks since boot)`` of process ``pid``; ``None`` once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0].decode(), int(fields[19])


def _running(pid: int, start: int | None = None) -> bool:
    """Whether ``pid`` runs (a zombie has exited) and, given ``start``, is still the same process."""
    st = _stat(pid)
    return st is not None and st[0] not in ("Z", "X") and (start is None or st[1] == start)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            text = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"
    return text if len(text) <= 160 else text[:157] + "..."


def _mark(pid: int) -> str | None:
    """Process ``pid``'s owner mark (``HRB_TEST_OWNER``), ``None`` without one (or when gone).

    A pytest session run by a test (``tests/test_process_guard.py``) adds its own owners after
    the outer one's, ``|``-separated, so the outer session still finds what the inner one left.
    """
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = b"\0" + f.read()
    except OSError:  # gone, or another user's
        return None
    needle = f"\0{OWNER}=".encode()
    at = env.find(needle)
    if at < 0:
        return None
    start = at + len(needle)
    return env[start : env.find(b"\0", start)].decode(errors="replace")


def _owners(prefix: str) -> dict[int, str]:
    """The running processes (but this one) whose owner mark starts with ``prefix``: pid -> mark.

    ``prefix`` ending in ``"\0"`` matches one owner exactly.
    """
    found: dict[int, str] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            mark = _mark(int(name))
            for owner in mark.split("|") if mark else ():
                if (owner + "\0").startswith(prefix):
                    found[int(name)] = owner
                    break
    return found


def _kill(pids: Iterable[int]) -> None:
    """SIGKILL each process (and the process group it leads: a detached daemon's), then wait for them."""
    pids = [p for p in pids if p != os.getpid()]
    own_group = os.getpgrp()
    for pid in pids:
        with contextlib.suppress(OSError):
            if os.getpgid(pid) == pid != own_group:
                os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + _slow.slow(10)
    while any(_running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.01)


def _process_helpers() -> set[int]:
    """multiprocessing's resource tracker and fork server: this process's helpers, for its lifetime.

    They are started by the first test that needs them, serve every later one, and exit with
    this process (on EOF from it); killing one makes the next user warn that it "died
    unexpectedly".
    """
    pids = set()
    tracker = getattr(sys.modules.get("multiprocessing.resource_tracker"), "_resource_tracker", None)
    server = getattr(sys.modules.get("multiprocessing.forkserver"), "_forkserver", None)
    for pid in (getattr(tracker, "_pid", None), getattr(server, "_forkserver_pid", None)):
        if isinstance(pid, int):
            pids.add(pid)
    return pids


def _homes_of(args: Any, env: Mapping[str, str] | None, cwd: Any) -> list[Path]:
    """The state directories a child is given: ``--home X`` in its argv, ``HRBENCH_HOME``."""
    homes = []
    if isinstance(args, (list, tuple)):
        argv = [str(a) for a in args]
        homes += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--home"]
        homes += [a.split("=", 1)[1] for a in argv if a.startswith("--home=")]
    source = os.environ if env is None else env
    if source.get("HRBENCH_HOME"):
        homes.append(source["HRBENCH_HOME"])
    base = Path(os.fspath(cwd)) if cwd is not None else Path.cwd()
    return [base / h for h in homes]


def daemon_of(home: Path) -> int | None:
    """The pid of the daemon running on ``home`` (its ``daemon.pid``), if one runs.

    The pid is the daemon's only when that process is an ``hrbench_server`` whose ``--home``
    is ``home``: a pid file a killed daemon left may name a reused pid.
    """
    try:
        pid = int(json.loads((home / "daemon.pid").read_text())["pid"])
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().decode(errors="replace").split("\0")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not _running(pid) or "hrbench_server" not in argv:
        return None
    given = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--home"]
    return pid if any(os.path.normpath(home).endswith(os.path.normpath(g)) for g in given) else None


def stop_daemon(home: Path, timeout_s: float = 15.0) -> None:
    """Stop the daemon running on ``home``, if one runs: SIGTERM (a clean stop, as ``hrb daemon
    stop`` asks), SIGKILL after ``slow(timeout_s)`` seconds; returns once it has exited.

    ``hrb daemon stop`` returns only once the exited daemon is reaped, and a daemon ``hrb``
    started detached is reaped by init, which in some containers does so over a second later:
    a test's teardown waits for the exit only.
    """
    pid = daemon_of(home)
    st = _stat(pid) if pid is not None else None
    if pid is None or st is None:
        return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + _slow.slow(timeout_s)
    while _running(pid, st[1]) and time.monotonic() < deadline:
        time.sleep(0.01)
    if _running(pid, st[1]):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


class ProcessGuard:
    """The plugin: marks, records and stops the tests' processes; fails a run that left one."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        workerinput = getattr(config, "workerinput", None)
        self.worker = os.environ.get("PYTEST_XDIST_WORKER", "main") if workerinput else "main"
        if workerinput is None:  # the controlling process (or the only one): a fresh run id
            os.environ[RUN] = uuid.uuid4().hex[:12]
        self.run = os.environ.setdefault(RUN, uuid.uuid4().hex[:12])
        # an xdist controller runs no test: it only sweeps after its workers and reports
        self.controller = workerinput is None
        self.runs_tests = not (self.controller and config.pluginmanager.has_plugin("dsession"))
        self.prefix = f"{self.run}/{self.worker}/"
        self.outer = os.environ.get(OWNER, "")  # a test's mark, when a test runs this session
        self.owner = ""  # this session's owner of what starts now (a test, a fixture, "session")
        self.mark = ""  # the value of HRB_TEST_OWNER: the outer mark, then the owner
        self.seq = 0
        self.tracked: dict[int, tuple[int, str, str]] = {}  # pid -> (start, owner, command)
        self.homes: dict[str, set[Path]] = {}  # owner -> the state directories its children were given
        self.killed: list[str] = []  # processes that outlived their test (killed at its end)
        self.left: list[str] = []  # processes still running at the session's end (a failure)
        self._original_popen_init: Any = None
        if self.runs_tests:
            self._set_owner("session")
            self._hook_popen()

    # -- marking and recording ------------------------------------------------------------------

    def _set_owner(self, owner: str) -> None:
        self.owner = self.prefix + owner
        self.mark = f"{self.outer}|{self.owner}" if self.outer else self.owner
        os.environ[OWNER] = self.mark

    def _hook_popen(self) -> None:
        guard = self
        original = self._original_popen_init = subprocess.Popen.__init__

        @functools.wraps(original)
        def __init__(popen: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
            env = kw.get("env")
            if len(rest) < 10:  # env was not passed by position
                if env is None and os.environ.get(OWNER) != guard.mark:
                    kw["env"] = {**os.environ, OWNER: guard.mark}
                elif isinstance(env, Mapping) and env.get(OWNER) != guard.mark:
                    if all(isinstance(k, str) for k in env):
                        kw["env"] = {**env, OWNER: guard.mark}
            original(popen, args, *rest, **kw)
            guard._record(popen.pid, args, env if isinstance(env, Mapping) else None, kw.get("cwd"))

        subprocess.Popen.__init__ = __init__  # type: ignore[method-assign,assignment]

    def _record(self, pid: int, args: Any, env: Mapping[str, str] | None, cwd: Any) -> None:
        st = _stat(pid)
        if st is not None:
            what = " ".join(map(str, args)) if isinstance(args, (list, tuple)) else str(args)
            self.tracked[pid] = (st[1], self.owner, what[:160])
        with contextlib.suppress(Exception):  # a path that is no path is no state directory
            self.homes.setdefault(self.owner, set()).update(_homes_of(args, env, cwd))

    def _still_running(self, owner: str | None) -> dict[int, str]:
        """The processes of ``owner`` (every owner of this worker if ``None``) that still run."""
        found: dict[int, str] = {}
        for pid, mark in _owners(owner + "\0" if owner else self.prefix).items():
            found[pid] = f"{mark.removeprefix(self.prefix)}: {_cmdline(pid)}"
        for pid, (start, mark, what) in list(self.tracked.items()):
            if owner is None or mark == owner:
                if _running(pid, start):
                    found.setdefault(pid, f"{mark.removeprefix(self.prefix)}: {what}")
                elif owner is not None:
                    del self.tracked[pid]
        for mark in [owner] if owner else list(self.homes):
            for home in self.homes.get(mark, ()):
                daemon = daemon_of(home)
                # a daemon's own mark says who started it: a test may use a module fixture's daemon
                if daemon is not None and (owner is None or owner in (_mark(daemon) or owner).split("|")):
                    found.setdefault(daemon, f"{mark.removeprefix(self.prefix)}: daemon of {home}")
        if "multiprocessing" in sys.modules and owner is not None:
            for child in sys.modules["multiprocessing"].active_children():
                if child.pid is not None:
                    found.setdefault(child.pid, f"multiprocessing child {child.name}")
        for pid in {os.getpid(), *_process_helpers()}:
            found.pop(pid, None)
        return found

    def _stop(self, found: dict[int, str], grace_s: float) -> dict[int, str]:
        """Give ``found`` ``grace_s`` to exit, SIGKILL the rest; returns those that had to be killed."""
        deadline = time.monotonic() + _slow.slow(grace_s)
        while found and time.monotonic() < deadline:
            time.sleep(0.02)
            found = {pid: what for pid, what in found.items() if _running(pid)}
        _kill(found)
        return found

    # -- the hooks ------------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> None:
        if self.runs_tests:
            self.seq += 1
            self._set_owner(f"t{self.seq}")

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Generator[None, object, object]:
        """A module- or session-scoped fixture's processes outlive the test that set it up."""
        if not self.runs_tests or fixturedef.scope == "function":
            return (yield)
        before = self.owner.removeprefix(self.prefix)
        self._set_owner(f"{fixturedef.scope}-{fixturedef.argname}-t{self.seq}")
        try:
            return (yield)
        finally:
            self._set_owner(before)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, object, object]:
        """After the test's fixtures are torn down (even when a timeout interrupted it)."""
        try:
            return (yield)
        finally:
            if self.runs_tests:
                owner = self.owner
                found = self._still_running(owner)
                if found:
                    for pid, what in self._stop(found, grace_s=1.0).items():
                        self.killed.append(f"{item.nodeid}: pid {pid} {what.split(': ', 1)[-1]}")
                self._set_owner("session")

    @pytest.hookimpl(tryfirst=True)
    def pytest_timeout_set_timer(self, item: pytest.Item, settings: Any) -> object:
        """pytest-timeout's per-test timeout (ini ``timeout`` or a marker) times the machine's load (:func:`tests._slow.current`)."""
        factor = _slow.current()
        if factor == 1.0 or not settings.timeout:
            return None
        import pytest_timeout

        scaled = settings._replace(timeout=settings.timeout * factor)
        return pytest_timeout.pytest_timeout_set_timer(item=item, settings=scaled)

    def pytest_report_header(self) -> str:
        if _slow.FACTOR is not None:
            return f"{_slow.VARIABLE}={_slow.FACTOR:g}: test time limits x{_slow.FACTOR:g}"
        return f"test time limits x{_slow.current():.2g} now: the load per core x{_slow.STEAL:.2g} steal, rescaled at each test"

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """An xdist worker ended: take what it killed and what it found left."""
        out = getattr(node, "workeroutput", None) or {}
        self.killed += out.get(_KILLED_KEY, [])
        self.left += out.get(_LEFT_KEY, [])

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The sweep: every process of this worker (then of the whole run) that still runs."""
        if self.runs_tests:
            self.left += [
                f"{what} (pid {pid})" for pid, what in self._stop(self._still_running(None), 2).items()
            ]
        if self.controller:  # after the workers' own sweeps: what a worker that died left
            found = {pid: f"{mark}: {_cmdline(pid)}" for pid, mark in _owners(f"{self.run}/").items()}
            found = {p: w for p, w in found.items() if not _is_child_of(p, os.getpid())}
            self.left += [f"{what} (pid {pid})" for pid, what in self._stop(found, 2).items()]
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[_KILLED_KEY] = self.killed
            workeroutput[_LEFT_KEY] = self.left
        elif self.left and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.controller:
            return
        tr = terminalreporter
        if self.killed:
            tr.section("processes that outlived their test (killed when it ended)", sep="-", yellow=True)
            for line in sorted(self.killed)[:30]:
                tr.line(line)
            if len(self.killed) > 30:
                tr.line(f"... and {len(self.killed) - 30} more")
        if self.left:
            tr.section("processes left running at the end of the session", sep="=", red=True, bold=True)
            for line in sorted(self.left):
                tr.line(line)
            tr.line(
                f"FAILED: {len(self.left)} process(es) the tests started still ran when the session "
                "ended (killed now; the run fails)",
                red=True,
                bold=True,
            )

    def pytest_unconfigure(self) -> None:
        if self._original_popen_init is not None:
            subprocess.Popen.__init__ = self._original_popen_init  # type: ignore[method-assign]
            self._original_popen_init = None


def _is_child_of(pid: int, parent: int) -> bool:
    """Whether ``pid``'s parent is ``parent`` (an xdist worker is the controller's child)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1]) == parent
    except (OSError, IndexError, ValueError):
        return False


def interruptible() -> None:
    """A ``preexec_fn`` that gives the child SIGINT's default, as a terminal's shell does.

    A suite started in the background of a non-interactive shell (``make test &``) inherits
    SIGINT ignored, and a child whose SIGINT is ignored keeps it so: Python then never turns a
    Ctrl-C into ``KeyboardInterrupt``, and a test that sends one would pass or fail by how the
    suite was launched (it ran to the end with exit 0).
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
