"""What a benchmark says of its stopped and failed runs: their causes, the notes, the advice.

:func:`stop_note` and :func:`error_note` are the sentences the printout (:class:`~hrbench.Bench`),
``hrb ls``, the report and the view end with; :func:`error_causes` counts a summary's runs that
ended in errors by cause, and :func:`error_of` reads a run's message and cause from its trace.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hrbench._util.messages import NO_OUTPUT, failure_cause
from hrbench.records import Step

__all__ = [
    "DUPLICATE_ADVICE",
    "DUPLICATE_CAUSE",
    "MISSING_OUTPUT_ADVICE",
    "MISSING_OUTPUT_CAUSE",
    "error_causes",
    "error_note",
    "error_of",
    "stop_note",
]


def stop_note(stopped: int, runs: int, resume: str | None = None) -> str | None:
    """The sentence that says a budget stopped ``stopped`` of ``runs`` runs.

    Seed 002 counts a stopped run wrong; this says so wherever the benchmark is shown, so that
    an accuracy a budget lowered is never read as the arm's. ``resume`` is appended as the way
    to finish the runs.

    Args:
        stopped: runs stopped by the governor.
        runs: runs in the benchmark.
        resume: how to run the rest (a command), or ``None``.

    Returns:
        The sentence, or ``None`` when ``stopped`` is 0.

    Example:
        >>> stop_note(240, 250, "`hrb bench --resume b1 --max-calls N`")
        '240 of 250 runs were stopped by the budget and count as wrong; resume with `hrb bench --resume b1 --max-calls N`'
        >>> stop_note(0, 250) is None
        True
    """
    if not stopped:
        return None
    note = f"{stopped} of {runs} runs were stopped by the budget and count as wrong"
    return note if resume is None else f"{note}; resume with {resume}"


def error_causes(summary: Iterable[Mapping[str, Any]] | None) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Runs that ended in errors by cause over the arms of a summary, and the arms of each cause.

    A summary stored before causes were kept gives its ``errors`` count as cause ``"unknown"``.

    Args:
        summary: per-arm dicts (:meth:`hrbench.Bench.summary`, or one stored with a benchmark) with
            ``arm`` and ``error_causes`` (or only ``errors``); ``None`` while it runs.

    Returns:
        ``(causes, arms)``: cause -> runs, summed over arms; cause -> the arms that had it, in
        the summary's order.

    Example:
        >>> error_causes([{"arm": "a", "error_causes": {"x": 2}}, {"arm": "b", "error_causes": {"x": 1}}])
        ({'x': 3}, {'x': ['a', 'b']})
        >>> error_causes([{"arm": "a", "errors": 3}])
        ({'unknown': 3}, {'unknown': ['a']})
    """
    causes: dict[str, int] = {}
    arms: dict[str, list[str]] = {}
    for s in summary or []:
        by_cause = s.get("error_causes")
        if by_cause is None:
            by_cause = {"unknown": int(s.get("errors") or 0)} if s.get("errors") else {}
        for cause, k in by_cause.items():
            causes[cause] = causes.get(cause, 0) + int(k)
            if k and s.get("arm") is not None:
                arms.setdefault(cause, []).append(str(s["arm"]))
    return causes, arms


