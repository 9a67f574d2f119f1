"""No user-facing text names an issue number, a seed file or a test case.

User-facing: the README, the docs (with the reference pages generated from the code), ``hrb``'s
``--help`` texts, the web view's page and script, and the messages of the code (every string
that is not a docstring: exceptions, warnings, notes, help). Docstrings and comments are for
the code's readers and may cite a rule's public source (a seed rule, a shared case id); that
they tell no history is ``tests/test_no_history.py``'s check.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.docs._blocks import DOCS, REPO, page_name, pages

PATTERN = re.compile(
    r"\bissues?\s*#?\d+|\bseeds?\s*#?0\d\d\b|\bseed_?0\d\d|\bcase\s+[A-Z]{1,2}\d+[a-z]?\b"
    r"|\bnewcomer\d*\b|\bfindings?\s+\d+|\bSPEC section",
    re.I,
)
"""Issue numbers (``issue 12``), seed files (``seed 002``), case ids (``case S12a``), review notes."""

VIEW = REPO / "clients" / "python" / "hrbench_client" / "view" / "static"
CODE = [REPO / "hrbench", REPO / "server", REPO / "clients" / "python"]


def _hits(text: str) -> list[str]:
    return [text[max(0, m.start() - 40) : m.end() + 20].replace("\n", " ") for m in PATTERN.finditer(text)]


def _generated() -> dict[str, str]:
    sys.path.insert(0, str(DOCS / "_gen"))
    try:
        import refgen  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(DOCS / "_gen"))
    return {f"docs/{uri}": make() for uri, make in refgen.PAGES.items() if uri != "reference/python.md"}


def _documents() -> dict[str, str]:
    out = {page_name(p): p.read_text(encoding="utf-8") for p in pages()}
    out.update(_generated())
    for path in sorted(VIEW.glob("*")):
        if path.suffix in (".js", ".css", ".html") and not path.name.endswith(".min.js"):
            out[str(path.relative_to(REPO))] = path.read_text(encoding="utf-8")
    return out


DOCUMENTS = _documents()


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_the_page_names_no_issue_seed_or_case(name: str) -> None:
    assert _hits(DOCUMENTS[name]) == []


def test_hrb_help_names_no_issue_seed_or_case() -> None:
    sys.path.insert(0, str(DOCS / "_gen"))
    try:
        import refgen  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(DOCS / "_gen"))
    texts = {line: parser.format_help() for line, parser, _ in refgen.commands()}
    assert {line: _hits(t) for line, t in texts.items() if _hits(t)} == {}


def messages(path: Path) -> list[tuple[int, str]]:
    """Every string of a module that is not a docstring, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for stmt in body:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    docstrings.add(id(stmt.value))  # a docstring, or a bare string (an attribute's)
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
    ]


def test_the_code_s_messages_name_no_issue_seed_or_case() -> None:
    found = []
    for root in CODE:
        for path in sorted(root.rglob("*.py")):
            for line, text in messages(path):
                found += [f"{path.relative_to(REPO)}:{line}: {h}" for h in _hits(text)]
    assert found == []


def test_the_pattern_catches_what_it_is_for() -> None:
    for text in (
        "decided in issue 12",
        "(seed 002)",
        "Seed 003's metric",
        "case S12a",
        "newcomer finding 20",
    ):
        assert _hits(text), text
    for text in ("seed = 1", "the seed's stream", "issue a request", "in case 3 runs fail", "runs 002"):
        assert not _hits(text), text


def test_the_api_pages_show_docstrings_in_users_words(tmp_path: Path) -> None:
    # the docstrings cite a rule's public source for the people who keep hrbench ("seed 001",
    # "case S12a"); the site renders them through docs/_gen/griffe_examples.py's UsersWords, and
    # `make docs` fails when the built pages still name one, or an issue number
    # (docs/_gen/check_site.py), which no docstring tells (tests/test_no_history.py)
    import importlib.util

    gen = Path(__file__).resolve().parents[2] / "docs" / "_gen"

    def load(name: str) -> Any:
        spec = importlib.util.spec_from_file_location(name, gen / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    words = load("users_words").in_users_words  # (griffe_examples.py applies it; it needs the docs extra)
    assert words("Rule (case S12a): a scorer runs off the loop.") == "Rule: a scorer runs off the loop."
    # history is not rewritten away: the code tells none, and the site check fails on it
    assert words("A scorer runs off the loop (issue 24).") == "A scorer runs off the loop (issue 24)."
    assert words("seed 001: a number is matched whole.") == "A number is matched whole."
    assert (
        words("output tokens at the output rate (cases H14b, H14d).") == "output tokens at the output rate."
    )
    check = load("check_site")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text("<p>A number is matched whole (seed 001).</p>")
    (tmp_path / "b.html").write_text("<p>A number is matched whole.</p>")
    (tmp_path / "c.html").write_text("<p>A scorer runs off the loop (issue 24, newcomer finding 3).</p>")
    assert [line.split(":")[0] for line in check.offenders(tmp_path)] == ["a/index.html", "c.html", "c.html"]
