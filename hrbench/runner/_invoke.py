"""The runner's steps for one run: invoke an arm, judge and score its output, make its row.

A benchmark's :class:`Plan` (its arms, reference, runs, scorer and metrics) is made by
:mod:`hrbench.runner._plan`, and :mod:`hrbench.runner._loop` runs every cell; each run goes through
these steps in order: :func:`invoke_sync` or :func:`invoke_async` (the arm once, its failure
recorded by :func:`failed`), :func:`checked` (a failed model call is an error run that no scorer
sees; a prompt arm's reply becomes its text), :func:`metric_values`, :func:`judge` (a scorer that
needs a context) and :func:`score_row` (the row, with :func:`row_usage` summing its trace). The Ray
executor (:mod:`hrbench.runner.ray`) runs the same steps on its workers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import msgspec

from hrbench._util.messages import model_error
from hrbench.arm import Arm, Context, RunInfo, current_run
from hrbench.errors import BudgetRefused, DuplicateDrawError, ReasoningExhausted, ScorerError
from hrbench.models import Pricing
from hrbench.records import Result, Row, Score, Step
from hrbench.reference import Reference
from hrbench.runner._outputs import output_note
from hrbench.runner.runtime import Runtime
from hrbench.scoring import ScorerLike, label_answers

__all__ = [
    "ARM_REPORTED_ERROR",
    "Attempt",
    "BenchMetric",
    "Plan",
    "checked",
    "failed",
    "invoke_async",
    "invoke_sync",
    "judge",
    "judge_pricing",
    "judge_runtime",
    "metric_values",
    "row_usage",
    "run_failure",
    "score_row",
    "scored",
    "scorer_input",
]

BenchMetric = Callable[[Any, Any, Any], Any]
"""A benchmark metric: ``metric(item, output, label)`` -> a number, a Score or a dict of them."""


def metric_values(plan: Plan, item: str, att: Attempt) -> dict[str, float]:
    """A run's benchmark metric values; a forced run (an error, a stop) is scored on ``None``.

    A metric that raises is recorded in the run's trace and gives no value for the run.
    """
    values: dict[str, float] = {}
    payload, label = plan.payloads[item], plan.labels[item]
    output = None if att.forced is not None else att.output
    for name, fn in plan.metrics:
        try:
            got = fn(payload, output, label)
            pairs = got.items() if isinstance(got, Mapping) else [(name, got)]
            for key, v in pairs:
                if isinstance(v, Score):
                    v = None if v.correct is None else float(v.correct)
                if v is not None:
                    values[str(key)] = float(v)
        except Exception as exc:
            att.ctx.step_error(f"metric {name!r} raised {type(exc).__name__}: {exc}")
    return values


def row_usage(steps: list[Step]) -> tuple[int, int, int, int, float | None, str | None]:
    """A run's tokens (in, out, reasoning, cached), USD paid and usage provenance, from its trace.

    USD sums the live requests and the billed retried attempts (``None`` when one has no price).
    The provenance is ``"none"`` with no live request, ``None`` when one has no usage,
    ``"reported"`` when the provider reported every one, ``"counted"`` when the rest were
    counted with the model's tokenizer, else ``"estimated"``; with no live request and a step
    of another tool's log (source ``"log"``: an imported run, whose tokens and cost the log
    records and nothing was paid here), ``"log"``.

    Example:
        >>> from hrbench.records import Usage
        >>> row_usage([Step(ledger_id="r", source="live", usd=0.5, usage=Usage(tokens_in=3, tokens_out=2))])
        (3, 2, 0, 0, 0.5, 'reported')
    """
    tin = tout = treas = tcache = 0
    usd: float | None = 0.0
    provs: set[str | None] = set()  # the provenances of the live requests' usage
    logged = False
    for s in steps:
        u = s.usage
        if u is not None:
            tin += u.tokens_in
            tout += u.tokens_out
            treas += u.tokens_reasoning
            tcache += u.tokens_cached
        if s.source == "live":
            kind = s.kind
            if kind == "request":
                usd = None if (usd is None or s.usd is None) else usd + s.usd
                provs.add(None if u is None else u.provenance)
            elif kind == "attempt":  # a retried attempt the provider billed
                usd = None if (usd is None or s.usd is None) else usd + s.usd
        elif s.source == "log":
            logged = True
    if not provs:
        prov: str | None = "log" if logged else "none"
    elif None in provs:
        prov = None
    elif provs == _REPORTED:
        prov = "reported"
    elif "counted" in provs and provs <= _COUNTED:
        prov = "counted"
    else:
        prov = "estimated"
    return tin, tout, treas, tcache, usd, prov


_REPORTED = {"reported"}
_COUNTED = {"reported", "counted"}


@dataclass
class Plan:
    arms: list[Arm]
    reference: Reference
    item_ids: list[str]
    runs: int
    split: list[str]
    seed: int
    scorer: ScorerLike
    bench_id: str
    metrics: list[tuple[str, BenchMetric]] = field(default_factory=list)
    payloads: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, Any] = field(default_factory=dict)
    splits: dict[str, str] = field(default_factory=dict)
    unlabelled: dict[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.payloads = self.reference.items
        self.labels = self.reference.labels
        self.splits = self.reference.splits
        self.unlabelled = {i: label_answers(lab) is None for i, lab in self.labels.items()}

    def cells(self) -> list[tuple[str, str, Arm]]:
        clusters = self.reference.clusters
        order: dict[str, list[str]] = {}
        for i in self.item_ids:
            order.setdefault(clusters[i], []).append(i)
        return [(c, i, a) for c, ids in order.items() for i in ids for a in self.arms]


class Attempt(msgspec.Struct, gc=False):
    """One run of an arm on an item, before scoring.

    ``output`` is the arm's output as a scorer of one's own, a metric and a judge receive it (a
    prompt arm's reply text once :func:`checked`); ``reply`` the reply of a prompt arm, which
    scorers that read replies receive instead (:attr:`~hrbench.scoring.Scorer.reads_reply`).

    A Struct outside the cyclic garbage collector's tracking (msgspec's ``gc=False``): an
    attempt refers to its context and output and nothing refers back to it, so it can be part
    of no reference cycle; a sync arm's trip keeps a group's attempts alive across collections.
    """

    ctx: Context
    output: Any = None
    forced: str | None = None
    dup: str | None = None
    seconds: float = 0.0
    score: Score | None = None  # given by a scorer that needs a context (a judge), before score_row
    reply: Result | None = None


_run_info = tuple.__new__
"""``_run_info(RunInfo, (arm, item, run))`` is ``RunInfo(arm, item, run)`` without the named
tuple's ``__new__`` in Python (half the time; it runs for every run)."""


