"""lm-eval (EleutherAI lm-evaluation-harness) samples files as arms and references (``format = "lm-eval"``).

Reads a ``samples_TASK_DATE.jsonl`` that ``lm_eval --log_samples --output_path DIR`` writes:
one JSON object a line per document and filter.

Fields read (everything else, the metrics lm-eval computed among them, is ignored):

- ``doc_id``: the item id (as text);
- ``doc``: the item (the data set's record);
- ``target``: the label (lm-eval writes it as text: ``str(doc_to_target(doc))``);
- ``filter``: the filter's name; each filter is one arm of the file (its ``source_arm``);
- ``arguments``: one ``gen_args_N`` per request; what they hold tells the task's output type
  (a generation's ``arg_1`` is its generation settings, a loglikelihood request's ``arg_1`` the
  continuation scored, a rolling loglikelihood request has ``arg_0`` alone);
- ``filtered_resps``: the responses, one entry per request. lm-eval writes every number and
  flag in them as text (``"-0.109"``, ``"False"``: ``sanitize_list``, lm-eval PR #2123);
  they are read as numbers and flags again.

How each output type becomes runs, so that a row is correct exactly when lm-eval's own
per-sample metric says so:

- ``generate_until``: one request whose entry is the answer (one run), or a list of answers
  (``repeats``: one run each). lm-eval's placeholders for no answer, ``[invalid]`` (a regex
  filter that extracted nothing, lm-eval PR #3709) and ``[missing]``, are a
  ``parse_failure``, not a wrong answer (case H4-05).
- ``multiple_choice``: one request per choice, each ``[loglikelihood, is_greedy]``; the output
  is the index of the likeliest choice, the largest loglikelihood as a number (the first of
  equals, as ``numpy.argmax``; as text ``"-1.5"`` sorts above ``"-0.25"``: case H4-04), and the
  label the gold index, as lm-eval's ``acc`` compares them: a target of digits is an index (as
  lm-eval reads a template's target), any other the text of a choice (a continuation less its
  leading target delimiter), a list (``[0, 2]``) several gold choices. With
  ``acc_mutual_info`` among the metrics the second half of the requests (the unconditional
  ones) is left out.
- ``loglikelihood`` (one request, ``[loglikelihood, is_greedy]``): lm-eval's ``acc`` is
  ``is_greedy``: right when the target continuation is the greedy one. The label is the
  target; the output the target when it is greedy, else a wrong answer with no text (what the
  greedy continuation was, lm-eval does not record).
- ``loglikelihood_rolling`` (perplexity): refused by name. Its result is a loglikelihood, not
  an answer right or wrong, so there is nothing to benchmark as an arm.

A file without lm-eval's ``arguments`` (a hand-written one) is read by the shape of its
responses: ``[number, flag]`` pairs are loglikelihood requests, anything else a generation.

lm-eval writes no format version into a samples file: the reader checks each line has the
fields of lm-eval 0.4's samples (``doc_id``, ``doc``, ``target``, ``filtered_resps``,
``filter``) and refuses a line without them, naming the fields it lacks.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hrbench.errors import ConfigError
from hrbench.interop._boundary import foreign_reader
from hrbench.interop._bounded import json_lines
from hrbench.interop._foreign import Imported

__all__ = ["LMEVAL_FIELDS", "NO_ANSWER", "read_lmeval"]

LMEVAL_FIELDS = ("doc_id", "doc", "target", "filtered_resps", "filter")
"""The fields every line of an lm-eval 0.4 samples file has, which this reader needs."""

NO_ANSWER = ("[invalid]", "[missing]")
"""lm-eval's placeholders for a reply its filter extracted no answer from (a ``parse_failure`` here)."""

_ROLLING_METRICS = frozenset({"word_perplexity", "byte_perplexity", "bits_per_byte"})
"""The per-sample metrics of lm-eval's ``loglikelihood_rolling`` tasks."""

_FLAGS = {"True": True, "False": False}


def _number(value: Any) -> float | None:
    """A loglikelihood as lm-eval writes it (a number, or its text), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return None if math.isnan(number) else number
    return None


def _pair(entry: Any) -> tuple[float, bool] | None:
    """A loglikelihood request's ``[loglikelihood, is_greedy]`` (numbers and flags or their text)."""
    if not isinstance(entry, (list, tuple)) or len(entry) != 2:
        return None
    number, flag = _number(entry[0]), entry[1]
    if isinstance(flag, str):
        flag = _FLAGS.get(flag)
    return (number, flag) if number is not None and isinstance(flag, bool) else None


def _output_type(rec: dict[str, Any], resps: list[Any]) -> str:
    """The task's output type: from the line's ``arguments``, else from its responses' shape."""
    args = rec.get("arguments")
    if isinstance(args, dict) and args and all(isinstance(a, dict) for a in args.values()):
        requests = list(args.values())
        if all(set(a) == {"arg_0"} for a in requests):
            return "loglikelihood_rolling"
        if all(isinstance(a.get("arg_1"), str) for a in requests):
            return "multiple_choice" if len(requests) > 1 else "loglikelihood"
        return "generate_until"
    metrics = rec.get("metrics")
    if isinstance(metrics, list) and _ROLLING_METRICS.intersection(map(str, metrics)):
        return "loglikelihood_rolling"
    if all(_pair(r) is not None for r in resps):
        return "multiple_choice" if len(resps) > 1 else "loglikelihood"
    if len(resps) > 1 and all(_number(r) is not None for r in resps):
        return "multiple_choice"  # loglikelihoods alone
    return "generate_until"


