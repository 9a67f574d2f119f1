"""One record per id in the files users load (outputs and references): never "the last one wins".

Rule (``json.loads`` and a dict built row by row keep the last of two rows with one id,
silently): every loader of predictions
or references reads its records through :class:`OnePerId`. A second record of an id that
differs from the first is refused, naming the id field, the id and the places of both (lines
of a JSON lines file, records of a JSON list, entries of a JSON object). A second record equal
to the first (what the loader keeps for it is the same: a line written twice, two runs of one
file concatenated) is read once, silently: which one is kept cannot matter.
"""

from __future__ import annotations

from typing import Any

from hrbench.errors import ConfigError

__all__ = ["OnePerId", "refuse_repeated_keys"]


class OnePerId:
    """The first record of each id; an identical repeat skipped, a differing one refused.

    Args:
        field: the spec field (or argument) that names the file, said first in the error
            (``"arm.path"``, ``"reference.path"``).
        source: the file (its path, said as the error's value), or a short name of the source.
        id_name: the records' id field, said with the id (``"question_id"``, ``"id"``); for
            ids that are tuples, a tuple of names (``("item", "run")``).
        what: what two records of one id would disagree on (``"predictions"``, ``"records"``).
        where: the unit of a place: ``"line"``, ``"record"``, ``"entry"``, ``"question"``.
        error: the :class:`~hrbench.errors.ConfigError` subclass to raise.

    Example:
        >>> seen = OnePerId("arm.path", "run.jsonl", "question_id", "predictions")
        >>> seen.first("q1", "12", 1), seen.first("q2", "7", 2), seen.first("q1", "12", 4)
        (True, True, False)
        >>> try:
        ...     seen.first("q1", "13", 5)
        ... except ValueError as exc:
        ...     print(exc)
        arm.path: lines 1 and 5 have the same question_id 'q1' with different predictions; keep one (an identical repeat is read once) (got 'run.jsonl')
    """

    def __init__(
        self,
        field: str,
        source: Any,
        id_name: str | tuple[str, ...],
        what: str,
        where: str = "line",
        error: type[ConfigError] = ConfigError,
    ) -> None:
        self.field, self.source, self.id_name, self.what, self.where = (
            field,
            str(source),
            id_name,
            what,
            where,
        )
        self.error = error
        self._seen: dict[Any, tuple[Any, Any]] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._seen

    def first(self, key: Any, value: Any, place: Any) -> bool:
        """Whether to keep this record: ``True`` for an id's first, ``False`` for an identical repeat.

        Args:
            key: the record's id (a tuple such as ``(item, run)``, named by ``id_name``'s parts).
            value: what the loader keeps for the id (compared with ``==``).
            place: where the record is (a line number, a record number, ...).

        Raises:
            ConfigError: (or ``error``) the id's first record holds a different value.
        """
        if key not in self._seen:
            self._seen[key] = (value, place)
            return True
        kept, at = self._seen[key]
        if kept == value:
            return False
        names, parts = (self.id_name, key) if isinstance(key, tuple) else ((self.id_name,), (key,))
        said = " ".join(f"{n} {v!r}" for n, v in zip(names, parts, strict=False))
        raise self.error(
            self.field,
            self.source,
            f"{_plural(self.where)} {at} and {place} have the same {said} with different "
            f"{self.what}; keep one (an identical repeat is read once)",
        )


def _plural(word: str) -> str:
    return word[:-1] + "ies" if word.endswith("y") else word + "s"


def refuse_repeated_keys(field: str, source: Any, what: str) -> Any:
    """A ``json.loads`` ``object_pairs_hook`` applying :class:`OnePerId` to each object's keys.

    ``json.loads`` keeps the last of two equal keys; with this hook a key written twice with
    different values is refused naming the key and both entries (1 is the object's first), and
    one written twice with the same value is read once.

    Example:
        >>> import json
        >>> hook = refuse_repeated_keys("arm.path", "p.json", "predictions")
        >>> json.loads('{"q1": "a", "q2": "b", "q1": "a"}', object_pairs_hook=hook)
        {'q1': 'a', 'q2': 'b'}
        >>> try:
        ...     json.loads('{"q1": "a", "q2": "b", "q1": "c"}', object_pairs_hook=hook)
        ... except ValueError as exc:
        ...     print(str(exc).split(";")[0])
        arm.path: entries 1 and 3 have the same key 'q1' with different predictions
    """

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen = OnePerId(field, source, "key", what, "entry")
        return {k: v for n, (k, v) in enumerate(pairs, 1) if seen.first(k, v, n)}

    return hook
