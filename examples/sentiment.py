"""The seed-003 example's keyword rule, a plain-function module for `hrb eval examples/sentiment.toml`."""


def rule(text: str) -> str:
    """A keyword rule that stands in for a model, so the example runs offline."""
    lowered = text.lower()
    return "positive" if ("love" in lowered or "great" in lowered) else "negative"
