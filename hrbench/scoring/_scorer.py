"""Scorers: the seed-000 contract, ``scorer()`` and ``exact_scorer()``.

A scorer is ``fn(item, output, label) -> Score`` with a name. :func:`scorer` wraps a plain
function and enforces the contract of seed 000 on what it returns (see :meth:`Scorer.__call__`).
"""

from __future__ import annotations

import inspect
import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable

import msgspec

from hrbench._util.floats import DBL_DIG
from hrbench._util.text import JOIN, caseless, fold_minus, fold_numerals
from hrbench.errors import ConfigError, ScorerError
from hrbench.records import FAILURE_KINDS, REFUSAL_REASONS, Answer, Result, Score

__all__ = [
    "NOT_IN_DOCUMENT",
    "Scorer",
    "ScorerLike",
    "check_signature",
    "exact_scorer",
    "fold",
    "label_answers",
    "output_failure",
    "output_text",
    "plain_number",
    "scorer",
    "screen",
]

NOT_IN_DOCUMENT = "NOT_IN_DOCUMENT"
"""The label of an unanswerable item and the token a reader answers when the document lacks it."""

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_SPACE = re.compile(r"\s+")


@runtime_checkable
class ScorerLike(Protocol):
    """The Scorer role: a name and ``__call__(item, output, label) -> Score``."""

    name: str

    def __call__(self, item: Any, output: Any, label: Any) -> Score: ...


def fold(text: str) -> str:
    r"""Fold text for comparison (seed 000 ``normalise = TRUE``, plus the shared cases below).

    Steps, in order: superscript and subscript digits after a digit kept apart as ``^n`` and
    ``_n`` (``"5\u00b2"`` is not ``"52"``; a vulgar fraction after a digit
    is kept apart by a space: :func:`hrbench._util.text.fold_numerals`), NFKC (case H08a: full-width digits are ASCII digits; case H08e: a decomposed
    accent equals the precomposed one), curly quotes to ASCII quotes (case H08c: NFKC leaves
    them), the minus sign U+2212 and a dash before a digit to ``-`` (case R09a:
    ``"\u22125"`` equals the label -5; :func:`hrbench._util.text.fold_minus`), caseless matching in
    every script (cases H07a, I07s: ``"ß"`` folds to ``"ss"`` and ``"\u0130zmir"``
    equals ``"izmir"``; case H07c: no Turkic rule, so the dotless ``"ı"`` stays apart from
    ``"i"``; :func:`hrbench._util.text.caseless`), white space trimmed and each run of it collapsed
    to one space. Nothing else: punctuation stays (case R12d: ``"No"`` is not ``"No."``).

    Args:
        text: any string.

    Returns:
        The folded string.

    Example:
        >>> fold("  STRASSE\u00a0 Nord ")
        'strasse nord'
    """
    if not text.isascii():
        text = fold_numerals(text).replace(JOIN, " ")
        text = fold_minus(unicodedata.normalize("NFKC", text).translate(_QUOTES))
    return _SPACE.sub(" ", caseless(text)).strip()


