"""The SQLite store: references, cache, recordings, benchmarks, rows, traces, governor ledger.

One file through sqlite-utils, WAL with ``synchronous=NORMAL``, a versioned schema. One writer
connection (opened with ``check_same_thread=False``) is used by one thread at a time under a
lock; async callers go through :meth:`Store.arun`, which runs the call in a worker thread so the
event loop never blocks on SQLite (``../shared/notes/stack.md`` §3).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio
import msgspec

from hrbench._sqlite import sqlite_utils
from hrbench.errors import (
    ConfigError,
    StoreCorrupt,
    StoreError,
    StoreFull,
    StoreGone,
    StoreReadOnly,
    did_you_mean,
    refusal_limits,
)
from hrbench.records import Request, Result, Row, Step

__all__ = ["SCHEMA_VERSION", "Store", "default_home"]

SCHEMA_VERSION = 6
"""The store's schema version: 1 kept one name per reference content (a second name replaced
the first); 2 keeps names in ``reference_names``, a history of ``name -> content hash``; 3 keeps
the governor's ledger per call (issue 13): open reservations in ``ledger_open``, and the spend
left unknown by a crash in the ``unknown_*`` columns of ``ledger``; 4 adds the ``cancelled_*``
columns; 5 keeps scored rows and their traces a batch per SQLite row (``row_batches``, issue 15):
rows written before stay in ``rows`` and ``traces`` and are read with the batches; 6 adds the
``lost_*`` columns of ``ledger`` (replies lost after their request was written, newcomer finding 4)
and the ``*unpriced*`` ones (unknown spend with no USD bound: no price or no output limit;
``ledger_open.usd`` is then NULL; newcomer finding 13)."""
T = TypeVar("T")

_enc = msgspec.json.Encoder()
_dec_result = msgspec.json.Decoder(Result)
_dec_row = msgspec.json.Decoder(Row)
_dec_steps = msgspec.json.Decoder(list[Step])
_dec_rows = msgspec.json.Decoder(list[Row])
_dec_seqs = msgspec.json.Decoder(list[int])
_dec_trace_map = msgspec.json.Decoder(dict[str, msgspec.Raw])


class _Draw(msgspec.Struct, kw_only=True):
    """What the distinct-draw check reads of a step (the rest of it is skipped when decoding)."""

    ledger_id: str = ""
    kind: str = "request"
    key: str | None = None
    source: str = "live"
    response_id: str | None = None


_dec_draws = msgspec.json.Decoder(list[_Draw])


class _Key(msgspec.Struct):
    """A stored row's key (its other fields are skipped when decoding)."""

    arm: str
    item: str
    run: int


_dec_keys = msgspec.json.Decoder(list[_Key])


def _reply_columns(arm: str, request_hash: str, request: Request, result: Result) -> list[Any]:
    """The columns a cache entry and a recording share: arm, request, reply, cost, latency, id."""
    return [
        arm,
        request_hash,
        request.draw_index,
        request.model,
        _enc.encode(request).decode(),
        _enc.encode(result).decode(),
        result.usd,
        result.seconds,
        result.response_id,
        time.time(),
    ]


def default_home() -> Path:
    """The state directory: ``$HRBENCH_HOME``, else the user's state dir (platformdirs).

    A relative ``$HRBENCH_HOME`` is made absolute against the current directory (decided, as
    the clients do: a process that changes directory keeps the same store).
    """
    env = os.environ.get("HRBENCH_HOME")
    if env:
        return Path(os.path.abspath(Path(env).expanduser()))
    import platformdirs

    return Path(platformdirs.user_state_dir("hrbench"))


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS reference_sets (hash TEXT PRIMARY KEY, name TEXT, created REAL, n_items INTEGER, body TEXT);
CREATE INDEX IF NOT EXISTS reference_sets_name ON reference_sets(name);
CREATE TABLE IF NOT EXISTS reference_names (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, hash TEXT NOT NULL, created REAL);
CREATE INDEX IF NOT EXISTS reference_names_name ON reference_names(name, seq);
CREATE TABLE IF NOT EXISTS cache (
  key TEXT PRIMARY KEY, arm TEXT, request_hash TEXT, draw_index INTEGER, model TEXT,
  request TEXT, result TEXT, usd REAL, seconds REAL, response_id TEXT, created REAL);
CREATE TABLE IF NOT EXISTS recordings (
  recording TEXT, arm TEXT, request_hash TEXT, draw_index INTEGER, model TEXT,
  request TEXT, result TEXT, usd REAL, seconds REAL, response_id TEXT, created REAL,
  PRIMARY KEY (recording, arm, request_hash, draw_index));
CREATE TABLE IF NOT EXISTS benchmarks (
  id TEXT PRIMARY KEY, created REAL, status TEXT, reference_hash TEXT, spec TEXT, summary TEXT);
CREATE TABLE IF NOT EXISTS rows (
  benchmark_id TEXT, seq INTEGER, arm TEXT, item TEXT, run INTEGER, row TEXT,
  PRIMARY KEY (benchmark_id, arm, item, run));
