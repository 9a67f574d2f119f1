"""Model clients: OpenAI-compatible and Anthropic over HTTP, an in-process mock.

The HTTP library is imported only by :mod:`hrbench.models._http`.
"""
