"""References built from specs: inline items, a stored reference by name, or a file (SPEC §4).

A file is JSON lines of records (``format = "rows"``), one ``{"items", "labels", ...}`` object
as ``hrb ref get`` prints it, SQuAD or TAT-QA data, or another tool's results; ``ids``,
``ids_from`` and ``limit`` keep some of its items.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hrbench._util import forms as _forms
from hrbench._util import strict_json
from hrbench._util.files import read_text
from hrbench._util.messages import did_you_mean
from hrbench._util.unique import OnePerId, refuse_repeated_keys
from hrbench.errors import ConfigError
from hrbench.interop import FILE_FORMATS, imported_spec_reference
from hrbench.reference import PER_ITEM, Reference, check_keyed
from hrbench.specs._loader import _get

__all__ = ["REFERENCE_FIELDS", "build_reference", "read_reference"]


_RECORD_FIELDS = ("id", "item", "label", "cluster", "split")
"""The fields of a reference record (``format = "rows"``)."""


def _unknown_field(where: str, name: str, known: Sequence[str]) -> ConfigError:
    """An error naming an unknown field, with the closest known name when there is one."""
    return ConfigError(
        where, name, f"unknown field; {did_you_mean(name, known)}expected one of {', '.join(known)}"
    )


_AS_PRINTED = {
    "path": None,
    "format": "rows",
    "limit": None,
    "ids": None,
    "ids_from": None,
    "id_field": "id",
    "id_var": None,
}
"""The other fields ``hrb ref get`` prints, at the values a reference file may hold them."""


def _reference_object(obj: dict[str, Any], p: Path) -> Reference:
    """A reference from a JSON file holding one ``{"items", "labels", "cluster", "split"}`` object.

    Rule: the form ``hrb ref get`` prints is a reference file too, read by the
    wire's rule (:func:`hrbench.reference.check_keyed`): a JSON object's keys have no order,
    so beside ``items`` given as a mapping, ``labels``, ``cluster`` and ``split`` are keyed by
    item id (or one value for all), and a list is refused. The fields ``hrb ref get`` prints
    beside them are read when they hold what it prints (``"path": null``, ...); any other
    field is refused, with the closest name.
    """
    known = ("items", *PER_ITEM)
    for key, value in obj.items():
        if key in _AS_PRINTED and value != _AS_PRINTED[key]:
            raise ConfigError(
                f"reference.path {p.name}",
                key,
                f"a reference file holds {', '.join(known)}; give `{key}` in the spec, beside `path`",
            )
        if key not in known and key not in _AS_PRINTED:
            raise _unknown_field(f"reference.path {p.name}", key, known)
    check_keyed(obj["items"], {k: obj.get(k) for k in PER_ITEM}, where=f"reference.path {p.name}: ")
    return Reference(obj["items"], obj.get("labels"), obj.get("cluster"), obj.get("split") or "test")


def _one_json(text: str) -> Any:
    """The one JSON value ``text`` holds; ``None`` when it is not one (JSON lines, malformed)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _reference_rows(path: str, limit: int | None = None) -> Reference:
    """A reference from a JSON lines (or JSON list, or CSV) file of ``{"id", "item", "label", "cluster", "split"}``.

    A ``.csv`` file has a header row naming those columns (:func:`_csv_records`).

    Each record holds its own id and label, so no order is needed; a JSON file holding one
    ``{"items", "labels", ...}`` object (as ``hrb ref get`` prints) is read by
    :func:`_reference_object`, under the rule of the wire.

    Rule (a ``"labl"`` is never stored as no label, to end "done" with accuracy NA): a record with a field outside these is refused, naming the field,
    the line and the closest known name; two different records with one id are refused, naming
    the id and both lines (the second no longer replaces the first; a record repeated
    identically is read once, :mod:`hrbench._util.unique`). A label that is not a string, a
    number, a list of them or a mapping with ``answers`` is refused
    (:func:`hrbench.reference.check_label`).

    Raises:
        ConfigError: an unreadable file, a line that is not JSON, a record without ``item``,
            an unknown field, a duplicate id, or a bad label.
    """
    p = Path(path).expanduser()
    try:
        text = read_text(p, "reference.path")
    except OSError as exc:
        raise ConfigError(
            "reference.path", path, f"cannot read the reference ({type(exc).__name__})"
        ) from None
    where = "record"
    if p.suffix.lower() == ".csv":
        where = "line"
        numbered = _csv_records(text, p)
    elif (
        isinstance(obj := _one_json(text) if text.lstrip().startswith("{") else None, dict) and "items" in obj
    ):
        try:
            obj = strict_json.loads(
                text, object_pairs_hook=refuse_repeated_keys("reference.path", path, "entries")
            )
        except json.JSONDecodeError as exc:
            raise ConfigError(
                "reference.path", path, f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
            ) from None
        ref = _reference_object(obj, p)  # one {"items", "labels", ...} object, as `hrb ref get` prints
        return ref if limit is None else _select(ref, ref.ids[:limit])
    elif isinstance(obj, dict) and format_of(obj) is not None:  # one object: another format's file
        raise ConfigError("reference.path", path, f"one JSON object, not reference records{format_hint(obj)}")
    elif text.lstrip().startswith("["):
        try:
            numbered = list(enumerate(strict_json.loads(text), 1))
        except json.JSONDecodeError as exc:
            raise ConfigError(
                "reference.path", path, f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
            ) from None
    else:
        from hrbench.reading import json_lines

        where = "line"
        try:
            numbered = json_lines(text, path, "reference.path", objects=False)
        except ConfigError as exc:  # say what a reference file may be (a CSV one is named .csv)
            why = str(exc).removeprefix("reference.path: ").rsplit(" (got ", 1)[0]
            raise ConfigError(
                "reference.path",
                path,
                f'{why}; a reference file is JSON lines (one {{"id", "item", "label", "cluster", '
                '"split"} object a line), a JSON list of them, or a .csv file with a header row of those columns',
            ) from None
    if limit is not None:
        numbered = numbered[:limit]
    items: dict[str, Any] = {}
    seen = OnePerId("reference.path", path, "id", "records", where)
    labels, clusters, splits = {}, {}, {}
    for n, rec in numbered:
        if not isinstance(rec, dict) or "item" not in rec:
            raise ConfigError(
                "reference.path",
                path,
                f'{where} {n}: expected {{"id", "item", "label", ...}}{format_hint(rec)}',
            )
        for key in rec:
            if key not in _RECORD_FIELDS:
                raise _unknown_field(f"reference.path {p.name} {where} {n}", key, _RECORD_FIELDS)
        item_id = str(rec.get("id", n))
        if not seen.first(item_id, {k: v for k, v in rec.items() if k != "id"}, n):
            continue
        items[item_id] = rec["item"]
        if "label" in rec:  # left out (no field, an empty CSV cell): counted and warned, a null is not
            labels[item_id] = rec["label"]
        if rec.get("cluster") is not None:
            clusters[item_id] = str(rec["cluster"])
        splits[item_id] = rec.get("split", "test")
    return Reference(items, labels=labels, cluster=clusters or None, split=splits)


