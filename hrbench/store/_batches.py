"""The batch ledger: every provider batch a benchmark submits, and its lines, kept before upload.

A benchmark run in batch mode (:mod:`hrbench.runner.batch`) writes a batch here, with the
``custom_id`` of every line and the state ``"preparing"``, **before** it uploads it; the
provider's batch id is written once the provider answers, the state at every poll, and the
lines' results as soon as they are read, before any run is given one. After a crash, a resume
therefore knows every batch that may exist at the provider (a ``"preparing"`` one whose reply
was lost is looked up there by its tag, never uploaded again), every ``custom_id`` already
uploaded, and the results already read.

One table, ``batches`` (created with the store's schema, :mod:`hrbench.store._schema`): one row
per batch, keyed by its ``tag`` (ours, made before upload; sent as the provider's metadata or
file name): benchmark, provider, base URL, the key's environment variable name (never the key),
the provider's batch id, state, lines, lines done and failed, USD reserved and billed, created /
updated / ended (Unix seconds; ``ended``: results read), its lines' ``custom_id`` (a JSON array)
and, once read, their results (a JSON array of ``[custom_id, state, result]``; ``state``:
``"done"``, ``"failed"``, ``"expired"``, ``"cancelled"``, or ``"lost"`` for the lines of a batch
that never reached the provider). A batch of 100,000 lines is one row: kept in milliseconds.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from hrbench.records import Result
from hrbench.store._open import _Base

__all__ = ["BATCH_COLUMNS", "LIVE_STATES", "LineRecord"]

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
"""The columns of ``batches`` :meth:`_Batches.batch_list` gives, in order."""

LIVE_STATES = ("preparing", "validating", "in_progress", "finalizing", "cancelling")
"""Batch states that may still change at the provider (a batch in one of them is live)."""

LineRecord = tuple[str, str, Result]
"""A line's result as kept: ``(custom_id, state, result)``."""

_ids = msgspec.json.Decoder(list[str])
_lines = msgspec.json.Decoder(list[tuple[str, str, Result]])
_enc = msgspec.json.Encoder()


class _Batches(_Base):
    """The batch ledger (``batches``)."""

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
        """Keep a batch about to be uploaded, with every line's ``custom_id``.

        Written before the upload: after a crash, a batch whose upload reply was lost is looked
        up at the provider by ``tag`` instead of being uploaded again.

        Example:
            >>> from hrbench.store import Store
            >>> s = Store(":memory:")
            >>> s.batch_open("t1", "b", "openai", "http://127.0.0.1:9/v1", None, ["k1", "k2"], 0.5)
            >>> s.batch_list("b")[0]["state"], s.batch_custom_ids("t1")
            ('preparing', ['k1', 'k2'])
        """
        now = time.time()
        self._write(
            "INSERT INTO batches (tag, benchmark_id, provider, base_url, key_env, state, lines, "
            "usd_reserved, created, updated, custom_ids) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [
                tag,
                benchmark_id,
                provider,
                base_url,
                key_env,
                "preparing",
                len(custom_ids),
                usd_reserved,
                now,
                now,
                _enc.encode(list(custom_ids)),
            ],
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
        sets: list[str] = ["updated=?"]
        args: list[Any] = [time.time()]
        for name, value in (("batch_id", batch_id), ("state", state), ("done", done), ("failed", failed)):
            if value is not None:
                sets.append(f"{name}=?")
                args.append(value)
        self._write(f"UPDATE batches SET {', '.join(sets)} WHERE tag=?", [*args, tag])

    def batch_results(self, tag: str, results: Iterable[LineRecord], usd_billed: float) -> None:
        """Keep an ended batch's results, ``(custom_id, state, result)`` each; the batch is no longer live.

        Example:
            >>> from hrbench.store import Store
            >>> s = Store(":memory:")
            >>> s.batch_open("t1", "b", "openai", "u", None, ["k1", "k2"], 0.5)
            >>> s.batch_results("t1", [("k1", "done", Result(text="x")), ("k2", "expired", Result(ok=False))], 0.1)
            >>> s.batch_list("b")[0]["ended"] is not None, {k: v[1] for k, v in s.batch_line_states("b").items()}
            (True, {'k1': 'done', 'k2': 'expired'})
        """
        now = time.time()
        self._write(
            "UPDATE batches SET results=?, usd_billed=usd_billed+?, updated=?, ended=? WHERE tag=?",
            [_enc.encode(list(results)), usd_billed, now, now, tag],
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
        return [
            dict(zip(BATCH_COLUMNS, row, strict=True)) for row in self._all(sql + " ORDER BY created", args)
        ]

    def batch_get(self, ref: str) -> dict[str, Any] | None:
        """A batch by its tag or the provider's batch id, or ``None``."""
        row = self._one(
            f"SELECT {', '.join(BATCH_COLUMNS)} FROM batches WHERE tag=? OR batch_id=? ORDER BY created LIMIT 1",
            [ref, ref],
        )
        return None if row is None else dict(zip(BATCH_COLUMNS, row, strict=True))

    def batch_custom_ids(self, tag: str) -> list[str]:
        """The ``custom_id`` of every line of the batch ``tag``, in upload order."""
        row = self._one("SELECT custom_ids FROM batches WHERE tag=?", [tag])
        return [] if row is None else _ids.decode(row[0])

    def batch_line_states(self, benchmark_id: str) -> dict[str, tuple[str, str, Result | None]]:
        """Per ``custom_id`` of a benchmark's lines, its latest: ``(tag, state, result or None)``.

        A line of a live batch is ``"uploaded"`` with no result. A line expired and resubmitted
        is in two batches; the later one is given.
        """
        out: dict[str, tuple[str, str, Result | None]] = {}
        rows = self._all(
            "SELECT tag, custom_ids, results FROM batches WHERE benchmark_id=? ORDER BY created",
            [benchmark_id],
        )
        for tag, ids, results in rows:
            if results is None:
                out.update((cid, (tag, "uploaded", None)) for cid in _ids.decode(ids))
            else:
                out.update((cid, (tag, state, result)) for cid, state, result in _lines.decode(results))
        return out
