"""Fail when the built site names an issue, a seed file, a shared case or a newcomer finding.

Run by ``make docs`` after the build: ``python docs/_gen/check_site.py site``. The docstrings the
Python API pages render cite seed files and shared cases as a rule's source; the site must show
users the rule in their words (:class:`griffe_examples.UsersWords` rewrites them). Issue numbers
and findings are history, which no docstring tells (``tests/test_no_history.py``): nothing
rewrites them, so one that reaches a page fails here.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from users_words import _TOKEN  # noqa: E402

_HISTORY = r"(?:[Ii]ssues? #?\d+|[Nn]ewcomer findings?(?: \d+)?)"
_FOUND = re.compile(r"\b(?:" + _TOKEN + "|" + _HISTORY + ")")
_TAG = re.compile(r"<[^>]+>")


def offenders(site: Path) -> list[str]:
    """``page: text`` for every reference found in the pages' text (tags stripped)."""
    found = []
    for page in sorted(site.rglob("*.html")):
        text = html.unescape(_TAG.sub(" ", page.read_text(encoding="utf-8")))
        for m in _FOUND.finditer(text):
            around = " ".join(text[max(0, m.start() - 60) : m.end() + 40].split())
            found.append(f"{page.relative_to(site)}: ...{around}...")
    return found


if __name__ == "__main__":
    bad = offenders(Path(sys.argv[1] if len(sys.argv) > 1 else "site"))
    for line in bad[:40]:
        print(line, file=sys.stderr)
    if bad:
        print(
            f"{len(bad)} reference(s) to issues, seeds, cases or findings in the site's text", file=sys.stderr
        )
    sys.exit(1 if bad else 0)
