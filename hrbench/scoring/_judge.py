"""The model-graded scorer: a judge model grades an output against the item and its label.

A :func:`judge_scorer` needs the benchmark's run context: the runner gives it one bound to the
benchmark's governor, cache, recorder and pricing (its ``needs_context`` attribute asks for
it), so the judge's calls are reserved and capped like an arm's, priced into the row, cached
and recorded under the judge's own draw keys.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from hrbench.errors import ConfigError, ScorerError
from hrbench.records import Score, Step
from hrbench.scoring._scorer import label_answers, screen

__all__ = [
    "CORRECTNESS_TEMPLATE",
    "INVISIBLE",
    "JUDGED_SOURCE",
    "JUDGE_SUFFIX",
    "OUTSIDE_A_BENCHMARK",
    "PLACEHOLDERS",
    "RUBRIC_TEMPLATE",
    "JudgeScorer",
    "judge_scorer",
    "parse_grade",
    "render_item",
]

JUDGE_SUFFIX = "#judge"
"""Appended to an arm's name to key its judge's requests (cache, recordings), apart from the arm's."""

JUDGED_SOURCE = "judged"
"""The ``source`` of the ``note`` step a judge adds to a run's trace before its first request: its
``text`` is the output text the judge graded, which :func:`hrbench.judge_agreement` scores again."""

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
    "(so `hrb score --scorer judge` is refused rather than run without a budget). Grade outputs "
    'made elsewhere with an `outputs` arm: `hrb bench FILE.toml` with `scorer = "judge"` and '
    "`[scorer_settings.client]` (docs: Scoring, model-graded scoring); in Python, "
    "hb.benchmark(hb.outputs_arm(...), ref, scorer=hb.judge_scorer(client))"
)
"""Why a judge scorer refuses to grade one output on its own, and what to do instead."""

_WORD = re.compile(r"(CORRECT|INCORRECT)", re.IGNORECASE)
_NUMBER = re.compile(r"(\d{1,2})(?:\s*/\s*10)?")

INVISIBLE = "\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
"""The invisible format characters a judge's reply is read without (U+200B-U+200F, U+2060-U+2064,
U+FEFF: zero-width spaces and joiners, direction marks, the word joiner, invisible operators, the
byte-order mark)."""

_INVISIBLE = re.compile(f"[{INVISIBLE}]")
_TAG = re.compile(r"<(/?)think(?:ing)?\s*>", re.IGNORECASE)
_SHOWN = 300  # characters of a reply an error shows


def _clean(reply: str) -> str:
    """A reply without surrounding space, Markdown emphasis, quotes or one final full stop."""
    text = reply.strip().removesuffix(".").strip("*_`\"' ")
    return text.removesuffix(".").rstrip()


def _shown(text: str) -> str:
    shown = repr(text)
    return shown if len(shown) <= _SHOWN else shown[: _SHOWN - 4] + "...'"


def _without_reasoning(reply: str) -> tuple[str, str | None]:
    """The reply without invisible characters and reasoning, and why it cannot hold a grade."""
    text = _INVISIBLE.sub("", reply)
    kept: list[str] = []  # the text outside reasoning blocks (one pass: nested blocks go whole)
    depth, start, tags = 0, 0, 0
    for tag in _TAG.finditer(text):
        tags += 1
        if depth == 0:
            kept.append(text[start : tag.start()])
        if not tag.group(1):
            depth += 1
        elif depth:
            depth -= 1
        else:  # a close with no opening: reasoning whose opening tag the provider left out
            kept = []
        start = tag.end()
    if depth:
        return text, "it is all reasoning: a <think> block opens and never closes (was the reply cut off?)"
    kept.append(text[start:])
    rest = " ".join(kept)
    if not rest.strip():
        return rest, "nothing follows its reasoning" if tags else "it is empty"
    return rest, None


