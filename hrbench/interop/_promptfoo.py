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
  assertion (``testCase.assert``, where promptfoo puts ``defaultTest``'s assertions before
  the test's own), else none. promptfoo renders an assertion's value as a nunjucks template
  with the test's variables before it compares; so does this reader: ``{{answer}}`` and
  ``{{ answer }}`` (and ``{{ row.answer }}`` into a variable's table) become the variable's
  value as text. A template it cannot render as promptfoo would (a filter ``{{ a | upper }}``,
  a tag ``{% if %}``, an expression, an unknown variable, a list or table as text) is refused,
  naming the result and the template, never read as the literal label.
"""

from __future__ import annotations

import re
from typing import Any

from hrbench.errors import ConfigError
from hrbench.interop._boundary import foreign_reader
from hrbench.interop._bounded import read_json
from hrbench.interop._foreign import ErrorRun, Imported, check_version

__all__ = ["PROMPTFOO_VERSIONS", "read_promptfoo", "render_value"]

PROMPTFOO_VERSIONS = (3,)
"""The promptfoo results format versions this reader knows (``results.version``)."""

_ERROR = 2
"""promptfoo's ``ResultFailureReason.ERROR`` (1 is a failed assertion)."""


_PLACE = re.compile(r"\{\{([^{}]*)\}\}")
"""A ``{{ ... }}`` placeholder without braces inside (linear time on any text)."""
_NAME = re.compile(r"\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*")


def _as_text(value: Any) -> str | None:
    """A variable's value as nunjucks writes it into a template (``None``: not renderable here)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))  # JavaScript writes 12.0 as 12
    if isinstance(value, float):
        return repr(value)
    return None


def _kind(value: Any) -> str:
    """What a variable holds, in JSON's words (a reader's values may be tracking subclasses)."""
    for kind, name in ((bool, "boolean"), (dict, "table"), (list, "list")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


def render_value(template: Any, test_vars: dict[str, Any], where: str) -> Any:
    """An assertion's value with its ``{{ variable }}`` placeholders filled from the test's vars.

    Args:
        template: the value as promptfoo's results hold it; anything but text is returned as is.
        test_vars: the test's ``vars``.
        where: the result, for the error (``results.results[3] (test 1) of PATH``).

    Raises:
        ConfigError: a template this reader cannot render as promptfoo (nunjucks) would: a tag
            (``{% ... %}``), a comment, a filter or any expression but a variable name with
            ``.field`` lookups, an unknown variable, a value that is a list or a table.

    Example:
        >>> render_value("{{ answer }} km", {"answer": 12}, "results.results[0]")
        '12 km'
    """
    if not isinstance(template, str) or not any(t in template for t in ("{{", "{%", "{#")):
        return template

    def refuse(why: str) -> ConfigError:
        return ConfigError("assert.value", template, f"{where}: {why}; promptfoo renders it as a template")

    if "{%" in template or "{#" in template:
        raise refuse("holds a nunjucks tag or comment this reader cannot render")
    parts, pos = [], 0
    for m in _PLACE.finditer(template):
        place = m.group(0) if len(m.group(0)) <= 80 else m.group(0)[:77] + "..."
        name = _NAME.fullmatch(m.group(1))
        if name is None:
            raise refuse(
                f"`{place}` is not a variable name this reader can render (filters and expressions are not read)"
            )
        value: Any = test_vars
        for key in name.group(1).split("."):
            if not isinstance(value, dict) or key not in value:
                have = ", ".join(sorted(map(str, test_vars))) or "none"
                raise refuse(f"`{place}` names no variable of the test (its vars: {have})")
            value = value[key]
        text = _as_text(value)
        if text is None:
            raise refuse(f"`{place}` is a {_kind(value)}, not a text or a number")
        parts += [template[pos : m.start()], text]
        pos = m.end()
    parts.append(template[pos:])
    if any("{{" in literal for literal in parts[::2]):
        raise refuse("opens `{{` and does not close it (or holds braces inside)")
    return "".join(parts)


def _label(result: dict[str, Any], test_vars: dict[str, Any], where: str) -> Any:
    if "expected" in test_vars:
        return test_vars["expected"]
    for a in (result.get("testCase") or {}).get("assert") or []:
        if isinstance(a, dict) and a.get("type") == "equals":
            return render_value(a.get("value"), test_vars, where)
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


@foreign_reader("promptfoo")
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
    data = read_json(path, "promptfoo's results")
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
        found.items[item], found.labels[item] = test_vars, _label(r, test_vars, f"{where} of {path}")
        found.add_run(arm, item, None, _output(r))
    return found