def error_note(
    causes: Mapping[str, int],
    runs: int,
    resume: str | None = None,
    *,
    arms: Mapping[str, Sequence[str]] | None = None,
) -> str | None:
    """The sentence that says how many of ``runs`` runs ended in errors, and the commonest cause.

    Rule: wherever a benchmark with such runs is shown, it says how many there are (seed
    002 counts them wrong) and the cause most of them had, so that a broken endpoint is never
    read as a bad arm. ``resume`` is appended as the way to run them again. The arms whose
    runs had the commonest cause are named with it, up to 5, so a cause such as ``no output for item 'q3'``
    says where the output is missing.

    Args:
        causes: runs that ended in errors, by cause (:meth:`hrbench.Bench.summary`'s ``error_causes``
            summed over arms: :func:`error_causes`).
        runs: runs in the benchmark.
        resume: how to run them again (a command), or ``None``.
        arms: cause -> the arms that had it (:func:`error_causes`), or ``None`` to name none.

    Returns:
        The sentence, or ``None`` when no run ended in an error. Of causes tied for the
        commonest, the first met is named.

    Example:
        >>> error_note({"openai: cannot connect to http://127.0.0.1:9/v1": 19, "RuntimeError": 1}, 20,
        ...            "`hrb bench --resume b1 --retry-errors`")
        '20 of 20 runs ended in errors and count as wrong; commonest cause: openai: cannot connect to http://127.0.0.1:9/v1 (19 runs); fix it, then run them again with `hrb bench --resume b1 --retry-errors`'
        >>> note = error_note({"no output for item 'q3'": 2}, 8, "R", arms={"no output for item 'q3'": ["a", "b"]})
        >>> note.split("; ")[1]
        "commonest cause: no output for item 'q3' (2 runs, arms 'a', 'b')"
        >>> "reads the same outputs and fails the same way" in note, "run them again with R" in note
        (True, False)
        >>> error_note({}, 20) is None
        True
        >>> "`--retry-errors` serves them the same replies" in error_note({"duplicate_draw": 4}, 5, "R")
        True

    Runs refused as duplicate draws (cause ``duplicate_draw``) are counted, but ``resume`` is not
    advised for them: :data:`DUPLICATE_ADVICE` says what helps instead. Nor
    for runs whose item the arm's outputs leave out:
    :data:`MISSING_OUTPUT_ADVICE`.
    """
    n = sum(causes.values())
    if not n:
        return None
    cause, k = max(causes.items(), key=lambda kv: kv[1])
    where = list((arms or {}).get(cause, ()))
    if where:
        shown = ", ".join(map(repr, where[:5])) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
        where_text = f", arm{'s' if len(where) != 1 else ''} {shown}"
    else:
        where_text = ""
    note = (
        f"{n} of {runs} runs ended in errors and count as wrong; "
        f"commonest cause: {cause} ({k} run{'s' if k != 1 else ''}{where_text})"
    )
    dup = causes.get(DUPLICATE_CAUSE, 0)
    if dup:  # --retry-errors cannot make them distinct draws
        note = f"{note}; {dup} of them {'were' if dup != 1 else 'was'} not distinct draws: {DUPLICATE_ADVICE}"
    missing = sum(k for c, k in causes.items() if c.startswith(MISSING_OUTPUT_CAUSE))
    if missing:  # a retry reads the same outputs and fails the same way
        note = f"{note}; {missing} of them had no output to score: {MISSING_OUTPUT_ADVICE}"
    if resume is None or dup + missing == n:
        return note
    return f"{note}; fix {'the other causes' if dup or missing else 'it'}, then run them again with {resume}"


MISSING_OUTPUT_CAUSE = "no output for item "
"""How the cause of a run whose arm's outputs leave its item out begins (:data:`hrbench._util.messages.NO_OUTPUT`)."""

MISSING_OUTPUT_ADVICE = (
    "a resume or `--retry-errors` reads the same outputs and fails the same way; add the missing "
    "outputs to the arm's outputs (file or mapping) and run the benchmark anew, or leave those items "
    "out of the reference"
)
"""What to do about missing outputs (not ``--retry-errors``, which cannot supply an answer the
outputs file lacks)."""

DUPLICATE_CAUSE = "duplicate_draw"
"""The cause of a run refused because its reply repeated an earlier run's draw (seed 002)."""

DUPLICATE_ADVICE = (
    "a resume or `--retry-errors` serves them the same replies and refuses them again; what helps is a "
    "provider that gives distinct draws (not one that repeats a response id: a caching proxy, a fixed "
    "seed) and arms whose every request carries the run's draw index, then the benchmark run anew "
    "with the cache off (`cache = false` in the spec, `cache=None` in Python; or `hrb cache clear`)"
)
"""What to do about duplicate draws (not ``--retry-errors``, which would accept one more duplicate
per retry)."""


_MODEL_ERROR_PREFIX = "ModelError: the model call failed, so it has no text: "


def error_of(trace: list[Step]) -> tuple[str, str]:
    """The message and short cause of a run that ended in an error, from its trace.

    The arm's error step, when it has one (the failed reply's message when the arm read the
    text of a failed model call); else the last failed request's (the arm returned a failed
    reply as its output); else the scorer called the output an error.

    Args:
        trace: the run's steps.

    Returns:
        ``(message, cause)``: the cause is short (``openai: HTTP 401``, ``RuntimeError``), as
        :func:`error_note` names it.

    Example:
        >>> error_of([Step(ledger_id="r", kind="error", source="arm", error="RuntimeError: no model")])
        ('RuntimeError: no model', 'RuntimeError')
    """
    arm_step = next((s.error for s in trace if s.kind == "error" and s.source == "arm" and s.error), None)
    if arm_step is not None:
        if arm_step.startswith(_MODEL_ERROR_PREFIX):  # the arm read the text of a failed reply
            inner = arm_step[len(_MODEL_ERROR_PREFIX) :]
            return inner, failure_cause(inner)
        if NO_OUTPUT.match(arm_step):  # an outputs arm's file lacks the item (missing = "error")
            return arm_step, failure_cause(arm_step)
        head = arm_step.split(": ", 1)[0]
        return arm_step, head[:80]
    failed = next((s.error for s in reversed(trace) if s.kind == "request" and s.error), None)
    if failed is not None:  # the arm returned a failed reply as its output
        return failed, failure_cause(failed)
    return "the scorer called the output an error", "error output"