def parse_grade(kind: str, reply: str | None) -> str:
    r"""The grade a judge's reply states, strictly: the whole reply must be the grade.

    How a reply is read:

    - The whole reply must be the grade: ``CORRECT`` or ``INCORRECT`` (any case), or a whole
      number from 0 to 10 (``7/10`` too), with at most surrounding white space, Markdown
      emphasis (``**``, ``_``, backticks), quotes and one final full stop. No verdict word is
      ever taken from prose: ``"Final verdict: INCORRECT"``, ``"It is CORRECT, I think"`` and
      ``"ANSWER: CORRECT"`` are not grades, and ``INCORRECT`` is never read as ``CORRECT``
      (an unparsable judgement is an error with its cause, never a silent wrong).
    - Invisible format characters are not part of the reply: U+200B-U+200F (zero-width space,
      non-joiner and joiner, left-to-right and right-to-left marks), U+2060-U+2064 (word joiner,
      invisible operators) and U+FEFF (byte-order mark) are dropped wherever they stand, inside
      a word too, so a reply that shows ``CORRECT`` reads as ``CORRECT``.
      Other characters are kept: a soft hyphen or a visible character still makes
      the reply something other than a grade.
    - A reasoning block is not part of the reply: ``<think>...</think>`` and
      ``<thinking>...</thinking>``, tags in any case, either spelling closing either, anywhere
      in the reply, nested ones whole. A reply with a closing
      tag and no opening one (a reasoning model's API that sends only the close) is reasoning
      up to its last closing tag. What remains must still be exactly the grade.
    - A ``<think>`` that never closes means the reply is all reasoning (typically cut off by
      ``max_tokens``): not a grade, whatever words the reasoning holds (a verdict is
      never taken from unfinished reasoning). A reply that is only reasoning, with nothing
      after it, is not a grade either.

    Args:
        kind: ``"correct"`` (``CORRECT`` / ``INCORRECT``, any case) or ``"rubric"`` (a whole
            number 0-10, ``"7/10"`` too).
        reply: the judge's reply text.

    Returns:
        ``"correct"``, ``"incorrect"``, or the rubric's number as a string (``"7"``).

    Raises:
        ScorerError: the reply is empty, says more than the grade, is all reasoning, or is out
            of range; the message says which and shows the reply (the judge's runner puts it
            in the row's trace, and the row is an ``"error"``).

    Example:
        >>> parse_grade("correct", " **Correct**. "), parse_grade("rubric", "7/10")
        ('correct', '7')
        >>> parse_grade("correct", "<think>It matches.</think>\nINCORRECT"), parse_grade("correct", "CORRECT\u200b")
        ('incorrect', 'correct')
        >>> parse_grade("rubric", "Weighing it up, a 6 at most.</THINK> 8")
        '8'
        >>> parse_grade("correct", "It is CORRECT, I think")
        Traceback (most recent call last):
        ...
        hrbench.errors.ScorerError: judge reply is not a grade (expected CORRECT or INCORRECT): 'It is CORRECT, I think'
        >>> parse_grade("correct", "<think>It looks CORRECT")
        Traceback (most recent call last):
        ...
        hrbench.errors.ScorerError: judge reply is not a grade (expected CORRECT or INCORRECT): it is all reasoning: a <think> block opens and never closes (was the reply cut off?): '<think>It looks CORRECT'
    """
    expected = "CORRECT or INCORRECT" if kind == "correct" else "a whole number 0-10"
    head = f"judge reply is not a grade (expected {expected})"
    said = reply or ""
    rest, why = _without_reasoning(said)
    if why is not None:
        raise ScorerError(f"{head}: {why}: {_shown(said)}" if said else f"{head}: {why}")
    text = _clean(rest)
    m = _WORD.fullmatch(text) if kind == "correct" else _NUMBER.fullmatch(text)
    if m is None or (kind != "correct" and int(m.group(1)) > 10):
        shown = (
            _shown(said)
            if rest == said
            else f"{_shown(rest.strip())} (the reply read without its reasoning and invisible characters)"
        )
        raise ScorerError(f"{head}: {shown}")
    return m.group(1).lower() if kind == "correct" else str(int(m.group(1)))


