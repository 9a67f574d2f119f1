"""Model clients: OpenAI-compatible and Anthropic over HTTP, an in-process mock.

The HTTP library is imported only by :mod:`hrbench.models._http`.
"""

import typing

__all__ = [
    "AnthropicBatchApi",
    "AnthropicClient",
    "BatchApi",
    "BatchError",
    "BatchLost",
    "BatchPricing",
    "BatchStatus",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "FREE",
    "LineResult",
    "MockClient",
    "OpenAIBatchApi",
    "OpenAIClient",
    "Price",
    "Pricing",
    "REASONING_SETTINGS",
    "check_reasoning",
    "count_messages",
    "default_pricing",
    "default_pricing_loaded",
    "estimated_usage",
    "give_back",
    "load_package",
    "normalise_messages",
    "output_limit",
    "package_loaded",
    "package_price",
    "reasoning_params",
]


# -- tools/privatize.py: names other packages use, imported on first use (PEP 562)
if typing.TYPE_CHECKING:
    from hrbench.models._anthropic import AnthropicClient
    from hrbench.models._base import normalise_messages
    from hrbench.models._batch import BatchApi, BatchError, BatchLost, BatchStatus, LineResult
    from hrbench.models._batch_anthropic import AnthropicBatchApi
    from hrbench.models._batch_openai import OpenAIBatchApi
    from hrbench.models._batch_prices import BatchPricing
    from hrbench.models._mock import MockClient
    from hrbench.models._openai import OpenAIClient
    from hrbench.models._price_package import load_package, package_loaded, package_price
    from hrbench.models._pricing import (
        DEFAULT_MAX_OUTPUT_TOKENS,
        Pricing,
        default_pricing,
        default_pricing_loaded,
        output_limit,
    )
    from hrbench.models._rates import FREE, Price
    from hrbench.models._reasoning import REASONING_SETTINGS, check_reasoning, reasoning_params
    from hrbench.models._replies import estimated_usage, give_back
    from hrbench.models._tokens import count_messages

_LAZY = {
    "AnthropicBatchApi": "hrbench.models._batch_anthropic",
    "AnthropicClient": "hrbench.models._anthropic",
    "BatchApi": "hrbench.models._batch",
    "BatchError": "hrbench.models._batch",
    "BatchLost": "hrbench.models._batch",
    "BatchPricing": "hrbench.models._batch_prices",
    "BatchStatus": "hrbench.models._batch",
    "DEFAULT_MAX_OUTPUT_TOKENS": "hrbench.models._pricing",
    "FREE": "hrbench.models._rates",
    "LineResult": "hrbench.models._batch",
    "MockClient": "hrbench.models._mock",
    "OpenAIBatchApi": "hrbench.models._batch_openai",
    "OpenAIClient": "hrbench.models._openai",
    "Price": "hrbench.models._rates",
    "Pricing": "hrbench.models._pricing",
    "REASONING_SETTINGS": "hrbench.models._reasoning",
    "check_reasoning": "hrbench.models._reasoning",
    "count_messages": "hrbench.models._tokens",
    "default_pricing": "hrbench.models._pricing",
    "default_pricing_loaded": "hrbench.models._pricing",
    "estimated_usage": "hrbench.models._replies",
    "give_back": "hrbench.models._replies",
    "load_package": "hrbench.models._price_package",
    "normalise_messages": "hrbench.models._base",
    "output_limit": "hrbench.models._pricing",
    "package_loaded": "hrbench.models._price_package",
    "package_price": "hrbench.models._price_package",
    "reasoning_params": "hrbench.models._reasoning",
}

if not typing.TYPE_CHECKING:  # type checkers read the imports above; a typo stays an error
    from hrbench._util.lazy import lazy_names

    __getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)

# -- end of tools/privatize.py's block
