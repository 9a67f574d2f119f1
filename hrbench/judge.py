"""The model-graded scorer: a judge model grades an output against the item and its label.

A :func:`judge_scorer` needs the benchmark's run context: the runner gives it one bound to the
benchmark's governor, cache, recorder and pricing (its ``needs_context`` attribute asks for
it), so the judge's calls are reserved and capped like an arm's, priced into the row, cached
and recorded under the judge's own draw keys. Issue 18, point 1.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from hrbench.errors import ConfigError, ScorerError
from hrbench.records import Score
from hrbench.scorer import label_answers, screen

__all__ = [
    "CORRECTNESS_TEMPLATE",
    "JUDGE_SUFFIX",
    "OUTSIDE_A_BENCHMARK",
    "RUBRIC_TEMPLATE",
    "JudgeScorer",
    "judge_scorer",
]

JUDGE_SUFFIX = "#judge"
"""Appended to an arm's name to key its judge's requests (cache, recordings), apart from the arm's."""

CORRECTNESS_TEMPLATE = (
    "You are grading an answer against a reference answer.\n"
    "Question: {item}\n"
    "Reference answer: {label}\n"
    "Answer to grade: {output}\n"
    "Is the answer to grade correct, meaning the same as the reference answer? "
    "Reply with exactly one word: CORRECT or INCORRECT."
)
"""The shipped ``"correct"`` template: the judge replies ``CORRECT`` or ``INCORRECT``."""

RUBRIC_TEMPLATE = (
    "You are grading an answer against a reference answer.\n"
    "Question: {item}\n"
    "Reference answer: {label}\n"
    "Answer to grade: {output}\n"
    "Grade the answer from 0 (wrong or unrelated) to 10 (fully correct and complete). "
    "Reply with the whole number only."
)
"""The shipped ``"rubric"`` template: the judge replies a whole number from 0 to 10."""

OUTSIDE_A_BENCHMARK = (
    "a judge scorer calls a model, so it grades inside a benchmark, whose governor caps its calls "
    "(decided, issue 18: `hrb score --scorer judge` is refused, not run unbudgeted). Grade outputs "
    'made elsewhere with an `outputs` arm: `hrb bench FILE.toml` with `scorer = "judge"` and '
    "`[scorer_settings.client]` (README: Model-graded scoring); in Python, "
    "hb.benchmark(hb.outputs_arm(...), ref, scorer=hb.judge_scorer(client))"
)
"""Why a judge scorer refuses to grade one output on its own, and what to do instead."""

_WORD = re.compile(r"(CORRECT|INCORRECT)", re.IGNORECASE)
_NUMBER = re.compile(r"(\d{1,2})(?:\s*/\s*10)?")


def _clean(reply: str) -> str:
    """A reply without surrounding space, Markdown emphasis, quotes or one final full stop."""
    text = reply.strip().removesuffix(".").strip("*_`\"' ")
    return text.removesuffix(".").rstrip()


def parse_grade(kind: str, reply: str | None) -> str:
    """The grade a judge's reply states, strictly: the whole reply must be the grade.

    Args:
        kind: ``"correct"`` (``CORRECT`` / ``INCORRECT``, any case) or ``"rubric"`` (a whole
            number 0-10, ``"7/10"`` too).
        reply: the judge's reply text.

    Returns:
        ``"correct"``, ``"incorrect"``, or the rubric's number as a string (``"7"``).

    Raises:
        ScorerError: the reply is empty, says more than the grade, or is out of range
            (issue 18: an unparsable judgement is an error with its cause, never a silent wrong).

    Example:
        >>> parse_grade("correct", " **Correct**. "), parse_grade("rubric", "7/10")
        ('correct', '7')
        >>> parse_grade("correct", "It is CORRECT, I think")
        Traceback (most recent call last):
        ...
        hrbench.errors.ScorerError: judge reply is not a grade (expected CORRECT or INCORRECT): 'It is CORRECT, I think'
    """
    text = _clean(reply or "")
    if kind == "correct":
        m = _WORD.fullmatch(text)
        if m is None:
            raise ScorerError(f"judge reply is not a grade (expected CORRECT or INCORRECT): {reply!r}")
        return m.group(1).lower()
    m = _NUMBER.fullmatch(text)
    if m is None or int(m.group(1)) > 10:
        raise ScorerError(f"judge reply is not a grade (expected a whole number 0-10): {reply!r}")
    return str(int(m.group(1)))


