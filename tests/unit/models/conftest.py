"""Fixtures for the HTTP client tests: one loopback server per module, reset for each test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from hrbench.records import Request, Result  # noqa: E402
from hrbench.testing import LoopbackServer  # noqa: E402
from tests._slow import slow  # noqa: E402

FAST: dict[str, Any] = {
    "timeout_s": slow(2.0),  # a reply's time limit (a test of the timeout itself sets its own)
    "max_attempts": 3,
    "wait_initial_s": 0.01,
    "wait_max_s": 0.05,
    "wait_jitter_s": 0.0,
    "trust_env": False,
}
"""Client settings that keep retries quick in tests (seconds)."""

DEFAULTS: dict[str, Any] = {
    "latency_s": 0.0,
    "vary": False,
    "reasoning_tokens": 0,
    "cached_fraction": 0.0,
    "cache_creation_tokens": 0,
    "api_key": None,
    "reply_fn": None,
    "omit_usage": False,
    "reply_words": 0,
    "honour_max_tokens": True,
    "prompt_tokens": "words",
    "serve_model": None,
    "gather": 0,
    "gather_skip": 0,
}


@pytest.fixture(scope="module")
def _server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def srv(_server: LoopbackServer) -> Iterator[LoopbackServer]:
    """The module's loopback server, with default settings and no scripted faults."""
    _server.set(**DEFAULTS)
    _server.reset()
    yield _server
    _server.set(**DEFAULTS)
    _server.reset()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def req(prompt: str, **params: Any) -> Request:
    """A one-message request."""
    return Request(messages=[{"role": "user", "content": prompt}], params=params)


def send(client: Any, prompt: str, before_attempt: Any = None, **params: Any) -> Result:
    """Send one request in a fresh event loop."""
    return anyio.run(client.send, req(prompt, **params), before_attempt)


class Counter:
    """A ``before_attempt`` that counts attempts and can refuse the n-th."""

    def __init__(self, refuse_at: int | None = None) -> None:
        self.n = 0
        self.refuse_at = refuse_at

    def __call__(self) -> None:
        from hrbench.errors import BudgetRefused

        self.n += 1
        if self.refuse_at is not None and self.n >= self.refuse_at:
            raise BudgetRefused("test governor refused", limit="call_cap_reached")
