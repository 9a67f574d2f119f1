"""Every code block of the README and the docs runs as written (or is marked no-run, saying why)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs import _blocks, _site

# a page runs a few dozen `hrb` commands, each a process: minutes on a busy machine
pytestmark = [pytest.mark.timeout(480), pytest.mark.pages]

INDEX = _blocks.DOCS / "index.md"
GETTING_STARTED = _blocks.DOCS / "getting-started.md"
# the site's home page is the README's text (its links made relative to docs/): its blocks are
# the README's, run once; the getting-started page runs in test_getting_started.py, with checks
PAGES = [p for p in _blocks.pages() if _blocks.blocks(p) and p not in (INDEX, GETTING_STARTED)]


def _echoed(ran: list[_site.Ran]) -> list[tuple[str, str]]:
    """``(block, word)`` for each ``&& echo WORD`` a block ends a line with, and what it printed."""
    missing = []
    for r in ran:
        for word in re.findall(r"&& echo (\w+)\s*(?:#.*)?$", r.block.code, re.M):
            if word not in r.stdout.splitlines():
                missing.append((r.block.where(), word))
    return missing


def _shown_json(ran: list[_site.Ran]) -> list[tuple[str, str]]:
    """``(block, shown)`` for each ``# {...`` comment whose text up to ``...`` begins no line printed.

    A comment such as ``# {"correct":true,"outcome":"paris",...}`` shows the JSON a command
    prints; it must be that output as printed (compact), not a prettier rendering of it.
    """
    missing = []
    for r in ran:
        for shown in re.findall(r"#\s*(\{.*?)\.\.\.\}\s*$", r.block.code, re.M):
            if not any(line.startswith(shown) for line in r.stdout.splitlines()):
                missing.append((r.block.where(), shown))
    return missing


@pytest.mark.parametrize("page", PAGES, ids=_blocks.page_name)
def test_the_page_s_blocks_run_as_written(page: Path, docs_site: _site.Site, page_dir: Path) -> None:
    found = _blocks.blocks(page)
    ran = _site.run_page(found, docs_site, page_dir)
    assert [r.block for r in ran] == [b for b in found if b.runs]
    assert _echoed(ran) == []  # `hrb score ... --check && echo right` printed right
    assert _shown_json(ran) == []  # `# {"correct":true,...}` is how a line printed begins
    for r in ran:
        for name in re.findall(r"--html (\S+\.html)", r.block.code):
            assert (page_dir / name).stat().st_size > 0


def test_the_home_page_s_blocks_are_the_readme_s() -> None:
    readme = _blocks.blocks(_blocks.REPO / "README.md")
    assert [(b.lang, b.code, b.no_run) for b in _blocks.blocks(INDEX)] == [
        (b.lang, b.code, b.no_run) for b in readme
    ]


def test_every_block_runs_or_says_why_and_the_count_is_printed() -> None:
    found = _blocks.every_block()
    unknown = [b.where() for b in found if b.lang not in _blocks.RUN | _blocks.NOT_CODE and b.no_run is None]
    assert not unknown, f"blocks in a language that is not run, and not marked no-run: {unknown}"
    assert all(b.no_run.strip() for b in found if b.no_run is not None)
    counts = _blocks.counts(found)
    assert sum(v for k, v in counts.items() if k in _blocks.RUN) >= 25, counts
    assert counts["python"] >= 5 and counts["sh"] >= 10 and counts["toml"] + counts.get("file", 0) >= 4


def test_the_readme_is_a_front_page() -> None:
    text = (_blocks.REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= 8 * 1024
    first_block = text[text.index("```sh") :].split("```")[1]
    assert first_block.split()[1:3] == ["make", "demo"] and "make test" in first_block
    assert text.index("## Two commands") < text.index("## Quick start")
