"""Arms that answer from existing predictions, so files a user already has go through the runner."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from hrbench._util.files import read_text
from hrbench._util.messages import did_you_mean
from hrbench._util.unique import OnePerId, refuse_repeated_keys
from hrbench.arm import Arm, Context
from hrbench.errors import ConfigError
from hrbench.reading._reference import read_json, read_rows
from hrbench.records import Answer, Result
from hrbench.scoring import plain_number

__all__ = ["NO_OUTPUT", "check_outputs", "missing_output", "outputs_arm", "tatqa_outputs"]


NO_OUTPUT: Any = type("NoOutput", (), {"__repr__": lambda self: "<no output>"})()
"""A run of an item that an outputs file leaves out (``run`` 1 and 3 given, not 2)."""


def _some(ids: Sequence[str], n: int = 3) -> str:
    shown = ", ".join(map(repr, ids[:n]))
    return shown + (f", and {len(ids) - n} more" if len(ids) > n else "")


def check_outputs(
    arm: str,
    ids: Collection[str],
    items: Mapping[str, Any],
    known: Collection[str],
    *,
    runs: int = 1,
    per_run: Mapping[str, Sequence[Any]] | None = None,
    source: str | None = None,
    missing: str = "refuse",
) -> None:
    """Refuse an outputs arm that does not give every run of the benchmark an output, before the first run.

    Rule: outputs that miss the reference are refused, never scored as silent failures
    (``outputs = { Q1 = "Paris" }`` against the item ``q1``, an outputs file of another sample,
    2 outputs for 5 runs). Inline
    outputs, a mapping and a file follow one rule; the arm is refused (exit 2 in ``hrb``) when

    - an output's id is no item of the reference: of its source, when the reference keeps
      some of a file's items (``ids``, ``ids_from``, ``limit``: :attr:`Reference.source_ids`),
      so a run file covering the whole data set is scored on a sample of it;
    - an item the benchmark runs has no output (there was nothing to parse: it is not a
      ``parse_failure``); to score the items a partial file has, keep them with
      ``reference.ids_from`` = that file. Where a partial file is legitimate (the official
      TAT-QA runs leave out 1 of the 1,668 dev questions, which the official metric scores 0),
      ``missing="error"`` lets it through: each run of such an item is an ``error`` run whose
      cause is ``no output for item ...``, counted by cause in the end-of-benchmark warning
      (on stderr in ``hrb``, exit 3), never a ``parse_failure``;
    - with outputs per run (``per_run``), an item holds fewer outputs than ``runs``, or leaves
      a run out.

    Args:
        arm: the arm's name, said in the error.
        ids: the ids the arm holds outputs for.
        items: the items the benchmark will run, id -> payload.
        known: the ids an output may name (the reference's, or its source's).
        runs: the benchmark's runs per item.
        per_run: item id -> its outputs, one per run (:data:`NO_OUTPUT` for a run left out),
            for the items that have a list of them.
        source: the file the outputs come from (``None``: written inline or a mapping); the
            error then names the field ``path`` and the file, else ``outputs``.
        missing: ``"refuse"`` (default) or ``"error"``: items run without an output are then
            allowed, each run an ``error``.

    Raises:
        ConfigError: naming ``path`` or ``outputs`` (the benchmark puts ``arms[i].`` in front),
            the arm, the file, how many ids or items are at fault and the first few (an unknown
            id with the closest item id, case folded).

    Example:
        >>> check_outputs("base", ["q1", "q2"], {"q1": "France"}, known=["q1", "q2"])
        >>> try:
        ...     check_outputs("base", ["Q1"], {"q1": "France"}, known=["q1", "q2"])
        ... except ValueError as exc:
        ...     print(str(exc).split(" (got")[0])
        outputs: arm 'base': 1 of 1 item(s) run have no output: 'q1'; 1 of 1 output id(s) match no item of the reference: 'Q1' (closest item: 'q1')
    """
    import difflib

    id_list = list(dict.fromkeys(ids))
    id_set, known_set = set(id_list), set(known)
    faults: list[str] = []
    if missing not in ("refuse", "error"):
        raise ConfigError("missing", missing, "expected 'refuse' or 'error'")
    lacking = [i for i in items if i not in id_set] if missing == "refuse" else []
    if lacking:
        hint = f" (to score only the items it has: reference.ids_from = {source!r})" if source else ""
        faults.append(f"{len(lacking)} of {len(items)} item(s) run have no output: {_some(lacking)}{hint}")
    short: list[str] = []
    for i, outs in (per_run or {}).items():
        if i not in items:
            continue
        missed = [r for r in range(1, runs + 1) if r > len(outs) or outs[r - 1] is NO_OUTPUT]
        if missed:
            has = runs - len(missed)
            short.append(
                f"{i!r} has {has} (missing run{'s' if len(missed) > 1 else ''} "
                f"{', '.join(map(str, missed[:5]))}{', ...' if len(missed) > 5 else ''})"
            )
    if short:
        faults.append(
            f"{len(short)} item(s) have fewer outputs than the {runs} run(s): {', '.join(short[:3])}"
            + (f", and {len(short) - 3} more" if len(short) > 3 else "")
        )
    unknown = [i for i in id_list if i not in known_set]
    if unknown:
        folded: dict[str, str] = {}
        for k in known:
            folded.setdefault(k.strip().casefold(), k)
        hints = []
        for u in unknown[:3]:
            close = difflib.get_close_matches(u.strip().casefold(), list(folded), n=1)
            hints.append(f"{u!r} (closest item: {folded[close[0]]!r})" if close else repr(u))
        more = f", and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        faults.append(
            f"{len(unknown)} of {len(id_list)} output id(s) match no item of the reference: "
            f"{', '.join(hints)}{more}"
        )
    if not faults:
        return
    where = f"arm {arm!r}" + (f", {Path(source).name}" if source else "")
    if source is not None:
        raise ConfigError("path", source, f"{where}: {'; '.join(faults)}")
    shown = (unknown or lacking or [s.split(" ")[0].strip("'") for s in short])[:3]
    raise ConfigError("outputs", shown, f"{where}: {'; '.join(faults)}")


def missing_output(arm: str, item: str, run: int | None = None, source: str | None = None) -> LookupError:
    """The error of a run whose item the outputs leave out (``missing="error"``, :func:`check_outputs`).

    Rule (a cause says where the output is missing, not only "LookupError"): the message
    starts ``LookupError``'s ``no output for item 'ID'``, which :data:`hrbench._util.messages.NO_OUTPUT`
    reads as the run's cause wherever causes are shown, and names the arm (and the file).

    Args:
        arm: the arm's name.
        item: the item's id.
        run: the run left out, for outputs per run; ``None`` when the item has none at all.
        source: the outputs file, or ``None`` (inline or a mapping).

    Returns:
        The error to raise.

    Example:
        >>> missing_output("base", "q3", source="runs/base.jsonl")
        LookupError("no output for item 'q3': the outputs of arm 'base' (base.jsonl) leave it out")
    """
    what = f"no output for item {item!r}" + (f" run {run}" if run is not None else "")
    where = f" ({Path(source).name})" if source else ""
    return LookupError(f"{what}: the outputs of arm {arm!r}{where} leave it out")


def _repeated(path: Path) -> Any:
    """The ``object_pairs_hook`` of a JSON object of predictions (:func:`refuse_repeated_keys`)."""
    return refuse_repeated_keys("arm.path", path, "predictions")


def _line_numbers(path: Path) -> list[int]:
    """The line number of each record of a JSON lines file (blank lines hold none)."""
    lines = read_text(path, "arm.path").splitlines()
    return [n for n, line in enumerate(lines, 1) if line.strip()]


def with_check(
    arm: Arm,
    ids: Collection[str],
    *,
    per_run: Mapping[str, Sequence[Any]] | None = None,
    source: str | None = None,
    missing: str = "refuse",
) -> Arm:
    """The arm, with :func:`check_outputs` as its :attr:`~hrbench.arm.Arm.check`."""
    name = arm.name
    if missing not in ("refuse", "error"):
        raise ConfigError("missing", missing, "expected 'refuse' or 'error'")
    arm.check = lambda items, client, known, runs=1: check_outputs(
        name, ids, items, known, runs=runs, per_run=per_run, source=source, missing=missing
    )
    return arm


def as_output(value: Any) -> Any:
    """A stored prediction as an output the scorers read (see :func:`outputs_arm`).

    Example:
        >>> as_output(True), as_output(2.50), as_output(["a", 3]), as_output(None)
        ('true', '2.5', 'a; 3', None)
    """
    if value is None or isinstance(value, (str, Mapping, Answer, Result)):
        return value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return plain_number(value)
    if isinstance(value, (list, tuple)):
        parts = [as_output(v) for v in value]
        texts = [p if isinstance(p, str) else json.dumps(p, default=str) for p in parts if p is not None]
        return "; ".join(texts)
    return str(value)


def _digest(outputs: Mapping[str, Any]) -> str:
    body = msgspec.json.encode({k: outputs[k] for k in sorted(outputs)}, enc_hook=repr, order="sorted")
    return hashlib.sha256(body).hexdigest()


class _Outputs:
    """The arm function of :func:`outputs_arm`; its ``spec`` stands for it in the arm's hash."""

    def __init__(self, outputs: dict[str, Any], spec: dict[str, Any]) -> None:
        self.outputs = outputs
        self.spec = spec

    def __repr__(self) -> str:
        return f"<outputs {self.spec.get('source')!s} ({len(self.outputs)} predictions)>"

    async def __call__(self, item: Any, ctx: Context) -> Any:
        try:
            return self.outputs[ctx.item_id]
        except KeyError:  # refused before the first run (check_outputs); an error run if it is not
            source = self.spec.get("source")
            raise missing_output(
                ctx.arm, ctx.item_id, source=None if source == "mapping" else source
            ) from None


