"""Counting tokens offline, for requests whose provider reports no usage.

A provider's reported usage is always preferred (provenance ``"reported"``). When a reply comes
without usage, its tokens are *counted* with the model's own tokenizer where hrbench ships it
(tiktoken's ``o200k_base`` and ``cl100k_base``, for OpenAI models; provenance ``"counted"``), and
otherwise *estimated* at four characters a token (provenance ``"estimated"``). The vocabularies
ship with the package (``hrbench/data/tiktoken/``, sha256-checked by tiktoken), so counting needs
no network.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import os
import threading
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from hrbench.records import Usage

__all__ = ["count_messages", "count_tokens", "encoding_name", "prompt_bound", "usage_of"]

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
_SHIPPED = ("cl100k_base", "o200k_base")
_lock = threading.Lock()
_seeded = False


def _seed_cache() -> None:
    """Write the shipped vocabularies where tiktoken looks for its cached downloads."""
    global _seeded
    with _lock:
        if _seeded:
            return
        cache = os.environ.get("TIKTOKEN_CACHE_DIR")
        if not cache:
            from hrbench.store import default_home

            cache = str(default_home() / "tiktoken")
            os.environ["TIKTOKEN_CACHE_DIR"] = cache
        Path(cache).mkdir(parents=True, exist_ok=True)
        for name in _SHIPPED:
            target = Path(cache) / hashlib.sha1(_BLOB.format(name).encode()).hexdigest()
            if not target.exists():
                data = gzip.decompress(
                    resources.files("hrbench").joinpath(f"data/tiktoken/{name}.tiktoken.gz").read_bytes()
                )
                tmp = target.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_bytes(data)
                os.replace(tmp, target)
        _seeded = True


def encoding_name(model: str | None) -> str | None:
    """The shipped tiktoken encoding of ``model``, or ``None`` when hrbench has none for it.

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
    _seed_cache()
    import tiktoken

    return tiktoken.get_encoding(name)


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


def usage_of(messages: list[dict[str, Any]], text: str | None, model: str | None) -> Usage:
    """Usage for a reply that came without one.

    Counted with the model's tokenizer when hrbench ships it (provenance ``"counted"``), else
    estimated at 4 characters a token (``"estimated"``).

    Example:
        >>> usage_of([{"role": "user", "content": "hi"}], "hello world", "gpt-4o").provenance
        'counted'
        >>> usage_of([{"role": "user", "content": "hi"}], "hello world", "llama3")
        Usage(tokens_in=1, tokens_out=3, tokens_reasoning=0, tokens_cached=0, provenance='estimated')
    """
    n_in = count_messages(messages, model)
    if n_in is not None:
        return Usage(tokens_in=n_in, tokens_out=count_tokens(text or "", model) or 0, provenance="counted")
    chars_in = sum(len(str(m.get("content", ""))) for m in messages)
    return Usage(
        tokens_in=math.ceil(chars_in / 4), tokens_out=math.ceil(len(text or "") / 4), provenance="estimated"
    )


MESSAGE_OVERHEAD_TOKENS = 8
"""Tokens a chat format may add per message (role, separators), on top of its content."""

IMAGE_TOKENS_MAX = 6400
"""The most tokens one image part may cost (above OpenAI's and Anthropic's largest image)."""


def prompt_bound(
    messages: list[dict[str, Any]], model: str | None, tools: list[dict[str, Any]] | None = None
) -> tuple[int, str]:
    """An upper bound on the prompt tokens a provider can bill for a request (issue 12).

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
    import json

    name = encoding_name(model)
    enc = _encoding(name) if name is not None else None

    def cost(text: str) -> int:
        if enc is not None:
            return len(enc.encode(text, disallowed_special=()))
        return len(text.encode("utf-8"))

    total = 3  # the reply's priming
    for m in messages:
        total += MESSAGE_OVERHEAD_TOKENS
        for key, value in m.items():
            if key == "content" and isinstance(value, list):
                for part in value:
                    if isinstance(part, dict) and (part.get("type") in ("image_url", "image", "input_image")):
                        total += IMAGE_TOKENS_MAX
                    else:
                        total += cost(
                            part.get("text", "")
                            if isinstance(part, dict) and "text" in part
                            else json.dumps(part, ensure_ascii=False)
                        )
            else:
                total += cost(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    if tools:
        total += cost(json.dumps(tools, ensure_ascii=False))
    return total, ("tokenizer" if enc is not None else "bytes")