class JudgeScorer:
    """A model-graded scorer; made by :func:`judge_scorer` (see there)."""

    needs_context = True

    def __init__(
        self,
        client: Any,
        kind: str,
        template: str,
        judge_runs: int,
        pass_mark: int,
        params: dict[str, Any],
        name: str,
    ) -> None:
        self.client = client
        self.kind = kind
        self.template = template
        self.judge_runs = judge_runs
        self.pass_mark = pass_mark
        self.params = params
        self.name = name
        self.settings = {
            "kind": kind,
            "template_sha256": hashlib.sha256(template.encode()).hexdigest(),
            "judge_runs": judge_runs,
            "pass_mark": pass_mark,
            "model": getattr(client, "model", None),
            "provider": getattr(client, "provider", None),
            "params": params,
        }

    def __repr__(self) -> str:
        return f"JudgeScorer(name={self.name!r}, kind={self.kind!r}, judge_runs={self.judge_runs})"

    @property
    def spec(self) -> dict[str, Any]:
        """The scorer's record: name and settings (the template by its sha256)."""
        return {"name": self.name, "settings": self.settings}

    def __call__(self, item: Any, output: Any, label: Any) -> Score:
        raise ConfigError("scorer", self.name, OUTSIDE_A_BENCHMARK)

    def prompt(self, item: Any, output: str, label: Any) -> str:
        """The judge's prompt for one output (the template filled)."""
        answers = label_answers(label) or []
        return self.template.format_map({"item": item, "label": " | ".join(answers), "output": output})

    def _verdict(self, grade: str) -> bool:
        return grade == "correct" if self.kind == "correct" else int(grade) >= self.pass_mark

    async def ascore(self, item: Any, output: Any, label: Any, ctx: Any) -> Score:
        """Grade one output with ``judge_runs`` draws of the judge through ``ctx``.

        Args:
            item: the item's payload, as any scorer receives it.
            output: the arm's output.
            label: the item's label.
            ctx: the judge's run context (made by the runner: the arm's ledger, trace and
                notes; the judge's client; the arm's name with :data:`JUDGE_SUFFIX`).

        Returns:
            The majority verdict; ``outcome`` holds the grades, space-separated, in draw order.

        Raises:
            BudgetRefused: the governor refused a judge request (the row is a ``budget_stop``).
        """
        screened = screen(output)
        if isinstance(screened, Score):
            return screened
        if label_answers(label) is None:
            return Score(correct=None, outcome=None, failure_kind=None)
        text = self.prompt(item, screened, label)
        grades = []
        for k in range(1, self.judge_runs + 1):
            reply = await ctx.acall(text, draw_index=k, **self.params)
            if not reply.ok:
                ctx.step_error(f"judge draw {k} failed: {reply.error}")
                return Score(correct=False, outcome=None, failure_kind="error")
            try:
                grades.append(parse_grade(self.kind, reply.raw_text))
            except ScorerError as exc:
                ctx.step_error(f"judge draw {k}: {exc}")
                return Score(correct=False, outcome=None, failure_kind="error")
        yes = sum(self._verdict(g) for g in grades)
        correct = 2 * yes > len(grades)  # decided: a tie is not a majority for "correct"
        return Score(correct=correct, outcome=" ".join(grades), failure_kind=None if correct else "wrong")


