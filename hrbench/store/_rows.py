"""The rows and traces tables: scored rows and their traces, a batch per SQLite row.

Schema 5 writes ``row_batches``; rows and traces written before stay in ``rows`` and ``traces``
and every reader here reads both.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from hrbench._util.messages import refusal_limits
from hrbench.errors import ConfigError
from hrbench.records import OUTPUT_SOURCE, Row, Step
from hrbench.store._errors import store_error
from hrbench.store._ledger import _LEDGER_SNAPSHOT
from hrbench.store._open import _Base

_enc = msgspec.json.Encoder()
_BATCH_INSERT = "INSERT INTO row_batches (benchmark_id, n, fresh, seqs, rows, traces) VALUES (?,?,?,?,?,?)"
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


class _Note(msgspec.Struct, kw_only=True):
    """What the output reader reads of a step (the rest of it, prompts included, is skipped)."""

    kind: str = "request"
    source: str = "live"
    text: str | None = None


_dec_notes = msgspec.json.Decoder(list[_Note])


class _Key(msgspec.Struct):
    """A stored row's key (its other fields are skipped when decoding)."""

    arm: str
    item: str
    run: int


_dec_keys = msgspec.json.Decoder(list[_Key])

_ROWS_OF_B = (
    "((SELECT count(*) FROM rows r WHERE r.benchmark_id=b.id) + "
    "(SELECT coalesce(sum(x.fresh), 0) FROM row_batches x WHERE x.benchmark_id=b.id))"
)
"""The number of rows of benchmark ``b`` (a SQL expression): those of schema 4 and the batches'."""


class _Rows(_Base):
    """Scored rows and their traces (``row_batches``, and ``rows`` and ``traces`` of schema 4)."""

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

        Rule: the batch is one SQLite row (``row_batches``): its rows'
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
        rows_json: bytes | bytearray,
        traces_json: bytes | bytearray = b"{}",
        ledger: tuple[int, float, int] | None = None,
        *,
        fresh: int | None = None,
        keys: Sequence[tuple[str, str, int]] | None = None,
    ) -> None:
        """Write a batch of rows already encoded, their traces and the governor's use, in one transaction.

        What :meth:`rows_put` does once it has encoded its rows; the daemon encodes each row and
        trace as it is scored, so a batch is written without holding a Python object per row
        (rows kept for a batch as objects cost the event loop ~3 us a row in garbage
        collection and cache misses).

        Args:
            benchmark_id: the benchmark.
            seqs: the rows' order numbers, in the order of ``rows_json``.
            rows_json: the rows as one JSON array (msgspec's encoding of ``list[Row]``), bytes or
                a bytearray (kept as a BLOB either way).
            traces_json: ``{ledger_id: steps}`` as one JSON object.
            ledger: the governor's use to keep with the rows (a Ray run's), or ``None``.
            fresh: how many rows have a key not stored yet; ``None`` to find out from ``keys``.
            keys: the rows' ``(arm, item, run)``, needed when ``fresh`` is ``None``.

        Raises:
            ConfigError: when neither ``fresh`` nor ``keys`` is given for a non-empty batch.
            StoreError: the write failed (nothing of the batch is kept).

        Example:
            >>> from hrbench.store import Store
            >>> s = Store(":memory:")
            >>> row = Row(cluster="c", item="q", arm="a", run=1, split="test", correct=True,
            ...           outcome=None, failure_kind=None)
            >>> s.row_batch_put("b", [0], b"[" + msgspec.json.encode(row) + b"]", fresh=1)
            >>> s.rows_get("b")[0].item, s.rows_count("b")
            ('q', 1)
        """
        if seqs and fresh is None and keys is None:
            raise ConfigError("fresh", None, "give `fresh` or the rows' `keys` to count the new rows")
        batch: list[Any] | None = None
        if seqs or traces_json != b"{}":
            batch = [benchmark_id, len(seqs), fresh, _enc.encode(list(seqs)), rows_json, traces_json]
        if ledger is None and fresh is not None:
            # one statement is its own transaction (autocommit): a BEGIN and a COMMIT each gave
            # the GIL back and waited for it while the runner held it (a switch interval, 5 ms)
            with self._guard() as conn:
                if batch is not None:
                    conn.execute(_BATCH_INSERT, batch)
            return
        with self._tx(immediate=fresh is None) as conn:
            if batch is not None:
                if fresh is None:
                    assert keys is not None
                    batch[2] = len(set(keys) - _stored_keys(conn, benchmark_id))
                conn.execute(_BATCH_INSERT, batch)
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
            >>> from hrbench.store import Store
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
            raise store_error(exc, self.path) from None

    def rows_count(self, benchmark_id: str) -> int:
        """How many rows a benchmark has stored (a row written again counts once)."""
        sql = f"SELECT {_ROWS_OF_B} FROM (SELECT ? AS id) b"
        return int(self._one(sql, [benchmark_id])[0])

    def stop_limits(self, benchmark_id: str) -> list[str]:
        """What refused the requests of a benchmark's stored runs: the caps that stopped it, sorted.

        Rule (``hrb ls`` and the report advise the same flag, ``--max-tokens N`` for a
        token-cap stop): the resume flag of a stop note is read from
        the refusals kept in the stopped runs' traces (:func:`hrbench._util.messages.refusal_limits`),
        the same wherever the note is shown, not guessed from how full each cap is.

        Example:
            >>> from hrbench.store import Store
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
                raise store_error(exc, self.path) from None

    def outputs_get(self, benchmark_id: str, ledger_ids: Iterable[str]) -> dict[str, str | None]:
        """The output text of each run of ``ledger_ids``: what its arm returned, as its scorer received it.

        Read from the note step each run's trace keeps (:func:`hrbench.records.run_output`);
        only the notes' fields are decoded, so a trace's prompts cost no objects. A run with no
        output (it failed before its arm returned), a trace stored before outputs were kept and
        a ledger id with no trace give ``None``.

        Example:
            >>> from hrbench.store import Store
            >>> s = Store(":memory:")
            >>> s.rows_put("b", [], {"b/a/q1/1": [Step(ledger_id="b/a/q1/1", text="Paris"),
            ...     Step(ledger_id="b/a/q1/1", kind="note", source="output", text="Paris")]})
            >>> s.outputs_get("b", ["b/a/q1/1", "b/a/q2/1"])
            {'b/a/q1/1': 'Paris', 'b/a/q2/1': None}
        """
        wanted = list(dict.fromkeys(ledger_ids))
        with self._guard() as conn:
            raws = _trace_raws(conn, benchmark_id, set(wanted))
        out: dict[str, str | None] = dict.fromkeys(wanted)
        try:
            for lid, raw in raws.items():
                for step in reversed(_dec_notes.decode(raw)):
                    if step.kind == "note" and step.source == OUTPUT_SOURCE:
                        out[lid] = step.text
                        break
        except msgspec.DecodeError as exc:
            raise store_error(exc, self.path) from None
        return out

    def trace_draws(self, benchmark_id: str, ledger_ids: Iterable[str]) -> dict[str, list[Step]]:
        """The draws in the traces of ``ledger_ids``: each request step's key, source and response id.

        A resume seeds the distinct-draw check with the kept runs' draws (seed 002); only these fields are decoded, so it holds little per run. Steps that are not
        requests are left out.

        Example:
            >>> from hrbench.store import Store
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
                raise store_error(exc, self.path) from None


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