_FORMAT_KEYS: tuple[tuple[str, tuple[frozenset[str], ...]], ...] = (
    (
        "squad",
        (
            frozenset({"context", "question"}),
            frozenset({"question", "answers"}),
            frozenset({"data", "version"}),
        ),
    ),
    ("tatqa", (frozenset({"table", "questions"}), frozenset({"paragraphs", "questions"}))),
    ("lm-eval", (frozenset({"doc_id", "doc"}), frozenset({"doc_id", "resps"}))),
    ("inspect", (frozenset({"eval", "samples"}), frozenset({"eval", "results"}))),
    ("promptfoo", (frozenset({"evalId", "results"}), frozenset({"results", "config", "shareableUrl"}))),
)
"""Keys a file's first record has in each format the reference readers know (any one set of them):
SQuAD's rows (``context``, ``question``, ``answers``) or its nested JSON (``version``, ``data``),
TAT-QA's contexts, lm-eval's samples, an Inspect log, promptfoo's results."""


def format_of(record: Any) -> str | None:
    """The reference format whose records have ``record``'s keys, or ``None``.

    Example:
        >>> format_of({"id": "q1", "context": "...", "question": "...", "answers": {"text": []}})
        'squad'
        >>> format_of({"item": "x"}) is None
        True
    """
    if not isinstance(record, dict):
        return None
    keys = set(record)
    for fmt, shapes in _FORMAT_KEYS:
        if any(shape <= keys for shape in shapes):
            return fmt
    return None


def format_hint(record: Any) -> str:
    """``"; its keys (...) are a squad file's: give --format squad ..."`` when ``record`` looks like a known format, else ``""``."""
    fmt = format_of(record)
    if fmt is None:
        return ""
    keys = ", ".join(list(record)[:6]) + (", ..." if len(record) > 6 else "")
    return (
        f"; its keys ({keys}) are a {fmt} file's: give its format "
        f'(hrb ref put NAME FILE --format {fmt}; format = "{fmt}" in a spec\'s [reference])'
    )


