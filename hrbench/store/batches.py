"""The batch ledger: every provider batch a benchmark submits, and its lines, kept before upload.

A benchmark run in batch mode (:mod:`hrbench.runner.batch`) writes a batch here, with the
``custom_id`` of every line and the state ``"preparing"``, **before** it uploads it; the
provider's batch id is written once the provider answers, the state at every poll, and each
line's result as soon as it is read. After a crash, a resume therefore knows every batch that
may exist at the provider (a ``"preparing"`` one whose reply was lost is looked up there by its
tag, never uploaded again), every ``custom_id`` already uploaded, and the results already read.

Tables (created with the store's schema, :mod:`hrbench.store._schema`):

- ``batches``: one row per batch, keyed by its ``tag`` (ours, made before upload; sent as the
  provider's metadata or file name): benchmark, provider, base URL, the key's environment
  variable name (never the key), the provider's batch id, state, lines, lines done and failed,
  USD reserved and billed, created / updated / ended (Unix seconds; ``ended``: results read).
- ``batch_lines``: one row per line, ``(tag, custom_id)``: its benchmark, its state
  (``"uploaded"``, then ``"done"``, ``"failed"``, ``"expired"`` or ``"cancelled"``) and its
  result (a JSON :class:`~hrbench.records.Result`) once read.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from hrbench.store._open import _Base

__all__ = ["BATCH_COLUMNS", "LIVE_STATES"]

BATCH_COLUMNS = (
    "tag",
    "benchmark_id",
    "provider",
    "base_url",
    "key_env",
    "batch_id",
    "state",
    "lines",
    "done",
    "failed",
    "usd_reserved",
    "usd_billed",
    "created",
    "updated",
    "ended",
)
"""The columns of ``batches``, in the order :meth:`_Batches.batch_list` gives them."""

LIVE_STATES = ("preparing", "validating", "in_progress", "finalizing", "cancelling")
"""Batch states that may still change at the provider (a batch in one of them is live)."""


class _Batches(_Base):
    """The batch ledger (``batches``, ``batch_lines``)."""

    def batch_open(
        self,
        tag: str,
        benchmark_id: str,
        provider: str,
        base_url: str,
        key_env: str | None,
        custom_ids: Sequence[str],
        usd_reserved: float,
    ) -> None:
        """Keep a batch about to be uploaded, with every line's ``custom_id``, in one transaction.

        Written before the upload: after a crash, a batch whose upload reply was lost is looked
        up at the provider by ``tag`` instead of being uploaded again.

        Example:
            >>> from hrbench.store import Store
            >>> s = Store(":memory:")
            >>> s.batch_open("t1", "b", "openai", "http://127.0.0.1:9/v1", None, ["k1", "k2"], 0.5)
            >>> s.batch_list("b")[0]["state"], sorted(s.batch_custom_ids("b"))
            ('preparing', ['k1', 'k2'])
        """
        now = time.time()
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO batches (tag, benchmark_id, provider, base_url, key_env, state, lines, "
                "usd_reserved, created, updated) VALUES (?,?,?,?,?,?,?,?,?,?)",
                [tag, benchmark_id, provider, base_url, key_env, "preparing", len(custom_ids), usd_reserved, now, now],
            )
            conn.executemany(
                "INSERT OR REPLACE INTO batch_lines (tag, custom_id, benchmark_id, state) VALUES (?,?,?,?)",
                ((tag, c, benchmark_id, "uploaded") for c in custom_ids),
            )

    def batch_update(
        self,
        tag: str,
        *,
        batch_id: str | None = None,
        state: str | None = None,
        done: int | None = None,
        failed: int | None = None,
    ) -> None:
        """Keep what a provider said of a batch: its id, its state, its lines done and failed."""
        sets, args = ["updated=?"], [time.time()]
        for name, value in (("batch_id", batch_id), ("state", state), ("done", done), ("failed", failed)):
            if value is not None:
                sets.append(f"{name}=?")
                args.append(value)
        self._write(f"UPDATE batches SET {', '.join(sets)} WHERE tag=?", [*args, tag])

    def batch_results(
        self, tag: str, results: Iterable[tuple[str, str, bytes | None]], usd_billed: float, *, ended: bool
    ) -> None:
        """Keep lines' results, ``(custom_id, state, JSON result)``; ``ended``: the batch's last ones.

        Example:
            >>> from hrbench.store import Store
            >>> s = Store(":memory:")
            >>> s.batch_open("t1", "b", "openai", "u", None, ["k1", "k2"], 0.5)
            >>> s.batch_results("t1", [("k1", "done", b"{}"), ("k2", "expired", None)], 0.1, ended=True)
            >>> s.batch_list("b")[0]["ended"] is not None, s.batch_line_states("b")
            (True, {'k1': ('t1', 'done', b'{}'), 'k2': ('t1', 'expired', None)})
        """
        now = time.time()
        with self._tx() as conn:
            conn.executemany(
                "UPDATE batch_lines SET state=?, result=? WHERE tag=? AND custom_id=?",
                ((state, blob, tag, cid) for cid, state, blob in results),
            )
            conn.execute(
                "UPDATE batches SET usd_billed=usd_billed+?, updated=?, ended=? WHERE tag=?",
                [usd_billed, now, now if ended else None, tag],
            )

    def batch_list(self, benchmark_id: str | None = None, *, live: bool = False) -> list[dict[str, Any]]:
        """The batches kept (of one benchmark, or all), oldest first; ``live``: those not ended.

        A batch is live until its results are read (``ended`` is set then), whatever the
        provider's state says.
        """
        where, args = [], []
        if benchmark_id is not None:
            where.append("benchmark_id=?")
            args.append(benchmark_id)
        if live:
            where.append("ended IS NULL")
        sql = f"SELECT {', '.join(BATCH_COLUMNS)} FROM batches"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [dict(zip(BATCH_COLUMNS, row, strict=True)) for row in self._all(sql + " ORDER BY created", args)]

    def batch_get(self, ref: str) -> dict[str, Any] | None:
        """A batch by its tag or the provider's batch id, or ``None``."""
        row = self._one(
            f"SELECT {', '.join(BATCH_COLUMNS)} FROM batches WHERE tag=? OR batch_id=? ORDER BY created LIMIT 1",
            [ref, ref],
        )
        return None if row is None else dict(zip(BATCH_COLUMNS, row, strict=True))

    def batch_custom_ids(self, benchmark_id: str, tag: str | None = None) -> list[str]:
        """The ``custom_id`` of every line of a benchmark's batches (or of the batch ``tag``)."""
        if tag is not None:
            return [r[0] for r in self._all("SELECT custom_id FROM batch_lines WHERE tag=?", [tag])]
        return [r[0] for r in self._all("SELECT custom_id FROM batch_lines WHERE benchmark_id=?", [benchmark_id])]

    def batch_line_states(self, benchmark_id: str) -> dict[str, tuple[str, str, bytes | None]]:
        """Per ``custom_id`` of a benchmark, its latest line: ``(tag, state, JSON result or None)``.

        A line expired and resubmitted is in two batches; the later one is given.
        """
        rows = self._all(
            "SELECT l.custom_id, l.tag, l.state, l.result FROM batch_lines l JOIN batches b ON b.tag=l.tag "
            "WHERE l.benchmark_id=? ORDER BY b.created",
            [benchmark_id],
        )
        return {cid: (tag, state, result) for cid, tag, state, result in rows}
