"""Test infrastructure: a loopback OpenAI- and Anthropic-compatible server.

Importing :mod:`hrbench.testing.loopback` needs the dev extras (starlette, uvicorn).
"""

from __future__ import annotations

__all__ = ["Fault", "LoopbackServer"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from hrbench.testing import loopback

        return getattr(loopback, name)
    raise AttributeError(f"module 'hrbench.testing' has no attribute {name!r}")