def _answer(value: Any) -> Any:
    """A generation's answer; lm-eval's placeholder for none is a ``parse_failure``."""
    if isinstance(value, str) and value in NO_ANSWER:
        return {"text": value, "failure_kind": "parse_failure"}
    return value


def _choices(rec: dict[str, Any], count: int) -> list[str] | None:
    """The continuations lm-eval scored, one per choice (``arguments``' ``arg_1``), if written."""
    args = rec.get("arguments")
    if not isinstance(args, dict):
        return None
    texts = [
        a["arg_1"]
        for a in list(args.values())[:count]
        if isinstance(a, dict) and isinstance(a.get("arg_1"), str)
    ]
    return texts if len(texts) == count else None


def _gold(target: Any, choices: list[str] | None, count: int, where: str, path: str) -> int | list[int]:
    """The gold choice's index, as lm-eval's ``multiple_choice`` ``process_results`` finds it."""
    if isinstance(target, str) and target.startswith("[") and target.endswith("]"):
        try:
            several = json.loads(target.replace("'", '"'))
        except json.JSONDecodeError:
            several = None
        if isinstance(several, list) and several:
            return [_one_gold(t, choices, count, where, path) for t in several]
    return _one_gold(target, choices, count, where, path)


def _one_gold(target: Any, choices: list[str] | None, count: int, where: str, path: str) -> int:
    index: int
    if isinstance(target, int) and not isinstance(target, bool):
        index = target
    elif isinstance(target, str) and target.isascii() and target.isdigit():
        index = int(target)
    else:
        text = str(target)
        found = [i for i, c in enumerate(choices or []) if c == text]
        found = found or [i for i, c in enumerate(choices or []) if c.strip() == text.strip()]
        if not found:
            shown = (
                f"its choices {choices}" if choices is not None else "the line names no choices (`arguments`)"
            )
            raise ConfigError(
                "path", path, f"{where}: target {target!r} is neither a choice's index nor its text; {shown}"
            )
        index = found[0]
    if not 0 <= index < count:
        raise ConfigError("path", path, f"{where}: target {target!r} is no index of its {count} choices")
    return index


def _runs(rec: dict[str, Any], path: str, where: str) -> tuple[list[Any], Any]:
    """The outputs of one document's runs and its label, from ``filtered_resps`` and ``target``."""
    resps = rec["filtered_resps"]
    if not isinstance(resps, list) or not resps:
        raise ConfigError("path", path, f"{where}: `filtered_resps` is not a non-empty list")
    kind = _output_type(rec, resps)
    if kind == "loglikelihood_rolling":
        raise ConfigError(
            "path",
            path,
            f"{where}: a loglikelihood_rolling (perplexity) task: its results are loglikelihoods, "
            "no answer right or wrong, so it holds no outputs to benchmark",
        )
    if kind == "generate_until":
        if len(resps) != 1:
            raise ConfigError(
                "path", path, f"{where}: `filtered_resps` holds several requests that are not choices"
            )
        only = resps[0]
        return [_answer(a) for a in (only if isinstance(only, list) else [only])], rec["target"]
    pairs = [_pair(r) for r in resps]
    lls = [p[0] if p is not None else _number(r) for p, r in zip(pairs, resps, strict=True)]
    if any(x is None for x in lls):
        raise ConfigError(
            "path",
            path,
            f"{where}: `filtered_resps` of a {kind} task holds {resps!r}, not [loglikelihood, is_greedy]",
        )
    if kind == "loglikelihood":
        assert pairs[0] is not None
        greedy = pairs[0][1]
        return [rec["target"] if greedy else {"text": None, "failure_kind": "wrong"}], rec["target"]
    metrics = rec.get("metrics")
    if isinstance(metrics, list) and "acc_mutual_info" in metrics and len(lls) % 2 == 0:
        lls = lls[: len(lls) // 2]
    scores = [float(x) for x in lls if x is not None]
    gold = _gold(rec["target"], _choices(rec, len(scores)), len(scores), where, path)
    return [scores.index(max(scores))], gold


@foreign_reader("lm-eval")
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
    for n, rec in json_lines(path, "an lm-eval samples file"):
        where = f"line {n}"
        lacking = [f for f in LMEVAL_FIELDS if not isinstance(rec, dict) or f not in rec]
        if lacking:
            raise ConfigError(
                "path",
                path,
                f"{where}: lacks {', '.join(lacking)}: not a samples file as lm-eval 0.4 writes them",
            )
        item, filt = str(rec["doc_id"]), str(rec["filter"])
        outputs, label = _runs(rec, path, where)
        if item in found.items and (found.items[item], found.labels[item]) != (rec["doc"], label):
            raise ConfigError(
                "path", path, f"{where}: document {item!r} has another doc or target than before"
            )
        found.items[item], found.labels[item] = rec["doc"], label
        if item in found.arms.get(filt, {}):
            raise ConfigError("path", path, f"{where}: document {item!r} is given twice for filter {filt!r}")
        for out in outputs:
            found.add_run(filt, item, None, out)
    return found
