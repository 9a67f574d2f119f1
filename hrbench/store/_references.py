"""The reference tables: reference contents by hash, and the history of their names."""

from __future__ import annotations

import time
from typing import Any

import msgspec

from hrbench.errors import ConfigError
from hrbench.store._open import _Base

_enc = msgspec.json.Encoder()


class _References(_Base):
    """Kept references and their names (``reference_sets``, ``reference_names``)."""

    def reference_put(self, reference: Any, name: str | None = None) -> str:
        """Keep a :class:`~hrbench.Reference` and, when ``name`` is given, point that name at it.

        Names are a history of ``name -> content hash``: each put under a name appends to it,
        so :meth:`reference_get` of the name returns the last content put under it (put A, B,
        then A again: A), and one content may carry several names.

        Args:
            reference: the reference (kept once per content hash).
            name: a name to point at it, or ``None`` to keep the content only.

        Returns:
            The content hash.

        Raises:
            ConfigError: when ``name`` is empty.

        Example:
            >>> from hrbench.store import Store
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