def _new_attempt(plan: Plan, rt: Runtime, item: str, arm: Arm, run: int) -> Attempt:
    # by position, in Context's field order (arm, item_id, run, draw_index, seed, client,
    # ledger_id, runtime, _rng, trace, notes, reasoning): a keyword call of its generated
    # __init__ costs twice as much, and this runs for every run
    name = arm.name
    ctx = Context(
        name,
        item,
        run,
        run,
        plan.seed,
        rt.client,
        f"{plan.bench_id}/{name}/{item}/{run}",
        rt,
        None,
        [],
        [],
        arm.reasoning,
    )
    return Attempt(ctx)


def failed(att: Attempt, exc: Exception) -> None:
    """Record why a run raised: ``budget_stop``, ``reasoning_exhausted`` or ``error``.

    A refused request is ``budget_stop``; a reply that was all reasoning
    (:class:`~hrbench.errors.ReasoningExhausted`) ``reasoning_exhausted``, its cause in a note
    step; anything else ``error``.
    """
    ctx = att.ctx
    if isinstance(exc, BudgetRefused):
        att.forced = "budget_stop"
        if exc.limit not in ctx.notes:
            ctx.notes.append(exc.limit)
    elif isinstance(exc, ReasoningExhausted):
        att.forced = "reasoning_exhausted"
        ctx.trace.append(
            Step(ledger_id=ctx.ledger_id, kind="note", source="reasoning_exhausted", text=str(exc))
        )
    elif isinstance(exc, DuplicateDrawError):
        att.forced, att.dup = "error", str(exc)
        ctx.step_error(f"duplicate_draw: {exc}")
    else:  # an arm that raises has its run recorded as "error" (seed 002)
        att.forced = "error"
        ctx.step_error(f"{type(exc).__name__}: {exc}")


