"""QA references: SQuAD-style files and rows, and the TAT-QA dev set (SPEC section 3)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hrbench._util import strict_json
from hrbench._util.files import read_text
from hrbench._util.unique import OnePerId
from hrbench.errors import ConfigError, ReferenceValueError
from hrbench.reference import Reference
from hrbench.scoring import NOT_IN_DOCUMENT, plain_number

__all__ = ["document_id", "json_lines", "qa_reference", "read_json", "read_rows", "tatqa_reference"]

_FIELDS = ("id", "document", "question", "answers", "is_impossible", "title", "split")
_DEFAULTS: dict[str, tuple[str, ...]] = {
    "id": ("id", "qid", "question_id", "uid"),
    "document": ("context", "document", "passage"),
    "question": ("question", "query"),
    "answers": ("answers", "answer"),
    "is_impossible": ("is_impossible",),
    "title": ("title",),
    "split": (),
}


def document_id(document: str, title: str | None = None) -> str:
    """A short stable id of a document: its title (if any) and 10 hex digits of its sha1.

    Args:
        document: the document text.
        title: a title to make the id readable (spaces become ``_``).

    Returns:
        ``"<title>-<hash>"`` or ``"doc-<hash>"``; the same text always gives the same id.

    Example:
        >>> document_id("Normans came into Scotland.", "Normans")
        'Normans-99f2e5771d'
    """
    digest = hashlib.sha1(document.encode("utf-8")).hexdigest()[:10]
    if title:
        name = re.sub(r"\s+", "_", str(title).strip())
        return f"{name}-{digest}"
    return f"doc-{digest}"


def read_json(path: str | os.PathLike[str], expected: str, field: str = "path") -> Any:
    """The JSON document in a file, or an error naming the file, the line and the form expected.

    Rule (never an ``InternalError (JSONDecodeError)``, as ``format = "tatqa"`` on a SQuAD
    ``.jsonl`` file would give): a file that is not one JSON document is a :class:`ConfigError`.

    Args:
        path: the file.
        expected: what the file should hold, said in the error (``"a TAT-QA .json file: a list
            of {table, paragraphs, questions}"``).
        field: the spec field named in the error.

    Raises:
        ConfigError: the file is not JSON (or holds JSON lines).
        OSError: the file cannot be read.

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "x.jsonl"
        >>> _ = f.write_text('{"a": 1}' + chr(10) + '{"a": 2}' + chr(10))
        >>> try:
        ...     read_json(f, "a JSON list")
        ... except ValueError as exc:
        ...     print(str(exc).split(" (got")[0])
        path: line 2 is not JSON (Extra data); expected a JSON list
    """
    text = read_text(path, field)
    try:
        return strict_json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            field, str(path), f"line {exc.lineno} is not JSON ({exc.msg}); expected {expected}"
        ) from None


def json_lines(
    text: str, path: str | os.PathLike[str], field: str, objects: bool = True
) -> list[tuple[int, Any]]:
    r"""The values of a JSON lines text with their real line numbers (blank lines skipped).

    A truncated line is named by its number in the file, not "(line 1)", the line within the
    line: every JSON lines reader goes through here, so an error names the file and its own
    line number. Lines are split at ``\n`` only (``\r\n`` too):
    ``str.splitlines`` would also split inside a JSON string holding U+2028, and so count lines
    the file does not have.

    Args:
        text: the file's text.
        path: the file, named in errors.
        field: the spec field named in errors (``reference.path``, ``path``).
        objects: refuse a line that is not a JSON object.

    Returns:
        ``(line number, value)`` pairs, line numbers from 1.

    Raises:
        ConfigError: naming ``field``, the file and the line: ``FILE line N is not JSON (...)``.

    Example:
        >>> try:
        ...     json_lines('{"a": 1}' + chr(10) + '{"a": 2' + chr(10), "r.jsonl", "reference.path")
        ... except ValueError as exc:
        ...     print(str(exc).split(" (got")[0])
        reference.path: r.jsonl line 2 is not JSON (Expecting ',' delimiter at column 8)
    """
    out: list[tuple[int, Any]] = []
    name = Path(path).name
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            value = strict_json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                field, str(path), f"{name} line {n} is not JSON ({exc.msg} at column {exc.colno})"
            ) from None
        if objects and not isinstance(value, dict):
            raise ConfigError(field, str(path), f"{name} line {n} is not a JSON object")
        out.append((n, value))
    return out


def read_rows(source: Any, field: str = "source") -> list[dict[str, Any]]:
    """Rows (dicts) from a file or an in-memory table.

    Args:
        source: a path to a ``.jsonl`` file (one JSON object a line), a ``.json`` file (a list
            of rows, or official SQuAD ``{"data": [{"title", "paragraphs": [{"context",
            "qas"}]}]}``, flattened to one row per question with ``title`` and ``context``),
            a SQuAD-shaped dict, an iterable of dicts, or a pandas or polars data frame.
        field: the spec field named in errors (with the file and its line).

    Returns:
        A list of row dicts.

    Raises:
        ConfigError: when the source is none of these or a line is not a JSON object.
        FileNotFoundError: when the path does not exist.
    """
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.suffix == ".json":
            return read_rows(read_json(path, "a JSON list of rows or official SQuAD JSON", field), field)
        return [row for _, row in json_lines(read_text(path, field), path, field)]
    if isinstance(source, Mapping):
        if "data" in source and isinstance(source["data"], list):
            return _squad_nested(source["data"])
        raise ConfigError("source", source, "a dict source must be official SQuAD JSON with a 'data' list")
    if hasattr(source, "to_dicts"):  # polars
        return [dict(r) for r in source.to_dicts()]
    if hasattr(source, "to_dict") and hasattr(source, "columns"):  # pandas
        return [dict(r) for r in source.to_dict(orient="records")]
    if isinstance(source, Iterable) and not isinstance(source, (str, bytes)):
        rows = list(source)
        if rows and isinstance(rows[0], Mapping) and "paragraphs" in rows[0]:
            return _squad_nested(rows)
        bad = next((r for r in rows if not isinstance(r, Mapping)), None)
        if bad is not None:
            raise ConfigError("source", bad, "rows must be dicts")
        return [dict(r) for r in rows]
    raise ConfigError("source", source, "expected a path, rows, a SQuAD dict or a data frame")


def _said(source: Any) -> str:
    """A source as said in an error: its path, else what kind of rows it is."""
    return str(source) if isinstance(source, (str, os.PathLike)) else f"<{type(source).__name__} of rows>"


def _squad_nested(articles: list[Any]) -> list[dict[str, Any]]:
    rows = []
    for art in articles:
        for para in art.get("paragraphs", []):
            for qa in para.get("qas", []):
                row = dict(qa)
                row["title"] = art.get("title")
                row["context"] = para.get("context")
                rows.append(row)
    return rows


def _accepted(value: Any) -> list[Any]:
    """The accepted answers of a source row's answers field, deduplicated in order."""
    if value is None:
        return []
    if isinstance(value, Mapping):
        return _accepted(value.get("text"))
    if isinstance(value, (str, int, float)):
        values: list[Any] = [value]
    else:
        values = []
        for v in value:
            values.extend(_accepted(v) if isinstance(v, (Mapping, list, tuple)) else [v])
    out: list[Any] = []
    for v in values:
        if v is None or (isinstance(v, str) and not v.strip()):
            continue
        if v not in out:
            out.append(v)
    return out


def _pick(row: Mapping[str, Any], field: str, columns: Mapping[str, str]) -> str | None:
    if field in columns:
        return columns[field]
    return next((c for c in _DEFAULTS[field] if c in row), None)


def qa_reference(
    source: Any,
    *,
    columns: Mapping[str, str] | None = None,
    cluster: str | Callable[[dict[str, Any]], Any] = "document",
    split: str = "test",
    keep: Sequence[str] = (),
    ids: Iterable[str] | None = None,
    limit: int | None = None,
) -> Reference:
    """Build a reference for document question answering (SPEC section 3).

    Each item's payload is ``{"document": ..., "question": ...}`` (plus the ``keep`` fields);
    its label is the list of accepted answers, duplicates dropped in order, or
    ``"NOT_IN_DOCUMENT"`` when the row is unanswerable: ``is_impossible`` is true, or there is
    no ``is_impossible`` field and no non-empty answer (the Hugging Face ``squad_v2`` form).

    Args:
        source: SQuAD-style data: a ``.json`` / ``.jsonl`` path, official SQuAD JSON, rows
            (dicts), or a pandas / polars frame (see :func:`read_rows`). Answers may be a list
            of strings, of ``{"text"}`` dicts, a ``{"text": [...]}`` dict, one string or one
            number (a number label is matched in plain digits).
        columns: which source field holds each part, for keys ``id``, ``document``,
            ``question``, ``answers``, ``is_impossible``, ``title``, ``split``. Unmapped parts
            are looked for under their usual names: id ``id``/``qid``/``question_id``/``uid``
            (else the row number from 1), document ``context``/``document``/``passage``,
            question ``question``/``query``, answers ``answers``/``answer``.
        cluster: ``"document"`` (default): the document's short id (:func:`document_id`, with
            the title when there is one), so items on one passage share a cluster;
            ``"item"``: each item alone; another string: that source field; or a function of
            the row.
        split: the split of every item, unless ``columns`` maps ``split``.
        keep: source fields copied into each item's payload as they are.
        ids: keep only these item ids (in source order).
        limit: keep only the first ``limit`` items (after ``ids``).

    Returns:
        A :class:`~hrbench.reference.Reference`.

    Raises:
        ConfigError: an unknown ``columns`` key, a row without a document or question, or a
            row marked answerable (``is_impossible`` false) with no answer.
        ReferenceValueError: two different rows with one item id (naming the id and both
            rows; a row repeated identically is read once,
            :mod:`hrbench._util.unique`), or an unknown split.

    Example:
        >>> from hrbench.reading import example_document, example_questions
        >>> doc = example_document()
        >>> rows = [{**q, "context": doc} for q in example_questions()]
        >>> ref = qa_reference(rows, columns={"answers": "label"})
        >>> ref.labels["units-sheffield"], ref.labels["ceo"], len(set(ref.clusters.values()))
        ([12400], 'NOT_IN_DOCUMENT', 1)
    """
    columns = dict(columns or {})
    unknown = [k for k in columns if k not in _FIELDS]
    if unknown:
        raise ConfigError("columns", unknown[0], f"unknown part; expected one of {_FIELDS}")
    rows = read_rows(source)
    wanted = None if ids is None else {str(i) for i in ids}
    items: dict[str, Any] = {}
    labels: dict[str, Any] = {}
    clusters: dict[str, Any] = {}
    splits: dict[str, Any] = {}
    seen = OnePerId("source", _said(source), "id", "questions", "row", ReferenceValueError)
    for n, row in enumerate(rows, 1):
        id_col = _pick(row, "id", columns)
        item_id = str(row[id_col]) if id_col and row.get(id_col) is not None else str(n)
        if wanted is not None and item_id not in wanted:
            continue
        if not seen.first(item_id, row, n):  # an identical repeat is read once
            continue
        doc_col, q_col = _pick(row, "document", columns), _pick(row, "question", columns)
        document = row.get(doc_col) if doc_col else None
        question = row.get(q_col) if q_col else None
        if not isinstance(document, str) or not isinstance(question, str):
            raise ConfigError(
                "source", f"row {n} ({item_id})", "needs a document (context) and a question string"
            )
        ans_col = _pick(row, "answers", columns)
        accepted = _accepted(row.get(ans_col)) if ans_col else []
        imp_col = _pick(row, "is_impossible", columns)
        impossible = row.get(imp_col) if imp_col else None
        if impossible is None:
            impossible = not accepted
        if impossible or [a for a in accepted if isinstance(a, str) and a.strip().upper() == NOT_IN_DOCUMENT]:
            label: Any = NOT_IN_DOCUMENT
        elif not accepted:
            raise ConfigError("source", f"row {n} ({item_id})", "is marked answerable but has no answer")
        else:
            label = accepted
        payload: dict[str, Any] = {"document": document, "question": question}
        for k in keep:
            payload[k] = row.get(k)
        items[item_id] = payload
        labels[item_id] = label
        title_col = _pick(row, "title", columns)
        if callable(cluster):
            clusters[item_id] = cluster(row)
        elif cluster == "document":
            clusters[item_id] = document_id(document, row.get(title_col) if title_col else None)
        elif cluster == "item":
            clusters[item_id] = item_id
        else:
            clusters[item_id] = row.get(cluster)
        split_col = columns.get("split")
        splits[item_id] = row.get(split_col, split) if split_col else split
        if limit is not None and len(items) >= limit:
            break
    if not items:
        raise ConfigError("source", source if not isinstance(source, list) else "[...]", "holds no items")
    return Reference(items, labels=labels, cluster=clusters, split=splits)


# -- TAT-QA ------------------------------------------------------------------------------------

_NUMERIC_SPAN = re.compile(
    r"^\s*(?P<neg>[-\u2212])?\s*[$\u20ac\u00a3\u00a5]?\s*(?P<open>\()?\s*[$\u20ac\u00a3\u00a5]?\s*"
    r"(?P<num>[0-9][0-9,]*(?:\.[0-9]+)?|\.[0-9]+)\s*(?P<close>\))?\s*"
    r"(?:%|percent|thousand|million|billion|m|bn|k)?\s*$",
    re.IGNORECASE,
)


def _span_answers(span: str) -> list[str]:
    """A TAT-QA span as accepted answers: a decorated number becomes its bare number."""
    m = _NUMERIC_SPAN.match(span)
    if not m or bool(m.group("open")) != bool(m.group("close")):
        return [span]
    num = m.group("num").replace(",", "")
    if m.group("open"):
        return [f"-{num}", f"({num})"]
    return [f"-{num}"] if m.group("neg") else [num]


def _render_table(rows: list[list[Any]]) -> str:
    lines = []
    for r in rows:
        cells = [" ".join(str(c).split()) for c in r]
        if any(cells):
            lines.append(" | ".join(cells))
    return "\n".join(lines)


def tatqa_reference(
    path: str | os.PathLike[str],
    *,
    split: str = "test",
    ids: Iterable[str] | None = None,
    limit: int | None = None,
) -> Reference:
    """Build a reference from a TAT-QA file (``tatqa_dataset_dev.json`` and its siblings).

    Each context (one table with its paragraphs) becomes one document: the table rendered one
    row a line with cells joined by ``" | "``, a blank line, then the paragraphs in their
    ``order``. Items are ``{"document", "question"}``, keyed by the question's ``uid`` and
    clustered by the table's ``uid`` (questions on one table are not independent).

    Labels are mappings (the gold's details live in the label, which arms never see,
    not in the item, which a prompt may show; :func:`~hrbench.scoring.label_answers`):
    ``{"answers", "answer", "scale", "answer_type"}``. ``answers`` are the accepted answers the
    text scorers read (``answer_contains``, ``exact``); ``answer`` (the gold answer exactly as
    the file gives it: a list of spans, or a number), ``scale`` and ``answer_type`` are what the
    official TAT-QA metric reads (:func:`~hrbench.reading.tatqa_scorer`).

    Accepted answers and scales (for ``answer_contains``; TAT-QA has no unanswerable
    questions):

    - an arithmetic or count answer (a number) is written in plain digits (``-12.6``,
      ``981341.34``, ``4``); its scale (``"thousand"``, ``"million"``, ``"billion"``,
      ``"percent"`` or ``""``) is kept in the label's ``scale``, not in ``answers``. A reply is
      right when it contains the number, whatever currency, ``%`` or scale word it writes
      around it ("-$12.6 million" holds -12.6); a reply that converts the scale ("0.0126
      billion") or rounds differently ("-22.21%" for -22.22) is wrong: there is no tolerance.
    - a span or multi-span answer is a list of accepted spans; a span that is one number
      decorated with a currency sign, ``%`` or a scale word becomes its bare number
      (``"$1,496.5"`` -> ``"1496.5"``, ``"36%"`` -> ``"36"``), and an accounting negative
      ``"$(9.8) million"`` accepts ``"-9.8"`` and ``"(9.8)"``. ``answer_contains`` accepts any
      one span, so a multi-span question is scored leniently (one span of several is enough);
      filter on ``answer_type`` to leave those out.

    Args:
        path: the TAT-QA JSON file.
        split: the split of every item.
        ids: keep only these question uids.
        limit: keep only the first ``limit`` questions.

    Returns:
        A :class:`~hrbench.reference.Reference`.

    Raises:
        ConfigError: when the file is not a TAT-QA list of contexts (named with the line that
            is not JSON, e.g. a SQuAD ``.jsonl`` file: use ``format = "squad"`` for it).
        ReferenceValueError: two different questions with one ``uid`` (naming the uid and the
            places of both in the file, questions counted from 1 over every context). The same question on the same
            table written twice is read once (:mod:`hrbench._util.unique`).
    """
    expected = (
        'a TAT-QA .json file (a list of {table, paragraphs, questions}); SQuAD-style rows are format "squad"'
    )
    data = read_json(path, expected)
    if not isinstance(data, list) or (
        data and (not isinstance(data[0], Mapping) or "questions" not in data[0])
    ):
        raise ConfigError("path", str(path), f"expected {expected}")
    wanted = None if ids is None else {str(i) for i in ids}
    items: dict[str, Any] = {}
    labels: dict[str, Any] = {}
    clusters: dict[str, str] = {}
    seen = OnePerId("path", path, "uid", "questions", "question", ReferenceValueError)
    place = 0
    for ctx in data:
        table = ctx.get("table") or {}
        paragraphs = sorted(ctx.get("paragraphs") or [], key=lambda p: p.get("order", 0))
        document = _render_table(table.get("table") or [])
        text = "\n".join(str(p.get("text", "")) for p in paragraphs)
        document = f"{document}\n\n{text}" if document else text
        for q in sorted(ctx.get("questions") or [], key=lambda q: q.get("order", 0)):
            place += 1  # the question's place in the file, counted over every context
            qid = str(q["uid"])
            if wanted is not None and qid not in wanted:
                continue
            same = ({k: v for k, v in q.items() if k != "order"}, document, table.get("uid"))
            if not seen.first(qid, same, place):
                continue  # the same question on the same table, written twice (its order aside)
            answer = q.get("answer")
            if isinstance(answer, list):
                label: Any = [a for span in answer for a in _span_answers(str(span))]
                label = list(dict.fromkeys(label))
            elif isinstance(answer, (int, float)):
                label = plain_number(answer)
            else:
                label = str(answer)
            items[qid] = {"document": document, "question": q.get("question", "")}
            labels[qid] = {
                "answers": label,
                "answer": answer,
                "scale": q.get("scale", ""),
                "answer_type": q.get("answer_type", ""),
            }
            clusters[qid] = str(table.get("uid") or document_id(document))
            if limit is not None and len(items) >= limit:
                return Reference(items, labels=labels, cluster=clusters, split=split)
    if not items:
        raise ConfigError("path", str(path), "holds no questions")
    return Reference(items, labels=labels, cluster=clusters, split=split)
