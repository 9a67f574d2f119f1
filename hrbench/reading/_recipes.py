"""Reading recipes: arm factories that answer a question from a document (SPEC section 3).

Each factory returns an async :class:`~hrbench.arm.Arm` whose function sends its requests
through ``ctx.acall`` (so the run's governor, cache, recorder and trace apply) and returns an
:class:`~hrbench.records.Answer`. Every prompt asks the model to answer from the document only
and to reply ``NOT_IN_DOCUMENT`` when the document does not hold the answer.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import anyio
import anyio.to_thread

from hrbench.arm import Arm, Context
from hrbench.errors import BudgetRefused, ConfigError
from hrbench.records import Answer, Result
from hrbench.scoring import NOT_IN_DOCUMENT, REFUSAL_REASONS, fold_answer, is_not_found

__all__ = ["INSTRUCTIONS", "RECIPES", "chunk_document", "chunked", "direct", "retrieve"]

RECIPES = ("chunked", "direct", "retrieve")
"""The reading recipes by name (a spec's ``recipe``)."""

_OPTIONS = {
    "direct": (),
    "chunked": ("chunk_chars", "overlap_chars"),
    "retrieve": ("k", "chunk_chars", "overlap_chars"),
}

RECIPE_VERSION = "1"

INSTRUCTIONS = (
    "Answer the question using only the document. Reply with the answer alone: a short phrase, "
    "a name or a number, as the document writes it. If the document does not contain the "
    f"answer, reply exactly {NOT_IN_DOCUMENT}."
)
"""The system prompt every recipe sends (``instructions=`` replaces it)."""

_COMBINE = (
    "Parts of one document were read separately to answer a question. Their answers are listed "
    "below. Reply with the one answer to the question, as short as the answers are. If none of "
    f"them answers it, reply exactly {NOT_IN_DOCUMENT}."
)

_LEADING = re.compile(r"^\s*(?:final answer|answer)\s*[:\-]\s*", re.IGNORECASE)


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    text = _LEADING.sub("", text.strip())
    return text or None


def _model_of(model: Any) -> tuple[str | None, dict[str, Any]]:
    """The model name to ask for and the spec to record, from a name, a spec or a client."""
    if model is None:
        return None, {}
    if isinstance(model, str):
        return model, {"model": model}
    if isinstance(model, Mapping):
        spec = {k: v for k, v in model.items() if k in ("provider", "model", "base_url", "api_key_env")}
        return (str(spec["model"]) if spec.get("model") else None), spec
    if hasattr(model, "send") and hasattr(model, "model"):
        spec = {
            "provider": getattr(model, "provider", ""),
            "base_url": getattr(model, "base_url", ""),
            "model": model.model,
        }
        return model.model, spec
    raise ConfigError("model", model, "expected a model name, a client spec dict or a client")


def _sentences(paragraph: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", paragraph) if s]


@lru_cache(maxsize=256)
def chunk_document(document: str, chunk_chars: int = 2000, overlap_chars: int = 0) -> tuple[str, ...]:
    r"""Split a document into chunks of at most about ``chunk_chars`` characters.

    Paragraphs (separated by line breaks) are packed whole while they fit; a longer paragraph
    is split between sentences, and a longer sentence between words. With ``overlap_chars``
    each chunk after the first starts with the last words of the one before, up to that many
    characters.

    Args:
        document: the text.
        chunk_chars: the largest chunk, in characters (a single longer word is kept whole).
        overlap_chars: characters of the previous chunk repeated at the start of the next.

    Returns:
        The chunks, in document order; one chunk when the document fits.

    Raises:
        ConfigError: when ``chunk_chars`` is below 1 or ``overlap_chars`` is negative or not
            smaller than ``chunk_chars``.

    Example:
        >>> chunk_document("One. Two.\nThree.", chunk_chars=10)
        ('One. Two.', 'Three.')
    """
    if chunk_chars < 1:
        raise ConfigError("chunk_chars", chunk_chars, "must be at least 1")
    if overlap_chars < 0 or overlap_chars >= chunk_chars:
        raise ConfigError("overlap_chars", overlap_chars, "must be >= 0 and smaller than chunk_chars")
    pieces: list[str] = []
    for para in (p.strip() for p in document.splitlines()):
        if not para:
            continue
        if len(para) <= chunk_chars:
            pieces.append(para)
            continue
        for sent in _sentences(para):
            if len(sent) <= chunk_chars:
                pieces.append(sent)
                continue
            words, cur = sent.split(), ""
            for w in words:
                if cur and len(cur) + 1 + len(w) > chunk_chars:
                    pieces.append(cur)
                    cur = w
                else:
                    cur = f"{cur} {w}" if cur else w
            if cur:
                pieces.append(cur)
    chunks: list[str] = []
    cur = ""
    for piece in pieces:
        sep = "\n" if cur else ""
        if cur and len(cur) + len(sep) + len(piece) > chunk_chars:
            chunks.append(cur)
            cur = piece
        else:
            cur = f"{cur}{sep}{piece}"
    if cur:
        chunks.append(cur)
    if overlap_chars and len(chunks) > 1:
        out = [chunks[0]]
        for prev, nxt in zip(chunks, chunks[1:], strict=False):
            tail = prev[-overlap_chars:]
            if " " in tail and not prev.endswith(" "):
                tail = tail.split(" ", 1)[1]
            out.append(f"{tail} \u2026 {nxt}" if tail else nxt)
        chunks = out
    return tuple(chunks)


def _messages(instructions: str, document: str, question: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": instructions},
        {"role": "user", "content": f"Document:\n{document}\n\nQuestion: {question}"},
    ]


def _item_parts(item: Any) -> tuple[str, str]:
    if (
        isinstance(item, Mapping)
        and isinstance(item.get("document"), str)
        and isinstance(item.get("question"), str)
    ):
        return item["document"], item["question"]
    raise ConfigError("item", item, "a reading recipe needs an item {'document': str, 'question': str}")


def _refused(result: Result) -> bool:
    return result.refused or result.finish_reason in REFUSAL_REASONS


class _Recipe:
    """The function of a recipe arm; ``spec`` stands for it in the arm's hash."""

    def __init__(
        self, kind: str, model: Any, instructions: str | None, options: dict[str, Any], params: dict[str, Any]
    ) -> None:
        misplaced = [
            k for k in params if k in ("k", "chunk_chars", "overlap_chars") and k not in _OPTIONS[kind]
        ]
        if misplaced:
            raise ConfigError(misplaced[0], params[misplaced[0]], f"is not a setting of the {kind!r} recipe")
        self.kind = kind
        self.model, model_spec = _model_of(model)
        self.instructions = instructions or INSTRUCTIONS
        self.options = options
        self.params = params
        self.spec: dict[str, Any] = {
            "recipe": kind,
            "recipe_version": RECIPE_VERSION,
            "model": model_spec,
            "instructions": hashlib.sha256(self.instructions.encode()).hexdigest()[:16],
            **options,
            "params": params,
        }

    def __repr__(self) -> str:
        return f"<reading recipe {self.kind} model={self.model!r}>"

    async def _ask(self, ctx: Context, messages: list[dict[str, Any]]) -> Result:
        params = dict(self.params)
        if self.model is not None:
            params["model"] = self.model
        return await ctx.acall(messages, **params)

    async def __call__(self, item: Any, ctx: Context) -> Answer | Result:
        document, question = _item_parts(item)
        found: list[str] = []
        try:
            if self.kind == "direct":
                return await self._read(ctx, document, question)
            if self.kind == "retrieve":  # ranking is CPU work: keep it off the event loop
                passages = await anyio.to_thread.run_sync(
                    functools.partial(_top_passages, document, question, **self.options)
                )
                return await self._read(ctx, "\n\u2026\n".join(passages), question)
            return await self._chunked(ctx, document, question, found)
        except BudgetRefused as e:
            return Answer(
                text=found[0] if found else None, partial=True, notes=[e.limit], trace=list(ctx.trace)
            )

    async def _read(self, ctx: Context, document: str, question: str) -> Answer | Result:
        result = await self._ask(ctx, _messages(self.instructions, document, question))
        if not result.ok:
            return result
        return Answer(text=_clean(result.text), trace=list(ctx.trace))

    async def _chunked(self, ctx: Context, document: str, question: str, found: list[str]) -> Answer | Result:
        chunks = chunk_document(document, self.options["chunk_chars"], self.options["overlap_chars"])
        if len(chunks) == 1:
            return await self._read(ctx, chunks[0], question)
        for chunk in chunks:
            result = await self._ask(ctx, _messages(self.instructions, chunk, question))
            if not result.ok:
                return result
            text = _clean(result.text)
            if _refused(result):
                return Answer(text=text, trace=list(ctx.trace))
            if text and not is_not_found(text) and fold_answer(text) not in {fold_answer(f) for f in found}:
                found.append(text)
        if not found:
            return Answer(text=NOT_IN_DOCUMENT, trace=list(ctx.trace))
        if len(found) == 1:
            return Answer(text=found[0], trace=list(ctx.trace))
        listed = "\n".join(f"{i}. {a}" for i, a in enumerate(found, 1))
        messages = [
            {"role": "system", "content": _COMBINE},
            {"role": "user", "content": f"Question: {question}\n\nAnswers:\n{listed}"},
        ]
        result = await self._ask(ctx, messages)
        if not result.ok:
            return result
        return Answer(text=_clean(result.text), trace=list(ctx.trace))


@lru_cache(maxsize=128)
def _bm25_index(chunks: tuple[str, ...]) -> Any:
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(list(chunks), stopwords="en", show_progress=False), show_progress=False)
    return retriever


def _top_passages(document: str, question: str, *, k: int, chunk_chars: int, overlap_chars: int) -> list[str]:
    """The ``k`` chunks of the document BM25 ranks highest for the question, in document order."""
    chunks = chunk_document(document, chunk_chars, overlap_chars)
    if len(chunks) <= k:
        return list(chunks)
    import bm25s

    tokens = bm25s.tokenize(question, stopwords="en", show_progress=False, return_ids=False)[0]
    if not tokens:
        return list(chunks[:k])
    scores = _bm25_index(chunks).get_scores(tokens)
    best = sorted(range(len(chunks)), key=lambda i: (-float(scores[i]), i))[:k]
    return [chunks[i] for i in sorted(best)]


def _arm(name: str, version: str, fn: _Recipe) -> Arm:
    return Arm(name, fn, version=version, settings=dict(fn.spec))


def direct(
    model: Any = None,
    *,
    name: str = "direct",
    version: str = "1",
    instructions: str | None = None,
    **params: Any,
) -> Arm:
    """A reading recipe that puts the whole document in one prompt.

    The model gets the system prompt :data:`INSTRUCTIONS` (answer from the document only, reply
    ``NOT_IN_DOCUMENT`` when it lacks the answer) and ``Document: ... Question: ...``; a leading
    ``Answer:`` is trimmed from its reply.

    Args:
        model: which model to ask: ``None`` for the benchmark client's model, a model name, a
            client spec dict (``{"provider", "model", "base_url", "api_key_env"}``, recorded in
            the arm's settings) or a client object (its ``model`` is asked for). Requests always
            go through the benchmark's client, so its governor, cache and recorder apply.
        name: the arm's name.
        version: the arm's version.
        instructions: a system prompt to use instead of :data:`INSTRUCTIONS`.
        **params: sampling parameters sent with every request (``temperature``,
            ``max_tokens``, ...).

    Returns:
        An async :class:`~hrbench.arm.Arm`. Its function returns an
        :class:`~hrbench.records.Answer` (with the run's trace); when the governor refuses a
        request it returns ``Answer(text=None, partial=True, notes=[limit])`` with the limit
        (``cost_cap_reached``, ``call_cap_reached``, ``token_cap_reached``,
        ``limit_refused``) and the trace, whose last step is the refused request. Having no
        text, that answer is a ``parse_failure`` under ``answer_contains`` (seed 001 puts
        parse_failure first; case H13e); the note and the trace keep the stop. A
        failed request (``ok=False``) ends the recipe and its
        :class:`~hrbench.records.Result` is returned, which the scorers count as ``"error"``;
        a refused reply is returned as the answer, and its trace step (finish reason
        ``refusal``/``content_filter``) makes it a ``"refusal"``.

    Raises:
        ConfigError: (on a run) when the item is not ``{"document", "question"}``.

    Example:
        >>> arm = direct(temperature=0)
        >>> arm.name, arm.settings["recipe"], arm.settings["params"]
        ('direct', 'direct', {'temperature': 0})
    """
    return _arm(name, version, _Recipe("direct", model, instructions, {}, params))


def chunked(
    model: Any = None,
    *,
    chunk_chars: int = 2000,
    overlap_chars: int = 200,
    name: str = "chunked",
    version: str = "1",
    instructions: str | None = None,
    **params: Any,
) -> Arm:
    """A reading recipe that asks each chunk of the document, then combines the answers.

    The document is split by :func:`chunk_document`; each chunk is asked in turn with the same
    prompt as :func:`direct`. Answers that report absence (:func:`is_not_found`) are dropped
    and repeated answers merged. No answer left: the reply is ``NOT_IN_DOCUMENT`` (no further
    call). One: it is the reply. Several: one more request lists them and asks for the one
    answer (or ``NOT_IN_DOCUMENT``). A document that fits in one chunk costs one request, as
    with :func:`direct`. A chunk reply that was refused ends the recipe with that reply.

    Args:
        model: as for :func:`direct`.
        chunk_chars: the largest chunk, in characters.
        overlap_chars: characters of each chunk repeated at the start of the next.
        name: the arm's name.
        version: the arm's version.
        instructions: a system prompt to use instead of :data:`INSTRUCTIONS`.
        **params: sampling parameters sent with every request.

    Returns:
        An async :class:`~hrbench.arm.Arm` returning an :class:`~hrbench.records.Answer`. When
        the governor refuses a request it returns ``Answer(partial=True, notes=[limit])`` whose
        text is the first answer found so far (``None`` if none), so a stopped run that had
        already found the answer is still right, one that found a wrong answer is a
        ``budget_stop``, and one that found nothing is a ``parse_failure`` (case H13e).

    Raises:
        ConfigError: bad chunk sizes; (on a run) a malformed item.

    Example:
        >>> chunked(chunk_chars=800).settings["chunk_chars"]
        800
    """
    if chunk_chars < 1 or overlap_chars < 0 or overlap_chars >= chunk_chars:
        raise ConfigError(
            "chunk_chars", (chunk_chars, overlap_chars), "need chunk_chars >= 1 > overlap_chars >= 0"
        )
    options = {"chunk_chars": chunk_chars, "overlap_chars": overlap_chars}
    return _arm(name, version, _Recipe("chunked", model, instructions, options, params))


def retrieve(
    model: Any = None,
    *,
    k: int = 3,
    chunk_chars: int = 600,
    overlap_chars: int = 0,
    name: str = "retrieve",
    version: str = "1",
    instructions: str | None = None,
    **params: Any,
) -> Arm:
    """A reading recipe that ranks chunks with BM25 and reads only the top ``k``.

    The document is split by :func:`chunk_document`; the chunks are ranked by BM25 (the
    ``bm25s`` library, English stop words removed) against the question; the ``k`` best, put
    back in document order and joined by ``"\u2026"``, are sent in one prompt as with
    :func:`direct`. Ties rank the earlier chunk first, so the choice is deterministic; a
    question with no searchable words reads the first ``k`` chunks. A document of ``k`` chunks
    or fewer is read whole.

    Args:
        model: as for :func:`direct`.
        k: how many chunks to read.
        chunk_chars: the largest chunk, in characters.
        overlap_chars: characters of each chunk repeated at the start of the next.
        name: the arm's name.
        version: the arm's version.
        instructions: a system prompt to use instead of :data:`INSTRUCTIONS`.
        **params: sampling parameters sent with every request.

    Returns:
        An async :class:`~hrbench.arm.Arm` returning an :class:`~hrbench.records.Answer`, or a
        partial one with the limit's note when the governor refuses the request.

    Raises:
        ConfigError: ``k`` below 1 or bad chunk sizes.

    Example:
        >>> retrieve(k=2).settings["k"]
        2
    """
    if k < 1:
        raise ConfigError("k", k, "must be at least 1")
    if chunk_chars < 1 or overlap_chars < 0 or overlap_chars >= chunk_chars:
        raise ConfigError(
            "chunk_chars", (chunk_chars, overlap_chars), "need chunk_chars >= 1 > overlap_chars >= 0"
        )
    import bm25s  # noqa: F401  (imported here, not on the event loop at the first run)

    options = {"k": k, "chunk_chars": chunk_chars, "overlap_chars": overlap_chars}
    return _arm(name, version, _Recipe("retrieve", model, instructions, options, params))