_NOT_CALLS = frozenset({str, int, float, bool, type(None)})

ARM_REPORTED_ERROR = "the arm's output reports failure_kind 'error'"
"""The cause a run's trace gives when the arm's output says it failed (``failure_kind="error"``)."""


def _get(output: Any, name: str) -> Any:
    if type(output) is Result:  # a prompt arm's reply, the common case: no ABC check
        return getattr(output, name, None)
    return output.get(name) if isinstance(output, Mapping) else getattr(output, name, None)


def _failed_call(output: Any) -> Any:
    """The failed model call an output is or carries, else ``None``.

    A :class:`~hrbench.records.Result` with ``ok`` false or that was all reasoning
    (``reasoning_exhausted``); a mapping or object with ``ok`` false (the seed's ``gr_result``
    as a dict); an output whose ``answer`` or ``text`` is such a result.
    """
    if isinstance(output, Result):
        return None if _answered(output) else output
    if isinstance(output, Mapping):
        if output.get("ok") is False:
            return output
        inner: tuple[Any, ...] = (output.get("answer"), output.get("text"))
    else:
        if getattr(output, "ok", None) is False:
            return output
        inner = (getattr(output, "answer", None), getattr(output, "text", None))
    return next((x for x in inner if isinstance(x, Result) and not _answered(x)), None)


def _answered(result: Result) -> bool:
    """Whether a call gave a reply to score: it succeeded and did not spend its limit reasoning."""
    return result.ok and not result.reasoning_exhausted


def run_failure(output: Any) -> tuple[str, Exception | None] | None:
    """Whether an arm's output is a failed run rather than a reply to score, and its failure kind.

    Seed 000 counts a failed result (``ok`` false) as ``"error"`` and an output carrying its
    own ``failure_kind`` as that kind; SPEC section 6: a failed model call surfaces as an
    ``"error"`` with its cause. The runner applies this before any scorer sees the output, so
    no scorer -- built-in, a function of one's own, a judge, one named in a spec -- ever
    receives a failed call, and the row keeps the call's failure kind:

    - a failed call (:func:`_failed_call`): ``("error", ModelError)``, the error naming the
      call's message, as reading its ``.text`` would raise;
    - a reply that spent its whole output limit reasoning and gave no answer:
      ``("reasoning_exhausted", ReasoningExhausted)`` (costed, never scored as a wrong answer;
      litellm-docs #559, ollama #17561);
    - an output whose ``failure_kind`` is ``"error"``, ``"budget_stop"`` or
      ``"reasoning_exhausted"`` (the arm reports its run failed, was stopped or ran out in
      reasoning): that kind, with ``None``.

    A refusal, a parse failure an arm reports, a partial answer a limit stopped (seed 001) and
    every reply are scored as usual.

    Returns:
        ``(failure kind, the error to record or None)``, or ``None`` for an output to score.

    Example:
        >>> kind, err = run_failure(Result(ok=False, error="openai: HTTP 500: boom", status=500))
        >>> kind, str(err)
        ('error', 'the model call failed, so it has no text: openai: HTTP 500: boom')
        >>> run_failure({"text": None, "failure_kind": "budget_stop"}), run_failure(Result(text="Paris"))
        (('budget_stop', None), None)
    """
    if type(output) in _NOT_CALLS:
        return None
    call = _failed_call(output)
    if isinstance(call, Result) and call.ok:  # ok, yet all reasoning (_answered)
        return "reasoning_exhausted", ReasoningExhausted.of(call)
    if call is not None:
        if isinstance(call, Mapping):
            call = SimpleNamespace(**{k: call.get(k) for k in ("error", "status", "key_env")})
        return "error", model_error(call)
    kind = _get(output, "failure_kind")
    if kind in ("error", "budget_stop", "reasoning_exhausted"):
        return kind, None
    return None


