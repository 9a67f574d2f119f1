"""Trajectory scorers: a run is scored on what it did, read from its trace, not only on its answer.

A run's trajectory is the tool calls its model asked for, in order (the ``tool_calls`` of its
trace's request steps; :func:`hrbench.tool_loop` runs them as ``"tool"`` steps), and its turns.
promptfoo's trajectory assertions (tool sequence, tool arguments, step count, goal success)
score a single run; these score every run of every arm on every item, so a benchmark's
intervals, paired differences, stop-when-sure rule, pass^k and gate read them unchanged.

Every scorer here needs the run's context (``needs_context``: the runner hands it the run's
trace, as a judge gets it); it refuses to score an output alone. Seed 000's contract holds: an
item with no label is ``correct=None``; a wrong trajectory is ``"wrong"`` with the trajectory as
``outcome``. The rules: ``docs/guides/tools.md``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hrbench._util.forms import check_one_of
from hrbench.errors import ConfigError, ScorerError
from hrbench.records import Score, Step, ToolCall
from hrbench.scoring._judge import JudgeScorer, _check_template, judge_scorer
from hrbench.scoring._scorer import label_answers, output_text

__all__ = [
    "MODES",
    "TRAJECTORY_TEMPLATE",
    "render_trajectory",
    "step_count_scorer",
    "tool_args_scorer",
    "tool_calls",
    "tool_sequence_scorer",
    "trajectory_judge",
    "turns",
]

MODES = ("exact", "in_order", "subset")
"""How :func:`tool_sequence_scorer` compares: the same calls in the same order; the expected
calls in order with others between them allowed; every expected tool called, in any order."""


def _arm_steps(trace: Iterable[Step]) -> list[Step]:
    """The arm's request steps that were answered (not a judge's, not refused)."""
    return [s for s in trace if s.kind == "request" and s.source != "refused"]


def tool_calls(trace: Iterable[Step]) -> list[ToolCall]:
    """The tool calls a run's model asked for, in order, from its trace.

    Example:
        >>> c = ToolCall(id="1", name="lookup", arguments={"city": "Paris"})
        >>> [t.name for t in tool_calls([Step(ledger_id="r", tool_calls=[c]), Step(ledger_id="r", text="ok")])]
        ['lookup']
    """
    return [c for s in _arm_steps(trace) for c in (s.tool_calls or [])]


def turns(trace: Iterable[Step]) -> int:
    """The model turns of a run: its answered request steps."""
    return len(_arm_steps(trace))


def _outcome(calls: Sequence[ToolCall]) -> str | None:
    return " > ".join(c.name for c in calls) or None


def _expected(expected: Any, field: str | None, item: Any, what: str) -> Any:
    if expected is not None:
        return expected
    if isinstance(item, Mapping) and field in item:
        return item[field]
    raise ScorerError(
        f"the {what} scorer reads the expected value from the item's {field!r} field, which it lacks"
    )


class _TraceScorer:
    """A scorer of a run's trace (``needs_context``): :meth:`ascore` gets the run's context."""

    needs_context = True
    client = None
    name = "trajectory"
    settings: dict[str, Any]

    @property
    def spec(self) -> dict[str, Any]:
        """The scorer's record: name and settings."""
        return {"name": self.name, "settings": self.settings}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.settings})"

    def __call__(self, item: Any, output: Any, label: Any) -> Score:
        raise ConfigError(
            "scorer",
            self.name,
            "a trajectory scorer reads a run's trace, so it scores runs inside a benchmark (hb.benchmark, hrb bench)",
        )

    def judge(self, item: Any, trace: list[Step], output: Any) -> Score:  # pragma: no cover - each scorer's
        raise NotImplementedError

    async def ascore(self, item: Any, output: Any, label: Any, ctx: Any) -> Score:
        """Score one run from its trace (``ctx.trace``); ``correct=None`` on an item with no label."""
        if label_answers(label) is None:
            return Score(correct=None, outcome=None, failure_kind=None)
        return self.judge(item, list(ctx.trace), output)


class ToolSequenceScorer(_TraceScorer):
    """Made by :func:`tool_sequence_scorer` (see there)."""

    def __init__(self, expected: Sequence[str] | None, mode: str, field: str | None, name: str) -> None:
        self.expected, self.mode, self.field, self.name = expected, mode, field, name
        self.settings = {"expected": expected, "mode": mode, "field": field}

    def judge(self, item: Any, trace: list[Step], output: Any) -> Score:
        want = _expected(self.expected, self.field, item, "tool_sequence")
        if isinstance(want, str) or not isinstance(want, Sequence):
            raise ScorerError(f"expected tool names as a list, got {want!r}")
        calls = tool_calls(trace)
        names = [c.name for c in calls]
        want = [str(w) for w in want]
        if self.mode == "exact":
            ok = names == want
        elif self.mode == "subset":
            ok = set(want) <= set(names)
        else:  # in order, other calls between them allowed
            it = iter(names)
            ok = all(any(n == w for n in it) for w in want)
        return Score(correct=ok, outcome=_outcome(calls), failure_kind=None if ok else "wrong")


