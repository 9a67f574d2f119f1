"""The scripts outside the test suite's reach import only what exists.

``bench/`` and ``examples/`` run by hand or from ``make bench`` / ``make demo``, not from ``make
test``, and most of their imports sit inside functions: a module moved or renamed breaks them
silently until someone runs them (a moved runner module once stopped ``make bench`` halfway).
This walks every import statement in them with :mod:`ast`, function-local ones included, and
checks that each of hrbench's own modules named exists and holds each name imported from it.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OWN = ("hrbench", "hrbench_server", "hrbench_client")
SCRIPTS = sorted([*(ROOT / "bench").glob("*.py"), *(ROOT / "examples").rglob("*.py")])


def _own_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """``(line, module, name)`` for each import of our packages in ``path`` (``name`` None: ``import m``)."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] in OWN]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in OWN:
                found += [(node.lineno, node.module, a.name) for a in node.names]
    return found


def _missing(module: str, name: str | None) -> str | None:
    if importlib.util.find_spec(module) is None:
        return f"no module {module}"
    if name is None or name == "*":
        return None
    mod = importlib.import_module(module)
    if hasattr(mod, name) or importlib.util.find_spec(f"{module}.{name}") is not None:
        return None
    return f"{module} has no {name}"


def test_the_scripts_are_found() -> None:
    names = {p.name for p in SCRIPTS}
    assert {"coverage.py", "daemon.py", "evaluate.py", "demo.py"} <= names


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_import_of_our_packages_resolves(path: Path) -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {why}"
        for line, module, name in _own_imports(path)
        if (why := _missing(module, name)) is not None
    ]
    assert not bad, "\n".join(bad)


def test_the_check_catches_a_moved_module(tmp_path: Path) -> None:
    script = tmp_path / "old.py"
    script.write_text(
        "def main():\n    from hrbench.runner import runner as benchmark\n    from hrbench import no_such_name\n"
    )
    found = [_missing(m, n) for _, m, n in _own_imports(script)]
    assert found == ["hrbench.runner has no runner", "hrbench has no no_such_name"]
