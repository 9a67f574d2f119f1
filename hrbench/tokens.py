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

__all__ = ["count_messages", "count_tokens", "encoding_name", "usage_of"]

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