def tool_sequence_scorer(
    expected: Sequence[str] | None = None,
    mode: str = "exact",
    *,
    field: str | None = None,
    name: str | None = None,
) -> ToolSequenceScorer:
    """Right when the run's tool calls match the expected tools.

    Args:
        expected: the tool names, in order; or ``None`` to read them from each item's ``field``.
        mode: ``"exact"`` (the same calls, in order, nothing else), ``"in_order"`` (the expected
            calls in order, others between them allowed) or ``"subset"`` (every expected tool
            called, in any order, others allowed).
        field: the item field holding the expected names, when ``expected`` is ``None``.
        name: the scorer's name; ``"tool_sequence_<mode>"`` by default.

    Returns:
        A scorer for ``benchmark(..., scorer=...)``; ``outcome`` is the calls made, ``a > b``.

    Raises:
        ConfigError: an unknown mode, neither ``expected`` nor ``field``, or names not a list.

    Example:
        >>> s = tool_sequence_scorer(["lookup", "capital"], "in_order")
        >>> calls = [ToolCall(id=str(i), name=n) for i, n in enumerate(["lookup", "log", "capital"])]
        >>> s.judge(None, [Step(ledger_id="r", tool_calls=calls)], "Paris")
        Score(correct=True, outcome='lookup > log > capital', failure_kind=None)
    """
    check_one_of("mode", mode, MODES)
    if expected is None and not field:
        raise ConfigError("expected", None, "give the expected tool names, or the item field that holds them")
    if expected is not None and (isinstance(expected, str) or not isinstance(expected, Sequence)):
        raise ConfigError("expected", expected, 'expected a list of tool names, ["lookup", "capital"]')
    return ToolSequenceScorer(
        None if expected is None else [str(e) for e in expected], mode, field, name or f"tool_sequence_{mode}"
    )


