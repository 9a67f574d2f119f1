"""The tools of `examples/agents.toml`: a capital lookup and a web search that names each country's largest city."""

CAPITALS = {
    "France": "Paris",
    "Peru": "Lima",
    "Japan": "Tokyo",
    "Australia": "Canberra",
    "Canada": "Ottawa",
    "Brazil": "Brasilia",
    "Turkey": "Ankara",
    "Nigeria": "Abuja",
}

LARGEST = {
    "France": "Paris",
    "Peru": "Lima",
    "Japan": "Tokyo",
    "Australia": "Sydney",
    "Canada": "Toronto",
    "Brazil": "Sao Paulo",
    "Turkey": "Istanbul",
    "Nigeria": "Lagos",
}


def capital(country: str) -> str:
    """The capital city of a country."""
    return CAPITALS.get(country, "unknown")


def search(query: str) -> str:
    """A web search: the best-known city of the country named in the query."""
    return next((city for country, city in LARGEST.items() if country in query), "no results")
