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

CASE_ID = re.compile(
    r"\b[A-Z][0-9]{2}[a-z]?\b|(?<![A-Za-z0-9])([A-Za-z][0-9])[-_]([0-9]{2}[a-z]?)(?![A-Za-z0-9])"
)
"""A case id in a test: ``H01a`` and ``R12`` as written; ``H4-02`` as written or in a test's name (``test_h4_02_...``)."""


def case_ids(text: str) -> set[str]:
    """The case ids a text names, each as the shared files write it."""
    return {
        m.group(0) if m.group(1) is None else f"{m.group(1).upper()}-{m.group(2)}"
        for m in CASE_ID.finditer(text)
    }


def _named() -> set[str]:
    text = "\n".join(
        p.read_text(encoding="utf-8") for p in TESTS.rglob("*.py") if p.name != Path(__file__).name
    )
    return case_ids(text)


def test_the_id_forms_are_recognised() -> None:
    text = "def test_h4_19_imported(): ...  # H01a, R12; 'H4-21', test_H4-02b; not AH4-03 nor H4-041"
    assert case_ids(text) == {"H4-19", "H01a", "R12", "H4-21", "H4-02b"}


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
