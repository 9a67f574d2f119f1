r"""The ``pattern`` scorer: take the answer out of a reply with a regex, then score the match.

As inspect_ai's ``pattern()`` and promptfoo's ``regex``, with the match handed to another
scorer. Decided rules (seed silent):

- The answer is the named group ``answer`` when the pattern has one, else its first group,
  else the whole match.
- Which match: the last one (``which="last"``, the default: a reply that reasons first states
  its final answer last, and "Answer: 3 ... Answer: 4" answers 4), or the first. Matches are
  the non-overlapping ones :func:`re.finditer` finds, left to right, so the last is the last
  piece of text the pattern fits, not the last number or word a reader sees: ``(\d+)`` on
  ``"3.0 apples"`` matches ``"3"`` and then ``"0"``, and the answer is ``"0"``. Make the
  pattern fit the whole answer (``(-?\d+(?:\.\d+)?)`` for a decimal number, or anchor it:
  ``ANSWER:\s*(.+)``), or take the first match.
- No match (or an empty group) is ``parse_failure``: the reply is not in the expected form.
- The match is scored by ``then`` (``"exact"``, ``"answer_contains"``, ``"numeric"``,
  ``"choice"`` or any scorer), with the reply's failure kinds kept: a refused, failed or stopped
  reply keeps its kind (seed 000) before the pattern is looked for.
- Flags: ``ignore_case`` (default ``True``); the pattern is searched in the whole reply, ``^``
  and ``$`` matching at line ends (``re.MULTILINE``).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from hrbench.errors import ConfigError
from hrbench.records import Score
from hrbench.scorer import Scorer, ScorerLike, screen

__all__ = ["pattern_scorer"]


def pattern_scorer(
    pattern: str,
    then: str | ScorerLike = "exact",
    which: Literal["last", "first"] = "last",
    ignore_case: bool = True,
    then_settings: dict[str, Any] | None = None,
) -> Scorer:
    r"""The ``pattern`` scorer: a regex finds the answer, another scorer judges it.

    Args:
        pattern: a Python regular expression, with a named group ``answer`` or a first group
            holding the answer (else the whole match is the answer).
        then: the scorer applied to the match: a built-in name (``"exact"``,
            ``"answer_contains"``, ``"numeric"``, ``"choice"``) or a scorer.
        which: ``"last"`` (default) or ``"first"`` of the non-overlapping matches, left to
            right (:func:`re.finditer`): ``(\d+)`` on ``"3.0 apples"`` finds ``"3"`` and
            ``"0"``, so the last is ``"0"`` (see the module docstring).
        ignore_case: match the pattern without regard to case.
        then_settings: settings of a built-in ``then`` scorer (``{"rel_tol": 0.01}``).

    Returns:
        A :class:`~hrbench.scorer.Scorer` named ``"pattern"``; ``outcome`` is the inner scorer's.

    Raises:
        ConfigError: a pattern that does not compile (naming it and the regex error), an
            unknown ``which`` or ``then``.

    Example:
        >>> s = pattern_scorer(r"ANSWER:\s*(?P<answer>.+)$", then="answer_contains")
        >>> s(None, "Let me think. 12 * 2 = 24.\nANSWER: 24 apples", 24)
        Score(correct=True, outcome='24 apples', failure_kind=None)
        >>> s(None, "24 apples", 24).failure_kind
        'parse_failure'
        >>> pattern_scorer(r"(\d+)")(None, "3.0 apples", 3).outcome  # the last match is "0"
        '0'
        >>> pattern_scorer(r"(-?\d+(?:\.\d+)?)", then="numeric")(None, "3.0 apples", 3).correct
        True
    """
    from hrbench.specs import build_scorer

    if not isinstance(pattern, str) or not pattern:
        raise ConfigError("pattern", pattern, "expected a regular expression")
    try:
        rx = re.compile(pattern, re.MULTILINE | (re.IGNORECASE if ignore_case else 0))
    except re.error as exc:
        raise ConfigError("pattern", pattern, f"does not compile: {exc}") from None
    if which not in ("last", "first"):
        raise ConfigError("which", which, 'expected "last" or "first"')
    inner = build_scorer(then, then_settings) if isinstance(then, str) else then
    if not callable(inner):
        raise ConfigError("then", then, "expected a scorer name or a scorer")
    group: str | int = "answer" if "answer" in rx.groupindex else (1 if rx.groups else 0)

    def fn(item: Any, output: Any, label: Any) -> Score:
        text = screen(output)
        if isinstance(text, Score):
            return text
        hits = list(rx.finditer(text))
        if which == "first":
            hits = hits[:1]
        found = hits[-1].group(group) if hits else None
        if not found or not found.strip():
            return Score(correct=False, outcome=None, failure_kind="parse_failure")
        return inner(item, found.strip(), label)

    name = then if isinstance(then, str) else getattr(inner, "name", "scorer")
    settings = {"pattern": pattern, "then": name, "which": which, "ignore_case": ignore_case}
    if then_settings:
        settings["then_settings"] = dict(then_settings)
    return Scorer(fn, "pattern", settings)