def _scaled(text: str | None, prediction: Any, scale: Any) -> dict[str, Any]:
    """A prediction with its scale: ``{"text", "prediction", "scale"}`` (see :func:`outputs_arm`)."""
    scale = "" if scale is None else str(scale)
    if text and scale and scale != "none":
        text = f"{text}{'%' if scale == 'percent' else ' ' + scale}"
    return {"text": text, "prediction": prediction, "scale": scale}


def _absent_field(field: str, name: str, where: str, rows: list[dict[str, Any]]) -> ConfigError:
    """An error for a field the rows lack, naming the fields they have (and the closest)."""
    have = sorted({str(k) for r in rows[:100] for k in r})
    hint = did_you_mean(name, have)
    return ConfigError(field, name, f"{where} has no such field; {hint}its rows have {', '.join(have)}")


def outputs_arm(
    name: str,
    outputs: Mapping[Any, Any] | str | os.PathLike[str],
    id_field: str = "id",
    prediction_field: str | Callable[[dict[str, Any]], Any] = "prediction",
    *,
    scale_field: str | None = None,
    version: str = "1",
    missing: str = "refuse",
) -> Arm:
    """An arm that answers from predictions made elsewhere (no model calls).

    Users score files they already have through the same runner, rows and summary as live
    arms. Every run of an item returns the same stored prediction.

    Args:
        name: the arm's name.
        outputs: a mapping of item id to output, or a path: a ``.jsonl`` file (or a ``.json``
            list) of rows holding ``id_field`` and ``prediction_field``, or a ``.json`` object
            of id -> prediction (the official SQuAD prediction format).
        id_field: the rows' item id field (``"qid"`` in the bundled SQuAD runs,
            ``"question_id"`` in the TAT-QA runs).
        prediction_field: the rows' prediction field, or a function of the row returning the
            output.
        scale_field: the rows' field with the prediction's scale word (``"pred_scale"`` in the
            TAT-QA runs), for file rows; see below.
        version: the arm's version.
        missing: ``"refuse"`` (default): a benchmark refuses the arm when an item it runs has
            no prediction; ``"error"``: such an item's runs are ``error`` runs (a legitimately
            partial file; :func:`check_outputs`).

    Returns:
        An :class:`~hrbench.arm.Arm` whose ``settings`` record the source, the fields, the
        number of predictions and a sha256 of them (so another file is another arm hash).

    Stored values become outputs as follows: a string, ``None``, a dict, an
    :class:`~hrbench.records.Answer` or a :class:`~hrbench.records.Result` as it is; a number
    in plain digits (``100000.0`` -> ``"100000"``); a list as its parts joined by ``"; "``.
    With ``scale_field``, each row's output is ``{"text", "prediction", "scale"}``:
    the text as above followed by the scale word (``"%"`` for ``percent``; ``"1496.5
    million"``), which ``answer_contains`` reads, and the stored prediction as it is with its
    scale (``""`` when the field is empty or missing), which the official TAT-QA metric reads
    (:func:`~hrbench.reading.tatqa_scorer`).
    Before the first run the benchmark refuses predictions whose
    ids match no item of the reference, or that leave an item run without a prediction
    (:func:`check_outputs`); a prediction that is ``null`` is a ``parse_failure``.

    Raises:
        ConfigError: a row without ``id_field``, a ``prediction_field`` that no row of the file
            has (a wrong name would make every run a parse failure; a row lacking it beside
            rows that have it is a null prediction), two rows
            (or keys of a JSON object) of one id with different predictions (naming the id
            field, the id and both lines, never keeping the last one silently; an identical repeat is read once, :mod:`hrbench._util.unique`), or an unreadable source. The error lists the rows' fields.

    Example:
        >>> arm = outputs_arm("baseline", {"q1": "Paris", "q2": None})
        >>> arm.name, arm.settings["n"]
        ('baseline', 2)
    """
    settings: dict[str, Any] = {"id_field": id_field}
    if isinstance(outputs, (str, os.PathLike)):
        path = Path(outputs)
        settings["source"] = path.name
        raw: Any = None
        if path.suffix == ".json":
            raw = read_json(path, "a JSON object of id -> prediction, or a list of rows", "arm.path")
            if isinstance(raw, Mapping):  # json.loads keeps the last of two keys: refuse differing ones
                raw = json.loads(read_text(path, "arm.path"), object_pairs_hook=_repeated(path))
        if isinstance(raw, Mapping) and "data" not in raw:
            table = {str(k): v for k, v in raw.items()}
            if "predictions" in table and isinstance(table["predictions"], Mapping):
                table = {str(k): v for k, v in table["predictions"].items()}
        else:
            table = {}
            rows = read_rows(raw if raw is not None else path, "path")
            where = "record"
            place = list(range(1, len(rows) + 1))
            if raw is None:  # JSON lines: say the file's line numbers (blank lines are skipped)
                where = "line"
                place = _line_numbers(path)
            seen = OnePerId("outputs", path, id_field, "predictions", where)
            if isinstance(prediction_field, str) and rows and not any(prediction_field in r for r in rows):
                raise _absent_field("prediction_field", prediction_field, path.name, rows)
            for n, row in enumerate(rows, 1):
                if id_field not in row:
                    raise _absent_field("id_field", id_field, f"{path.name} row {n}", [row])
                key = str(row[id_field])
                value = prediction_field(row) if callable(prediction_field) else row.get(prediction_field)
                if scale_field is not None:
                    text = as_output(value)
                    value = _scaled(text if isinstance(text, str) else None, value, row.get(scale_field))
                if seen.first(key, value, place[n - 1]):
                    table[key] = value
            settings["prediction_field"] = (
                prediction_field
                if isinstance(prediction_field, str)
                else getattr(prediction_field, "__name__", "fn")
            )
            if scale_field is not None:
                settings["scale_field"] = scale_field
    elif isinstance(outputs, Mapping):
        settings["source"] = "mapping"
        table = {str(k): v for k, v in outputs.items()}
    else:
        raise ConfigError("outputs", outputs, "expected a mapping of id -> output or a path")
    table = {k: as_output(v) for k, v in table.items()}
    settings["n"] = len(table)
    settings["sha256"] = _digest(table)
    fn = _Outputs(table, {"kind": "outputs", **settings})
    source = str(outputs) if isinstance(outputs, (str, os.PathLike)) else None
    arm = Arm(name, fn, version=version, settings=settings)
    return with_check(arm, list(table), source=source, missing=missing)