def _csv_records(text: str, p: Path) -> list[tuple[int, dict[str, Any]]]:
    """The records of a CSV reference: a header row naming columns of ``id,item,label,cluster,split``.

    Rule: the columns are the JSON lines records' fields (``hrb rows`` writes CSV with these
    names, and ``hrb gate`` reads it); ``item`` is required, the others optional; an empty
    ``label`` or ``cluster`` cell is none, an empty ``split`` is ``test``. Cells are text (a
    label ``4`` is the string ``"4"``, as the exact scorer compares text). Read with the
    ``csv`` module (quoted cells may hold commas and newlines).

    Raises:
        ConfigError: no header row, a header without ``item`` (naming the columns found), an
            unknown column (naming the closest known one), or a row the ``csv`` module refuses.

    Example:
        >>> _csv_records("id,item,label" + chr(10) + "q1,France,Paris" + chr(10), Path("r.csv"))
        [(2, {'id': 'q1', 'item': 'France', 'label': 'Paris'})]
    """
    import csv
    import io

    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if header is None or not any(h.strip() for h in header):
            raise ConfigError(
                "reference.path", str(p), f"{p.name} has no header row (expected {','.join(_RECORD_FIELDS)})"
            )
        header = [h.strip() for h in header]
        for h in header:
            if h not in _RECORD_FIELDS:
                raise _unknown_field(f"reference.path {p.name} header", h, _RECORD_FIELDS)
        if "item" not in header:
            raise ConfigError(
                "reference.path",
                str(p),
                f"{p.name} has no `item` column (columns found: {', '.join(header)}; "
                f"expected {','.join(_RECORD_FIELDS)}, with `item` required)",
            )
        out: list[tuple[int, dict[str, Any]]] = []
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                raise ConfigError(
                    "reference.path",
                    str(p),
                    f"{p.name} line {reader.line_num} has {len(cells)} cell(s), the header {len(header)}",
                )
            rec = dict(zip(header, cells, strict=True))
            for key in ("label", "cluster", "split"):
                if rec.get(key) == "":
                    del rec[key]
            out.append((reader.line_num, rec))
    except csv.Error as exc:
        raise ConfigError(
            "reference.path", str(p), f"{p.name} line {reader.line_num} is not CSV ({exc})"
        ) from None
    return out


REFERENCE_FIELDS: tuple[str, ...] = ("items", "labels", "cluster", "split", "path", "format", "limit", "ids")
REFERENCE_FIELDS += ("ids_from", "id_field", "id_var")
"""The fields of a reference spec, as :data:`ARM_FIELDS` for arms."""


def build_reference(spec: Any, store: Any = None) -> Reference:
    """The :class:`~hrbench.reference.Reference` a spec describes.

    Args:
        spec: the name or hash of a stored reference (a string, looked up in ``store``), or a
            spec with ``items`` (+ ``labels``, ``cluster``, ``split``), or ``path`` (+ ``format``:
            ``"rows"``, ``"squad"``, ``"tatqa"``, or another tool's results: ``"inspect"``,
            ``"lm-eval"``, ``"promptfoo"``, the last with ``id_var``, the test variable holding
            the item id, ``"id"`` by default); either may keep only some items with ``ids``
            and/or ``ids_from`` (a JSON lines file) + ``id_field``.
        store: the store holding named references.

    Raises:
        ConfigError: a malformed spec, or no stored reference by that name; ``id_var`` on a
            reference that is not a promptfoo results file.

    Example:
        >>> build_reference({"items": {"q1": "France"}, "labels": ["Paris"]}).labels
        {'q1': 'Paris'}
    """
    if isinstance(spec, str):
        stored: Reference | None = None if store is None else store.reference_get(spec)
        if stored is None:
            raise ConfigError("reference", spec, "no stored reference has this name or hash")
        return stored
    _forms.check_fields("reference", spec, REFERENCE_FIELDS)  # a "lables" is refused, never read as no labels
    items, path = _get(spec, "items"), _get(spec, "path")
    if (items is None) == (path is None):
        raise ConfigError("reference", None, "a reference needs exactly one of `items` or `path`")
    if path is None:
        ref: Reference = Reference(
            items,
            labels=_get(spec, "labels"),
            cluster=_get(spec, "cluster"),
            split=_get(spec, "split", "test"),
        )
    keep = _wanted_ids(spec)
    limit = _forms.check_number("reference.limit", _get(spec, "limit"), low=1, whole=True)
    if path is not None:
        # the whole file: its ids are the ones an outputs arm may name (Reference.source_ids)
        ref = _reference_file(path, _get(spec, "format", "rows") or "rows", None, _get(spec, "id_var"))
    elif _get(spec, "id_var") is not None:
        raise ConfigError(
            "reference.id_var", _get(spec, "id_var"), "reads a promptfoo results file: give `path`"
        )
    if keep is None and limit is None:
        return ref
    # with ids, `limit` keeps the first of the selected items, not of the file
    selected = ref if keep is None else _select(ref, keep)
    if limit is not None:
        selected = _select(selected, selected.ids[:limit])
    selected.source_ids = frozenset(ref.ids)
    return selected