PLACEHOLDERS = ("item", "question", "document", "label", "output")
"""The fields a judge template may name (each whole: no ``{item.x}``, ``{item[0]}`` or ``{}``)."""


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return str(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def render_item(item: Any) -> str:
    """The item as a judge template's ``{item}`` shows it: its fields as text, never a Python repr.

    Rule (a mapping item never reaches the judge as ``{'document': ...}``):

    - A string item is itself; a number is written plainly; a list is JSON.
    - A mapping item is its fields, one ``name: value`` a line in the item's order (a value
      that is not a string or a number is JSON), except ``document``: a document is shown only
      where the template asks for it with ``{document}``.
    - So a reading item (``{"document", "question"}``, :func:`hrbench.reading.qa_reference`)
      is its question alone: a judge that reads a reading item is told its question.

    Example:
        >>> render_item("France"), render_item({"document": "A long text.", "question": "Who?"})
        ('France', 'Who?')
        >>> print(render_item({"question": "Which?", "choices": ["Paris", "Lima"]}))
        question: Which?
        choices: ["Paris", "Lima"]
    """
    if isinstance(item, str):
        return item
    if not isinstance(item, Mapping):
        return _value(item)
    fields = {str(k): v for k, v in item.items() if k != "document"}
    if list(fields) == ["question"] and isinstance(fields["question"], str):
        return fields["question"]
    return "\n".join(f"{k}: {_value(v)}" for k, v in fields.items())


def _item_field(name: str, item: Any) -> str:
    """The text of ``{question}`` or ``{document}`` for one item, or the reason it has none."""
    if isinstance(item, Mapping):
        value = item.get(name)
        if isinstance(value, str):
            return value
        why = (
            f"item's {name!r} is not a string (it is {type(value).__name__})"
            if name in item
            else f"item has no {name!r} field"
        )
        raise ScorerError(f"the judge template names {{{name}}}, but the {why}")
    if name == "question":  # a plain item is its own question
        return render_item(item)
    raise ScorerError(
        f"the judge template names {{document}}, but the item is not a mapping with a 'document' "
        f"field (it is {type(item).__name__})"
    )


def _check_template(template: Any) -> tuple[str, ...]:
    """The placeholders a judge template names; refuses one no run could fill."""
    if not isinstance(template, str):
        raise ConfigError("template", template, "a judge template must be a string")
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ConfigError("template", template, f"malformed template ({exc})") from None
    named: list[str] = []
    for _, name, _, _ in parsed:
        if name is None:
            continue
        if name not in PLACEHOLDERS:
            raise ConfigError(
                "template",
                template,
                f"names {{{name}}}; a judge template may name only {{item}}, {{question}}, "
                "{document}, {label} and {output}, each whole",
            )
        if name not in named:
            named.append(name)
    if "output" not in named:
        raise ConfigError("template", template, "a judge template needs an {output} placeholder")
    try:
        template.format_map(dict.fromkeys(PLACEHOLDERS, ""))
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as exc:
        raise ConfigError("template", template, f"cannot be filled ({type(exc).__name__}: {exc})") from None
    return tuple(named)


class JudgeScorer:
    """A model-graded scorer; made by :func:`judge_scorer` (see there)."""

    needs_context = True
    reads_reply = True  # a refused reply is a refusal, never graded (seed 000)

    def __init__(
        self,
        client: Any,
        kind: str,
        template: str,
        judge_runs: int,
        pass_mark: int,
        params: dict[str, Any],
        name: str,
        pricing: Any = None,
    ) -> None:
        self.client = client
        self.pricing = pricing
        """The judge's own prices (a :class:`~hrbench.models.Pricing` whose ``overrides`` go over
        the benchmark's table for the judge's requests), or ``None``: the benchmark's alone."""
        self.kind = kind
        self.template = template
        self.fields = _check_template(template)
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
        """The judge's prompt for one output: the template filled.

        ``{item}`` is :func:`render_item` of the item, ``{question}`` and ``{document}`` its
        fields of those names, ``{label}`` the accepted answers joined by ``" | "``.

        Raises:
            ScorerError: the template names ``{question}`` or ``{document}`` and the item has
                no such string field (``{question}`` of an item that is not a mapping is the
                item itself).
        """
        answers = label_answers(label) or []
        fields = {"item": render_item(item), "label": " | ".join(answers), "output": output}
        for name in ("question", "document"):
            if name in self.fields:
                fields[name] = _item_field(name, item)
        return self.template.format_map(fields)

    def check_items(self, items: Mapping[str, Any]) -> None:
        r"""Refuse, before the first run, items the template cannot be filled with.

        Args:
            items: item id -> payload.

        Raises:
            ConfigError: naming ``template``, the placeholder, and the items that lack it
                (the first few ids and how many).

        Example:
            >>> judge = judge_scorer(object(), template="Doc: {document}\nAnswer: {output}")
            >>> judge.check_items({"q1": {"document": "D", "question": "Q"}})
            >>> try:
            ...     judge.check_items({"q1": "France"})
            ... except ValueError as exc:
            ...     print(str(exc).split(" (got")[0])
            template: names {document}, which item 'q1' lacks (1 of 1 item(s) lack it: q1)
        """
        for name in ("question", "document"):
            if name not in self.fields:
                continue
            lacking = []
            for i, payload in items.items():
                try:
                    _item_field(name, payload)
                except ScorerError:
                    lacking.append(str(i))
            if lacking:
                shown = ", ".join(lacking[:5]) + (", ..." if len(lacking) > 5 else "")
                raise ConfigError(
                    "template",
                    self.template,
                    f"names {{{name}}}, which item {lacking[0]!r} lacks "
                    f"({len(lacking)} of {len(items)} item(s) lack it: {shown})",
                )

    def _verdict(self, grade: str) -> bool:
        return grade == "correct" if self.kind == "correct" else int(grade) >= self.pass_mark

    async def ascore(self, item: Any, output: Any, label: Any, ctx: Any) -> Score:
        """Grade one output with ``judge_runs`` draws of the judge through ``ctx``.

        Before its first request it adds to the run's trace a ``note`` step
        (:data:`JUDGED_SOURCE`) holding the text it grades, the text
        :func:`hrbench.judge_agreement` scores again with the reference scorer.

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
        try:
            text = self.prompt(item, screened, label)
        except ScorerError as exc:  # the judge is not asked: its prompt could not be made
            ctx.step_error(f"judge of item {getattr(ctx, 'item_id', None)!r}: {exc}")
            return Score(correct=False, outcome=None, failure_kind="error")
        ctx.trace.append(Step(ledger_id=ctx.ledger_id, kind="note", source=JUDGED_SOURCE, text=screened))
        grades = []
        for k in range(1, self.judge_runs + 1):
            reply = await ctx.acall(text, draw_index=k, **self.params)
            if not reply.ok:
                ctx.step_error(f"judge draw {k} failed: {reply.error}")
                return Score(correct=False, outcome=None, failure_kind="error")
            try:
                grades.append(parse_grade(self.kind, reply.raw_text))
            except ScorerError as exc:
                end = reply.finish_reason
                said = "" if end in (None, "stop") else f" (finish reason {end!r})"
                ctx.step_error(f"judge draw {k}: {exc}{said}")
                return Score(correct=False, outcome=None, failure_kind="error")
        yes = sum(self._verdict(g) for g in grades)
        correct = 2 * yes > len(grades)  # a tie is not a majority for "correct"
        return Score(correct=correct, outcome=" ".join(grades), failure_kind=None if correct else "wrong")


def judge_scorer(
    client: Any,
    kind: str = "correct",
    template: str | None = None,
    *,
    judge_runs: int = 1,
    pass_mark: int = 7,
    name: str | None = None,
    pricing: Any = None,
    **params: Any,
) -> JudgeScorer:
    """A model-graded scorer: a judge model grades each output against the item and its label.

    The judge is any hrbench client (OpenAI, Anthropic, mock, replay). Its
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
    the row an ``"error"`` with the cause in the trace, never a silent wrong. How a
    reply is read, reasoning blocks and invisible characters included: :func:`parse_grade`.

    The template's placeholders, each named whole:

    - ``{item}``: the item as text (:func:`render_item`): a string item itself; a mapping
      item its fields, ``name: value`` a line, without its ``document``; a reading item
      (``{"document", "question"}``) its question alone. Never a Python repr.
    - ``{question}``: the item's ``question`` field (a string item is its own question).
    - ``{document}``: the item's ``document`` field. The judge sees a reading item's document
      only where the template asks for it (the shipped templates do not: they grade against
      the label).
    - ``{label}``: the accepted answers, joined by ``" | "``; ``{output}``: the output graded.

    ``{question}`` or ``{document}`` on an item without that string field is an ``"error"`` row
    naming the placeholder, the judge not asked (:meth:`JudgeScorer.check_items` finds such
    items before a run).

    Args:
        client: the judge's model client.
        kind: ``"correct"`` (the judge replies CORRECT or INCORRECT) or ``"rubric"`` (a
            whole number 0-10; correct when at least ``pass_mark``).
        template: the judge's prompt, with ``{output}`` and any of ``{item}``, ``{question}``,
            ``{document}`` and ``{label}`` (:data:`PLACEHOLDERS`, above); by default
            :data:`CORRECTNESS_TEMPLATE` or :data:`RUBRIC_TEMPLATE`. The reply must follow
            ``kind``'s form.
        judge_runs: judge draws per output (a majority; a tie is not correct).
        pass_mark: the rubric grade from which an output is correct (7 of 10 by default).
        name: the scorer's name; ``"judge_<kind>"`` by default.
        pricing: the judge's own prices, a :class:`~hrbench.models.Pricing` whose
            ``overrides`` are laid over the benchmark's price table for the judge's requests
            (a spec's ``price`` and ``prices`` in ``[scorer_settings.client]`` give it); under
            an explicit USD cap a judge model with no price is refused before the first call.
        **params: sampling parameters for the judge's requests (``temperature``, ``model``, ...).

    Returns:
        A :class:`JudgeScorer`, for ``benchmark(..., scorer=...)``.

    Raises:
        ConfigError: an unknown ``kind``; a template that is not a string, is malformed, has
            no ``{output}``, or names another field (``{score}``, ``{item.question}``,
            ``{item[0]}``, a positional ``{}``), the error naming ``template``, the template
            and the field; ``judge_runs`` below 1 or ``pass_mark`` outside 0-10.

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
    _check_template(template)
    if isinstance(judge_runs, bool) or not isinstance(judge_runs, int) or judge_runs < 1:
        raise ConfigError("judge_runs", judge_runs, "expected a whole number >= 1")
    if isinstance(pass_mark, bool) or not isinstance(pass_mark, int) or not 0 <= pass_mark <= 10:
        raise ConfigError("pass_mark", pass_mark, "expected a whole number from 0 to 10")
    overrides = getattr(pricing, "overrides", None)
    if pricing is not None and not isinstance(overrides, Mapping):
        raise ConfigError("pricing", pricing, "expected an hrbench.Pricing (its overrides price the judge)")
    return JudgeScorer(
        client, kind, template, judge_runs, pass_mark, params, name or f"judge_{kind}", pricing
    )
