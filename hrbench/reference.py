"""The reference: the labelled item set (the seed's ``hr_reference``)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import msgspec

from hrbench.errors import ReferenceLocked, ReferenceValueError

__all__ = ["PER_ITEM", "SPLITS", "Reference", "check_keyed", "check_label"]

SPLITS = ("train", "dev", "test")
"""The splits an item may be on. Rows on ``dev`` are not reportable (seed 002)."""


PER_ITEM = ("labels", "cluster", "split")
"""The fields of a reference spec that hold one value per item."""


def check_keyed(items: Any, per_item: Mapping[str, Any], where: str = "") -> None:
    """Refuse a list that would be paired by position with a mapping of items.

    Rule (a spec sent from Neovim with ``items`` as a Lua table and ``labels`` as a list would
    have its labels paired in the table's hash order: France gets Lima, and accuracy falls from
    0.640 to 0.160 in silence): where ``items`` arrives as a mapping whose
    order is not the sender's (a JSON object: RFC 8259 leaves its keys unordered, and a Lua
    table, a Go map or a jq pipeline sends them in any order), ``labels``, ``cluster`` and
    ``split`` must be keyed by item id, or one value for all (cluster, split); a list among
    them is refused, however few the items, naming the fields and showing the keyed form. A
    list is still paired by position beside ``items`` given as a list: both keep their order.

    The daemon applies it to every reference it is sent (``benchmark``, ``reference/put``)
    and to a JSON reference file holding one ``{"items", "labels", ...}`` object. A Python
    caller defines an order (a dict keeps its insertion order): :class:`Reference` pairs its
    lists by position, and ``hrbench_client`` and ``hrb`` (a TOML file's order) send such
    lists keyed by id.

    Args:
        items: the spec's ``items``.
        per_item: ``labels``, ``cluster`` and ``split`` as given (the absent ones ``None``).
        where: put before the field named (``"reference.path FILE: "`` for a file).

    Raises:
        ReferenceValueError: naming the first list, the others, and the keyed form.

    Example:
        >>> check_keyed(["France", "Peru"], {"labels": ["Paris", "Lima"]})
        >>> check_keyed({"q1": "France"}, {"labels": {"q1": "Paris"}, "split": "test"})
        >>> try:
        ...     check_keyed({"q1": "France", "q2": "Peru"}, {"labels": ["Paris", "Lima"]})
        ... except ValueError as exc:
        ...     print(exc)
        labels: a list is not paired by position with `items` given as a mapping (id -> payload): the keys of a JSON object have no order (RFC 8259; a Lua table, a Go map or jq writes them in any order), so an item could get another item's label; key it by item id, "labels": {"q1": <label of q1>, "q2": <label of q2>}, or give `items` as a list in the order of the list (got ['Paris', 'Lima'])
    """
    if not isinstance(items, Mapping):
        return
    listed = [name for name, value in per_item.items() if isinstance(value, (list, tuple))]
    if not listed:
        return
    ids = [str(k) for k in list(items)[:2]]
    more = ", ..." if len(items) > 2 else ""

    def word(name: str) -> str:
        return "label" if name == "labels" else name

    def keyed(name: str) -> str:
        return f'"{name}": {{' + ", ".join(f'"{i}": <{word(name)} of {i}>' for i in ids) + more + "}"

    others = f" (nor may {', '.join(f'`{n}`' for n in listed[1:])})" if len(listed) > 1 else ""
    raise ReferenceValueError(
        f"{where}{listed[0]}",
        per_item[listed[0]],
        f"a list is not paired by position with `items` given as a mapping (id -> payload){others}: "
        "the keys of a JSON object have no order (RFC 8259; a Lua table, a Go map or jq writes them "
        f"in any order), so an item could get another item's {word(listed[0])}; key it by item id, "
        + ", ".join(keyed(n) for n in listed)
        + f", or give `items` as a list in the order of the list{'s' if len(listed) > 1 else ''}",
    )


def _per_item(field: str, value: Any, ids: list[str], default: Any) -> dict[str, Any]:
    if value is None:
        return dict.fromkeys(ids, default)
    if isinstance(value, str) or not isinstance(value, (Sequence, Mapping)):
        return dict.fromkeys(ids, value)
    if isinstance(value, Mapping):
        known = set(ids)  # built once: a set per key made this quadratic (10,000 items: 13 s)
        unknown = [k for k in value if str(k) not in known]
        if unknown:
            raise ReferenceValueError(field, unknown[0], "names an item id that is not in items")
        return {i: value.get(i, default) for i in ids}
    if len(value) != len(ids):
        raise ReferenceValueError(field, f"length {len(value)}", f"must have one value per item ({len(ids)})")
    return dict(zip(ids, value, strict=True))


def _plain(value: Any) -> bool:
    """A string or a number (not a bool): one accepted answer."""
    return isinstance(value, (str, int, float, Decimal)) and not isinstance(value, bool)


def check_label(item_id: str, label: Any, field: str | None = None) -> None:
    """Refuse a label no scorer can read.

    A label is ``None`` (no label), a string, a number, a list of strings and numbers (seed 000:
    matching any one is correct), or a mapping whose ``answers`` holds one of those beside the
    gold's details (TAT-QA; :func:`hrbench.scoring.label_answers`). Rule (``{"a": 2}`` or
    ``true`` as a label is never stored to score its item NA in silence): anything
    else is refused, naming the item and the value. A bool is refused, not read as ``1``/``0``.

    Rule (seed 000 keeps NA for "no label"; the label ``""`` would have every scorer but
    ``numeric`` score each run on it wrong in silence): a label whose
    accepted answers are all empty or only white space (``""``, ``" "``, ``["", " "]``,
    ``{"answers": ""}``) is refused, for every scorer alike. It is not read as "no label": that
    would guess what the author meant (no label? an unanswerable item, whose label is
    ``NOT_IN_DOCUMENT``?), and a guess is silent. A blank answer beside others (a TAT-QA gold
    span list holding ``""``, as the real dev set does) is kept: no scorer can match it (a blank
    reply is a ``parse_failure``; ``answer_contains`` skips it), and the others still decide.

    Args:
        item_id: the item's id, named in the error as ``labels[<item id>]``.
        label: the label.
        field: the field to name instead (``"label"`` for one output scored on its own).

    Raises:
        ReferenceValueError: naming ``labels[<item id>]`` (or ``field``) and the value.

    Example:
        >>> check_label("q1", {"answers": ["Paris"], "scale": ""})
        >>> try:
        ...     check_label("q2", {"k": 1})
        ... except ValueError as exc:
        ...     print(exc)
        labels['q2']: expected a string, a number, a list of them, or a mapping with `answers` (got {'k': 1})
        >>> check_label("q3", ["", " "])
        Traceback (most recent call last):
        ...
        hrbench.errors.ReferenceValueError: labels['q3']: the label is only white space: ...
    """
    if label is None:
        return
    body = label.get("answers") if isinstance(label, Mapping) and "answers" in label else label
    if _plain(body) or (isinstance(body, (list, tuple)) and body and all(_plain(x) for x in body)):
        answers = body if isinstance(body, (list, tuple)) else [body]
        if all(isinstance(a, str) and not a.strip() for a in answers):
            raise ReferenceValueError(
                field or f"labels[{item_id!r}]",
                label,
                f"the label is {'empty' if not any(answers) else 'only white space'}: no output can "
                "match it (an empty reply is a parse_failure), so every run would be wrong; give an "
                "item with no label no label (None / null, or leave it out of a `labels` table) and "
                "an unanswerable item the label NOT_IN_DOCUMENT",
            )
        return
    if body is None and body is not label:
        return  # a mapping whose answers are null: no label, as label_answers reads it
    raise ReferenceValueError(
        field or f"labels[{item_id!r}]",
        label,
        "expected a string, a number, a list of them, or a mapping with `answers`",
    )


class Reference:
    """A labelled item set (the seed's ``hr_reference``).

    Args:
        items: a mapping of item id to payload, or a sequence of payloads (ids are then
            ``"1"`` .. ``"n"``). Payloads are any JSON-like value (a question string, a
            ``{"document", "question"}`` dict, ...).
        labels: one label per item (a sequence in item order, or a mapping id -> label), or
            ``None`` for no labels. A sequence pairs with the order of ``items`` (a Python
            mapping keeps its insertion order); a spec sent as JSON must key them by id
            (:func:`check_keyed`). A label is a string, a number, a list of accepted answers,
            a mapping with ``answers`` (:func:`check_label`), or ``None`` (the item cannot be
            scored: its runs are recorded ``correct=None``).
        cluster: one cluster per item, or one value for all; defaults to each item's own id.
        split: one split per item, or one for all: ``"train"``, ``"dev"`` or ``"test"``.

    Raises:
        ReferenceValueError: wrong lengths, an unknown split, duplicate or empty ids, no items,
            a label of another kind (:func:`check_label`).

    Attributes:
        source_ids: ``None``, or every item id of the source this reference was selected from
            (a spec's ``ids``, ``ids_from`` or ``limit``, :func:`hrbench.specs.build_reference`):
            an outputs arm may hold predictions for those ids, not for others (a run
            file covering the whole data set is scored on a sample).
            Not part of the hash.

    The reference is locked when a benchmark starts scoring it; changing it afterwards raises
    :class:`~hrbench.errors.ReferenceLocked`.

    Example:
        >>> ref = Reference({"q1": "France", "q2": "Peru"}, labels=["Paris", "Lima"], cluster="a")
        >>> ref.ids, ref.labels["q2"], len(ref.hash)
        (['q1', 'q2'], 'Lima', 64)
    """

    def __init__(
        self,
        items: Mapping[Any, Any] | Sequence[Any],
        labels: Sequence[Any] | Mapping[Any, Any] | str | int | float | None = None,
        cluster: Sequence[Any] | Mapping[Any, Any] | str | None = None,
        split: Sequence[str] | Mapping[Any, str] | str = "test",
    ) -> None:
        if isinstance(items, Mapping):
            ids = [str(k) for k in items]
            if len(set(ids)) != len(ids):
                dup = next(i for i in ids if ids.count(i) > 1)
                raise ReferenceValueError("items", dup, "duplicate item id")
            payloads = list(items.values())
        elif isinstance(items, Sequence) and not isinstance(items, (str, bytes)):
            ids = [str(i + 1) for i in range(len(items))]
            payloads = list(items)
        else:
            raise ReferenceValueError("items", items, "expected a mapping of id -> payload or a sequence")
        if not ids:
            raise ReferenceValueError("items", items, "a reference needs at least one item")
        if any(not i for i in ids):
            raise ReferenceValueError("items", "", "item ids must be non-empty")
        self._ids = ids
        self._items = dict(zip(ids, payloads, strict=True))
        if labels is not None and (isinstance(labels, (str, int, float))):
            labels_map = dict.fromkeys(ids, labels)
        else:
            labels_map = _per_item("labels", labels, ids, None)
        for k, v in labels_map.items():
            check_label(k, v)
        self._labels = {k: (list(v) if isinstance(v, tuple) else v) for k, v in labels_map.items()}
        labelled = {str(k) for k in labels} if isinstance(labels, Mapping) else set()
        self.labels_omitted: frozenset[str] = (
            frozenset(i for i in ids if i not in labelled) if isinstance(labels, Mapping) else frozenset()
        )
        """Ids a ``labels`` mapping left out (their label is ``None``; a benchmark counts them)."""
        clusters = _per_item("cluster", cluster, ids, None)
        self._clusters = {i: (i if c is None else str(c)) for i, c in clusters.items()}
        splits = _per_item("split", split, ids, "test")
        for i, s in splits.items():
            if s not in SPLITS:
                raise ReferenceValueError(
                    "split", s, f"unknown split of item {i!r}; expected one of {SPLITS}"
                )
        self._splits = splits
        self._locked = False
        self._hash: str | None = None
        self.source_ids: frozenset[str] | None = None

    # -- reading -----------------------------------------------------------------------
    @property
    def ids(self) -> list[str]:
        """Item ids, in reference order."""
        return list(self._ids)

    @property
    def items(self) -> dict[str, Any]:
        """A copy of id -> payload."""
        return dict(self._items)

    @property
    def labels(self) -> dict[str, Any]:
        """A copy of id -> label (``None`` for no label)."""
        return dict(self._labels)

    @property
    def clusters(self) -> dict[str, str]:
        """A copy of id -> cluster."""
        return dict(self._clusters)

    @property
    def splits(self) -> dict[str, str]:
        """A copy of id -> split."""
        return dict(self._splits)

    @property
    def locked(self) -> bool:
        """``True`` once a benchmark started scoring this reference."""
        return self._locked

    def __len__(self) -> int:
        return len(self._ids)

    def __repr__(self) -> str:
        n_clusters = len(set(self._clusters.values()))
        return f"<Reference {len(self)} item(s) in {n_clusters} cluster(s); hash {self.hash[:12]}>"

    def payload(self, item_id: str) -> Any:
        """The payload of one item."""
        return self._items[item_id]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form: ``{"items", "labels", "cluster", "split"}`` keyed by id."""
        return {
            "items": self._items,
            "labels": self._labels,
            "cluster": self._clusters,
            "split": self._splits,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reference:
        """Rebuild a reference from :meth:`to_dict`."""
        return cls(
            data["items"],
            labels=data.get("labels"),
            cluster=data.get("cluster"),
            split=data.get("split", "test"),
        )

    @property
    def hash(self) -> str:
        """The content hash (sha256 hex over ids, payloads, labels, clusters, splits).

        Stable across processes: it is computed from canonical JSON, not Python's ``hash``.
        """
        if self._hash is None:
            body = msgspec.json.encode(
                [[i, self._items[i], self._labels[i], self._clusters[i], self._splits[i]] for i in self._ids],
                order="sorted",
            )
            self._hash = hashlib.sha256(body).hexdigest()
        return self._hash

    # -- changing ------------------------------------------------------------------------
    def lock(self) -> None:
        """Lock the reference; later changes raise :class:`ReferenceLocked`."""
        self._locked = True

    def _check_unlocked(self, what: str) -> None:
        if self._locked:
            raise ReferenceLocked(f"cannot {what}: the reference {self.hash[:12]} is locked by a benchmark")

    def set_label(self, item_id: str, label: Any) -> None:
        """Change one item's label.

        Raises:
            ReferenceLocked: when a benchmark has started scoring the reference.
            ReferenceValueError: when ``item_id`` is unknown.
        """
        self._check_unlocked(f"set the label of {item_id!r}")
        if item_id not in self._items:
            raise ReferenceValueError("item_id", item_id, "no such item")
        check_label(item_id, label)
        self._labels[item_id] = label
        self._hash = None

    def add(
        self, item_id: str, payload: Any, label: Any = None, cluster: str | None = None, split: str = "test"
    ) -> None:
        """Add one item.

        Raises:
            ReferenceLocked: when a benchmark has started scoring the reference.
            ReferenceValueError: duplicate id or unknown split.
        """
        self._check_unlocked(f"add item {item_id!r}")
        item_id = str(item_id)
        if item_id in self._items:
            raise ReferenceValueError("item_id", item_id, "duplicate item id")
        if split not in SPLITS:
            raise ReferenceValueError("split", split, f"unknown split; expected one of {SPLITS}")
        check_label(item_id, label)
        self._ids.append(item_id)
        self._items[item_id] = payload
        self._labels[item_id] = label
        self._clusters[item_id] = item_id if cluster is None else str(cluster)
        self._splits[item_id] = split
        self._hash = None

    def remove(self, item_id: str) -> None:
        """Remove one item.

        Raises:
            ReferenceLocked: when a benchmark has started scoring the reference.
        """
        self._check_unlocked(f"remove item {item_id!r}")
        self._ids.remove(item_id)
        for d in (self._items, self._labels, self._clusters, self._splits):
            d.pop(item_id, None)
        self._hash = None
