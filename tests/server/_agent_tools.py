"""Tools the daemon's tool-loop tests name by import path (``_agent_tools:country_of``)."""

from __future__ import annotations

COUNTRIES = {"Paris": "France", "Lima": "Peru", "Suva": "Fiji", "Rome": "Italy"}


def country_of(city: str) -> str:
    """The country a city is in."""
    return COUNTRIES.get(city, "unknown")


def search(query: str) -> str:
    """What a web search says of a query."""
    return f"results for {query}"