CREATE TABLE IF NOT EXISTS traces (benchmark_id TEXT, ledger_id TEXT, steps TEXT, PRIMARY KEY (benchmark_id, ledger_id));
CREATE TABLE IF NOT EXISTS row_batches (
  id INTEGER PRIMARY KEY, benchmark_id TEXT NOT NULL, n INTEGER NOT NULL, fresh INTEGER NOT NULL,
  seqs BLOB NOT NULL, rows BLOB NOT NULL, traces BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS row_batches_benchmark ON row_batches(benchmark_id, id);
CREATE TABLE IF NOT EXISTS ledger (benchmark_id TEXT PRIMARY KEY, calls INTEGER, usd REAL, tokens INTEGER, updated REAL,
  unknown_calls INTEGER NOT NULL DEFAULT 0, unknown_usd REAL NOT NULL DEFAULT 0, unknown_tokens INTEGER NOT NULL DEFAULT 0,
  cancelled_calls INTEGER NOT NULL DEFAULT 0, cancelled_usd REAL NOT NULL DEFAULT 0, cancelled_tokens INTEGER NOT NULL DEFAULT 0,
  lost_calls INTEGER NOT NULL DEFAULT 0, lost_usd REAL NOT NULL DEFAULT 0, lost_tokens INTEGER NOT NULL DEFAULT 0,
  unpriced_calls INTEGER NOT NULL DEFAULT 0, cancelled_unpriced INTEGER NOT NULL DEFAULT 0,
  lost_unpriced INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS ledger_open (
  benchmark_id TEXT, session TEXT, seq INTEGER, usd REAL, tokens INTEGER, created REAL,
  PRIMARY KEY (benchmark_id, session, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS leases (benchmark_id TEXT PRIMARY KEY, owner TEXT, pid INTEGER, acquired REAL);
CREATE TABLE IF NOT EXISTS ledger_paid (benchmark_id TEXT NOT NULL, ledger_id TEXT NOT NULL, step BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS ledger_paid_run ON ledger_paid(benchmark_id, ledger_id);
"""


_LEDGER_SNAPSHOT = (
    "INSERT INTO ledger (benchmark_id, calls, usd, tokens, updated) VALUES (?,?,?,?,?) "
    "ON CONFLICT(benchmark_id) DO UPDATE SET calls=excluded.calls, usd=excluded.usd, "
    "tokens=excluded.tokens, updated=excluded.updated"
)
"""A ledger snapshot (``calls, usd, tokens`` as a whole): the unknown spend is kept as it was."""

_LEDGER_SELECT = (
    "SELECT l.calls, l.usd, l.tokens, l.unknown_calls, l.unknown_usd, l.unknown_tokens, "
    "l.cancelled_calls, l.cancelled_usd, l.cancelled_tokens, count(o.seq), coalesce(sum(o.usd), 0), coalesce(sum(o.tokens), 0), "
    "l.lost_calls, l.lost_usd, l.lost_tokens, l.unpriced_calls, l.cancelled_unpriced, l.lost_unpriced "
    "FROM ledger l LEFT JOIN ledger_open o ON o.benchmark_id=l.benchmark_id"
)
"""A benchmark's ledger row with the sums of its open reservations (add ``WHERE``)."""

_WAL_PAGES = 10_000
"""Pages (4 KiB each) the write-ahead log grows to before a commit copies it into the file.

SQLite's default, 1,000, checkpoints every ~4 MB: while rows stream (about 1.2 KB a row with its
trace and indexes) that is every ~3,000 rows, and the index pages each batch touches are copied
again every time. 10,000 (~40 MB of log) cut the writer's CPU from 8.6-8.9 to 7.1-8.2 us a row
over 51,200 rows (issue 15, point 6); ``hrb gc`` still truncates the log (``wal_checkpoint``).
"""

_ROWS_OF_B = (
    "((SELECT count(*) FROM rows r WHERE r.benchmark_id=b.id) + "
    "(SELECT coalesce(sum(x.fresh), 0) FROM row_batches x WHERE x.benchmark_id=b.id))"
)
"""The number of rows of benchmark ``b`` (a SQL expression): those of schema 4 and the batches'."""

_BUSY_S = 10.0
"""How long a statement waits for another connection's lock before it fails (seconds)."""

_OPEN_TRIES_S = 30.0
"""How long opening a store keeps retrying the WAL switch and the schema (seconds)."""


def _open(conn: sqlite3.Connection, path: str) -> None:
    """Set up a connection: busy timeout, WAL, the schema and its version row.

    Safe when many processes open or migrate one fresh file at once (case R06a, decided): the
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
                if version < SCHEMA_VERSION:  # an older file: one step per version (issue 13)
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


class Store:
    """One SQLite file holding hrbench's state.

    Args:
        path: the database file; ``None`` for ``default_home() / "hrbench.sqlite3"``;
            ``":memory:"`` for a private in-memory store (tests).

    Every call first checks that the file is still the one opened (its device and inode):
    a database deleted or replaced under a running process raises :class:`StoreGone` instead
    of writing to a file nobody will read again (decided, issue 13). SQLite failures that
    the user must act on raise typed errors naming the file and the fix.

    Raises:
        ConfigError: when the file's schema is newer than this hrbench knows.
        StoreGone: the file was deleted or replaced since it was opened.
        StoreFull: the disk is full.
        StoreCorrupt: the file is corrupt or not a database.
        StoreReadOnly: the file or its folder cannot be written.

    Example:
        >>> s = Store(":memory:")
        >>> s.cache_stats()["entries"]
        0
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
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                _private_files(self.path)
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=_BUSY_S)
            self.db = sqlite_utils.Database(conn)
            with self._lock:
                _open(conn, self.path)
            if self.path != ":memory:":
                st = os.stat(self.path)
                self._identity = (st.st_dev, st.st_ino)
        except (sqlite3.Error, OSError) as exc:
            raise _store_error(exc, self.path) from None

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

    async def arun(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` (a method of this store) in a worker thread."""
        return await anyio.to_thread.run_sync(lambda: fn(*args))

    def check_identity(self) -> None:
        """Raise :class:`StoreGone` when the file is no longer the one opened (deleted or replaced).

        Example:
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
                raise _store_error(exc, self.path) from None

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

    # -- cache ---------------------------------------------------------------------------
    def cache_get(self, key: str) -> Result | None:
        """The cached reply under ``key``, or ``None``."""
        row = self._one("SELECT result FROM cache WHERE key=?", [key])
        return None if row is None else _dec_result.decode(row[0])

    def cache_put(self, key: str, arm: str, request_hash: str, request: Request, result: Result) -> None:
        """Keep a reply under ``key`` (the reply, usage, original cost, latency, response id)."""
        self._write(
            "INSERT OR REPLACE INTO cache VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [key, *_reply_columns(arm, request_hash, request, result)],
        )

    def cache_stats(self) -> dict[str, Any]:
        """Entries, distinct requests, nominal USD and bytes kept in the cache, and recordings.

        ``bytes`` is the UTF-8 size of the stored requests and results (what ``gc`` frees before
        VACUUM), not the database file's size.
        """
        n, reqs, usd, size = self._one(
            "SELECT count(*), count(DISTINCT request_hash), coalesce(sum(usd),0), "
            "coalesce(sum(length(CAST(request AS BLOB)) + length(CAST(result AS BLOB))),0) FROM cache"
        )
        recs = self._all(
            "SELECT recording, arm, count(*) FROM recordings GROUP BY recording, arm ORDER BY 1, 2"
        )
        return {
            "entries": n,
            "requests": reqs,
            "usd_nominal": usd,
            "bytes": size,
            "recordings": [{"recording": r, "arm": a, "entries": c} for r, a, c in recs],
            "path": self.path,
        }

    def cache_clear(
        self, *, model: str | None = None, arm: str | None = None, older_than_s: float | None = None
    ) -> int:
        """Delete cache entries: every one, or those of ``model`` / ``arm`` / created over ``older_than_s`` ago.

        The filters combine (all must hold). Recordings are never touched. Newcomer finding 20:
        fresh draws needed ``cache = false`` or ``hrb gc``, which deletes benchmarks too.

        Returns:
            How many entries were deleted.

        Example:
            >>> from hrbench.records import Request, Result
            >>> s = Store(":memory:")
            >>> for m in ("a", "b"):
            ...     s.cache_put(m, "arm", "h", Request(messages=[], model=m), Result(text="x"))
            >>> s.cache_clear(model="a"), s.cache_clear()
            (1, 1)
        """
        where: list[str] = ["1=1"]
        args: list[Any] = []
        if model is not None:
            where.append("model=?")
            args.append(model)
        if arm is not None:
            where.append("arm=?")
            args.append(arm)
        if older_than_s is not None:
            where.append("created < ?")
            args.append(time.time() - older_than_s)
        with self._guard() as conn:  # the file checked and SQLite's errors typed, as every write
            return int(conn.execute(f"DELETE FROM cache WHERE {' AND '.join(where)}", args).rowcount)

    # -- recordings ------------------------------------------------------------------------
    def recording_get(
        self, recording: str, arm: str, request_hash: str, draw_index: int | None
    ) -> Result | None:
        """The reply ``arm`` got for a request and draw index in ``recording``, or ``None``."""
        if draw_index is None:
            row = self._one(
                "SELECT result FROM recordings WHERE recording=? AND arm=? AND request_hash=? AND draw_index IS NULL",
                [recording, arm, request_hash],
            )
        else:
            row = self._one(
                "SELECT result FROM recordings WHERE recording=? AND arm=? AND request_hash=? AND draw_index=?",
                [recording, arm, request_hash, draw_index],
            )
        return None if row is None else _dec_result.decode(row[0])

    def recording_put(
        self, recording: str, arm: str, request_hash: str, request: Request, result: Result
    ) -> None:
        """Record the reply ``arm`` got for a request and its draw index."""
        self._write(
            "INSERT OR REPLACE INTO recordings VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [recording, *_reply_columns(arm, request_hash, request, result)],
        )

    def recording_export(self, recording: str) -> list[dict[str, Any]]:
        """Every entry of a recording as JSON-ready dicts (arm, request_hash, draw_index, request, result)."""
        rows = self._all(
            "SELECT arm, request_hash, draw_index, request, result FROM recordings WHERE recording=? "
            "ORDER BY arm, request_hash, draw_index",
            [recording],
        )
        return [
            {
                "arm": a,
                "request_hash": h,
                "draw_index": d,
                "request": msgspec.json.decode(rq),
                "result": msgspec.json.decode(rs),
            }
            for a, h, d, rq, rs in rows
        ]

    def recording_import(self, recording: str, entries: Iterable[dict[str, Any]]) -> int:
        """Add exported entries to a recording; returns how many.

        Raises:
            msgspec.ValidationError: when an entry's request or result is malformed.
        """
        batch = []
        for e in entries:
            req = msgspec.convert(e["request"], Request)
            res = msgspec.convert(e["result"], Result)
            batch.append([recording, *_reply_columns(str(e["arm"]), str(e["request_hash"]), req, res)])
        self._many("INSERT OR REPLACE INTO recordings VALUES (?,?,?,?,?,?,?,?,?,?,?)", batch)
        return len(batch)

    def recordings(self) -> list[str]:
        """Names of the recordings held."""
        return [r[0] for r in self._all("SELECT DISTINCT recording FROM recordings ORDER BY 1")]

    # -- references ----------------------------------------------------------------------
    def reference_put(self, reference: Any, name: str | None = None) -> str:
        """Keep a :class:`~hrbench.Reference` and, when ``name`` is given, point that name at it.

        Names are a history of ``name -> content hash``: each put under a name appends to it,
        so :meth:`reference_get` of the name returns the last content put under it (put A, B,
        then A again: A), and one content may carry several names (decided, issue 13).

        Args:
            reference: the reference (kept once per content hash).
            name: a name to point at it, or ``None`` to keep the content only.

        Returns:
            The content hash.

        Raises:
            ConfigError: when ``name`` is empty.

        Example:
            >>> from hrbench.reference import Reference
            >>> s = Store(":memory:")
            >>> a, b = Reference(["q"], ["A"]), Reference(["q"], ["B"])
            >>> for ref in (a, b, a):
            ...     _ = s.reference_put(ref, "x")
            >>> s.reference_get("x").labels == a.labels, len(s.reference_history("x"))
            (True, 3)
        """
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ConfigError("name", name, "a reference name must be a non-empty string")
        body = _enc.encode(reference.to_dict()).decode()
        now = time.time()
        with self._tx() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO reference_sets VALUES (?,NULL,?,?,?)",
                [reference.hash, now, len(reference), body],
            )
            if name is not None:
                conn.execute(
                    "INSERT INTO reference_names (name, hash, created) VALUES (?,?,?)",
                    [name, reference.hash, now],
                )
        return str(reference.hash)

    def reference_get(self, key: str) -> Any:
        """A kept reference by full hash, else by name, else by hash prefix; ``None`` if unknown.

        A name gives the last content put under it; a prefix needs 8+ characters.

        Raises:
            ConfigError: when a hash prefix matches more than one kept reference.
        """
        from hrbench.reference import Reference

        row = self._one("SELECT body FROM reference_sets WHERE hash=?", [key])
        if row is None:
            row = self._one(
                "SELECT s.body FROM reference_names n JOIN reference_sets s ON s.hash = n.hash "
                "WHERE n.name=? ORDER BY n.seq DESC LIMIT 1",
                [key],
            )
        if row is None and len(key) >= 8:
            rows = self._all(
                "SELECT hash, body FROM reference_sets WHERE substr(hash, 1, ?)=? LIMIT 2", [len(key), key]
            )
            if len(rows) > 1:
                raise ConfigError("ref", key, "this hash prefix matches several references; give more of it")
            row = (rows[0][1],) if rows else None
        return None if row is None else Reference.from_dict(msgspec.json.decode(row[0]))

    def reference_list(self) -> list[dict[str, Any]]:
        """Kept references, oldest first: one entry per name, one per never-named content.

        A name's entry is the content it points at now; a content that never had a name has
        ``name`` ``None``.

        Returns:
            Dicts of ``hash``, ``name``, ``created`` (Unix seconds: of the name's last put, or
            of the content) and ``n_items``.
        """
        rows = self._all(
            "SELECT n.hash, n.name, n.created, s.n_items FROM reference_names n "
            "JOIN reference_sets s ON s.hash = n.hash "
            "WHERE n.seq = (SELECT max(seq) FROM reference_names m WHERE m.name = n.name) "
            "UNION ALL SELECT hash, NULL, created, n_items FROM reference_sets s "
            "WHERE NOT EXISTS (SELECT 1 FROM reference_names n WHERE n.hash = s.hash) "
            "ORDER BY 3, 2"
        )
        return [{"hash": h, "name": n, "created": c, "n_items": k} for h, n, c, k in rows]

    def reference_history(self, name: str) -> list[dict[str, Any]]:
        """Every put under ``name``, oldest first: dicts of ``hash`` and ``created`` (Unix s)."""
        rows = self._all("SELECT hash, created FROM reference_names WHERE name=? ORDER BY seq", [name])
        return [{"hash": h, "created": c} for h, c in rows]

    # -- benchmarks, rows, traces ----------------------------------------------------------
    def benchmark_put(
        self, benchmark_id: str, spec: dict[str, Any], reference_hash: str, status: str = "running"
    ) -> None:
        """Create (or reopen, on resume) a benchmark record.

        On resume only ``status`` changes, and the spec's ``limits`` when ``spec`` has them (the
        governor caps of the resumed run).
        """
        self._write(
            "INSERT INTO benchmarks VALUES (?,?,?,?,?,NULL) ON CONFLICT(id) DO UPDATE SET status=excluded.status, "
            "spec=CASE WHEN json_extract(excluded.spec, '$.limits') IS NULL THEN spec "
            "ELSE json_set(spec, '$.limits', json(json_extract(excluded.spec, '$.limits'))) END",
            [benchmark_id, time.time(), status, reference_hash, _enc.encode(spec).decode()],
        )

    def benchmark_finish(self, benchmark_id: str, status: str, summary: Any) -> None:
        """Mark a benchmark finished (``"done"``, ``"cancelled"``, ``"failed"``) with its summary."""
        self._write(
            "UPDATE benchmarks SET status=?, summary=? WHERE id=?",
            [status, _enc.encode(summary).decode(), benchmark_id],
        )

    def benchmark_get(self, benchmark_id: str) -> dict[str, Any] | None:
        """A benchmark record: id, created, status, reference_hash, spec, summary."""
        row = self._one(
            "SELECT id, created, status, reference_hash, spec, summary FROM benchmarks WHERE id=?",
            [benchmark_id],
        )
        if row is None:
            return None
        i, c, st, rh, spec, summ = row
        return {
            "id": i,
            "created": c,
            "status": st,
            "reference_hash": rh,
            "spec": msgspec.json.decode(spec),
            "summary": None if summ is None else msgspec.json.decode(summ),
        }

    def benchmark_list(self) -> list[dict[str, Any]]:
        """Benchmarks held: id, created, status, reference_hash, rows."""
        rows = self._all(
            "SELECT b.id, b.created, b.status, b.reference_hash, " + _ROWS_OF_B + " "
            "FROM benchmarks b ORDER BY b.created"
        )
        return [
            {"id": i, "created": c, "status": s, "reference_hash": h, "rows": n} for i, c, s, h, n in rows
        ]

    def rows_put(
        self,
        benchmark_id: str,
        rows: Sequence[tuple[int, Row]],
        traces: dict[str, list[Step]] | None = None,
        ledger: tuple[int, float, int] | None = None,
        *,
        chunks: Sequence[bytes] | None = None,
        fresh: int | None = None,
    ) -> None:
        """Write scored rows, their traces and the governor's use in one transaction.

        All or nothing: a batch that fails (a full disk) leaves neither its rows nor its ledger.
        ``rows`` are ``(order number, row)``; ``ledger`` is ``(calls, usd, tokens)`` as
        :meth:`ledger_put` takes them. A row whose ``(arm, item, run)`` is stored already
        replaces it (a run the budget stopped, run again on resume).

        Decided (issue 15, point 6): the batch is one SQLite row (``row_batches``): its rows'
        JSON as one array, their order numbers, their traces as one object. A row per row and
        per trace cost four B-tree inserts and ~6 us of CPU per row, while the daemon streams
        thousands a second; readers (:meth:`rows_get`, :meth:`traces_get`, :meth:`rows_count`)
        put the batches back together.

        Args:
            benchmark_id: the benchmark.
            rows: ``(order number, row)`` pairs.
            traces: ``{ledger_id: steps}``.
            ledger: the governor's use to keep with the rows (a Ray run's), or ``None``.
            chunks: the rows' JSON as msgspec encodes ``list[Row]``: arrays that, one after the
                other, hold ``rows`` in order (a caller that sends them on, as the daemon's
                ``hrbench/rows`` notifications, does not encode them twice); ``None`` to encode here.
            fresh: how many of ``rows`` have a key not stored yet (the daemon knows which runs
                it runs again); ``None`` to find out here (reads the benchmark's keys).
        """
        if not chunks:
            chunks = [_enc.encode([r for _, r in rows])]
        body = (
            chunks[0] if len(chunks) == 1 else b"[" + b",".join(c[1:-1] for c in chunks if len(c) > 2) + b"]"
        )
        self.row_batch_put(
            benchmark_id,
            [seq for seq, _ in rows],
            body,
            _enc.encode(traces or {}),
            ledger=ledger,
            fresh=fresh,
            keys=[(r.arm, r.item, r.run) for _, r in rows] if fresh is None else None,
        )

    def row_batch_put(
        self,
        benchmark_id: str,
        seqs: Sequence[int],
        rows_json: bytes,
        traces_json: bytes = b"{}",
        ledger: tuple[int, float, int] | None = None,
        *,
        fresh: int | None = None,
        keys: Sequence[tuple[str, str, int]] | None = None,
    ) -> None:
        """Write a batch of rows already encoded, their traces and the governor's use, in one transaction.

        What :meth:`rows_put` does once it has encoded its rows; the daemon encodes each row and
        trace as it is scored, so a batch is written without holding a Python object per row
        (issue 15, point 6: rows kept for a batch as objects cost the event loop ~3 us a row
        in garbage collection and cache misses).

        Args:
            benchmark_id: the benchmark.
            seqs: the rows' order numbers, in the order of ``rows_json``.
            rows_json: the rows as one JSON array (msgspec's encoding of ``list[Row]``).
            traces_json: ``{ledger_id: steps}`` as one JSON object.
            ledger: the governor's use to keep with the rows (a Ray run's), or ``None``.
            fresh: how many rows have a key not stored yet; ``None`` to find out from ``keys``.
            keys: the rows' ``(arm, item, run)``, needed when ``fresh`` is ``None``.

        Raises:
            ConfigError: when neither ``fresh`` nor ``keys`` is given for a non-empty batch.
            StoreError: the write failed (nothing of the batch is kept).

        Example:
            >>> s = Store(":memory:")
            >>> row = Row(cluster="c", item="q", arm="a", run=1, split="test", correct=True,
            ...           outcome=None, failure_kind=None)
            >>> s.row_batch_put("b", [0], b"[" + msgspec.json.encode(row) + b"]", fresh=1)
            >>> s.rows_get("b")[0].item, s.rows_count("b")
            ('q', 1)
        """
        if seqs and fresh is None and keys is None:
            raise ConfigError("fresh", None, "give `fresh` or the rows' `keys` to count the new rows")
        with self._tx(immediate=fresh is None) as conn:
            if seqs or traces_json != b"{}":
                if fresh is None:
                    assert keys is not None
                    fresh = len(set(keys) - _stored_keys(conn, benchmark_id))
                conn.execute(
                    "INSERT INTO row_batches (benchmark_id, n, fresh, seqs, rows, traces) VALUES (?,?,?,?,?,?)",
                    [benchmark_id, len(seqs), fresh, _enc.encode(list(seqs)), rows_json, traces_json],
                )
            if ledger is not None:
                conn.execute(_LEDGER_SNAPSHOT, [benchmark_id, *ledger, time.time()])

    def rows_get(self, benchmark_id: str, offset: int = 0, limit: int | None = None) -> list[Row]:
        """A benchmark's stored rows, in the seed's order, a page at a time.

        Only the batches holding the page's rows are decoded (when no row was replaced; else
        every row, to keep the last of each key).

        Args:
            benchmark_id: the benchmark.
            offset: rows to skip from the start (0 or more).
            limit: the most rows to return; ``None`` for all after ``offset``.

        Returns:
            The rows, in the order they were scored.

        Raises:
            ConfigError: when ``offset`` is negative or ``limit`` is below 0.

        Example:
            >>> s = Store(":memory:")
            >>> row = Row(cluster="c", item="q", arm="a", run=1, split="test", correct=True,
            ...           outcome=None, failure_kind=None)
            >>> s.rows_put("b", [(i, msgspec.structs.replace(row, run=i)) for i in range(5)])
            >>> [r.run for r in s.rows_get("b", offset=1, limit=2)], s.rows_count("b")
            ([1, 2], 5)
        """
        if offset < 0:
            raise ConfigError("offset", offset, "must be 0 or more")
        if limit is not None and limit < 0:
            raise ConfigError("limit", limit, "must be 0 or more (or None for all)")
        with self._guard() as conn:
            old = conn.execute("SELECT seq, row FROM rows WHERE benchmark_id=?", [benchmark_id]).fetchall()
            batches = conn.execute(
                "SELECT seqs, rows, n, fresh FROM row_batches WHERE benchmark_id=? ORDER BY id",
                [benchmark_id],
            ).fetchall()
        try:
            return _page(old, batches, offset, None if limit is None else offset + limit)
        except msgspec.DecodeError as exc:
            raise _store_error(exc, self.path) from None

    def rows_count(self, benchmark_id: str) -> int:
        """How many rows a benchmark has stored (a row written again counts once)."""
        sql = f"SELECT {_ROWS_OF_B} FROM (SELECT ? AS id) b"
        return int(self._one(sql, [benchmark_id])[0])

    def stop_limits(self, benchmark_id: str) -> list[str]:
        """What refused the requests of a benchmark's stored runs: the caps that stopped it, sorted.

        Decided (newcomer finding: ``hrb ls`` advised ``--max-calls N`` for a token-cap stop
        while the report said ``--max-tokens N``): the resume flag of a stop note is read from
        the refusals kept in the stopped runs' traces (:func:`hrbench.errors.refusal_limits`),
        the same wherever the note is shown, not guessed from how full each cap is.

        Example:
            >>> s = Store(":memory:")
            >>> s.rows_put("b", [], {"b/a/x/1": [Step(ledger_id="b/a/x/1", source="refused",
            ...     error="the governor refused a request: token_cap_reached (...)")]})
            >>> s.stop_limits("b"), s.stop_limits("other")
            (['token_cap_reached'], [])
        """
        names: set[str] = set()
        with self._guard() as conn:
            raws = _trace_raws(conn, benchmark_id, None)
        for raw in raws.values():
            if b'"refused"' not in (raw.encode() if isinstance(raw, str) else bytes(raw)):
                continue  # decode only the traces of refused runs
            for step in _dec_steps.decode(raw):
                if step.source == "refused":
                    names.update(refusal_limits(step.error))
        return sorted(names)

    def traces_get(self, benchmark_id: str, ledger_ids: Iterable[str] | None = None) -> dict[str, list[Step]]:
        """A benchmark's stored traces by ledger id; only those of ``ledger_ids`` when given."""
        wanted = None if ledger_ids is None else set(ledger_ids)
        with self._guard() as conn:
            try:
                raws = _trace_raws(conn, benchmark_id, wanted)
                return {k: _dec_steps.decode(v) for k, v in raws.items()}
            except msgspec.DecodeError as exc:
                raise _store_error(exc, self.path) from None

    def trace_draws(self, benchmark_id: str, ledger_ids: Iterable[str]) -> dict[str, list[Step]]:
        """The draws in the traces of ``ledger_ids``: each request step's key, source and response id.

        A resume seeds the distinct-draw check with the kept runs' draws (seed 002, newcomer
        finding); only these fields are decoded, so it holds little per run. Steps that are not
        requests are left out.

        Example:
            >>> s = Store(":memory:")
            >>> s.trace_draws("b", ["b/a/q1/1"])
            {}
        """
        with self._guard() as conn:
            try:
                raws = _trace_raws(conn, benchmark_id, set(ledger_ids))
                return {
                    lid: [
                        Step(ledger_id=d.ledger_id, key=d.key, source=d.source, response_id=d.response_id)
                        for d in _dec_draws.decode(raw)
                        if d.kind == "request" and (d.key or d.response_id)
                    ]
                    for lid, raw in raws.items()
                }
            except msgspec.DecodeError as exc:
                raise _store_error(exc, self.path) from None

    def ledger_put(self, benchmark_id: str, calls: int, usd: float, tokens: int) -> None:
        """Keep a benchmark's governor use as one snapshot (runs not kept per call: Ray's).

        The spend a crash left unknown (``unknown_*``) is kept as it was.
        """
        self._write(_LEDGER_SNAPSHOT, [benchmark_id, calls, usd, tokens, time.time()])

    def ledger_apply(
        self,
        benchmark_id: str,
        session: str,
        opened: Sequence[tuple[int, float | None, int]],
        closed: Sequence[int],
        settled: tuple[int, float, int],
        lost: tuple[int, float, int, int] = (0, 0, 0, 0),
        paid: Sequence[tuple[str, bytes]] = (),
    ) -> None:
        """Write one group commit of a benchmark's per-call ledger, in one transaction.

        Issue 13: a reservation is in the file before its request is sent, its settlement
        right after the reply. :class:`~hrbench.ledger.Journal` calls this from its writer
        thread with every change queued while the previous commit ran.

        Args:
            benchmark_id: the benchmark.
            session: the run that made the reservations (one per start or resume).
            opened: reservations to keep open, ``(number, usd, tokens)`` (``usd`` ``None``: no
                USD bound, kept NULL).
            closed: numbers of open reservations (of ``session``) now settled.
            settled: what the settlements of this commit add, ``(calls, usd, tokens)``
                (including reservations opened and settled within the same commit, which are
                never written as open).
            lost: of ``settled``, what replies lost after their request was written add, at
                their reservations, ``(calls, usd, tokens, unpriced)``: kept as unknown spend
                (``unknown_*`` and ``lost_*``; newcomer finding 4; ``unpriced``: of those calls,
                the ones with no USD bound, finding 13).
            paid: replies the provider billed, ``(ledger_id, step)`` (a JSON
                :class:`~hrbench.records.Step`), kept so that a run made again after a crash
                carries what was paid for it before (:meth:`ledger_paid`).

        Example:
            >>> s = Store(":memory:")
            >>> s.ledger_apply("b", "s1", [(1, 0.5, 100), (2, 0.5, 100)], [], (0, 0.0, 0))
            >>> s.ledger_apply("b", "s1", [], [1], (1, 0.01, 12))
            >>> {k: s.ledger_get("b")[k] for k in ("calls", "usd", "open_calls", "open_usd")}
            {'calls': 2, 'usd': 0.51, 'open_calls': 1, 'open_usd': 0.5}
        """
        now = time.time()
        with self._tx(immediate=True) as conn:
            if opened:
                conn.executemany(
                    "INSERT OR REPLACE INTO ledger_open VALUES (?,?,?,?,?,?)",
                    [[benchmark_id, session, n, u, t, now] for n, u, t in opened],
                )
            if closed:
                conn.executemany(
                    "DELETE FROM ledger_open WHERE benchmark_id=? AND session=? AND seq=?",
                    [[benchmark_id, session, n] for n in closed],
                )
            conn.execute(
                "INSERT INTO ledger (benchmark_id, calls, usd, tokens, updated) VALUES (?,?,?,?,?) "
                "ON CONFLICT(benchmark_id) DO UPDATE SET calls=calls+excluded.calls, "
                "usd=usd+excluded.usd, tokens=tokens+excluded.tokens, updated=excluded.updated",
                [benchmark_id, *settled, now],
            )
            if lost[0]:
                conn.execute(
                    "UPDATE ledger SET unknown_calls=unknown_calls+?, unknown_usd=unknown_usd+?, "
                    "unknown_tokens=unknown_tokens+?, lost_calls=lost_calls+?, lost_usd=lost_usd+?, "
                    "lost_tokens=lost_tokens+?, unpriced_calls=unpriced_calls+?, "
                    "lost_unpriced=lost_unpriced+? WHERE benchmark_id=?",
                    [*lost[:3], *lost[:3], lost[3], lost[3], benchmark_id],
                )
            if paid:
                conn.executemany(
                    "INSERT INTO ledger_paid VALUES (?,?,?)",
                    [[benchmark_id, lid, step] for lid, step in paid],
                )

    def ledger_paid(
        self, benchmark_id: str, ledger_ids: Iterable[str] | None = None
    ) -> dict[str, list[Step]]:
        """What the provider billed for each run of a benchmark, as kept per reply by its ledger.

        Decided (rows must add up to the provider's bill after a crash): every billed reply is
        kept with its settlement, so a run made again (its row was lost in a crash, or replaced
        on resume) carries what was already paid for it (see
        :func:`hrbench.ledger.prepaid`).

        Args:
            benchmark_id: the benchmark.
            ledger_ids: only these runs (``None``: every run).

        Returns:
            Per run id, its billed replies' steps (``kind`` ``"request"`` or ``"attempt"``,
            ``source`` ``"live"``), in the order they were paid.

        Example:
            >>> from hrbench.records import Step
            >>> s = Store(":memory:")
            >>> step = msgspec.json.encode(Step(ledger_id="b/a/q1/1", key="k", usd=0.25))
            >>> s.ledger_apply("b", "s1", [], [], (1, 0.25, 9), paid=[("b/a/q1/1", step)])
            >>> [x.usd for x in s.ledger_paid("b")["b/a/q1/1"]]
            [0.25]
        """
        wanted = None if ledger_ids is None else set(ledger_ids)
        out: dict[str, list[Step]] = {}
        for lid, raw in self._all(
            "SELECT ledger_id, step FROM ledger_paid WHERE benchmark_id=? ORDER BY rowid", [benchmark_id]
        ):
            if wanted is None or lid in wanted:
                out.setdefault(lid, []).append(msgspec.json.decode(raw, type=Step))
        return out

    def ledger_resume(self, benchmark_id: str) -> dict[str, Any] | None:
        """Start a benchmark again from what was spent: fold open reservations into the spend.

        Issue 13: a reservation still open when a run stopped (a crash, a kill) may have been
        paid or not; it is counted as spent at its reserved, worst-case amount and kept apart
        as spend that is *unknown, at most* that much (``unknown_*``, summed over every such
        stop). Call it once, holding the benchmark's lease, before the run's first request.
        Each reservation is folded once: it leaves ``ledger_open`` in the same transaction
        (newcomer finding, cancel and resume: nothing may be counted twice).

        Returns:
            :meth:`ledger_get` after the fold plus ``crashed_calls``, ``crashed_usd`` and
            ``crashed_tokens`` (what this fold added); ``None`` when nothing was kept.

        Example:
            >>> s = Store(":memory:")
            >>> s.ledger_apply("b", "s1", [(1, 0.25, 50)], [], (3, 0.03, 60))
            >>> led = s.ledger_resume("b")
            >>> led["calls"], led["usd"], led["unknown_calls"], led["unknown_usd"], led["open_calls"]
            (4, 0.28, 1, 0.25, 0)
        """
        with self._tx(immediate=True) as conn:
            n, usd, tokens, _ = _fold_open(conn, benchmark_id, None)
        led = self.ledger_get(benchmark_id)
        if led is not None:
            led.update(crashed_calls=n, crashed_usd=usd, crashed_tokens=tokens)
        return led

    def ledger_cancelled(self, benchmark_id: str, session: str) -> tuple[int, float, int, int]:
        """Fold the reservations a run left open at a clean stop (a cancel) into the spend.

        Decided (newcomer finding: a cancel then a resume read as a crash): a request cancelled
        in flight whose reply never arrived may still have been billed, so it stays counted at
        its reservation, as spend *unknown, at most* that much, but as *cancelled in flight*
        (``cancelled_*``, a part of ``unknown_*``), and at once: the listing shows it right
        after the cancel, not only after a resume. Only ``session``'s reservations are folded,
        each once (they leave ``ledger_open`` in the same transaction).

        Returns:
            What this fold added: ``(calls, usd, tokens, unpriced)`` (``unpriced``: of those
            calls, the ones with no USD bound, newcomer finding 13).

        Example:
            >>> s = Store(":memory:")
            >>> s.ledger_apply("b", "s1", [(1, 0.25, 50), (2, 0.25, 50)], [1], (1, 0.01, 9))
            >>> s.ledger_cancelled("b", "s1")
            (1, 0.25, 50, 0)
            >>> led = s.ledger_get("b")
            >>> led["calls"], led["open_calls"], led["unknown_calls"], led["cancelled_calls"]
            (2, 0, 1, 1)
        """
        with self._tx(immediate=True) as conn:
            return _fold_open(conn, benchmark_id, session)

    def lease_acquire(self, benchmark_id: str, owner: str) -> dict[str, Any] | None:
        """Take the one-at-a-time lease of a benchmark id; ``None`` when taken, else the holder.

        Decided, issue 13 (two simultaneous resumes both ran and paid twice): a benchmark id
        runs at most once at a time. The lease is an exclusive ``flock`` on a lock file of the
        id, in the folder ``<database>.locks`` beside the database, held open for the run: of
        concurrent takers (threads, daemons, processes on the same file) exactly one gets it,
        and the operating system lets it go the moment its holder dies, however it dies.
        Decided (newcomer finding: a resume right after a daemon's SIGKILL was refused for
        about a second, "held by" the dead process, because a lease row in SQLite with a pid
        check outlived it until the process was reaped): a dead holder's lease is taken over
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

    def ledger_get(self, benchmark_id: str) -> dict[str, Any] | None:
        """A benchmark's governor use, everything that may have been paid counted as spent.

        Returns:
            ``None`` if nothing is kept; else ``calls``, ``usd``, ``tokens`` (settled, plus
            open reservations at their reserved amount, plus the spend earlier stops left
            unknown), ``open_calls``/``open_usd``/``open_tokens`` (reservations open now: in
            flight, or left by a crash not yet resumed) and ``unknown_calls``/``unknown_usd``/
            ``unknown_tokens`` (spend that earlier crashes and cancels left unknown: at most this
            much, issue 13) with ``cancelled_calls``/``cancelled_usd``/``cancelled_tokens``, the
            part of it that cancels left (in flight at a clean stop; newcomer finding), and
            ``lost_calls``/``lost_usd``/``lost_tokens``, the part replies lost after their
            request was written left (newcomer finding 4); ``unpriced_calls`` (of which
            ``cancelled_unpriced``, ``lost_unpriced``): unknown calls with no USD bound (their
            USD is unknown, not 0; newcomer finding 13).

        Example:
            >>> Store(":memory:").ledger_get("none") is None
            True
        """
        row = self._one(_LEDGER_SELECT + " WHERE l.benchmark_id=? GROUP BY l.benchmark_id", [benchmark_id])
        if row is None:
            return None
        (calls, usd, tokens, unknown_calls, unknown_usd, unknown_tokens) = row[:6]
        cancelled_calls, cancelled_usd, cancelled_tokens, open_calls, open_usd, open_tokens = row[6:12]
        lost_calls, lost_usd, lost_tokens, unpriced_calls, cancelled_unpriced, lost_unpriced = row[12:]
        return {
            "calls": calls + open_calls,
            "usd": usd + open_usd,
            "tokens": tokens + open_tokens,
            "open_calls": open_calls,
            "open_usd": open_usd,
            "open_tokens": open_tokens,
            "unknown_calls": unknown_calls,
            "unknown_usd": unknown_usd,
            "unknown_tokens": unknown_tokens,
            "cancelled_calls": cancelled_calls,
            "cancelled_usd": cancelled_usd,
            "cancelled_tokens": cancelled_tokens,
            "lost_calls": lost_calls,
            "lost_usd": lost_usd,
            "lost_tokens": lost_tokens,
            "unpriced_calls": unpriced_calls,
            "cancelled_unpriced": cancelled_unpriced,
            "lost_unpriced": lost_unpriced,
        }

    # -- housekeeping: listing, lookup, deletion ------------------------------------------
    def benchmark_headers(self) -> list[dict[str, Any]]:
        """Every stored benchmark's header, newest first (of equal creation times, the one stored last).

        Returns:
            Dicts with ``id``, ``name`` (the spec's, or ``None``), ``created`` (epoch seconds),
            ``status``, ``arms`` (names), ``rows`` (stored), ``total`` (expected rows),
            ``summary`` (the per-arm summary of a finished benchmark, else ``None``), ``runs``,
            ``reference_hash``, the governor caps ``max_usd``, ``max_calls`` and ``max_tokens`` in
            force (``None``: no cap), ``default_limits`` (``True``: the defaults, no governor in
            the spec; ``None`` for a benchmark stored before limits were kept), its use ``usd``,
            ``calls`` and ``tokens`` (the
            ledger, open reservations counted as spent; ``None`` if none) and of that the part a
            crash left unknown, ``unknown_usd`` and ``unknown_calls`` (issue 13: "unknown, at most"),
            and of that the part cancels left, ``cancelled_usd`` and ``cancelled_calls``, and
            the part replies lost after their request was written left, ``lost_usd`` and
            ``lost_calls`` (newcomer finding 4).
        """
        got = self._all(
            "SELECT b.id, json_extract(b.spec, '$.params.name'), b.created, b.status, "
            "json_extract(b.spec, '$.arms'), json_extract(b.spec, '$.total'), b.summary, "
            f"{_ROWS_OF_B}, "
            "json_extract(b.spec, '$.params.runs'), b.reference_hash, "
            "coalesce(json_extract(b.spec, '$.limits'), json_extract(b.spec, '$.params.governor')), "
            "l.usd + (SELECT coalesce(sum(o.usd), 0) FROM ledger_open o WHERE o.benchmark_id=b.id), "
            "l.calls + (SELECT count(*) FROM ledger_open o WHERE o.benchmark_id=b.id), "
            "l.unknown_usd, l.unknown_calls, l.cancelled_usd, l.cancelled_calls, "
            "l.tokens + (SELECT coalesce(sum(o.tokens), 0) FROM ledger_open o WHERE o.benchmark_id=b.id), "
            "l.lost_usd, l.lost_calls, l.unpriced_calls, l.cancelled_unpriced, l.lost_unpriced "
            "FROM benchmarks b LEFT JOIN ledger l ON l.benchmark_id=b.id ORDER BY b.created DESC, b.rowid DESC"
        )
        caps = [msgspec.json.decode(g[10] or "{}") for g in got]
        return [
            {
                "id": i,
                "name": name,
                "created": created,
                "status": status,
                "arms": [a["name"] for a in msgspec.json.decode(arms or "[]")],
                "rows": n,
                "total": total,
                "summary": None if summary is None else msgspec.json.decode(summary),
                "runs": runs,
                "reference_hash": ref_hash,
                "max_usd": cap.get("max_usd"),
                "max_calls": cap.get("max_calls"),
                "max_tokens": cap.get("max_tokens"),
                "default_limits": cap.get("default"),
                "usd": usd,
                "calls": calls,
                "unknown_usd": unknown_usd,
                "unknown_calls": unknown_calls,
                "cancelled_usd": cancelled_usd,
                "cancelled_calls": cancelled_calls,
                "lost_usd": lost_usd,
                "lost_calls": lost_calls,
                "unpriced_calls": unpriced_calls,
                "cancelled_unpriced": cancelled_unpriced,
                "lost_unpriced": lost_unpriced,
                "tokens": tokens,
            }
            for (
                i,
                name,
                created,
                status,
                arms,
                total,
                summary,
                n,
                runs,
                ref_hash,
                _,
                usd,
                calls,
                unknown_usd,
                unknown_calls,
                cancelled_usd,
                cancelled_calls,
                tokens,
                lost_usd,
                lost_calls,
                unpriced_calls,
                cancelled_unpriced,
                lost_unpriced,
            ), cap in zip(got, caps, strict=True)
        ]

    def benchmark_resolve(self, ref: str) -> str | None:
        """The id a user means by ``ref``: an id, a unique id prefix (4+ characters) or a name.

        Decided (SPEC silent; issue 15): an exact id wins, then a prefix of exactly one id, then
        the newest benchmark of that name. Decided (newcomer's finding: two of one name made in
        the same second): the newest wins, never a refusal; "newest" is the later creation
        time, and of equal times the one stored last, which :meth:`benchmark_headers` (so
        ``hrb ls``) lists first. Give the id (or a prefix) for an older one.

        Returns:
            The id, or ``None`` when nothing matches.

        Raises:
            ConfigError: the prefix matches several ids (they are listed).

        Example:
            >>> Store(":memory:").benchmark_resolve("0123") is None
            True
        """
        if self._one("SELECT 1 FROM benchmarks WHERE id=?", [ref]) is not None:
            return ref
        if len(ref) >= 4:
            like = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            ids = [
                r[0]
                for r in self._all("SELECT id FROM benchmarks WHERE id LIKE ? ESCAPE '\\' LIMIT 6", [like])
            ]
            if len(ids) == 1:
                return str(ids[0])
            if ids:
                shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
                raise ConfigError(
                    "id", ref, f"the prefix matches several benchmarks ({shown}); give more of it"
                )
        return self.benchmark_named(ref)

    def benchmark_named(self, name: str) -> str | None:
        """The id of the newest benchmark named ``name`` (see :meth:`benchmark_resolve`), or ``None``.

        Example:
            >>> Store(":memory:").benchmark_named("capitals") is None
            True
        """
        row = self._one(
            "SELECT id FROM benchmarks WHERE json_extract(spec, '$.params.name')=? "
            "ORDER BY created DESC, rowid DESC LIMIT 1",
            [name],
        )
        return None if row is None else str(row[0])

    def benchmark_close_to(self, ref: str, n: int = 3) -> str:
        """A hint naming the stored benchmarks closest to ``ref``, an id, id prefix or name none matches.

        Names are compared whole and ids by their first ``len(ref)`` characters (a mistyped
        prefix is close to the id it meant); an id is said whole. ``""`` when none is close.

        Example:
            >>> s = Store(":memory:")
            >>> s.benchmark_put("3f2a77c0d1e2f3a4", {"params": {"name": "capitals"}}, "h", "done")
            >>> s.benchmark_close_to("capitels"), s.benchmark_close_to("3f2b")
            ("did you mean 'capitals'? ", "did you mean '3f2a77c0d1e2f3a4'? ")
        """
        got = self._all(
            "SELECT id, json_extract(spec, '$.params.name') FROM benchmarks ORDER BY created DESC, rowid DESC"
        )
        shown: dict[str, str] = {}
        for bid, _ in got:
            shown.setdefault(str(bid)[: max(len(ref), 4)], str(bid))
        names = [str(name) for _, name in got if name]
        return did_you_mean(ref, list(dict.fromkeys([*names, *shown])), n=n, shown=shown)

    def benchmark_delete(self, benchmark_ids: Sequence[str]) -> dict[str, int]:
        """Delete benchmarks with their rows, traces and governor ledgers, in one transaction.

        Decided (their lease files stayed behind, one per benchmark a killed process ran): the
        lock file of each deleted benchmark (:meth:`lease_acquire`) goes too, with its
        ``leases`` row, unless a live holder holds it (:func:`_unlink_free`).

        Returns:
            How many ``benchmarks``, ``rows`` and ``traces`` were deleted, and ``locks``: lock
            files removed.
        """
        out = {"benchmarks": 0, "rows": 0, "traces": 0}
        with self._tx() as conn:
            for bid in benchmark_ids:
                out["rows"] += conn.execute(f"SELECT {_ROWS_OF_B} FROM (SELECT ? AS id) b", [bid]).fetchone()[
                    0
                ]
                out["traces"] += len(_trace_raws(conn, bid, None))
                for table, col in (
                    ("rows", "benchmark_id"),
                    ("traces", "benchmark_id"),
                    ("row_batches", "benchmark_id"),
                    ("benchmarks", "id"),
                ):
                    cur = conn.execute(f"DELETE FROM {table} WHERE {col}=?", [bid])
                    if table == "benchmarks":
                        out[table] += cur.rowcount
                conn.execute("DELETE FROM ledger WHERE benchmark_id=?", [bid])
                conn.execute("DELETE FROM ledger_open WHERE benchmark_id=?", [bid])
                conn.execute("DELETE FROM ledger_paid WHERE benchmark_id=?", [bid])
        out["locks"] = self._drop_locks(benchmark_ids)
        return out

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

    def gc(
        self,
        older_than_s: float,
        *,
        keep: Iterable[str] = (),
        cache: bool = True,
        recordings: bool = False,
        vacuum: bool = True,
    ) -> dict[str, Any]:
        """Delete what is older than ``older_than_s`` seconds, then give the space back.

        Benchmarks created before the cutoff go with their rows, traces, ledgers and lock files
        (except the ids in ``keep``: running ones; a lock file a live holder holds is never
        removed); with ``cache``, cache entries created before it; with ``recordings``, recorded
        replies too (off by default: a recording is kept on purpose). Lock files of benchmarks
        no longer stored (deleted before lock files were pruned) go too, unless held.

        Returns:
            Counts deleted (``benchmarks``, ``rows``, ``traces``, ``locks``, ``cache``, ``recordings``),
            ``bytes_before`` and ``bytes_after`` (database plus WAL), and ``vacuumed``.
        """
        cutoff = time.time() - older_than_s
        before = self._size()
        kept = set(keep)
        old = [
            r[0]
            for r in self._all("SELECT id FROM benchmarks WHERE created < ?", [cutoff])
            if r[0] not in kept
        ]
        out: dict[str, Any] = {**self.benchmark_delete(old), "cache": 0, "recordings": 0}
        out["locks"] += self._drop_orphan_locks()
        with self._guard() as conn:  # the file checked and SQLite's errors typed, as every write
            if cache:
                out["cache"] = conn.execute("DELETE FROM cache WHERE created < ?", [cutoff]).rowcount
            if recordings:
                out["recordings"] = conn.execute(
                    "DELETE FROM recordings WHERE created < ?", [cutoff]
                ).rowcount
            vacuumed = False
            if vacuum:
                try:
                    conn.execute("VACUUM")
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    vacuumed = True
                except sqlite3.OperationalError:  # another connection is reading: try again later
                    vacuumed = False
        out.update(bytes_before=before, bytes_after=self._size(), vacuumed=vacuumed)
        return out

    def _size(self) -> int:
        if self.path in (None, ":memory:"):
            return 0
        return sum(os.path.getsize(f) for f in (str(self.path), f"{self.path}-wal") if os.path.exists(f))


_FULL, _CORRUPT, _NOTADB, _READONLY, _CANTOPEN, _PERM, _IOERR = 13, 11, 26, 8, 14, 3, 10
"""SQLite's primary result codes (``sqlite3.Error.sqlite_errorcode & 0xFF``)."""


def _writable(path: str) -> bool:
    folder = os.path.dirname(os.path.abspath(path))
    return os.access(folder, os.W_OK) and (not os.path.exists(path) or os.access(path, os.W_OK))


def _disk_full(path: str) -> bool:
    try:
        st = os.statvfs(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024


def _store_error(exc: BaseException, path: str) -> BaseException:
    """The typed error for an SQLite or OS failure on the database ``path`` (else ``exc``).

    Each names the file and what to do (decided, issue 13: these said only "internal error").

    Example:
        >>> e = _store_error(OSError(errno.ENOSPC, "No space left on device"), "/x/hrbench.sqlite3")
        >>> type(e).__name__, str(e).startswith("the disk holding the database /x/hrbench.sqlite3 is full")
        ('StoreFull', True)
    """
    if isinstance(exc, StoreError):
        return exc
    folder = os.path.dirname(os.path.abspath(path))
    detail = str(exc)
    if isinstance(exc, sqlite3.Error):
        code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
        detail = f"SQLite {getattr(exc, 'sqlite_errorname', 'error')}: {exc}"
    elif isinstance(exc, msgspec.DecodeError):  # a stored batch that does not decode: a scribbled page
        code, detail = _CORRUPT, f"a stored row or trace does not decode: {exc}"
    elif isinstance(exc, OSError):
        code = {errno.ENOSPC: _FULL, errno.EDQUOT: _FULL, errno.EROFS: _READONLY, errno.EACCES: _PERM}.get(
            exc.errno or 0, 0
        )
    else:
        return exc
    if code == _IOERR:
        code = _FULL if _disk_full(path) else _READONLY if not _writable(path) else 0
    if code in (_CANTOPEN, _PERM):
        code = _READONLY if not _writable(path) else 0
    if code == _FULL:
        return StoreFull(
            f"the disk holding the database {path} is full ({detail}); the last changes were not "
            "saved. Free some space, then run again (a benchmark resumes with its id)",
            path,
        )
    if code in (_CORRUPT, _NOTADB):
        return StoreCorrupt(
            f"the database {path} is corrupt or not an hrbench database ({detail}). Stop the daemon, "
            f"move the file aside (the next start makes a new one); `sqlite3 {path} .recover` may "
            "save what it holds",
            path,
        )
    if code == _READONLY:
        return StoreReadOnly(
            f"cannot write the database {path}: the file or its folder is read-only ({detail}). "
            f"Make {folder} writable, or point HRBENCH_HOME (or --home) at a writable folder",
            path,
        )
    return exc


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


def _private_files(path: str) -> None:
    """Make the database file 0600 before SQLite opens it, and its journals if they exist.

    SQLite creates the ``-wal`` and ``-shm`` files with the database file's permissions, so a
    file made 0600 here keeps every file of the store private (decided, issue 13: they were
    0644 under the default umask). Files left by an older version are tightened.
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


def _migrate_1_to_2(conn: sqlite3.Connection) -> None:
    """Schema 1 -> 2: the one name a content had becomes the first entry of its name history."""
    conn.execute(
        "INSERT INTO reference_names (name, hash, created) "
        "SELECT name, hash, created FROM reference_sets WHERE name IS NOT NULL ORDER BY created"
    )
    conn.execute("UPDATE reference_sets SET name = NULL")


def _migrate_2_to_3(conn: sqlite3.Connection) -> None:
    """Schema 2 -> 3: the ledger keeps the spend a crash left unknown (``ledger_open`` is new).

    A schema-2 ledger row was a snapshot with in-flight reservations counted as spent; it
    stays the settled use, with nothing unknown (issue 13).
    """
    have = {r[1] for r in conn.execute("PRAGMA table_info(ledger)")}
    for col, kind in (("unknown_calls", "INTEGER"), ("unknown_usd", "REAL"), ("unknown_tokens", "INTEGER")):
        if col not in have:
            conn.execute(f"ALTER TABLE ledger ADD COLUMN {col} {kind} NOT NULL DEFAULT 0")


def _migrate_3_to_4(conn: sqlite3.Connection) -> None:
    """Schema 3 -> 4: the ledger keeps apart the unknown spend that cancels left (newcomer finding).

    What a schema-3 file counts as unknown stays so, all of it as left by crashes.
    """
    have = {r[1] for r in conn.execute("PRAGMA table_info(ledger)")}
    for col, kind in (
        ("cancelled_calls", "INTEGER"),
        ("cancelled_usd", "REAL"),
        ("cancelled_tokens", "INTEGER"),
    ):
        if col not in have:
            conn.execute(f"ALTER TABLE ledger ADD COLUMN {col} {kind} NOT NULL DEFAULT 0")


def _migrate_5_to_6(conn: sqlite3.Connection) -> None:
    """Schema 5 -> 6: lost replies' unknown spend and unknown calls with no USD bound are kept.

    Newcomer findings 4 (``lost_*``) and 13 (``*unpriced*``); the new columns start at 0.
    """
    have = {r[1] for r in conn.execute("PRAGMA table_info(ledger)")}
    for col, kind in (
        ("lost_calls", "INTEGER"),
        ("lost_usd", "REAL"),
        ("lost_tokens", "INTEGER"),
        ("unpriced_calls", "INTEGER"),
        ("cancelled_unpriced", "INTEGER"),
        ("lost_unpriced", "INTEGER"),
    ):
        if col not in have:
            conn.execute(f"ALTER TABLE ledger ADD COLUMN {col} {kind} NOT NULL DEFAULT 0")


def _fold_open(
    conn: sqlite3.Connection, benchmark_id: str, session: str | None
) -> tuple[int, float, int, int]:
    """Move open reservations (``session``'s, or all) into the spend as unknown; what moved.

    Counted as spent at their reserved amount and as ``unknown_*``; a session's (a clean stop)
    also as ``cancelled_*``. A reservation with no USD bound (``usd`` NULL) adds 0 USD and is
    counted in ``unpriced_calls`` (and ``cancelled_unpriced``): its USD is unknown, not 0
    (newcomer finding 13). They leave ``ledger_open`` in the caller's transaction, so each is
    counted once. Returns ``(calls, usd, tokens, unpriced)``.
    """
    where, args = "benchmark_id=?", [benchmark_id]
    if session is not None:
        where, args = where + " AND session=?", [*args, session]
    n, usd, tokens, unpriced = conn.execute(
        "SELECT count(*), coalesce(sum(usd), 0), coalesce(sum(tokens), 0), "
        f"coalesce(sum(usd IS NULL), 0) FROM ledger_open WHERE {where}",
        args,
    ).fetchone()
    if not n:
        return 0, 0.0, 0, 0
    now = time.time()
    conn.execute(
        "INSERT INTO ledger (benchmark_id, calls, usd, tokens, updated) VALUES (?,0,0,0,?) "
        "ON CONFLICT(benchmark_id) DO NOTHING",
        [benchmark_id, now],
    )
    c = int(session is not None)
    conn.execute(
        "UPDATE ledger SET calls=calls+?, usd=usd+?, tokens=tokens+?, unknown_calls=unknown_calls+?, "
        "unknown_usd=unknown_usd+?, unknown_tokens=unknown_tokens+?, cancelled_calls=cancelled_calls+?, "
        "cancelled_usd=cancelled_usd+?, cancelled_tokens=cancelled_tokens+?, unpriced_calls=unpriced_calls+?, "
        "cancelled_unpriced=cancelled_unpriced+?, updated=? WHERE benchmark_id=?",
        [
            n,
            usd,
            tokens,
            n,
            usd,
            tokens,
            c * n,
            c * usd,
            c * tokens,
            unpriced,
            c * unpriced,
            now,
            benchmark_id,
        ],
    )
    conn.execute(f"DELETE FROM ledger_open WHERE {where}", args)
    return int(n), float(usd), int(tokens), int(unpriced)


def _page(old: list[Any], batches: list[Any], offset: int, stop: int | None) -> list[Row]:
    """Rows ``offset:stop`` in order of the rows of schema 4 (``(seq, row)``) and the batches.

    Only the batches holding the page's rows are decoded when no key was written twice; else
    every row is, and the last written of each key counts (what ``INSERT OR REPLACE`` did).
    """
    if any(n != fresh for _, _, n, fresh in batches):  # a key written again: the last one counts
        latest: dict[tuple[str, str, int], tuple[int, int, Row]] = {}
        order = 0
        for seq, text in old:
            r = _dec_row.decode(text)
            latest[(r.arm, r.item, r.run)] = (seq, order, r)
            order += 1
        for seqs, body, _, _ in batches:
            for seq, r in zip(_dec_seqs.decode(seqs), _dec_rows.decode(body), strict=True):
                latest[(r.arm, r.item, r.run)] = (seq, order, r)
                order += 1
        return [r for _, _, r in sorted(latest.values(), key=lambda e: (e[0], e[1]))[offset:stop]]
    entries = [(seq, -1, i) for i, (seq, _) in enumerate(old)]
    for b, (seqs, _, _, _) in enumerate(batches):
        entries.extend((seq, b, i) for i, seq in enumerate(_dec_seqs.decode(seqs)))
    entries.sort()
    decoded: dict[int, list[Row]] = {}
    page = []
    for _, b, i in entries[offset:stop]:
        if b < 0:
            page.append(_dec_row.decode(old[i][1]))
            continue
        got = decoded.get(b)
        if got is None:
            got = decoded[b] = _dec_rows.decode(batches[b][1])
        page.append(got[i])
    return page


def _migrate_4_to_5(conn: sqlite3.Connection) -> None:
    """Schema 5 writes rows a batch per SQLite row (``row_batches``, made by the schema).

    Rows and traces written before stay where they are: :meth:`Store.rows_get` and the other
    readers read ``rows`` and ``traces`` with the batches, so old benchmarks stay readable and
    resumable (a run stopped by the budget, run again, replaces its old row).
    """


def _stored_keys(conn: sqlite3.Connection, benchmark_id: str) -> set[tuple[str, str, int]]:
    """The ``(arm, item, run)`` of every row a benchmark has stored."""
    keys = {
        (a, i, r)
        for a, i, r in conn.execute("SELECT arm, item, run FROM rows WHERE benchmark_id=?", [benchmark_id])
    }
    for (body,) in conn.execute("SELECT rows FROM row_batches WHERE benchmark_id=?", [benchmark_id]):
        keys.update((k.arm, k.item, k.run) for k in _dec_keys.decode(body))
    return keys


def _trace_raws(conn: sqlite3.Connection, benchmark_id: str, wanted: set[str] | None) -> dict[str, Any]:
    """A benchmark's traces as JSON (str from schema 4, ``msgspec.Raw`` from batches), the last written of each id."""
    out: dict[str, Any] = {}
    sql = "SELECT ledger_id, steps FROM traces WHERE benchmark_id=?"
    if wanted is None:
        out.update(conn.execute(sql, [benchmark_id]).fetchall())
    else:
        ids = sorted(wanted)
        for i in range(0, len(ids), 500):  # well under SQLite's limit on bound parameters
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            out.update(conn.execute(f"{sql} AND ledger_id IN ({marks})", [benchmark_id, *chunk]).fetchall())
    for (blob,) in conn.execute(
        "SELECT traces FROM row_batches WHERE benchmark_id=? ORDER BY id", [benchmark_id]
    ):
        got = _dec_trace_map.decode(blob)
        out.update(got if wanted is None else {k: v for k, v in got.items() if k in wanted})
    return out


_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _migrate_1_to_2,
    2: _migrate_2_to_3,
    3: _migrate_3_to_4,
    4: _migrate_4_to_5,
    5: _migrate_5_to_6,
}
"""``version -> the step that brings a file at that version to the next``."""
