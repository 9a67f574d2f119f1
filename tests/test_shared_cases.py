"""Every shared case is a test: each id of ``../shared/cases/*.jsonl`` is named in a test file.

The scorer cases are checked by value in their own files (``test_shared_*_case``); this guard
catches a case added upstream that no test names yet, the ``benchmark`` scenarios included.
``OPEN`` lists the ids an open issue still has to turn into tests; an id that gets its test
must leave the list (the test fails until it does), so the list is always the truth.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import load_cases

TESTS = Path(__file__).resolve().parent

OPEN: dict[str, int] = {}
"""Case id -> the open issue that will test it."""


def _named() -> set[str]:
    text = "\n".join(
        p.read_text(encoding="utf-8") for p in TESTS.rglob("*.py") if p.name != Path(__file__).name
    )
    return set(re.findall(r"\b[A-Z][0-9]{2}[a-z]?\b|\b[A-Z][0-9]-[0-9]{2}[a-z]?\b", text))  # R04a, H4-13


def test_every_shared_case_is_named_by_a_test() -> None:
    ids = [c["id"] for c in load_cases()]
    assert len(ids) == len(set(ids)), "duplicate case ids upstream"
    named = _named()
    missing = sorted(i for i in ids if i not in named and i not in OPEN)
    assert missing == [], f"shared cases no test names: {missing}"
    stale = sorted(i for i in OPEN if i in named)
    assert stale == [], f"cases now tested; drop them from OPEN: {stale}"
    unknown = sorted(i for i in OPEN if i not in ids)
    assert unknown == [], f"OPEN names ids that are not shared cases: {unknown}"
