"""The code blocks of the README and the docs, and how each is run as written.

A fenced block is run by its language: ``python`` (all of a page's consecutive Python blocks in
one interpreter, in order), ``sh``/``bash`` (``bash`` with ``set -euo pipefail``), ``toml`` (a
benchmark spec: ``hrb bench FILE --no-rows``) and ``json`` (parsed). ``text`` blocks are output
and diagrams, not code. Two HTML comments on the line before a block change that:
``<!-- no-run: why -->`` leaves it out (the reason is required) and ``<!-- file: NAME -->``
writes it to ``NAME`` in the page's working folder, for the blocks after it to use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"

RUN = {"python", "sh", "bash", "toml", "json"}
"""Languages whose blocks are run."""

NOT_CODE = {"text"}
"""Languages of blocks that are output or pictures, never run."""

_FENCE = re.compile(
    r"^(?P<indent> *)```(?P<lang>[\w+-]*)[^\n]*\n(?P<code>.*?)^(?P=indent)```[ \t]*$", re.M | re.S
)
_MARK = re.compile(r"<!--\s*(?P<kind>no-run|file):\s*(?P<value>.*?)\s*-->\s*$")

LOCAL_SERVER = "http://127.0.0.1:8000/v1"
"""The address the pages give a local model server; the tests put their loopback server's there."""


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, line, language, code and marker."""

    page: str
    line: int
    lang: str
    code: str
    no_run: str | None = None
    file: str | None = None

    @property
    def runs(self) -> bool:
        return self.lang in RUN and self.no_run is None and self.file is None

    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """The README and every Markdown page under ``docs/`` (``docs/_gen`` holds no pages)."""
    found = sorted(p for p in DOCS.rglob("*.md") if "_gen" not in p.relative_to(DOCS).parts)
    return [REPO / "README.md", *found]


def page_name(path: Path) -> str:
    return str(path.relative_to(REPO))


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one page, in order, each with the marker on the line before it."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = _MARK.search(before)
        indent = len(m.group("indent"))
        code = "\n".join(line[indent:] for line in m.group("code").splitlines()) + "\n"
        out.append(
            Block(
                page=page_name(path),
                line=text.count("\n", 0, m.start()) + 1,
                lang=m.group("lang"),
                code=code,
                no_run=mark.group("value") if mark and mark.group("kind") == "no-run" else None,
                file=mark.group("value") if mark and mark.group("kind") == "file" else None,
            )
        )
    return out


def every_block() -> list[Block]:
    return [b for p in pages() for b in blocks(p)]


def counts(found: list[Block] | None = None) -> dict[str, int]:
    """How many blocks run, by language, and how many are written as files or marked no-run.

    A block that appears on two pages (the README and the site's home page) counts once.
    """
    found = every_block() if found is None else found
    out: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    for b in found:
        if b.runs and (b.lang, b.code) in seen:
            continue  # the same block on two pages (the README and the site's home) runs once
        seen.add((b.lang, b.code))
        key = "no-run" if b.no_run is not None else "file" if b.file else b.lang if b.runs else "not code"
        out[key] = out.get(key, 0) + 1
    return out
