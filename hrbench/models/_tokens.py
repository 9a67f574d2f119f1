"""Counting tokens offline, for requests whose provider reports no usage.

A provider's reported usage is always preferred (provenance ``"reported"``). When a reply comes
without usage, its tokens are *counted* with the model's own tokenizer where hrbench ships it
(tiktoken's ``o200k_base`` and ``cl100k_base``, for OpenAI models; provenance ``"counted"``), and
otherwise *estimated* from above, one token per UTF-8 byte (provenance ``"estimated"``; the bound
:func:`prompt_bound` and the README state: budgets must never under-count). The vocabularies
ship with the package (``hrbench/data/tiktoken/``, sha256-checked here) and are loaded without
tiktoken's download cache, so counting needs no network and sets no environment variable.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from functools import lru_cache
from importlib import resources
from typing import Any

from hrbench.records import Usage

__all__ = ["count_messages", "count_tokens", "encoding_name", "prompt_bound", "usage_of"]

_ENDOFTEXT, _ENDOFPROMPT = "<|endoftext|>", "<|endofprompt|>"
_FIM_PREFIX, _FIM_MIDDLE, _FIM_SUFFIX = "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"
_ENCODINGS: dict[str, tuple[str, str, dict[str, int]]] = {
    # name: (sha256 of the vocabulary, split pattern, special tokens), as tiktoken_ext.openai_public
    # defines them (tests/unit/models/test_tokens.py checks they still agree)
    "cl100k_base": (
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        {
            _ENDOFTEXT: 100257,
            _FIM_PREFIX: 100258,
            _FIM_MIDDLE: 100259,
            _FIM_SUFFIX: 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": (
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
}
"""The shipped encodings. Rule (``TIKTOKEN_CACHE_DIR`` is never set in the process environment:
a path there would be masked as a secret in every error that names the state folder): the
vocabularies are read from the package and
the :class:`tiktoken.Encoding` is built here, so nothing is written to disk or to
``os.environ`` and no download is ever attempted."""
_SHIPPED = tuple(_ENCODINGS)


@lru_cache(maxsize=256)
def encoding_name(model: str | None) -> str | None:
    """The shipped tiktoken encoding of ``model``, or ``None`` when hrbench has none for it.

    Cached by model: it is asked for every request's reservation, and tiktoken's lookup raises
    ``KeyError`` for every model it does not know (a mock's; ~4 us a request).

    Example:
        >>> encoding_name("gpt-4o-mini"), encoding_name("gpt-4"), encoding_name("llama3")
        ('o200k_base', 'cl100k_base', None)
    """
    if not model:
        return None
    try:
        import tiktoken.model
    except ImportError:  # pragma: no cover - tiktoken is a dependency
        return None
    name = model.split("/", 1)[-1]
    try:
        enc = tiktoken.model.encoding_name_for_model(name)
    except KeyError:
        return None
    return enc if enc in _SHIPPED else None


@lru_cache(maxsize=4)
def _encoding(name: str) -> Any:
    """The :class:`tiktoken.Encoding` ``name``, from the shipped vocabulary (checked by sha256)."""
    import tiktoken

    sha256, pat_str, special = _ENCODINGS[name]
    data = gzip.decompress(
        resources.files("hrbench").joinpath(f"data/tiktoken/{name}.tiktoken.gz").read_bytes()
    )
    if hashlib.sha256(data).hexdigest() != sha256:
        raise RuntimeError(f"the shipped tokenizer {name} does not match its sha256 (a damaged install)")
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    return tiktoken.Encoding(name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=special)


def count_tokens(text: str, model: str | None) -> int | None:
    """Tokens of ``text`` under ``model``'s tokenizer, or ``None`` when hrbench has none for it.

    Example:
        >>> count_tokens("hello world", "gpt-4o")
        2
    """
    name = encoding_name(model)
    if name is None:
        return None
    return len(_encoding(name).encode(text, disallowed_special=()))


def count_messages(messages: list[dict[str, Any]], model: str | None) -> int | None:
    """Prompt tokens of chat messages under ``model``'s tokenizer, or ``None``.

    OpenAI's counting rule: 3 tokens a message, 1 more for a name, 3 to prime the reply.
    """
    name = encoding_name(model)
    if name is None:
        return None
    enc = _encoding(name)
    total = 3
    for m in messages:
        total += 3
        for key, value in m.items():
            total += len(enc.encode(value if isinstance(value, str) else str(value), disallowed_special=()))
            if key == "name":
                total += 1
    return total


def usage_of(
    messages: list[dict[str, Any]],
    text: str | None,
    model: str | None,
    max_out: int | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> Usage:
    """Usage for a reply that came without one, never below what the provider can have billed.

    Counted with the model's tokenizer when hrbench ships it (provenance ``"counted"``), else
    estimated from above (``"estimated"``): the prompt at :func:`prompt_bound` (one token per
    UTF-8 byte, plus the chat format's overhead), the reply at one token per UTF-8 byte, at most
    the output limit sent (a provider bills no more output than that). Rule (4 characters a
    token would book a 207-character CJK reply as 52 tokens; byte-level tokenizers can bill up
    to 3-4 a character): the governor, the ledger and the USD charged
    must never under-count, so the estimate is the README's worst-case rule, the same bound the
    reservation uses, and never exceeds it.

    Args:
        messages: the request's chat messages.
        text: the reply's text.
        model: the model that answered.
        max_out: the output limit the request carried (tokens), or ``None``.
        tools: the tool definitions sent.

    Example:
        >>> usage_of([{"role": "user", "content": "hi"}], "hello world", "gpt-4o").provenance
        'counted'
        >>> u = usage_of([{"role": "user", "content": "hi"}], "hello world", "llama3")
        >>> u.tokens_in, u.tokens_out, u.provenance
        (17, 11, 'estimated')
        >>> usage_of([{"role": "user", "content": "hi"}], "漢字" * 100, "llama3", max_out=64).tokens_out
        64
    """
    n_in = count_messages(messages, model)
    if n_in is not None:
        return Usage(tokens_in=n_in, tokens_out=count_tokens(text or "", model) or 0, provenance="counted")
    tokens_in, _ = prompt_bound(messages, None, tools)
    tokens_out = len((text or "").encode("utf-8"))
    if max_out is not None:
        tokens_out = min(tokens_out, max_out)
    return Usage(tokens_in=tokens_in, tokens_out=tokens_out, provenance="estimated")


MESSAGE_OVERHEAD_TOKENS = 8
"""Tokens a chat format may add per message (role, separators), on top of its content."""

IMAGE_TOKENS_MAX = 6400
"""The most tokens one image part may cost (above OpenAI's and Anthropic's largest image)."""


def _cost(enc: Any, text: str) -> int:
    """``text``'s tokens under tokenizer ``enc``, or its UTF-8 bytes when ``enc`` is ``None``."""
    if enc is not None:
        return len(enc.encode(text, disallowed_special=()))
    return len(text.encode("utf-8"))


def _json(value: Any) -> str:
    """``value`` as the JSON text counted for it (non-ASCII kept as it is)."""
    return json.dumps(value, ensure_ascii=False)


def prompt_bound(
    messages: list[dict[str, Any]], model: str | None, tools: list[dict[str, Any]] | None = None
) -> tuple[int, str]:
    """An upper bound on the prompt tokens a provider can bill for a request.

    With the model's own tokenizer shipped (OpenAI models) the content is counted exactly; for
    any other model every UTF-8 byte counts as a token: a byte-level BPE or a SentencePiece
    vocabulary with byte fallback never makes more tokens than bytes, whatever the script
    (emoji and rare scripts cost several tokens a character, so characters are not a bound).
    Each message adds :data:`MESSAGE_OVERHEAD_TOKENS`, each image part
    :data:`IMAGE_TOKENS_MAX`, tools their JSON.

    Args:
        messages: the chat messages (string contents or lists of content parts).
        model: the model asked for.
        tools: tool definitions sent with the request.

    Returns:
        ``(tokens, how)``: the bound and ``"tokenizer"`` or ``"bytes"``.

    Example:
        >>> prompt_bound([{"role": "user", "content": "héllo 🙂"}], "llama3")
        (26, 'bytes')
        >>> prompt_bound([{"role": "user", "content": "hello world"}], "gpt-4o")
        (14, 'tokenizer')
    """
    name = encoding_name(model)
    enc = _encoding(name) if name is not None else None
    total = 3  # the reply's priming
    for m in messages:
        total += MESSAGE_OVERHEAD_TOKENS
        for key, value in m.items():
            if key == "content" and isinstance(value, list):
                for part in value:
                    if isinstance(part, dict) and (part.get("type") in ("image_url", "image", "input_image")):
                        total += IMAGE_TOKENS_MAX
                    else:
                        text = (
                            part.get("text", "") if isinstance(part, dict) and "text" in part else _json(part)
                        )
                        total += _cost(enc, text)
            else:
                total += _cost(enc, value if isinstance(value, str) else _json(value))
    if tools:
        total += _cost(enc, _json(tools))
    return total, ("tokenizer" if enc is not None else "bytes")