def checked(att: Attempt, arm: Arm) -> None:
    """Sort out a run's output once the arm returned, before any metric, judge or scorer reads it.

    An output that is a failed run (:func:`run_failure`) makes the run that failure: a failed
    call is an ``"error"`` whose cause is the call's message (:func:`failed`), so the benchmark
    ends with status ``errors`` and ``hrb bench`` exits 3; a reply that was all reasoning is
    ``"reasoning_exhausted"``, its cause in a note step. A prompt arm's reply
    (:attr:`~hrbench.arm.Arm.output_is_reply`) becomes its text, the arm's output, and is kept
    as :attr:`Attempt.reply` for the scorers that read replies.
    """
    out = att.output
    if att.forced is not None or type(out) in _NOT_CALLS:
        return
    found = run_failure(out)
    if found is not None:
        kind, exc = found
        if exc is not None:
            failed(att, exc)
        else:
            att.forced = kind
            if kind == "error":  # the run's end names the cause (the arm's own report)
                att.ctx.step_error(f"{ARM_REPORTED_ERROR}: {_get(out, 'error') or 'no message'}")
    elif arm.output_is_reply and isinstance(out, Result):
        att.reply, att.output = out, out.raw_text


def invoke_sync(plan: Plan, rt: Runtime, item: str, arm: Arm, run: int) -> Attempt:
    """Run a sync arm once, in the calling (worker) thread."""
    att = _new_attempt(plan, rt, item, arm, run)
    token = current_run.set(_run_info(RunInfo, (arm.name, item, run)))
    start = time.perf_counter()
    try:
        att.output = arm.fn(plan.payloads[item], att.ctx)
    except Exception as exc:
        failed(att, exc)
    finally:
        current_run.reset(token)
    att.seconds = time.perf_counter() - start
    return att


async def invoke_async(plan: Plan, rt: Runtime, item: str, arm: Arm, run: int) -> Attempt:
    """Run an async arm once, on the event loop."""
    att = _new_attempt(plan, rt, item, arm, run)
    token = current_run.set(_run_info(RunInfo, (arm.name, item, run)))
    start = time.perf_counter()
    try:
        att.output = await arm.fn(plan.payloads[item], att.ctx)
    except Exception as exc:
        failed(att, exc)
    finally:
        current_run.reset(token)
    att.seconds = time.perf_counter() - start
    return att


def judge_runtime(scorer: Any, rt: Runtime) -> Runtime | None:
    """The runtime of a scorer that needs a run context (a judge): its own client, the rest shared.

    The judge's requests go through the benchmark's governor (reserved and capped like an
    arm's), cache, recorder and pricing. Draws are not checked for repeats: two runs
    with the same output rightly share the judge's draws of that output.
    """
    if not getattr(scorer, "needs_context", False):
        return None
    judge = Runtime(
        scorer.client, rt.governor, rt.cache, rt.record, rt.store, judge_pricing(scorer, rt.pricing)
    )
    judge.check_draws = False
    judge.role = "judge"
    return judge


def judge_pricing(scorer: Any, pricing: Pricing) -> Pricing:
    """The prices a judge's requests are priced at: the judge's own (its ``pricing``) over ``pricing``.

    Rule: a judge is priced like any client; a spec's ``price`` and ``prices`` in
    ``[scorer_settings.client]`` are honoured for its requests.
    """
    own = getattr(getattr(scorer, "pricing", None), "overrides", None)
    return pricing.with_overrides(own) if own else pricing