class ToolArgsScorer(_TraceScorer):
    """Made by :func:`tool_args_scorer` (see there)."""

    def __init__(
        self, tool: str, expected: Mapping[str, Any] | None, field: str | None, match: str, name: str
    ):
        self.tool, self.expected, self.field, self.match, self.name = tool, expected, field, match, name
        self.settings = {"tool": tool, "expected": expected, "field": field, "match": match}

    def _fits(self, args: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
        if self.match == "exact":
            return dict(args) == dict(want)
        return all(k in args and args[k] == v for k, v in want.items())

    def judge(self, item: Any, trace: list[Step], output: Any) -> Score:
        want = _expected(self.expected, self.field, item, "tool_args")
        if not isinstance(want, Mapping):
            raise ScorerError(f"expected the arguments as a table, got {want!r}")
        calls = [c for c in tool_calls(trace) if c.name == self.tool]
        ok = any(self._fits(c.arguments, want) for c in calls)
        shown = "; ".join(f"{c.name}({json.dumps(c.arguments, sort_keys=True, default=str)})" for c in calls)
        return Score(correct=ok, outcome=shown or None, failure_kind=None if ok else "wrong")


def tool_args_scorer(
    tool: str,
    expected: Mapping[str, Any] | None = None,
    *,
    match: str = "subset",
    field: str | None = None,
    name: str | None = None,
) -> ToolArgsScorer:
    """Right when a call of ``tool`` in the run had the expected arguments.

    Args:
        tool: the tool's name.
        expected: the arguments; or ``None`` to read them from each item's ``field``.
        match: ``"subset"`` (each expected argument has the expected value; others allowed)
            or ``"exact"`` (the same arguments, no others). Values compare as JSON values do
            (``1 == 1.0``).
        field: the item field holding the expected arguments, when ``expected`` is ``None``.
        name: the scorer's name; ``"tool_args_<tool>"`` by default.

    Raises:
        ConfigError: an unknown match, neither ``expected`` nor ``field``, or arguments not a table.

    Example:
        >>> s = tool_args_scorer("lookup", {"city": "Paris"})
        >>> s.judge(None, [Step(ledger_id="r", tool_calls=[ToolCall(id="1", name="lookup",
        ...         arguments={"city": "Paris", "year": 2024})])], "x").correct
        True
    """
    if match not in ("subset", "exact"):
        raise ConfigError("match", match, "expected 'subset' or 'exact'")
    if not isinstance(tool, str) or not tool:
        raise ConfigError("tool", tool, "name the tool whose arguments are checked")
    if expected is None and not field:
        raise ConfigError("expected", None, "give the expected arguments, or the item field that holds them")
    if expected is not None and not isinstance(expected, Mapping):
        raise ConfigError("expected", expected, 'expected a table of arguments, {city = "Paris"}')
    return ToolArgsScorer(
        tool, None if expected is None else dict(expected), field, match, name or f"tool_args_{tool}"
    )


class StepCountScorer(_TraceScorer):
    """Made by :func:`step_count_scorer` (see there)."""

    def __init__(self, max_steps: int | None, min_steps: int, count: str, name: str) -> None:
        self.max_steps, self.min_steps, self.count, self.name = max_steps, min_steps, count, name
        self.settings = {"max_steps": max_steps, "min_steps": min_steps, "count": count}

    def judge(self, item: Any, trace: list[Step], output: Any) -> Score:
        n = turns(trace) if self.count == "turns" else len(tool_calls(trace))
        ok = n >= self.min_steps and (self.max_steps is None or n <= self.max_steps)
        return Score(correct=ok, outcome=f"{n} {self.count}", failure_kind=None if ok else "wrong")


def step_count_scorer(
    max_steps: int | None = None, min_steps: int = 0, *, count: str = "turns", name: str | None = None
) -> StepCountScorer:
    """Right when the run took between ``min_steps`` and ``max_steps`` steps.

    Args:
        max_steps: the most steps (``None``: no most).
        min_steps: the fewest steps.
        count: ``"turns"`` (the model's answered requests) or ``"tool_calls"``.
        name: the scorer's name; ``"step_count"`` by default.

    Raises:
        ConfigError: bounds that are not whole numbers >= 0, ``min_steps > max_steps``, or an
            unknown ``count``.

    Example:
        >>> step_count_scorer(2).judge(None, [Step(ledger_id="r")] * 3, "x")
        Score(correct=False, outcome='3 turns', failure_kind='wrong')
    """
    for what, v in (("max_steps", max_steps), ("min_steps", min_steps)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise ConfigError(what, v, "expected a whole number >= 0")
    if max_steps is None and not min_steps:
        raise ConfigError("max_steps", None, "give max_steps, min_steps or both")
    if max_steps is not None and min_steps > max_steps:
        raise ConfigError("min_steps", min_steps, f"is more than max_steps ({max_steps})")
    if count not in ("turns", "tool_calls"):
        raise ConfigError("count", count, "expected 'turns' or 'tool_calls'")
    return StepCountScorer(max_steps, min_steps, count, name or "step_count")


TRAJECTORY_TEMPLATE = (
    "You are grading how an assistant solved a task with tools.\n"
    "Task: {item}\n"
    "Reference answer: {label}\n"
    "The assistant's tool calls, their results and its final answer:\n{output}\n"
    "Did the assistant reach the reference answer by sensible tool calls? "
    "Reply with exactly one word: CORRECT or INCORRECT."
)
"""The shipped template of :func:`trajectory_judge`: ``{output}`` is the rendered trajectory."""


def render_trajectory(trace: Iterable[Step], output: Any) -> str:
    """A run's trajectory as a judge reads it: each tool call, its result, then the final answer.

    Example:
        >>> c = ToolCall(id="1", name="lookup", arguments={"city": "Paris"})
        >>> print(render_trajectory([Step(ledger_id="r", kind="tool", source="tool", tool_calls=[c], text="France")],
        ...                         "France"))
        1. lookup({"city": "Paris"}) -> France
        Final answer: France
    """
    lines: list[str] = []
    for s in trace:
        if s.kind != "tool" or not s.tool_calls:
            continue
        c = s.tool_calls[0]
        got = s.text if s.error is None else s.error
        lines.append(
            f"{len(lines) + 1}. {c.name}({json.dumps(c.arguments, sort_keys=True, default=str)}) -> {got}"
        )
    if not lines:
        lines.append("(no tool calls)")
    lines.append(f"Final answer: {output_text(output) or '(none)'}")
    return "\n".join(lines)


class TrajectoryJudge(JudgeScorer):
    """A judge of a run's trajectory; made by :func:`trajectory_judge` (see there)."""

    async def ascore(self, item: Any, output: Any, label: Any, ctx: Any) -> Score:
        """Grade the rendered trajectory (:func:`render_trajectory`) as :meth:`JudgeScorer.ascore` grades an output."""
        if label_answers(label) is None:
            return Score(correct=None, outcome=None, failure_kind=None)
        # read before the judge asks: the trace holds the arm's steps only
        return await super().ascore(item, render_trajectory(list(ctx.trace), output), label, ctx)


def trajectory_judge(client: Any, template: str | None = None, **settings: Any) -> TrajectoryJudge:
    """An LLM judge of a run's trajectory: its tool calls, their results and its final answer.

    As :func:`~hrbench.scoring._judge.judge_scorer` (the judge's calls are governed, cached and
    recorded; a reply that is not a grade is an ``"error"``), with ``{output}`` the trajectory
    as :func:`render_trajectory` writes it and :data:`TRAJECTORY_TEMPLATE` by default.

    Args:
        client: the judge's model client.
        template: the judge's prompt (``{output}`` required; ``{item}``, ``{question}``,
            ``{document}``, ``{label}`` allowed).
        **settings: ``kind``, ``judge_runs``, ``pass_mark``, ``pricing``, ``name`` and sampling
            parameters, as for ``judge_scorer``.

    Raises:
        ConfigError: as ``judge_scorer``.
    """
    template = TRAJECTORY_TEMPLATE if template is None else template
    _check_template(template)
    settings.setdefault("name", f"trajectory_judge_{settings.get('kind', 'correct')}")
    base = judge_scorer(client, template=template, **settings)
    made = TrajectoryJudge.__new__(TrajectoryJudge)
    made.__dict__.update(base.__dict__)
    made.settings = {**base.settings, "trajectory": True}
    return made
