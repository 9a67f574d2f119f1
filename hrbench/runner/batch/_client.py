"""The batch client: the model client a benchmark's runtime sends through in batch mode.

It stands for the benchmark's HTTP client (same provider, base URL, model, wire and key), and
its ``send`` hands the request to the :class:`~hrbench.runner.batch.Collector` instead
of the synchronous API. The runtime is unchanged: it looks the request up in the cache first, and
reserves it under the governor (at the batch rate: the runtime's prices are
:class:`~hrbench.models.BatchPricing` in batch mode) before ``send``.
"""

from __future__ import annotations

from typing import Any

from hrbench.errors import ConfigError
from hrbench.models import BatchApi
from hrbench.records import Request, Result

__all__ = ["BatchClient", "batch_api"]


class BatchClient:
    """A model client whose requests go through the provider's batch API.

    Args:
        inner: the benchmark's HTTP model client.
        collector: the benchmark's collector.

    Attributes:
        batched: ``True``: a runtime skips its slow start (one request until the provider's bill
            is known) for it; a batch's bill is known only when it ends, and a reply billed as
            a dearer model still stops the benchmark at once.
    """

    batched = True
    inline = False

    def __init__(self, inner: Any, collector: Any) -> None:
        self.inner = inner
        self.collector = collector
        self.provider: str = inner.provider
        self.base_url: str = inner.base_url
        self.model: str = inner.model

    def __repr__(self) -> str:
        return f"BatchClient({self.inner!r})"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def send(self, request: Request, before_attempt: Any = None) -> Result:
        """The reply to ``request``, through a batch (see :meth:`Collector.request`)."""
        result: Result = await self.collector.request(request, before_attempt)
        return result


def batch_api(client: Any) -> BatchApi:
    """The batch API of a model client: OpenAI's or Anthropic's, at the client's ``base_url``.

    Raises:
        ConfigError: the client's provider has no batch API hrbench speaks.

    Example:
        >>> from hrbench.models import OpenAIClient
        >>> batch_api(OpenAIClient("gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key_env=None))
        OpenAIBatchApi('http://127.0.0.1:9/v1')
    """
    provider = getattr(client, "provider", None)
    if provider == "openai" and callable(getattr(client, "build_body", None)):
        from hrbench.models import OpenAIBatchApi

        return OpenAIBatchApi(client)
    if provider == "anthropic" and callable(getattr(client, "build_body", None)):
        from hrbench.models import AnthropicBatchApi

        return AnthropicBatchApi(client)
    raise ConfigError(
        "batch",
        provider,
        "batch mode needs an OpenAI (or OpenAI-compatible) or Anthropic client: the provider's batch "
        "API answers its requests; a replay client answers from its recording and needs none",
    )
