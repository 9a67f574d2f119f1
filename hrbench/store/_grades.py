"""The grades table: human grades of rows, kept by row key so they outlive the benchmark that showed them.

A grade is kept under its row's key, ``(reference hash, arm hash, item, run)``, and its grader:
a benchmark run again from the same spec (its replies from the cache) has the same rows, and
its report finds the same grades; a changed arm (another prompt, another model) has another
hash, and its outputs are not taken as graded.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from hrbench.errors import ConfigError, NotFound
from hrbench.records import Grade
from hrbench.store._open import _Base


def _arm_key(arm: dict[str, Any]) -> str:
    """An arm's key in the grades table: its hash, or its name when the benchmark kept none."""
    return str(arm.get("hash") or f"name:{arm.get('name')}")


class _Grades(_Base):
    """Human grades (``grades``): put by a benchmark's rows, got back for any benchmark of the same rows."""

    def _graded_arms(self, benchmark_id: str) -> tuple[str, dict[str, str]]:
        """A benchmark's reference hash and ``{arm name: arm key}``.

        Raises:
            NotFound: no benchmark has that id.
        """
        row = self._one(
            "SELECT reference_hash, json_extract(spec, '$.arms') FROM benchmarks WHERE id=?", [benchmark_id]
        )
        if row is None:
            raise NotFound(f"no stored benchmark has the id {benchmark_id!r}", benchmark=benchmark_id)
        import msgspec

        arms = msgspec.json.decode(row[1]) if row[1] else []
        return str(row[0]), {str(a.get("name")): _arm_key(a) for a in arms if isinstance(a, dict)}

    def grades_put(self, benchmark_id: str, grades: Iterable[Any]) -> dict[str, int]:
        """Keep human grades of a stored benchmark's rows (a row graded again by the same grader is replaced).

        Args:
            benchmark_id: the benchmark whose rows were graded.
            grades: :class:`~hrbench.records.Grade` records.

        Returns:
            ``{"stored": n, "replaced": m}``: grades written, and of those the ones that replaced
            an earlier grade of the same row by the same grader.

        Raises:
            NotFound: no benchmark has that id.
            ConfigError: a grade for a row the benchmark does not have, naming its arm, item and run.

        Example:
            >>> from hrbench.store import Store
            >>> from hrbench.records import Row
            >>> from hrbench.records import Grade
            >>> s = Store(":memory:")
            >>> s.benchmark_put("b1", {"arms": [{"name": "a", "hash": "h1"}]}, "ref")
            >>> s.rows_put("b1", [(0, Row(cluster="c", item="q1", arm="a", run=1, split="test",
            ...                           correct=True, outcome="correct", failure_kind=None))])
            >>> s.grades_put("b1", [Grade(item="q1", arm="a", run=1, correct=False)])
            {'stored': 1, 'replaced': 0}
            >>> s.benchmark_put("b2", {"arms": [{"name": "a", "hash": "h1"}]}, "ref")  # a rerun
            >>> [(g.item, g.correct) for g in s.grades_get("b2")]
            [('q1', False)]
        """
        grades = list(grades)
        ref, arms = self._graded_arms(benchmark_id)
        have = {(r.arm, r.item, r.run) for r in self.rows_get(benchmark_id)}  # type: ignore[attr-defined]
        for g in grades:
            if g.arm not in arms and arms:
                raise ConfigError(
                    "grades",
                    f"{g.arm}/{g.item}/{g.run}",
                    f"arm {g.arm!r} is not an arm of benchmark {benchmark_id}",
                )
            if (g.arm, g.item, g.run) not in have:
                raise ConfigError(
                    "grades",
                    f"{g.arm}/{g.item}/{g.run}",
                    f"grades a row benchmark {benchmark_id} does not have (arm {g.arm!r}, item {g.item!r}, run {g.run})",
                )
        now = time.time()
        rows = [
            (
                ref,
                arms.get(g.arm, f"name:{g.arm}"),
                g.item,
                g.run,
                g.grader,
                g.arm,
                int(g.correct),
                g.pi,
                benchmark_id,
                now,
            )
            for g in grades
        ]
        with self._tx(immediate=True) as conn:
            before = conn.total_changes
            replaced = 0
            for r in rows:
                if conn.execute(
                    "SELECT 1 FROM grades WHERE reference_hash=? AND arm_hash=? AND item=? AND run=? AND grader=?",
                    r[:5],
                ).fetchone():
                    replaced += 1
            conn.executemany("INSERT OR REPLACE INTO grades VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
            stored = conn.total_changes - before
        return {"stored": min(stored, len(rows)), "replaced": replaced}

    def grades_get(self, benchmark_id: str) -> list[Any]:
        """The human grades of a stored benchmark's rows: any kept for the same reference, arms and rows.

        Returns:
            :class:`~hrbench.records.Grade` records, named by this benchmark's arms, in
            arm, item, run and grader order.

        Raises:
            NotFound: no benchmark has that id.
        """
        ref, arms = self._graded_arms(benchmark_id)
        if not arms:
            return []
        by_key = {k: name for name, k in arms.items()}
        marks = ",".join("?" * len(by_key))
        got = self._all(
            f"SELECT arm_hash, item, run, grader, correct, pi FROM grades WHERE reference_hash=? AND arm_hash IN ({marks}) "
            "ORDER BY arm_hash, item, run, grader",
            [ref, *by_key],
        )
        return [
            Grade(item=i, arm=by_key[k], run=int(r), correct=bool(c), grader=g, pi=pi)
            for k, i, r, g, c, pi in got
        ]

    def grades_count(self, benchmark_id: str) -> int:
        """How many grades :meth:`grades_get` would return."""
        return len(self.grades_get(benchmark_id))
