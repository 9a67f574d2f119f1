"""The store's schema: its version, its tables and the steps that migrate an older file.

Nothing here changes a file by itself: :func:`hrbench.store._open._open` creates the tables and
runs the steps, once, in one transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

SCHEMA_VERSION = 7
"""The store's schema version: 1 kept one name per reference content (a second name replaced
the first); 2 keeps names in ``reference_names``, a history of ``name -> content hash``; 3 keeps
the governor's ledger per call: open reservations in ``ledger_open``, and the spend
left unknown by a crash in the ``unknown_*`` columns of ``ledger``; 4 adds the ``cancelled_*``
columns; 5 keeps scored rows and their traces a batch per SQLite row (``row_batches``):
rows written before stay in ``rows`` and ``traces`` and are read with the batches; 6 adds the
``lost_*`` columns of ``ledger`` (replies lost after their request was written)
and the ``*unpriced*`` ones (unknown spend with no USD bound: no price or no output limit;
``ledger_open.usd`` is then NULL); 7 keeps human grades of rows in ``grades``, by row key
(reference hash, arm hash, item, run) and grader."""


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
CREATE TABLE IF NOT EXISTS grades (
  reference_hash TEXT NOT NULL, arm_hash TEXT NOT NULL, item TEXT NOT NULL, run INTEGER NOT NULL,
  grader TEXT NOT NULL, arm TEXT NOT NULL, correct INTEGER NOT NULL, pi REAL, benchmark_id TEXT, created REAL,
  PRIMARY KEY (reference_hash, arm_hash, item, run, grader)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS batches (
  tag TEXT PRIMARY KEY, benchmark_id TEXT NOT NULL, provider TEXT NOT NULL, base_url TEXT NOT NULL, key_env TEXT,
  batch_id TEXT, state TEXT NOT NULL, lines INTEGER NOT NULL, done INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0, usd_reserved REAL NOT NULL DEFAULT 0, usd_billed REAL NOT NULL DEFAULT 0,
  created REAL, updated REAL, ended REAL, custom_ids BLOB NOT NULL, results BLOB);
CREATE INDEX IF NOT EXISTS batches_benchmark ON batches(benchmark_id, created);
"""
"""The tables, created by every open (``IF NOT EXISTS``): a table added without a change to an
older one (``batches``, the batch ledger of :mod:`hrbench.store._batches`) appears in an older
file when it is opened, with no migration step and no version change."""


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
    stays the settled use, with nothing unknown.
    """
    have = {r[1] for r in conn.execute("PRAGMA table_info(ledger)")}
    for col, kind in (("unknown_calls", "INTEGER"), ("unknown_usd", "REAL"), ("unknown_tokens", "INTEGER")):
        if col not in have:
            conn.execute(f"ALTER TABLE ledger ADD COLUMN {col} {kind} NOT NULL DEFAULT 0")


def _migrate_3_to_4(conn: sqlite3.Connection) -> None:
    """Schema 3 -> 4: the ledger keeps apart the unknown spend that cancels left.

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

    The new columns (``lost_*``, ``*unpriced*``) start at 0.
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


def _migrate_4_to_5(conn: sqlite3.Connection) -> None:
    """Schema 5 writes rows a batch per SQLite row (``row_batches``, made by the schema).

    Rows and traces written before stay where they are: :meth:`Store.rows_get` and the other
    readers read ``rows`` and ``traces`` with the batches, so old benchmarks stay readable and
    resumable (a run stopped by the budget, run again, replaces its old row).
    """


def _migrate_6_to_7(conn: sqlite3.Connection) -> None:
    """Schema 7 keeps human grades in ``grades`` (made by the schema); nothing else changes."""


_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _migrate_1_to_2,
    2: _migrate_2_to_3,
    3: _migrate_3_to_4,
    4: _migrate_4_to_5,
    5: _migrate_5_to_6,
    6: _migrate_6_to_7,
}
"""``version -> the step that brings a file at that version to the next``."""
