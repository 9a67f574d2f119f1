"""Opening the store: the file and its permissions, SQLite's pragmas, the schema, the connection.

One writer connection (opened with ``check_same_thread=False``) is used by one thread at a time
under a lock; :class:`_Base` holds it with the helpers every table family uses (:meth:`_Base._guard`,
:meth:`_Base._tx` and the one-statement ``_write``, ``_many``, ``_one``, ``_all``).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio

from hrbench.errors import ConfigError, StoreGone
from hrbench.store._errors import store_error
from hrbench.store._schema import _MIGRATIONS, _SCHEMA, SCHEMA_VERSION

T = TypeVar("T")


def default_home() -> Path:
    """The state directory: ``$HRBENCH_HOME``, else the user's state dir (platformdirs).

    A relative ``$HRBENCH_HOME`` is made absolute against the current directory (as
    the clients do: a process that changes directory keeps the same store).
    """
    env = os.environ.get("HRBENCH_HOME")
    if env:
        return Path(os.path.abspath(Path(env).expanduser()))
    import platformdirs

    return Path(platformdirs.user_state_dir("hrbench"))


_WAL_PAGES = 10_000
"""Pages (4 KiB each) the write-ahead log grows to before a commit copies it into the file.

SQLite's default, 1,000, checkpoints every ~4 MB: while rows stream (about 1.2 KB a row with its
trace and indexes) that is every ~3,000 rows, and the index pages each batch touches are copied
again every time. 10,000 (~40 MB of log) cut the writer's CPU from 8.6-8.9 to 7.1-8.2 us a row
over 51,200 rows; ``hrb gc`` still truncates the log (``wal_checkpoint``).
"""

_BUSY_S = 10.0
"""How long a statement waits for another connection's lock before it fails (seconds)."""

_OPEN_TRIES_S = 30.0
"""How long opening a store keeps retrying the WAL switch and the schema (seconds)."""


def _open(conn: sqlite3.Connection, path: str) -> None:
    """Set up a connection: busy timeout, WAL, the schema and its version row.

    Safe when many processes open or migrate one fresh file at once (case R06a): the
    busy timeout is set before anything else; the WAL switch, which SQLite does not retry on a
    busy database, is retried; the schema is created in one ``BEGIN IMMEDIATE`` transaction
    (one writer at a time, each waiting its turn) and the version row is written with
    ``INSERT OR IGNORE``, so a second process never adds a duplicate. An older file is migrated
    in that same transaction (:data:`_MIGRATIONS`), so it happens once.

    Raises:
        ConfigError: the file's schema is newer than this hrbench knows.
        sqlite3.OperationalError: the file stayed locked for :data:`_OPEN_TRIES_S` seconds.
    """
    conn.execute(f"PRAGMA busy_timeout={int(_BUSY_S * 1000)}")
    deadline = time.monotonic() + _OPEN_TRIES_S
    delay = 0.005
    while True:
        try:
            if path != ":memory:" and conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA wal_autocheckpoint={_WAL_PAGES}")
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
                row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
                version = int(row[0])
                if version < SCHEMA_VERSION:  # an older file: one step per version
                    while version < SCHEMA_VERSION:
                        _MIGRATIONS[version](conn)
                        version += 1
                    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", [str(version)])
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            break
        except sqlite3.OperationalError as exc:
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(delay)  # another process is switching or migrating: wait and retry
            delay = min(delay * 2, 0.2)
    if int(row[0]) > SCHEMA_VERSION:
        raise ConfigError("store", path, f"schema version {row[0]} is newer than {SCHEMA_VERSION}")


def _private_files(path: str) -> None:
    """Make the database file 0600 before SQLite opens it, and its journals if they exist.

    SQLite creates the ``-wal`` and ``-shm`` files with the database file's permissions, so a
    file made 0600 here keeps every file of the store private (not 0644, as the default umask
    would make them). Files left by an older version are tightened.
    """
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    except OSError:
        return  # unreadable or read-only: SQLite's own open says why, and the store maps it
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.chmod(path + suffix, 0o600)
        except OSError:
            pass