def read_reference(
    path: str | os.PathLike[str], format: str | None = None, *, id_var: str | None = None
) -> Reference:
    r"""Read a reference file, as ``hrb ref put NAME FILE`` reads it (the same readers).

    Args:
        path: the file.
        format: ``None`` or ``"rows"``: reference records, JSON lines of ``{"id", "item",
            "label", "cluster", "split"}`` (or a JSON list of them, a ``.csv`` file with a header
            row of those columns, or one ``{"items", "labels", ...}`` object as ``hrb ref get``
            prints); ``"squad"`` (SQuAD JSON or rows, :func:`~hrbench.reading.qa_reference`),
            ``"tatqa"`` (:func:`~hrbench.reading.tatqa_reference`), or another tool's results:
            ``"inspect"``, ``"lm-eval"``, ``"promptfoo"``.
        id_var: with ``"promptfoo"``: the test variable holding each item's id (``"id"``).

    Returns:
        A :class:`~hrbench.reference.Reference`.

    Raises:
        ConfigError: the file cannot be read or is not of that format, naming the file, the
            line and the field; a file of records whose first record is another known format's
            names that format (``give its format (... --format squad ...)``).

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "caps.jsonl"
        >>> _ = path.write_text('{"id": "q1", "item": "France", "label": "Paris"}\n')
        >>> read_reference(path).labels
        {'q1': 'Paris'}
    """
    spec: dict[str, Any] = {"path": os.fspath(path), "format": format or "rows"}
    if id_var is not None:
        spec["id_var"] = id_var
    return build_reference(spec)


def _reference_file(path: str, fmt: str, limit: int | None, id_var: str | None = None) -> Reference:
    try:
        return _read_reference_file(path, fmt, limit, id_var)
    except ConfigError as exc:
        why = exc.context.get("not_utf8")
        if why is None or Path(path).suffix != ".eval":
            raise
        hint = format_hint({"eval": None, "samples": None})  # an Inspect .eval (a zip) given as rows
        raise ConfigError("reference.path", path, f"is not a {fmt} file: {why}{hint}") from None


def _read_reference_file(path: str, fmt: str, limit: int | None, id_var: str | None) -> Reference:
    if fmt in FILE_FORMATS:  # another tool's results (hrbench.interop)
        return imported_spec_reference(path, fmt, id_var)
    if id_var is not None:
        raise ConfigError(
            "reference.id_var", id_var, f"names a promptfoo test variable; this reference's format is {fmt!r}"
        )
    if fmt not in ("rows", "squad", "tatqa"):
        raise ConfigError(
            "reference.format", fmt, f"expected `rows`, `squad`, `tatqa` or one of {FILE_FORMATS}"
        )
    if fmt == "rows":
        return _reference_rows(path, limit)
    from hrbench.reading import qa_reference, tatqa_reference

    try:
        return qa_reference(path, limit=limit) if fmt == "squad" else tatqa_reference(path, limit=limit)
    except OSError as exc:
        raise ConfigError(
            "reference.path", path, f"cannot read the reference ({type(exc).__name__})"
        ) from None


def _wanted_ids(spec: Any) -> list[str] | None:
    """The item ids a reference spec keeps (``ids`` and/or the ids in ``ids_from``), or ``None``."""
    ids, ids_from = _get(spec, "ids"), _get(spec, "ids_from")
    if ids is None and ids_from is None:
        return None
    wanted = [str(i) for i in ids] if ids is not None else None
    if ids_from is not None:
        field = _get(spec, "id_field", "id") or "id"
        from hrbench.reading import read_rows

        try:
            rows = read_rows(Path(ids_from).expanduser(), "reference.ids_from")
        except OSError as exc:
            raise ConfigError(
                "reference.ids_from", ids_from, f"cannot read it ({type(exc).__name__})"
            ) from None
        found = [str(r[field]) for r in rows if field in r]
        if not found:
            raise ConfigError("reference.id_field", field, f"no row of {ids_from} has this field")
        wanted = found if wanted is None else [i for i in wanted if i in set(found)]
    return wanted


def _select(ref: Reference, ids: list[str]) -> Reference:
    """The items of ``ref`` whose ids are in ``ids``, in the reference's order.

    Raises:
        ConfigError: an id the reference does not hold, or none left.
    """
    have = set(ref.ids)
    missing = [i for i in ids if i not in have]
    if missing:
        raise ConfigError(
            "reference.ids", missing[0], f"not an item of the reference ({len(missing)} missing)"
        )
    want = set(ids)
    keep = [i for i in ref.ids if i in want]
    if not keep:
        raise ConfigError("reference.ids", ids, "no item left")
    items, labels, clusters, splits = ref.items, ref.labels, ref.clusters, ref.splits
    return Reference(
        {i: items[i] for i in keep},
        labels={i: labels[i] for i in keep},
        cluster={i: clusters[i] for i in keep},
        split={i: splits[i] for i in keep},
    )
