"""The run context and the runner meet through one direction only: the runner imports the context."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[3] / "hrbench"


def _imports(module: str) -> set[str]:
    """What a module imports (a package: every module in it)."""
    paths = sorted((PKG / module).rglob("*.py")) if (PKG / module).is_dir() else [PKG / f"{module}.py"]
    assert paths, module
    out: set[str] = set()
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        out |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    return {m for m in out if m.startswith("hrbench")}


@pytest.mark.parametrize(
    ("module", "never"),
    [
        ("arm", "hrbench.runner"),
        ("runner/runtime", "hrbench.runner._benchmark"),
    ],
)
def test_no_import_cycle_between_arm_runtime_and_runner(module: str, never: str) -> None:
    found = {m for m in _imports(module) if m == never or m.startswith(f"{never}.")}
    assert not found, found  # at run time or for type checking alike