class _Base:
    """The connection to one store file, its lock, and the checks every call makes first.

    Args:
        path: the database file; ``None`` for ``default_home() / "hrbench.sqlite3"``;
            ``":memory:"`` for a private in-memory store (tests).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        if path is None:
            home = default_home()
            home.mkdir(parents=True, exist_ok=True, mode=0o700)
            path = home / "hrbench.sqlite3"
        self.path = str(path)
        self._identity: tuple[int, int] | None = None
        self._lock = threading.RLock()
        self._leases: dict[str, tuple[str, int]] = {}  # benchmark id -> (owner, locked fd)
        self._checkpointer: sqlite3.Connection | None = None  # wal_checkpoint's own connection
        self._checkpointing = threading.Lock()
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                _private_files(self.path)
            # imported on the first open, not with the module: sqlite-utils brings numpy (a daemon
            # imports the store at start and opens it at the first request that reads or writes it)
            from hrbench._util.sqlite import sqlite_utils

            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=_BUSY_S)
            self.db = sqlite_utils.Database(conn)
            with self._lock:
                _open(conn, self.path)
            if self.path != ":memory:":
                st = os.stat(self.path)
                self._identity = (st.st_dev, st.st_ino)
        except (sqlite3.Error, OSError) as exc:
            raise store_error(exc, self.path) from None

    def __repr__(self) -> str:
        return f"Store({self.path!r})"

    def close(self) -> None:
        """Close the connection (leases still held through this store go with it)."""
        with self._lock:
            for _, fd in self._leases.values():
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._leases.clear()
            self.db.conn.close()
        with self._checkpointing:
            if self._checkpointer is not None:
                self._checkpointer.close()
                self._checkpointer = None

    async def arun(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` (a method of this store) in a worker thread."""
        return await anyio.to_thread.run_sync(lambda: fn(*args))

    def check_identity(self) -> None:
        """Raise :class:`StoreGone` when the file is no longer the one opened (deleted or replaced).

        Example:
            >>> from hrbench.store import Store
            >>> Store(":memory:").check_identity()  # nothing to check for a private store
        """
        if self._identity is None:
            return
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise StoreGone(
                f"the database {self.path} was deleted while it was open; nothing more can be saved "
                "to it. Restart the daemon (`hrb daemon stop`; the next start makes a new, empty "
                "database) or put the file back from a backup",
                self.path,
            ) from None
        if (st.st_dev, st.st_ino) != self._identity:
            raise StoreGone(
                f"the database {self.path} was replaced by another file while it was open; "
                "nothing more is saved. Restart the daemon (`hrb daemon stop`) to use the new file",
                self.path,
            )

    @contextlib.contextmanager
    def _guard(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock, after :meth:`check_identity`; SQLite errors typed."""
        with self._lock:
            self.check_identity()
            try:
                yield self.db.conn
            except sqlite3.Error as exc:
                raise store_error(exc, self.path) from None

    @contextlib.contextmanager
    def _tx(self, immediate: bool = False) -> Iterator[sqlite3.Connection]:
        """:meth:`_guard` in one transaction, rolled back on any failure (a failed COMMIT too).

        ``immediate`` takes the write lock at once: needed when the transaction reads before
        it writes and another connection may write meanwhile (else SQLite answers "database
        is locked" at the first write instead of waiting).
        """
        with self._guard() as conn:
            conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise

    def _write(self, sql: str, params: Sequence[Any] = ()) -> None:
        with self._guard() as conn:
            conn.execute(sql, list(params))

    def _many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._tx() as conn:
            conn.executemany(sql, rows)

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self._guard() as conn:
            return conn.execute(sql, list(params)).fetchone()

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._guard() as conn:
            return conn.execute(sql, list(params)).fetchall()
