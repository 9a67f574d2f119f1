r"""The ``pattern`` scorer: take the answer out of a reply with a regex, then score the match.

As inspect_ai's ``pattern()`` and promptfoo's ``regex``, with the match handed to another
scorer. Rules:

- The answer is the named group ``answer`` when the pattern has one; else the first group that
  took part in the match (with alternatives such as
  ``ANSWER: (\d+)|\\boxed\{(\d+)\}``, only the alternative that matched sets its group, so
  ``\boxed{42}`` answers 42 from group 2); else, with no group, the whole match. A match in
  which no group took part (``ANSWER:\s*(\d+)?`` on ``"ANSWER: "``) is ``parse_failure``.
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
- Time limit (one client's backtracking pattern must not hold a shared
  daemon): the search of one reply may take at most ``timeout`` seconds (default
  :data:`DEFAULT_TIMEOUT_S`). Past it the scorer raises :class:`~hrbench.errors.ScorerError`
  naming the pattern and the limit, so the run is an ``error`` row with that cause, never a
  wrong answer. Patterns are matched by the `regex <https://pypi.org/project/regex/>`_ package
  (the syntax of :mod:`re`, its version 0), which releases the GIL while it matches, so a long
  match in a worker thread does not stop other threads.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import regex

from hrbench.errors import ConfigError, ScorerError
from hrbench.records import Score
from hrbench.scoring._names import plain_scorer
from hrbench.scoring._scorer import Scorer, ScorerLike, screen

__all__ = ["DEFAULT_TIMEOUT_S", "pattern_scorer"]

DEFAULT_TIMEOUT_S = 1.0
"""The default time limit of one reply's search, in seconds (a plain pattern takes microseconds)."""


def pattern_scorer(
    pattern: str,
    then: str | ScorerLike = "exact",
    which: Literal["last", "first"] = "last",
    ignore_case: bool = True,
    then_settings: dict[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> Scorer:
    r"""The ``pattern`` scorer: a regex finds the answer, another scorer judges it.

    Args:
        pattern: a Python regular expression, with a named group ``answer`` or groups holding
            the answer (the first group that took part in the match is the answer; with no
            group, the whole match).
        then: the scorer applied to the match: a built-in name (``"exact"``,
            ``"answer_contains"``, ``"numeric"``, ``"choice"``) or a scorer.
        which: ``"last"`` (default) or ``"first"`` of the non-overlapping matches, left to
            right (:func:`re.finditer`): ``(\d+)`` on ``"3.0 apples"`` finds ``"3"`` and
            ``"0"``, so the last is ``"0"`` (see the module docstring).
        ignore_case: match the pattern without regard to case.
        then_settings: settings of a built-in ``then`` scorer (``{"rel_tol": 0.01}``).
        timeout: the time limit of one reply's search, in seconds (> 0).

    Returns:
        A :class:`~hrbench.scoring.Scorer` named ``"pattern"``; ``outcome`` is the inner scorer's.

    Raises:
        ConfigError: a pattern that does not compile (naming it and the regex error), an
            unknown ``which`` or ``then``, a ``timeout`` that is not a number > 0.
        ScorerError: (on call) a search that took longer than ``timeout``.

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
        >>> pattern_scorer(r"ANSWER: (\d+)|\\boxed\{(\d+)\}", then="numeric")(None, "\\boxed{42}", 42).outcome
        '42'
    """
    if not isinstance(pattern, str) or not pattern:
        raise ConfigError("pattern", pattern, "expected a regular expression")
    try:
        rx = regex.compile(
            pattern, regex.VERSION0 | regex.MULTILINE | (regex.IGNORECASE if ignore_case else 0)
        )
    except (regex.error, ValueError, TypeError) as exc:
        raise ConfigError("pattern", pattern, f"does not compile: {exc}") from None
    if which not in ("last", "first"):
        raise ConfigError("which", which, 'expected "last" or "first"')
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ConfigError("timeout", timeout, "expected a number of seconds > 0")
    inner = plain_scorer(then, then_settings) if isinstance(then, str) else then
    if not callable(inner):
        raise ConfigError("then", then, "expected a scorer name or a scorer")
    named = "answer" in rx.groupindex

    def answer(m: Any) -> str | None:
        if named:
            return m.group("answer")  # type: ignore[no-any-return]
        if not rx.groups:
            return m.group(0)  # type: ignore[no-any-return]
        return next((g for g in m.groups() if g is not None), None)

    def fn(item: Any, output: Any, label: Any) -> Score:
        text = screen(output)
        if isinstance(text, Score):
            return text
        last = None
        try:
            for m in rx.finditer(text, concurrent=True, timeout=timeout):
                last = m
                if which == "first":
                    break
        except TimeoutError:
            raise ScorerError(
                f"pattern scorer: the pattern {pattern!r} took longer than its time limit of "
                f"{timeout:g} s on a reply of {len(text)} characters (a pattern that backtracks; "
                "simplify it or raise scorer_settings.timeout)"
            ) from None
        found = answer(last) if last is not None else None
        if not found or not found.strip():
            return Score(correct=False, outcome=None, failure_kind="parse_failure")
        return inner(item, found.strip(), label)

    name = then if isinstance(then, str) else getattr(inner, "name", "scorer")
    settings = {"pattern": pattern, "then": name, "which": which, "ignore_case": ignore_case}
    if timeout != DEFAULT_TIMEOUT_S:
        settings["timeout"] = timeout
    if then_settings:
        settings["then_settings"] = dict(then_settings)
    out = Scorer(fn, "pattern", settings, reads_reply=True)
    out.offload = True  # a pattern may backtrack up to its time limit: never on the event loop
    return out
