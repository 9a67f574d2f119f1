"""lm-eval (EleutherAI lm-evaluation-harness) samples files as arms and references (``format = "lm-eval"``).

Reads a ``samples_TASK_DATE.jsonl`` that ``lm_eval --log_samples --output_path DIR`` writes:
one JSON object a line per document and filter.

Fields read (everything else, the metrics lm-eval computed among them, is ignored):

- ``doc_id``: the item id (as text);
- ``doc``: the item (the data set's record);
- ``target``: the label;
- ``filter``: the filter's name; each filter is one arm of the file (its ``source_arm``);
- ``filtered_resps``: the output, one entry per request: for a generation task one request
  whose entry is the answer (one run), or a list of answers (``repeats``: one run each); for a
  multiple-choice task one request per choice, each ``[loglikelihood, is_greedy]``: the output
  is the index of the likeliest choice.

lm-eval writes no format version into a samples file: the reader checks each line has the
fields of lm-eval 0.4's samples (``doc_id``, ``doc``, ``target``, ``filtered_resps``,
``filter``) and refuses a line without them, naming the fields it lacks.
"""

from __future__ import annotations

import json
from typing import Any

from hrbench._util.files import read_text
from hrbench.errors import ConfigError
from hrbench.interop._foreign import Imported

__all__ = ["LMEVAL_FIELDS", "read_lmeval"]

LMEVAL_FIELDS = ("doc_id", "doc", "target", "filtered_resps", "filter")
"""The fields every line of an lm-eval 0.4 samples file has, which this reader needs."""


def _is_choice(entry: Any) -> bool:
    return isinstance(entry, (list, tuple)) and len(entry) == 2 and isinstance(entry[0], (int, float))


def _runs(resps: Any, path: str, where: str) -> list[Any]:
    """The outputs of one document's runs from its ``filtered_resps``."""
    if not isinstance(resps, list) or not resps:
        raise ConfigError("path", path, f"{where}: `filtered_resps` is not a non-empty list")
    if len(resps) == 1 and not _is_choice(resps[0]):
        only = resps[0]
        return list(only) if isinstance(only, list) else [only]
    if all(_is_choice(r) for r in resps):  # multiple choice: the likeliest choice
        scores = [float(r[0]) for r in resps]
        return [scores.index(max(scores))]
    if all(isinstance(r, (int, float)) for r in resps):  # loglikelihoods alone
        return [resps.index(max(resps))]
    raise ConfigError("path", path, f"{where}: `filtered_resps` holds several requests that are not choices")


def read_lmeval(path: str) -> Imported:
    """Read an lm-eval samples file (JSON lines); see the module's fields.

    Raises:
        ConfigError: a line that is not JSON or lacks a field lm-eval writes, a document given
            twice for one filter, or a document whose item or target differs between filters.
        OSError: the file cannot be read.

    Example:
        >>> import json, tempfile, pathlib
        >>> line = {"doc_id": 0, "doc": {"question": "2+2?"}, "target": "4", "arguments": [],
        ...         "resps": [["4", "5"]], "filtered_resps": [["4", "5"]], "filter": "none"}
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "samples_arith.jsonl"
        >>> _ = p.write_text(json.dumps(line))
        >>> read_lmeval(str(p)).arms
        {'none': {'0': ['4', '5']}}
    """
    found = Imported(source=path, fmt="lm-eval", items={}, labels={}, arms={})
    text = read_text(path, "path")
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"line {n}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                "path", path, f"{where}: not JSON ({exc.msg}): is it an lm-eval samples file?"
            ) from None
        lacking = [f for f in LMEVAL_FIELDS if not isinstance(rec, dict) or f not in rec]
        if lacking:
            raise ConfigError(
                "path",
                path,
                f"{where}: lacks {', '.join(lacking)}: not a samples file as lm-eval 0.4 writes them",
            )
        item, filt = str(rec["doc_id"]), str(rec["filter"])
        if item in found.items and (found.items[item], found.labels[item]) != (rec["doc"], rec["target"]):
            raise ConfigError(
                "path", path, f"{where}: document {item!r} has another doc or target than before"
            )
        found.items[item], found.labels[item] = rec["doc"], rec["target"]
        if item in found.arms.get(filt, {}):
            raise ConfigError("path", path, f"{where}: document {item!r} is given twice for filter {filt!r}")
        for out in _runs(rec["filtered_resps"], path, where):
            found.add_run(filt, item, None, out)
    return found
