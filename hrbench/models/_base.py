"""The Client role: what answers model requests.

A client is any object with ``provider``, ``base_url``, ``model`` attributes and an
``async send(request) -> Result`` method. The runner, the cache and the recorder wrap it; a
client itself keeps no cache.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

from hrbench.records import Request, Result

__all__ = ["Client", "normalise_messages"]


@runtime_checkable
class Client(Protocol):
    """A model client.

    Attributes:
        provider: ``"openai"``, ``"anthropic"``, ``"mock"``, ``"replay"``.
        base_url: the endpoint (``""`` for in-process clients).
        model: the default model.
    """

    provider: str
    base_url: str
    model: str

    async def send(
        self, request: Request, before_attempt: Callable[[], Awaitable[None] | None] | None = None
    ) -> Result:
        """Answer one request.

        Args:
            request: the request, with ``model``, ``provider`` and ``base_url`` filled in.
            before_attempt: called before every attempt is sent (retries included); it charges
                the attempt to the governor and raises ``BudgetRefused`` to stop it. What it
                returns, when not ``None``, must be awaited before the attempt is sent: the
                reservation is then committed to the benchmark's ledger.

        Returns:
            The reply; a failed request is a ``Result`` with ``ok=False``, not an exception,
            except :class:`~hrbench.errors.BudgetRefused` for a provider quota refusal.
        """
        ...


def normalise_messages(prompt: str | list[dict[str, Any]] | dict[str, Any]) -> list[dict[str, Any]]:
    """Turn a prompt into chat messages.

    Args:
        prompt: a string (one user message), one message dict, or a list of messages.

    Returns:
        A list of ``{"role", "content"}`` dicts.

    Raises:
        ConfigError: when ``prompt`` is none of these.

    Example:
        >>> normalise_messages("Capital of France")
        [{'role': 'user', 'content': 'Capital of France'}]
    """
    kind = type(prompt)  # exact types first: this runs once per request
    if kind is str or isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    if kind is list or isinstance(prompt, list):
        messages = []
        for m in prompt:
            if not (type(m) is dict or isinstance(m, dict)) or "role" not in m:
                break
            messages.append(dict(m))
        else:
            return messages
    elif isinstance(prompt, dict):
        return [dict(prompt)]
    from hrbench.errors import ConfigError  # imported only to raise: this runs once per request

    raise ConfigError("prompt", prompt, "expected a string, a message dict or a list of messages")