async def judge(plan: Plan, jrt: Runtime, item: str, arm: Arm, run: int, att: Attempt) -> None:
    """Score one run with a scorer that needs a context; its steps join the run's trace."""
    from hrbench.scoring import JUDGE_SUFFIX

    ctx = att.ctx
    jctx = Context(
        arm=arm.name + JUDGE_SUFFIX,
        item_id=item,
        run=run,
        draw_index=1,
        seed=plan.seed,
        client=jrt.client,
        ledger_id=ctx.ledger_id,
        runtime=jrt,
        trace=ctx.trace,
        notes=ctx.notes,
    )
    token = current_run.set(RunInfo(jctx.arm, item, run))
    try:
        ascore = plan.scorer.ascore  # type: ignore[attr-defined]
        att.score = await ascore(plan.payloads[item], scorer_input(plan.scorer, att), plan.labels[item], jctx)
    except BudgetRefused as exc:  # a cap stops judging as it stops arms
        att.forced = "budget_stop"
        if exc.limit not in ctx.notes:
            ctx.notes.append(exc.limit)
    except Exception as exc:
        ctx.step_error(_scorer_cause(plan.scorer.name, exc))
        att.score = Score(
            correct=None if plan.unlabelled[item] else False, outcome=None, failure_kind="error"
        )
    finally:
        current_run.reset(token)


def _scorer_cause(name: str, exc: Exception) -> str:
    """The cause of a run whose scorer failed, as its trace and the run's end show it.

    Rule (never a silent NA): a scorer that
    raises, or breaks seed 000's contract (a :class:`~hrbench.errors.ScorerError`: ``None`` or
    another value that is not a score), makes that run an ``"error"`` row with this cause; the
    benchmark goes on, ends with status ``errors`` and ``hrb bench`` exits 3.
    """
    if isinstance(exc, ScorerError):
        return f"{exc} (ScorerError)" if repr(name) in str(exc) else f"scorer {name!r}: {exc} (ScorerError)"
    return f"scorer {name!r} raised {type(exc).__name__}: {exc}"


def scorer_input(scorer: Any, att: Attempt) -> Any:
    """What a scorer receives of a run: the arm's output, or a prompt arm's reply for a scorer that reads replies."""
    if att.reply is not None and getattr(scorer, "reads_reply", False):
        return att.reply
    return att.output


def scored(plan: Plan, item: str, att: Attempt) -> Score:
    """What the scorer says of one run's output (in a worker thread when :func:`off_loop`)."""
    try:
        score = plan.scorer(plan.payloads[item], scorer_input(plan.scorer, att), plan.labels[item])
        if not isinstance(score, Score):  # a ScorerLike of one's own, not wrapped by Scorer
            raise ScorerError(
                f"scorer {plan.scorer.name!r} returned {type(score).__name__}; expected a Score"
            )
    except Exception as exc:  # a scorer that crashes or breaks its contract: an error run
        att.ctx.step_error(_scorer_cause(plan.scorer.name, exc))
        score = Score(correct=None if plan.unlabelled[item] else False, outcome=None, failure_kind="error")
    return score


def score_row(plan: Plan, cluster: str, item: str, arm: Arm, run: int, att: Attempt) -> Row:
    """Score one run and make its row; the arm's output text joins its trace (:func:`output_note`)."""
    ctx = att.ctx
    if att.forced is not None:
        na = plan.unlabelled[item]
        score = Score(correct=None if na else False, outcome=None, failure_kind=att.forced)
    elif att.score is not None:
        score = att.score
    else:
        score = scored(plan, item, att)
    tin, tout, treas, tcache, usd, prov = row_usage(ctx.trace)
    # what the scorer received, exported as the row's output (hrb rows); a failed run has none
    note = None if att.forced is not None else output_note(ctx.ledger_id, att.output)
    if note is not None:
        ctx.trace.append(note)
    split = plan.splits[item]
    row = Row(
        cluster=cluster,
        item=item,
        arm=arm.name,
        run=run,
        split=split,
        correct=score.correct,
        outcome=score.outcome,
        failure_kind=score.failure_kind,
        tokens_in=tin,
        tokens_out=tout,
        tokens_reasoning=treas,
        tokens_cached=tcache,
        usd=usd,
        usd_provenance=prov,
        seconds=att.seconds,
    )
    # the last three fields set after: a call with more than 15 keywords is compiled to build
    # a dict of them first (CPython's STACK_USE_GUIDELINE), which makes a row 4x slower to make
    row.draw_index, row.ledger_id, row.reportable = run, ctx.ledger_id, split != "dev"
    return row
