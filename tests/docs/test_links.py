"""Every link of the README and the docs reaches a page, a file or a heading that is there."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.docs._blocks import DOCS, REPO, page_name, pages

_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]+)\]\((?P<target>[^)\s]+)\)|!\[[^\]]*\]\((?P<image>[^)\s]+)\)")
_FENCED = re.compile(r"^ *```.*?^ *```", re.M | re.S)


def _generated() -> dict[str, str]:
    sys.path.insert(0, str(DOCS / "_gen"))
    try:
        import refgen  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(DOCS / "_gen"))
    return {f"docs/{uri}": make() for uri, make in refgen.PAGES.items()}


def slug(heading: str) -> str:
    """A heading's anchor as MkDocs' ``toc`` makes it (Python-Markdown's ``slugify``)."""
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"[-\s]+", "-", text).strip("-")


def anchors(text: str) -> set[str]:
    return {slug(m) for m in re.findall(r"^#{1,6} (.+)$", _FENCED.sub("", text), re.M)}


GENERATED = _generated()


def _text(rel: str) -> str | None:
    if rel in GENERATED:
        return GENERATED[rel]
    path = REPO / rel
    return path.read_text(encoding="utf-8") if path.is_file() and path.suffix == ".md" else None


def links(rel: str, text: str) -> list[tuple[str, str]]:
    """``(target, where)`` of each relative link, outside code."""
    out = []
    for m in _LINK.finditer(_FENCED.sub("", text)):
        target = m.group("target") or m.group("image")
        if re.match(r"^[a-z]+:", target):
            continue  # http:, https:, mailto: are not checked (no network in tests)
        out.append((target, rel))
    return out


ALL = {page_name(p): p.read_text(encoding="utf-8") for p in pages()} | GENERATED


@pytest.mark.parametrize("rel", sorted(ALL))
def test_every_link_of_the_page_resolves(rel: str) -> None:
    text = ALL[rel]
    broken = []
    for target, _ in links(rel, text):
        path, _, anchor = target.partition("#")
        dest = rel if not path else str((Path(rel).parent / path).as_posix())
        dest = _normal(dest)
        body = _text(dest)
        if body is None and not (REPO / dest).exists():
            broken.append(f"{target}: no such file {dest}")
        elif anchor and body is not None and anchor not in anchors(body):
            broken.append(f"{target}: {dest} has no heading #{anchor}")
    assert not broken, broken


def _normal(rel: str) -> str:
    parts: list[str] = []
    for part in rel.split("/"):
        if part == "..":
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def test_every_docs_page_is_in_the_nav_or_a_guide_being_written() -> None:
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s+([\w/.-]+\.md)\s*$", nav, re.M))
    on_disk = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if "_gen" not in p.parts}
    assert on_disk - listed == set(), "docs pages missing from mkdocs.yml's nav"
    generated = {k.removeprefix("docs/") for k in GENERATED}
    assert listed - on_disk - generated == set(), "nav entries with no page"
