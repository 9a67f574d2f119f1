"""An outputs file: a JSON object of item id -> output(s), or JSON lines ``{"item", "output", "run"?}``.

What an outputs arm's ``path`` reads when it names no other format (:func:`hrbench.specs.build_arm`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hrbench._util.files import read_text
from hrbench._util.unique import OnePerId, refuse_repeated_keys
from hrbench.errors import ConfigError

__all__ = ["read_outputs"]


def read_outputs(path: str) -> dict[str, Any]:
    """The outputs of an outputs file by item id: one output, or a list of one per run.

    A JSON lines record's item id is its ``item``; a record with no ``item`` may give it as
    ``id`` instead (as a reference's records name it: docs/guides/scorers.md, "Outputs files").

    Raises:
        ConfigError: the file cannot be read, is not JSON, or gives one item and run twice.
    """
    from hrbench.reading._outputs import NO_OUTPUT

    p = Path(path).expanduser()
    try:
        text = read_text(p, "path")
    except OSError as exc:
        raise ConfigError("path", path, f"cannot read outputs ({type(exc).__name__})") from None
    stripped = text.lstrip()
    if stripped.startswith("{") and not p.suffix == ".jsonl":
        try:
            data = json.loads(text, object_pairs_hook=refuse_repeated_keys("path", path, "outputs"))
        except json.JSONDecodeError as exc:
            raise ConfigError("path", path, f"not JSON: {exc.msg} at line {exc.lineno}") from None
        if not isinstance(data, dict):
            raise ConfigError("path", path, "expected an object of item id -> output")
        return {str(k): v for k, v in data.items()}
    from hrbench.reading._reference import json_lines

    out: dict[str, Any] = {}
    seen = OnePerId("path", path, ("item", "run"), "outputs")
    lines = text.split("\n")
    for n, rec in json_lines(text, path, "path", objects=False):
        if isinstance(rec, dict) and "item" not in rec and "id" in rec:
            rec = {("item" if k == "id" else k): v for k, v in rec.items()}  # `id`, as a reference names it
        if not isinstance(rec, dict) or "item" not in rec:
            raise _bad_line(p, n, rec, lines[n - 1])
        item, run = str(rec["item"]), rec.get("run")
        # a repeated id with another output is refused, never the last kept silently (hrbench._util.unique)
        if not seen.first((item, run) if run is not None else (item,), rec.get("output"), n):
            continue
        if run is None:
            out[item] = rec.get("output")
        else:
            runs = out.setdefault(item, [])
            if not isinstance(runs, list):
                raise ConfigError("path", path, f"line {n}: item {item!r} has outputs with and without `run`")
            while len(runs) < int(run):
                runs.append(NO_OUTPUT)  # a run the file leaves out: refused by check_outputs
            runs[int(run) - 1] = rec.get("output")
    return out


def _bad_line(p: Path, n: int, rec: Any, line: str) -> ConfigError:
    """The error for a JSON lines record with no item id: the keys it has, and the line itself (cut at 120).

    Example:
        >>> print(_bad_line(Path("o.jsonl"), 1, {"output": "x"}, '{"output": "x"}'))
        path: o.jsonl line 1: expected {"item", "output", "run"?}; found keys output, with no `item` (or `id`) naming the item (got '{"output": "x"}')
    """
    found = (
        f"found keys {', '.join(map(str, rec)) or '(none)'}, with no `item` (or `id`) naming the item"
        if isinstance(rec, dict)
        else f"found a JSON {type(rec).__name__}, not an object"
    )
    shown = line.strip()
    shown = shown if len(shown) <= 120 else shown[:117] + "..."
    return ConfigError("path", shown, f'{p.name} line {n}: expected {{"item", "output", "run"?}}; {found}')
