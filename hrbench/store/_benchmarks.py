"""The benchmarks table: one record per benchmark (spec, status, summary), its listing and lookup."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import msgspec

from hrbench._util.messages import did_you_mean
from hrbench.errors import ConfigError
from hrbench.store._open import _Base
from hrbench.store._rows import _ROWS_OF_B

_enc = msgspec.json.Encoder()

_HEADERS = (
    "SELECT b.id, json_extract(b.spec, '$.params.name'), b.created, b.status, "
    "json_extract(b.spec, '$.arms'), json_extract(b.spec, '$.total'), b.summary, "
    f"{_ROWS_OF_B}, "
    "json_extract(b.spec, '$.params.runs'), b.reference_hash, "
    "coalesce(json_extract(b.spec, '$.limits'), json_extract(b.spec, '$.params.governor')), "
    "l.usd + (SELECT coalesce(sum(o.usd), 0) FROM ledger_open o WHERE o.benchmark_id=b.id), "
    "l.calls + (SELECT count(*) FROM ledger_open o WHERE o.benchmark_id=b.id), "
    "l.unknown_usd, l.unknown_calls, l.cancelled_usd, l.cancelled_calls, "
    "l.tokens + (SELECT coalesce(sum(o.tokens), 0) FROM ledger_open o WHERE o.benchmark_id=b.id), "
    "l.lost_usd, l.lost_calls, l.unpriced_calls, l.cancelled_unpriced, l.lost_unpriced, "
    "json_extract(b.spec, '$.stop.reason') "
    "FROM benchmarks b LEFT JOIN ledger l ON l.benchmark_id=b.id ORDER BY b.created DESC, b.rowid DESC"
)
"""Every benchmark with its ledger (one row each, read by :func:`_header`), newest first."""


class _Benchmarks(_Base):
    """Benchmark records (``benchmarks``): written, finished, listed, resolved by id or name."""

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

    def benchmark_stop_put(self, benchmark_id: str, record: dict[str, Any]) -> None:
        """Keep a stop rule's record with its benchmark (``spec.stop``: its order, test state and end).

        A benchmark not stored (a library run given a store for its cache) is left alone.
        """
        self._write(
            "UPDATE benchmarks SET spec=json_set(spec, '$.stop', json(?)) WHERE id=?",
            [_enc.encode(record).decode(), benchmark_id],
        )

    def benchmark_stop_get(self, benchmark_id: str) -> dict[str, Any] | None:
        """The stop record kept with a benchmark (:meth:`benchmark_stop_put`), or ``None``."""
        row = self._one("SELECT json_extract(spec, '$.stop') FROM benchmarks WHERE id=?", [benchmark_id])
        if row is None or row[0] is None:
            return None
        got: dict[str, Any] = msgspec.json.decode(row[0])
        return got

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
            crash left unknown, ``unknown_usd`` and ``unknown_calls`` ("unknown, at most"),
            and of that the part cancels left, ``cancelled_usd`` and ``cancelled_calls``, and
            the part replies lost after their request was written left, ``lost_usd`` and
            ``lost_calls``; ``stop_reason``, the reason of the stop record
            of a benchmark a stop rule runs (``"running"`` until it ends; ``None`` without one).
        """
        return [_header(g) for g in self._all(_HEADERS)]

    def benchmark_resolve(self, ref: str) -> str | None:
        """The id a user means by ``ref``: an id, a unique id prefix (4+ characters) or a name.

        Rule: an exact id wins, then a prefix of exactly one id, then the newest benchmark of
        that name. Of two of one name made in the same second the newest wins, never a refusal; "newest" is the later creation
        time, and of equal times the one stored last, which :meth:`benchmark_headers` (so
        ``hrb ls``) lists first. Give the id (or a prefix) for an older one.

        Returns:
            The id, or ``None`` when nothing matches.

        Raises:
            ConfigError: the prefix matches several ids (they are listed).

        Example:
            >>> from hrbench.store import Store
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

    def benchmarks_named(self, name: str) -> list[tuple[str, float]]:
        """``(id, created)`` of every benchmark named ``name``, newest first (Unix seconds).

        Example:
            >>> from hrbench.store import Store
            >>> Store(":memory:").benchmarks_named("capitals")
            []
        """
        return [
            (str(i), float(created))
            for i, created in self._all(
                "SELECT id, created FROM benchmarks WHERE json_extract(spec, '$.params.name')=? "
                "ORDER BY created DESC, rowid DESC",
                [name],
            )
        ]

    def benchmark_named(self, name: str) -> str | None:
        """The id of the newest benchmark named ``name`` (see :meth:`benchmark_resolve`), or ``None``.

        Example:
            >>> from hrbench.store import Store
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
            >>> from hrbench.store import Store
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


def _header(got: Sequence[Any]) -> dict[str, Any]:
    """A benchmark's header (see :meth:`_Benchmarks.benchmark_headers`) from its row of :data:`_HEADERS`."""
    (i, name, created, status, arms, total, summary, n, runs, ref_hash, limits) = got[:11]
    (usd, calls, unknown_usd, unknown_calls, cancelled_usd, cancelled_calls, tokens) = got[11:18]
    (lost_usd, lost_calls, unpriced_calls, cancelled_unpriced, lost_unpriced, stop_reason) = got[18:]
    cap = msgspec.json.decode(limits or "{}")
    return {
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
        "stop_reason": stop_reason,
    }
