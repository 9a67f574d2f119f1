"""Housekeeping: deleting benchmarks with everything kept of them, and ``gc``."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any

from hrbench.store._errors import store_error
from hrbench.store._leases import _Leases
from hrbench.store._open import _BUSY_S
from hrbench.store._rows import _ROWS_OF_B, _trace_raws


class _Housekeeping(_Leases):
    """Deleting benchmarks (their rows, traces, ledgers and lock files) and giving space back."""

    def benchmark_delete(self, benchmark_ids: Sequence[str]) -> dict[str, int]:
        """Delete benchmarks with their rows, traces, governor ledgers and batch ledgers, in one transaction.

        Rule (no lease file stays behind, one per benchmark a killed process ran): the
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
                conn.execute("DELETE FROM batches WHERE benchmark_id=?", [bid])  # its batch ledger
        out["locks"] = self._drop_locks(benchmark_ids)
        return out

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

    def wal_checkpoint(self) -> tuple[int, int]:
        """Copy the write-ahead log into the database file without blocking anyone (SQLite's PASSIVE).

        Runs on a connection of its own, opened at the first call, so neither this store's
        connection nor its lock is held meanwhile: writes (rows, the ledger) go on while the
        log is copied. A long-lived writer calls it from a thread of its own so that the
        copy (tens of MB after a large benchmark, with an ``fsync``) does not land inside one
        of its commits; SQLite's own checkpoint at 10,000 pages of log stays the backstop.

        Returns:
            ``(log_frames, checkpointed_frames)``: pages in the log, pages of it now in the
            file (``(0, 0)`` for an in-memory store; ``(-1, -1)`` when another checkpoint ran).

        Raises:
            StoreError: the file cannot be read or written (full, deleted, read-only).

        Example:
            >>> import tempfile, os
            >>> from hrbench.store import Store
            >>> s = Store(os.path.join(tempfile.mkdtemp(), "h.sqlite3"))
            >>> s.rows_put("b", [])  # a write: the log holds pages
            >>> frames, copied = s.wal_checkpoint()
            >>> frames > 0 and copied == frames
            True
        """
        if self.path == ":memory:":
            return (0, 0)
        with self._checkpointing:
            self.check_identity()  # as every call: never into a file deleted or replaced
            try:
                if self._checkpointer is None:
                    self._checkpointer = sqlite3.connect(
                        self.path, check_same_thread=False, isolation_level=None, timeout=_BUSY_S
                    )
                busy, frames, copied = self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except sqlite3.Error as exc:
                raise store_error(exc, self.path) from None
        return (-1, -1) if busy else (int(frames), int(copied))

    def _size(self) -> int:
        if self.path in (None, ":memory:"):
            return 0
        return sum(os.path.getsize(f) for f in (str(self.path), f"{self.path}-wal") if os.path.exists(f))
