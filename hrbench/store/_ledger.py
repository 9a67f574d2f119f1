"""The ledger tables: a benchmark's governor use, its open reservations, and the replies paid."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from hrbench.records import Step
from hrbench.store._open import _Base

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


class _Ledger(_Base):
    """The governor's ledger (``ledger``, ``ledger_open``, ``ledger_paid``)."""

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

        A reservation is in the file before its request is sent, its settlement
        right after the reply. :class:`~hrbench.runner.Journal` calls this from its writer
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
                (``unknown_*`` and ``lost_*``; ``unpriced``: of those calls, the ones with no
                USD bound).
            paid: replies the provider billed, ``(ledger_id, step)`` (a JSON
                :class:`~hrbench.records.Step`), kept so that a run made again after a crash
                carries what was paid for it before (:meth:`ledger_paid`).

        Example:
            >>> from hrbench.store import Store
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

        Rule (rows add up to the provider's bill after a crash): every billed reply is
        kept with its settlement, so a run made again (its row was lost in a crash, or replaced
        on resume) carries what was already paid for it (see
        :func:`hrbench.runner._remade.prepaid`).

        Args:
            benchmark_id: the benchmark.
            ledger_ids: only these runs (``None``: every run).

        Returns:
            Per run id, its billed replies' steps (``kind`` ``"request"`` or ``"attempt"``,
            ``source`` ``"live"``), in the order they were paid.

        Example:
            >>> from hrbench.store import Store
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

        A reservation still open when a run stopped (a crash, a kill) may have been
        paid or not; it is counted as spent at its reserved, worst-case amount and kept apart
        as spend that is *unknown, at most* that much (``unknown_*``, summed over every such
        stop). Call it once, holding the benchmark's lease, before the run's first request.
        Each reservation is folded once: it leaves ``ledger_open`` in the same transaction
        (cancel and resume: nothing is counted twice).

        Returns:
            :meth:`ledger_get` after the fold plus ``crashed_calls``, ``crashed_usd`` and
            ``crashed_tokens`` (what this fold added); ``None`` when nothing was kept.

        Example:
            >>> from hrbench.store import Store
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

        Rule (a cancel then a resume does not read as a crash): a request cancelled
        in flight whose reply never arrived may still have been billed, so it stays counted at
        its reservation, as spend *unknown, at most* that much, but as *cancelled in flight*
        (``cancelled_*``, a part of ``unknown_*``), and at once: the listing shows it right
        after the cancel, not only after a resume. Only ``session``'s reservations are folded,
        each once (they leave ``ledger_open`` in the same transaction).

        Returns:
            What this fold added: ``(calls, usd, tokens, unpriced)`` (``unpriced``: of those
            calls, the ones with no USD bound).

        Example:
            >>> from hrbench.store import Store
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

    def ledger_get(self, benchmark_id: str) -> dict[str, Any] | None:
        """A benchmark's governor use, everything that may have been paid counted as spent.

        Returns:
            ``None`` if nothing is kept; else ``calls``, ``usd``, ``tokens`` (settled, plus
            open reservations at their reserved amount, plus the spend earlier stops left
            unknown), ``open_calls``/``open_usd``/``open_tokens`` (reservations open now: in
            flight, or left by a crash not yet resumed) and ``unknown_calls``/``unknown_usd``/
            ``unknown_tokens`` (spend that earlier crashes and cancels left unknown: at most this
            much) with ``cancelled_calls``/``cancelled_usd``/``cancelled_tokens``, the
            part of it that cancels left (in flight at a clean stop), and
            ``lost_calls``/``lost_usd``/``lost_tokens``, the part replies lost after their
            request was written left; ``unpriced_calls`` (of which
            ``cancelled_unpriced``, ``lost_unpriced``): unknown calls with no USD bound (their
            USD is unknown, not 0).

        Example:
            >>> from hrbench.store import Store
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


def _fold_open(
    conn: sqlite3.Connection, benchmark_id: str, session: str | None
) -> tuple[int, float, int, int]:
    """Move open reservations (``session``'s, or all) into the spend as unknown; what moved.

    Counted as spent at their reserved amount and as ``unknown_*``; a session's (a clean stop)
    also as ``cancelled_*``. A reservation with no USD bound (``usd`` NULL) adds 0 USD and is
    counted in ``unpriced_calls`` (and ``cancelled_unpriced``): its USD is unknown, not 0
    They leave ``ledger_open`` in the caller's transaction, so each is
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