def _tidy_float(x: float, decimals: int | None) -> str:
    """A computed float without binary noise: 12 significant digits (or rounded), plain digits."""
    if decimals is not None:
        x = round(x, decimals)
    return plain_number(float(f"{x:.12g}"))


def tatqa_outputs(
    path: str | os.PathLike[str],
    field: str = "pred_answer",
    *,
    decimals: int | None = None,
    scaled: bool = False,
) -> dict[str, Any]:
    """Predictions from a TAT-QA run file (the bundled GPT-3 / Codex runs), as id -> text.

    Args:
        path: a ``.jsonl`` file with ``question_id``, ``generated``, ``pred_answer`` and
            ``pred_scale`` (the Program-of-Thoughts format), or a ``.json`` object of
            ``{question_id: [answer, scale]}`` (TAT-QA's sample prediction format).
        field: ``"pred_answer"`` (the parsed answer, default) or ``"generated"`` (the raw
            completion).
        decimals: round a computed float (a program-of-thought result) to this many decimals;
            TAT-QA dev gold numbers have at most two, so ``decimals=2`` gives a program's
            ``-22.2222222222`` the same chance as a reader that wrote ``-22.22``.
        scaled: give each prediction as ``{"text", "prediction", "scale"}``: the text below,
            the run's answer as stored (``pred_answer`` or ``generated``) and its ``pred_scale``
            (``""`` for ``generated``), so that both ``answer_contains`` (the text) and the
            official TAT-QA metric (:func:`~hrbench.reading.tatqa_scorer`: the stored answer and
            scale) can score the run.

    Returns:
        A mapping of question id to text (with ``scaled``, to a dict holding it): the parsed
        answer's parts joined by ``"; "`` with the scale word after it when the run gave one
        (``"1496.5 million"``; ``"%"`` for ``percent``); a computed float is
        written with 12 significant digits (a program's ``-12.600000000000001`` is
        -12.6); an empty completion is ``None`` (a parse failure).

    Raises:
        ConfigError: when ``field`` is neither of the two, the file is not a TAT-QA run
            (named with the line: a SQuAD run file given ``format = "tatqa"``), or two rows (two
            keys of a ``.json`` object) have one ``question_id`` with different predictions,
            named with both lines (entries), never keeping the last one silently. A row
            repeated identically is read once (:mod:`hrbench._util.unique`).

    Example:
        >>> import pathlib, tempfile
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "run.jsonl"
        >>> row = '{"question_id": "q1", "pred_answer": [1496.5], "pred_scale": "million"}'
        >>> _ = f.write_text(row + chr(10) + row + chr(10))
        >>> tatqa_outputs(f)
        {'q1': '1496.5 million'}
    """
    if field not in ("pred_answer", "generated"):
        raise ConfigError("field", field, "expected 'pred_answer' or 'generated'")
    p = Path(path)
    out: dict[str, Any] = {}
    expected = (
        "a TAT-QA run: JSON lines of {question_id, generated, pred_answer, pred_scale}, or a .json object of "
        "{question_id: [answer, scale]}"
    )
    seen = OnePerId("arm.path", p, "question_id", "predictions")
    if p.suffix == ".json":
        data = read_json(p, expected, "arm.path")
        if not isinstance(data, Mapping) or not all(
            isinstance(v, list) and len(v) == 2 for v in data.values()
        ):
            raise ConfigError("arm.path", str(p), f"expected {expected}")
        # json.loads kept the last of two equal keys: read again, refusing differing ones
        data = json.loads(read_text(p, "arm.path"), object_pairs_hook=_repeated(p))
        rows = [{"question_id": k, "pred_answer": v[0], "pred_scale": v[1]} for k, v in data.items()]
        field = "pred_answer"
        places = list(range(1, len(rows) + 1))
    else:
        rows = read_rows(p, "arm.path")
        places = _line_numbers(p)
    for n, row in enumerate(rows, 1):
        if "question_id" not in row:
            raise ConfigError("arm.path", f"{p}:{n}", f"row {n} has no `question_id`; expected {expected}")
        value = row.get(field)
        parts = value if isinstance(value, list) else [value]
        texts = [
            _tidy_float(v, decimals) if isinstance(v, float) else str(as_output(v))
            for v in parts
            if v is not None
        ]
        text = "; ".join(t for t in texts if t.strip())
        scaled_out = _scaled(text or None, value, row.get("pred_scale") if field == "pred_answer" else "")
        if seen.first(str(row["question_id"]), scaled_out, places[n - 1]):
            out[str(row["question_id"])] = scaled_out if scaled else scaled_out["text"]
    return out