def plain_number(x: int | float | Decimal) -> str:
    """Write a number in plain digits, never in exponent form (seed 000: 100000, not 1e+05).

    Example:
        >>> plain_number(1e5), plain_number(45.2), plain_number(-3), plain_number(29.0)
        ('100000', '45.2', '-3', '29')
    """
    if isinstance(x, bool):
        return "TRUE" if x else "FALSE"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    d = Decimal(repr(x)) if isinstance(x, float) else Decimal(x)
    s = format(d, "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def label_answers(label: Any) -> list[str] | None:
    """The accepted answers of a label as strings, or ``None`` for an item with no label.

    A label may be one string, one number (written in plain digits), or a list of them
    (seed 000: matching any one is correct). ``None`` and NaN mean no label.

    Rule (the label ``0.1 + 0.2`` accepts ``"0.3"``): a float label carrying float64 noise is also written to 15 significant digits (C's
    ``DBL_DIG``, :mod:`hrbench._util.floats`): ``0.30000000000000004`` accepts ``"0.3"`` as well as
    its ``repr``. Both are plain digits, so seed 000's "100000, not 1e+05" still holds.

    A label may also be a mapping whose ``answers`` holds the accepted answers (any of
    the forms above) beside details of the gold answer that a scorer needs, such as TAT-QA's
    raw answer, scale and answer type (:func:`hrbench.reading.tatqa_reference`). Such details
    belong in the label, never in the item: an arm sees the item, and a prompt that shows the
    item must not show the answer.

    Example:
        >>> label_answers(["Paris", 100000.0])
        ['Paris', '100000']
        >>> label_answers({"answers": [-12.6], "scale": "million"})
        ['-12.6']
        >>> label_answers(0.1 + 0.2)
        ['0.30000000000000004', '0.3']
    """
    if label is None:
        return None
    if type(label) is str:
        return [label]
    if type(label) is list and all(type(x) is str for x in label):
        return list(label)  # the common case, without recursion
    if isinstance(label, float) and math.isnan(label):
        return None
    if isinstance(label, (list, tuple)):
        out = [a for x in label for a in (label_answers(x) or [])]
        return out
    if isinstance(label, Mapping):
        return label_answers(label.get("answers"))
    if isinstance(label, float) and math.isfinite(label):
        written = plain_number(label)
        short = plain_number(Decimal(format(label, f".{DBL_DIG}g")))
        return [written] if short == written else [written, short]
    if isinstance(label, (int, float, Decimal)):
        return [plain_number(label)]
    return [str(label)]


def _get(output: Any, name: str) -> Any:
    if type(output) is Result:  # a model's reply, the common case: no ABC check
        return output.raw_text if name == "text" else getattr(output, name, None)
    if isinstance(output, Mapping):
        return output.get(name)
    if name == "text" and isinstance(output, Result):
        return output.raw_text  # a failed result's text raises; its failure kind is read apart
    return getattr(output, name, None)


def output_text(output: Any) -> str | None:
    """The text of an output (seed 000): the string itself, or its ``answer`` or ``text``.

    Returns ``None`` when there is no text at all: ``None``, NaN, an empty string, a string
    that is empty after trimming (case H09d), or something without ``answer`` or
    ``text``.

    Example:
        >>> output_text({"text": "  Paris "}), output_text("   "), output_text(42)
        ('  Paris ', None, None)
    """
    if isinstance(output, str):
        text: Any = output
    elif type(output) is Result:  # a model's reply, the common case: no ABC check
        text = output.raw_text  # a Result has no answer
    elif (
        isinstance(output, (Mapping, Answer, Result)) or hasattr(output, "text") or hasattr(output, "answer")
    ):
        text = _get(output, "answer")
        if text is None:
            text = _get(output, "text")
    else:
        return None
    if not isinstance(text, str) or not text.strip():
        return None
    return text


def output_failure(output: Any) -> str | None:
    """The failure kind an output carries before its text is read (seed 000).

    In order: a ``failure_kind`` element from the seed's list (an arm can report a refusal or a
    parse failure itself); a reply the provider refused or filtered (``refused`` true, or
    ``finish_reason`` ``"refusal"`` / ``"content_filter"``) is ``"refusal"`` (a refused
    :class:`~hrbench.records.Result` carries its failure kind); a failed result (``ok`` false)
    is ``"error"``. ``None`` otherwise.

    Example:
        >>> output_failure({"ok": False, "error": "HTTP 500"})
        'error'
    """
    if isinstance(output, (str, int, float)) or output is None:
        return None
    kind = _get(output, "failure_kind")
    if isinstance(kind, str) and kind in FAILURE_KINDS:
        return kind
    if _get(output, "refused") is True or _get(output, "finish_reason") in REFUSAL_REASONS:
        return "refusal"  # a refused or filtered reply carries its kind
    ok = _get(output, "ok")
    if ok is False:
        return "error"
    return None


def screen(output: Any) -> Score | str:
    """The seed-000 checks a scorer makes before it reads an answer.

    Returns:
        A wrong :class:`Score` for an output that is not an answer -- the failure kind it
        carries (:func:`output_failure`), or ``"parse_failure"`` when it has no text -- else
        the output's text.

    Example:
        >>> screen({"text": "B", "failure_kind": "refusal"}), screen("  B ")
        (Score(correct=False, outcome='B', failure_kind='refusal'), '  B ')
    """
    kind = output_failure(output)
    text = output_text(output)
    if kind is not None:
        return Score(correct=False, outcome=text, failure_kind=kind)
    if text is None:
        return Score(correct=False, outcome=None, failure_kind="parse_failure")
    return text


_SCORE_FORMS = (
    "a Score, a dict of correct/outcome/failure_kind, a (correct, outcome, failure_kind) tuple, or a bool"
)


def _shown(value: Any) -> str:
    """A short ``repr`` of what a scorer returned, for an error message."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _as_score(value: Any, name: str) -> Score:
    """Read what a scorer's function returned as a :class:`Score`, or refuse it.

    Raises:
        ScorerError: naming the scorer and the value, for anything but the forms of
            :meth:`Scorer.__call__` (``None`` -- a missing ``return`` -- included).
    """
    if isinstance(value, Score):
        s = value
    elif isinstance(value, Mapping):
        try:
            s = msgspec.convert(dict(value), Score)
        except msgspec.ValidationError as exc:
            raise ScorerError(f"scorer {name!r} returned a malformed score {_shown(value)}: {exc}") from None
    elif isinstance(value, tuple) and len(value) == 3:
        s = Score(correct=value[0], outcome=value[1], failure_kind=value[2])
    elif isinstance(value, bool):
        s = Score(correct=value)
    else:
        why = " (a missing `return`?)" if value is None else ""
        raise ScorerError(f"scorer {name!r} returned {_shown(value)}{why}; expected {_SCORE_FORMS}")
    if s.correct is not None and not isinstance(s.correct, bool):
        raise ScorerError(
            f"scorer {name!r} returned correct={_shown(s.correct)}; expected True, False or None"
        )
    if s.outcome is not None and not isinstance(s.outcome, str):
        raise ScorerError(f"scorer {name!r} returned outcome={_shown(s.outcome)}; expected a string or None")
    return s


_ROLES = {
    **dict.fromkeys(("item", "question", "payload", "sample", "example", "prompt", "input"), 0),
    **dict.fromkeys(("output", "prediction", "pred", "response", "completion", "reply", "generated"), 1),
    **dict.fromkeys(("label", "labels", "target", "gold", "expected", "truth", "ground_truth"), 2),
}
"""Parameter names that say which of the three arguments a scorer's function expects there."""

_ROLE_NAMES = ("item", "output", "label")
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def check_signature(fn: Callable[..., Any], name: str) -> None:
    """Refuse a scorer function that cannot be meant for ``fn(item, output, label)``.

    hrbench calls a scorer's function with three positional arguments, in the order of seed
    000: ``fn(item, output, label)`` -- the item's payload, what the arm returned, the item's
    label. So that ``def s(output, label, item=None)`` is never called with the item as
    ``output``, scoring every run wrong in silence:

    - a function that cannot take three positional arguments is refused;
    - a function whose first three parameters have names that say another order (``output``,
      ``prediction``, ``response``... first; ``label``, ``target``, ``gold``, ``expected``...
      not third; ``item``, ``question``, ``input``... not first) is refused, naming the order
      hrbench uses. It is refused rather than called by name: the names are a guess at the
      author's meaning, a refusal costs one edit, and a scorer called one way in a benchmark
      and another way elsewhere would score differently in silence.

    Names that say nothing (``a, b, c``; ``*args``) and callables without a readable
    signature are accepted as they are.

    Raises:
        ConfigError: naming the field ``scorer``, the function's signature and the order.

    Example:
        >>> check_signature(lambda item, output, label: True, "ok")
        >>> def s(output, label, item=None): return output == label
        >>> check_signature(s, "s")
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: scorer: scorer 's' takes (output, label, item=None), but hrbench calls fn(item, output, label) with three positional arguments: 'output' is passed the item, 'label' is passed the output, 'item' is passed the label; reorder the parameters (got 's')
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin or C callable with no signature to read
        return
    shown = str(sig)
    try:
        sig.bind(None, None, None)
    except TypeError:
        raise ConfigError(
            "scorer",
            name,
            f"scorer {name!r} takes {shown}, but hrbench calls fn(item, output, label) with three "
            "positional arguments",
        ) from None
    params = [p.name for p in sig.parameters.values() if p.kind in _POSITIONAL][:3]
    misplaced = [(i, p) for i, p in enumerate(params) if _ROLES.get(p.lower().strip("_"), i) != i]
    if misplaced:
        passed = ", ".join(f"{p!r} is passed the {_ROLE_NAMES[i]}" for i, p in enumerate(params))
        raise ConfigError(
            "scorer",
            name,
            f"scorer {name!r} takes {shown}, but hrbench calls fn(item, output, label) with three "
            f"positional arguments: {passed}; reorder the parameters",
        )


class Scorer:
    """A named scorer (seed 000's ``hr_scorer``).

    Calling it applies the contract of seed 000 to what the function returns. The function
    returns a :class:`Score`, a dict of its fields (``correct``, ``outcome``,
    ``failure_kind``), a ``(correct, outcome, failure_kind)`` tuple, or a bare ``bool`` (the
    verdict, no outcome). Then:

    - anything else -- ``None`` (a function that forgot its ``return``), a string such as
      ``"false"``, a number, a ``correct`` that is not ``True``/``False``/``None``, an outcome
      that is not a string -- raises :class:`ScorerError` naming the scorer and the value, never
      a silent NA;
    - ``correct=None`` with no ``failure_kind`` on an item that has a label raises
      :class:`ScorerError` too: seed 000 keeps NA for "the item cannot be scored (it has no
      label)", so on a labelled item it is no verdict;
    - a wrong output whose ``failure_kind`` is ``None`` is recorded as ``"wrong"``;
    - an output with a ``failure_kind`` is counted wrong, so ``correct=None`` beside one is
      recorded as ``False``, and ``True`` beside one raises :class:`ScorerError`;
    - an item with no label (``label is None``) is recorded ``correct=None`` with its
      ``failure_kind`` kept.

    Inside a benchmark, a :class:`ScorerError` (as any exception the scorer raises) makes that
    run an ``"error"`` row whose trace names the scorer and the cause, so the benchmark ends
    with status ``errors`` (``hrb bench`` exits 3) and is never scored in silence.

    In a benchmark, ``output`` is the arm's output: a prompt arm's reply text, a function arm's
    return value (a run whose model call failed never reaches a scorer: it is an ``"error"``).

    Args:
        fn: ``fn(item, output, label)`` returning one of the forms above.
        name: the scorer's name, recorded with the benchmark.
        settings: the scorer's settings, recorded with the benchmark.
        reads_reply: receive a prompt arm's reply (a :class:`~hrbench.records.Result`) instead of
            its text (:attr:`reads_reply`; the built-in scorers do).

    Raises:
        ConfigError: when ``name`` is not a non-empty string or ``fn`` is not callable.
        ScorerError: (on call) when the function breaks the contract.

    Example:
        >>> forgot = Scorer(lambda item, output, label: None, "forgot")
        >>> forgot(None, "Paris", "Paris")
        Traceback (most recent call last):
        ...
        hrbench.errors.ScorerError: scorer 'forgot' returned None (a missing `return`?); expected a Score, a dict of correct/outcome/failure_kind, a (correct, outcome, failure_kind) tuple, or a bool
    """

    reads_reply: bool = False
    """Whether a prompt arm's output reaches the scorer as the model's reply, a
    :class:`~hrbench.records.Result` (its text, finish reason and refusal), rather than as its text.
    The built-in scorers read replies, so a refused or filtered reply is a ``"refusal"`` (seeds
    000 and 001); a function of one's own gets the text, as the docs promise: a prompt arm's output
    is its reply's text, a function arm's what it returned (:func:`hrbench.runner._invoke.checked`).
    No scorer ever receives a failed call: that run is an ``"error"`` before any scorer sees it."""

    offload: bool = False
    """Whether the scorer may take long on one reply (the pattern scorer: a pattern may backtrack up
    to its time limit): a benchmark and the daemon then run it in a worker thread, never on the
    event loop (:func:`hrbench.runner.runtime.off_loop`). Set it on a scorer of your own that is slow."""

    def __init__(
        self,
        fn: Callable[[Any, Any, Any], Any],
        name: str,
        settings: dict[str, Any] | None = None,
        *,
        reads_reply: bool = False,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ConfigError("name", name, "a scorer needs a non-empty name")
        if not callable(fn):
            raise ConfigError("fn", fn, "a scorer needs a callable fn(item, output, label)")
        check_signature(fn, name)
        self.fn = fn
        self.name = name
        self.settings = dict(settings or {})
        self.reads_reply = reads_reply

    def __repr__(self) -> str:
        return f"Scorer(name={self.name!r})"

    @property
    def spec(self) -> dict[str, Any]:
        """A small record of the scorer (name + settings), stored with a benchmark."""
        return {"name": self.name, "settings": self.settings}

    def __call__(self, item: Any, output: Any, label: Any) -> Score:
        s = _as_score(self.fn(item, output, label), self.name)
        kind = s.failure_kind
        if kind is not None and kind not in FAILURE_KINDS:
            raise ScorerError(f"scorer {self.name!r} returned unknown failure_kind {kind!r}")
        if label_answers(label) is None:
            return Score(correct=None, outcome=s.outcome, failure_kind=kind)
        if kind is not None:
            if s.correct is True:
                raise ScorerError(f"scorer {self.name!r} returned correct=True beside failure_kind {kind!r}")
            return Score(correct=False, outcome=s.outcome, failure_kind=kind)
        if s.correct is False:
            return Score(correct=False, outcome=s.outcome, failure_kind="wrong")
        if s.correct is None:
            raise ScorerError(
                f"scorer {self.name!r} returned correct=None with no failure_kind on an item with a "
                "label; NA is for an item with no label"
            )
        return Score(correct=True, outcome=s.outcome, failure_kind=None)


def scorer(fn: Callable[[Any, Any, Any], Any], name: str) -> Scorer:
    """Make a scorer of a function (seed 000's ``hr_scorer``).

    Args:
        fn: ``fn(item, output, label)`` returning ``Score(correct, outcome, failure_kind)`` or a
            dict with those keys.
        name: the scorer's name.

    Returns:
        A :class:`Scorer`.

    Example:
        A number within 1% of the label (seed 000):

        >>> def within(item, output, label):
        ...     try:
        ...         x = float(output)
        ...     except (TypeError, ValueError):
        ...         return {"correct": False, "outcome": None, "failure_kind": "parse_failure"}
        ...     return {"correct": abs(x - label) <= 0.01 * abs(label), "outcome": format(x, "g"),
        ...             "failure_kind": None}
        >>> near = scorer(within, name="within_1pct")
        >>> near(None, "45.3", 45.2)
        Score(correct=True, outcome='45.3', failure_kind=None)
    """
    return Scorer(fn, name)


def exact_scorer(normalise: bool = True) -> Scorer:
    """The exact scorer (seed 000's ``hr_scorer_exact``), the default scorer.

    Compares the output's text with the label. Before comparing it sorts out outputs that are
    not answers, in this order: an output carrying a ``failure_kind`` keeps it (case H10g); a
    failed result (``ok=False``) is ``"error"`` (case H09e); no text at all (``None``, empty,
    only white space: cases H09a, H09b, H09d) is ``"parse_failure"``; the text
    ``NOT_IN_DOCUMENT`` in any case is ``"not_in_document"`` unless the label accepts it
    (cases H11d, H11e).

    A label may hold several accepted answers: matching any one is correct (case H06a). A
    number in a label is compared as written in plain digits: the label 100000 accepts
    ``"100000"`` and not ``"1e+05"`` (case L01a).

    With ``normalise=True`` (named ``exact_normalised``) both sides are folded by :func:`fold`:
    NFKC, curly quotes to ASCII, case folding, white space trimmed and collapsed. Nothing else
    is folded: ``"8,000"`` is not 8000, ``"1.0"`` is not 10 and ``"$29.00"`` is not 29 (cases
    H01e, H03a, H05c); use ``hrbench.reading.answer_scorer()`` for number-aware matching. The
    exact scorer recognises only the ``NOT_IN_DOCUMENT`` token, not other ways of saying the
    document lacks an answer (case H11f, unlike ``answer_contains``). With ``normalise=False``
    (named ``exact``) the texts are compared as they are.

    Args:
        normalise: fold both sides before comparing.

    Returns:
        A :class:`Scorer` named ``exact_normalised`` or ``exact``.

    Example:
        >>> exact = exact_scorer()
        >>> exact("Capital of France?", "  paris ", "Paris")
        Score(correct=True, outcome='paris', failure_kind=None)
        >>> exact("Capital of France?", "Lyon", "Paris").failure_kind
        'wrong'
    """

    def norm(s: str) -> str:
        return fold(s) if normalise else s

    def fn(item: Any, output: Any, label: Any) -> Score:
        answers = label_answers(label)
        kind = output_failure(output)
        if kind is not None:
            text = output_text(output)
            return Score(correct=False, outcome=None if text is None else norm(text), failure_kind=kind)
        text = output_text(output)
        if text is None:
            return Score(correct=False, outcome=None, failure_kind="parse_failure")
        seen = norm(text)
        if answers is None and text.strip().casefold() != NOT_IN_DOCUMENT.casefold():
            return Score(correct=None, outcome=seen, failure_kind=None)
        accepted = {norm(a) for a in answers or []}
        if seen in accepted:
            return Score(correct=True, outcome=seen, failure_kind=None)
        if text.strip().casefold() == NOT_IN_DOCUMENT.casefold():
            if any(a.strip().casefold() == NOT_IN_DOCUMENT.casefold() for a in answers or []):
                return Score(correct=True, outcome=seen, failure_kind=None)
            return Score(correct=False, outcome=seen, failure_kind="not_in_document")
        return Score(correct=False, outcome=seen, failure_kind="wrong")

    return Scorer(
        fn, "exact_normalised" if normalise else "exact", {"normalise": normalise}, reads_reply=True
    )
