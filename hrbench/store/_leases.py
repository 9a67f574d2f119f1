"""Leases: a benchmark id runs at most once at a time (a lock file per id, the ``leases`` table)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import time
from collections.abc import Iterable
from typing import Any

from hrbench.store._open import _Base


class _Leases(_Base):
    """The one-at-a-time lease of a benchmark id and the lock files that hold it."""

    def lease_acquire(self, benchmark_id: str, owner: str) -> dict[str, Any] | None:
        """Take the one-at-a-time lease of a benchmark id; ``None`` when taken, else the holder.

        Rule (two simultaneous resumes would both run and pay twice): a benchmark id
        runs at most once at a time. The lease is an exclusive ``flock`` on a lock file of the
        id, in the folder ``<database>.locks`` beside the database, held open for the run: of
        concurrent takers (threads, daemons, processes on the same file) exactly one gets it,
        and the operating system lets it go the moment its holder dies, however it dies.
        A resume right after a daemon's SIGKILL is not refused as "held by" the dead process
        (as a lease row in SQLite with a pid check would be, until the process is reaped): a
        dead holder's lease is taken over
        at once, and a reused pid can never keep a lease alive. The ``leases`` table only says
        who holds it (owner, pid, since when), for the refusal's message. A private
        ``":memory:"`` store (one process) keeps the lease in that table alone.

        Args:
            benchmark_id: the benchmark.
            owner: who takes it (unique per run, e.g. ``"<pid>:<random>"``).

        Returns:
            ``None`` when the lease is now ``owner``'s; else the holder's ``owner``, ``pid`` and
            ``acquired`` (Unix seconds; all three ``None`` for a holder that has not written
            them yet).

        Example:
            >>> from hrbench.store import Store
            >>> s = Store(":memory:")
            >>> s.lease_acquire("b", "run-1") is None, s.lease_acquire("b", "run-2")["owner"]
            (True, 'run-1')
            >>> s.lease_release("b", "run-1"); s.lease_acquire("b", "run-2") is None
            True
        """
        if self.path == ":memory:":
            row = self._one("SELECT owner, pid, acquired FROM leases WHERE benchmark_id=?", [benchmark_id])
            if row is not None:
                return {"owner": row[0], "pid": row[1], "acquired": row[2]}
            self._write(
                "INSERT INTO leases VALUES (?,?,?,?)", [benchmark_id, owner, os.getpid(), time.time()]
            )
            return None
        path = self._lock_path(benchmark_id)
        fd = _lock(path)
        if fd is None:
            return self._holder(benchmark_id)
        try:
            self._write(
                "INSERT OR REPLACE INTO leases VALUES (?,?,?,?)",
                [benchmark_id, owner, os.getpid(), time.time()],
            )
        except BaseException:
            os.close(fd)
            raise
        with self._lock:
            self._leases[benchmark_id] = (owner, fd)
        return None

    def _lock_path(self, benchmark_id: str) -> str:
        folder = f"{self.path}.locks"
        os.makedirs(folder, mode=0o700, exist_ok=True)
        return os.path.join(folder, _lock_name(benchmark_id))

    def _holder(self, benchmark_id: str) -> dict[str, Any]:
        """The live holder's row; one that took the lock an instant ago may not have written it yet."""
        for _ in range(50):
            row = self._one("SELECT owner, pid, acquired FROM leases WHERE benchmark_id=?", [benchmark_id])
            if row is not None:
                return {"owner": row[0], "pid": row[1], "acquired": row[2]}
            time.sleep(0.01)
        return {"owner": None, "pid": None, "acquired": None}

    def lease_release(self, benchmark_id: str, owner: str) -> None:
        """Give back a lease taken by ``owner`` through this store (another owner's is left alone)."""
        if self.path == ":memory:":
            self._write("DELETE FROM leases WHERE benchmark_id=? AND owner=?", [benchmark_id, owner])
            return
        with self._lock:
            held = self._leases.get(benchmark_id)
            if held is None or held[0] != owner:
                return
            del self._leases[benchmark_id]
        try:
            self._write("DELETE FROM leases WHERE benchmark_id=? AND owner=?", [benchmark_id, owner])
        finally:
            with contextlib.suppress(OSError):  # unlinked while held: a waiter re-checks the path
                os.unlink(self._lock_path(benchmark_id))
            os.close(held[1])

    def _drop_locks(self, benchmark_ids: Iterable[str]) -> int:
        """Remove the lock files (and ``leases`` rows) of benchmark ids no live holder holds."""
        if self.path == ":memory:":
            return 0
        folder = f"{self.path}.locks"
        freed = [bid for bid in benchmark_ids if _unlink_free(os.path.join(folder, _lock_name(bid)))]
        if freed:
            self._many("DELETE FROM leases WHERE benchmark_id=?", [[bid] for bid in freed])
        return len(freed)

    def _drop_orphan_locks(self) -> int:
        """Remove lock files of no stored benchmark (deleted before they were pruned) that no one holds."""
        if self.path == ":memory:":
            return 0
        folder = f"{self.path}.locks"
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            return 0
        stored = {_lock_name(str(r[0])) for r in self._all("SELECT id FROM benchmarks")}
        return sum(_unlink_free(os.path.join(folder, n)) for n in names if n not in stored)


def _lock_name(benchmark_id: str) -> str:
    """The name of a benchmark's lock file: the id, or a digest of an id unfit for a file name.

    Example:
        >>> _lock_name("3f2a9c"), _lock_name("../x")
        ('3f2a9c', 'd6b96a97d147daaae49eb87a5ca7bfbc')
    """
    safe = benchmark_id if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", benchmark_id) else None
    return safe or hashlib.sha256(benchmark_id.encode()).hexdigest()[:32]


def _unlink_free(path: str) -> bool:
    """Remove the lock file ``path`` when no one holds it; ``True`` when it was removed.

    It is locked first (never created), so one a live holder holds, in this process too, stays;
    a taker that opened it meanwhile finds it unlinked and opens the path again (:func:`_lock`).
    """
    try:
        fd = os.open(path, os.O_RDWR)
    except (FileNotFoundError, IsADirectoryError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    try:
        if os.stat(path).st_ino != os.fstat(fd).st_ino:
            return False  # replaced by a new holder's file: not this one's to remove
        os.unlink(path)
        return True
    except FileNotFoundError:
        return False
    finally:
        os.close(fd)


def _lock(path: str) -> int | None:
    """An exclusive ``flock`` on the file ``path`` (made 0600), or ``None`` when another holds it.

    The file descriptor returned holds the lock until it is closed, or its process dies. A lock
    file its holder unlinked (a release) while this took it is not the lease's any more: then
    the path is opened again.
    """
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)