def judge_scorer(
    client: Any,
    kind: str = "correct",
    template: str | None = None,
    *,
    judge_runs: int = 1,
    pass_mark: int = 7,
    name: str | None = None,
    **params: Any,
) -> JudgeScorer:
    """A model-graded scorer: a judge model grades each output against the item and its label.

    Issue 18, point 1. The judge is any hrbench client (OpenAI, Anthropic, mock, replay). Its
    calls go through the benchmark's governor, reserved like an arm's (a cap stops judging as
    it stops arms: the row is then ``budget_stop``); their tokens and cost are in the row's
    trace and counted in the row's ``usd`` and tokens and the arm's totals. Its replies are
    cached and recorded under the arm's name with ``"#judge"`` appended and draw index ``k``
    for judge draw ``k`` of an output (the output is in the request), so a rerun re-judges
    nothing and ``judge_runs=k`` takes a majority over ``k`` distinct draws.

    Seed 000's contract holds: ``correct`` is ``None`` on an item with no label (the judge is
    not called), an output that is not an answer is scored as every scorer scores it (refusal,
    error, parse_failure) without a call, a wrong verdict is ``"wrong"``, and ``outcome``
    carries the grades. A judge reply that is not exactly a grade, or a failed judge call, makes
    the row an ``"error"`` with the cause in the trace, never a silent wrong (decided).

    Args:
        client: the judge's model client.
        kind: ``"correct"`` (the judge replies CORRECT or INCORRECT) or ``"rubric"`` (a
            whole number 0-10; correct when at least ``pass_mark``).
        template: the judge's prompt, with ``{item}``, ``{label}`` (the acceptable answers,
            joined by ``" | "``) and ``{output}``; by default :data:`CORRECTNESS_TEMPLATE` or
            :data:`RUBRIC_TEMPLATE`. The reply must follow ``kind``'s form.
        judge_runs: judge draws per output (a majority; a tie is not correct).
        pass_mark: the rubric grade from which an output is correct (decided: 7 of 10).
        name: the scorer's name; ``"judge_<kind>"`` by default.
        **params: sampling parameters for the judge's requests (``temperature``, ``model``, ...).

    Returns:
        A :class:`JudgeScorer`, for ``benchmark(..., scorer=...)``.

    Raises:
        ConfigError: an unknown ``kind``, a template without ``{output}`` or with another
            placeholder, ``judge_runs`` below 1 or ``pass_mark`` outside 0-10.

    Example:
        >>> from hrbench import Arm, MockClient, Reference, benchmark
        >>> judge = MockClient(lambda messages, params: "CORRECT" if "Answer to grade: Paris" in
        ...                    messages[0]["content"] else "INCORRECT")
        >>> arm = Arm("fixed", lambda item, ctx: {"France": "Paris", "Peru": "Quito"}[item])
        >>> ref = Reference({"q1": "France", "q2": "Peru"}, labels=["Paris", "Lima"])
        >>> bench = benchmark(arm, ref, runs=5, scorer=judge_scorer(judge))
        >>> [(r.item, r.correct, r.outcome) for r in bench.rows if r.run == 1]
        [('q1', True, 'correct'), ('q2', False, 'incorrect')]
    """
    if kind not in ("correct", "rubric"):
        raise ConfigError("kind", kind, "expected 'correct' or 'rubric'")
    if template is None:
        template = CORRECTNESS_TEMPLATE if kind == "correct" else RUBRIC_TEMPLATE
    if not isinstance(template, str) or "{output}" not in template:
        raise ConfigError("template", template, "a judge template needs an {output} placeholder")
    try:
        template.format_map({"item": "", "label": "", "output": ""})
    except (KeyError, IndexError, ValueError) as exc:
        raise ConfigError(
            "template", template, f"only {{item}}, {{label}} and {{output}} may be filled ({exc!r})"
        ) from None
    if isinstance(judge_runs, bool) or not isinstance(judge_runs, int) or judge_runs < 1:
        raise ConfigError("judge_runs", judge_runs, "expected a whole number >= 1")
    if isinstance(pass_mark, bool) or not isinstance(pass_mark, int) or not 0 <= pass_mark <= 10:
        raise ConfigError("pass_mark", pass_mark, "expected a whole number from 0 to 10")
    return JudgeScorer(client, kind, template, judge_runs, pass_mark, params, name or f"judge_{kind}")
