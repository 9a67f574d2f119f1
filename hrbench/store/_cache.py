"""The cache and recordings tables: replies kept by request key, and named recordings of replies."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import msgspec

from hrbench.records import Request, Result
from hrbench.store._open import _Base

_enc = msgspec.json.Encoder()
_dec_result = msgspec.json.Decoder(Result)


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


class _Cache(_Base):
    """The response cache and the recordings (``cache``, ``recordings``)."""

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

        The filters combine (all must hold). Recordings are never touched. Fresh draws
        need neither ``cache = false`` nor ``hrb gc`` (which deletes benchmarks too).

        Returns:
            How many entries were deleted.

        Example:
            >>> from hrbench.store import Store
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

    def cache_forget(self, keys: Iterable[str]) -> int:
        """Delete the cache entries under ``keys`` (request keys); how many there were.

        Example:
            >>> from hrbench.store import Store
            >>> s = Store(":memory:")
            >>> s.cache_put("k1", "arm", "h", Request(messages=[]), Result(text="x"))
            >>> s.cache_forget(["k1", "k2"]), s.cache_get("k1")
            (1, None)
        """
        keys = list(keys)
        gone = 0
        with self._guard() as conn:
            for start in range(0, len(keys), 500):  # SQLite's bound on parameters
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                gone += int(conn.execute(f"DELETE FROM cache WHERE key IN ({marks})", chunk).rowcount)
        return gone

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
