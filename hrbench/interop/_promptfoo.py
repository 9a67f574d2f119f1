"""promptfoo results as arms and references (``format = "promptfoo"``).

Reads the JSON that ``promptfoo eval --output results.json`` writes: ``{"evalId", "results":
{"version", "timestamp", "prompts", "results": [...], "stats"}, "config", ...}``.

Fields read (everything else, promptfoo's own grading among it, is ignored):

- ``results.version``: the results format version; only version 3 (promptfoo's current one)
  is read, any other is refused by name;
- per result: ``provider.label`` (else ``provider.id``) and ``prompt.label`` (else
  ``prompt.raw``): the arm is ``PROVIDER | PROMPT``, so a file holds one arm per provider x
  prompt (its ``source_arm``); ``vars`` (else ``testCase.vars``): the item, and its item id is
  the variable ``id_var`` names (default ``id``; a spec's ``id_var``, on an outputs arm or a
  reference, e.g. ``id_var = "question_id"``), as text; a result without that variable (or
  whose variable holds no id: empty, a list, a table) is refused, naming ``id_var``, the
  result and the variables it has; ``response.output``: the output;
  ``testIdx``: the order of runs (``--repeat N`` repeats each test: the results of one arm with
  the same id and the same variables are its runs 1, 2, ...); ``failureReason`` 2 (an error,
  not a failed assertion) with ``error`` or ``response.error``: an error run with that cause;
- the label: the test's variable ``expected``, else the value of its first ``equals``
  assertion (``testCase.assert``), else none.
"""

from __future__ import annotations

import json
from typing import Any

from hrbench._util.files import read_text
from hrbench.errors import ConfigError
from hrbench.interop._foreign import ErrorRun, Imported, check_version

__all__ = ["PROMPTFOO_VERSIONS", "read_promptfoo"]

PROMPTFOO_VERSIONS = (3,)
"""The promptfoo results format versions this reader knows (``results.version``)."""

_ERROR = 2
"""promptfoo's ``ResultFailureReason.ERROR`` (1 is a failed assertion)."""


def _label(result: dict[str, Any], test_vars: dict[str, Any]) -> Any:
    if "expected" in test_vars:
        return test_vars["expected"]
    for a in (result.get("testCase") or {}).get("assert") or []:
        if isinstance(a, dict) and a.get("type") == "equals":
            return a.get("value")
    return None


def _arm_name(result: dict[str, Any]) -> str:
    provider, prompt = result.get("provider") or {}, result.get("prompt") or {}
    if isinstance(provider, str):
        provider = {"id": provider}
    who = provider.get("label") or provider.get("id") or "provider"
    what = prompt.get("label") or prompt.get("raw") or "prompt"
    return f"{who} | {what}"


def _output(result: dict[str, Any]) -> Any:
    response = result.get("response") or {}
    if result.get("failureReason") == _ERROR or (response.get("error") and response.get("output") is None):
        return ErrorRun(str(result.get("error") or response.get("error") or "error"))
    return response.get("output")


def read_promptfoo(path: str, id_var: str = "id") -> Imported:
    """Read promptfoo's results JSON; see the module's fields.

    Args:
        path: the results file (``promptfoo eval --output results.json``).
        id_var: the test variable holding each item's id (``"id"`` by default; e.g.
            ``"question_id"`` for tests whose ``vars`` carry ``question_id``).

    Returns:
        The :class:`~hrbench.interop._foreign.Imported` items, labels and arms of the file.

    Raises:
        ConfigError: not promptfoo's results, a format version other than 3, a result without
            the ``id_var`` variable (the error names ``id_var``, its value, the result and
            the variables it has), or two tests with one id and different variables.
        OSError: the file cannot be read.

    Example:
        >>> import json, tempfile, pathlib
        >>> r = {"provider": {"id": "echo"}, "prompt": {"raw": "{{q}}", "label": "plain"}, "testIdx": 0,
        ...      "vars": {"id": "q1", "q": "Paris", "expected": "Paris"}, "response": {"output": "Paris"},
        ...      "success": True, "failureReason": 0}
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "results.json"
        >>> _ = p.write_text(json.dumps({"evalId": "e", "results": {"version": 3, "results": [r]}}))
        >>> found = read_promptfoo(str(p))
        >>> found.arms, found.labels
        ({'echo | plain': {'q1': ['Paris']}}, {'q1': 'Paris'})
        >>> try:
        ...     read_promptfoo(str(p), id_var="question_id")
        ... except ConfigError as exc:
        ...     print(exc.field, "|", str(exc).split(" of ")[0], "|", str(exc).split("; ")[1])
        id_var | id_var: results.results[0] (test 0) | its vars: expected, id, q (got 'question_id')
    """
    if not isinstance(id_var, str) or not id_var:
        raise ConfigError(
            "id_var", id_var, "expected the name of a test variable, e.g. 'id' or 'question_id'"
        )
    try:
        data = json.loads(read_text(path, "path"))
    except json.JSONDecodeError as exc:
        raise ConfigError("path", path, f"is not promptfoo's results (not JSON: {exc.msg})") from None
    body = data.get("results") if isinstance(data, dict) else None
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        raise ConfigError("path", path, "is not promptfoo's results (no `results.results` list)")
    check_version(path, "promptfoo results", "results.version", body.get("version"), PROMPTFOO_VERSIONS)
    found = Imported(source=path, fmt="promptfoo", items={}, labels={}, arms={})
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    results = sorted(enumerate(body["results"]), key=lambda nr: (nr[1].get("testIdx", 0), nr[0]))
    for n, r in results:
        test_vars = r.get("vars") or (r.get("testCase") or {}).get("vars") or {}
        where = f"results.results[{n}]" + (f" (test {r['testIdx']})" if "testIdx" in r else "")
        if id_var not in test_vars:
            have = ", ".join(sorted(map(str, test_vars))) or "none"
            raise ConfigError(
                "id_var", id_var, f"{where} of {path} has no variable {id_var!r}; its vars: {have}"
            )
        value = test_vars[id_var]
        if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
            raise ConfigError(
                "id_var",
                id_var,
                f"{where} of {path}: its variable holds {value!r}, not an id (a text or a number)",
            )
        item, arm = str(value), _arm_name(r)
        before = seen.setdefault((arm, item), test_vars)
        if before != test_vars:
            raise ConfigError(
                "path", path, f"two tests have the id {item!r} with different variables (arm {arm!r})"
            )
        if item in found.items and found.items[item] != test_vars:
            raise ConfigError("path", path, f"two tests have the id {item!r} with different variables")
        found.items[item], found.labels[item] = test_vars, _label(r, test_vars)
        found.add_run(arm, item, None, _output(r))
    return found
