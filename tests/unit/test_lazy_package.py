"""``import hrbench`` imports none of its names until one is used (PEP 562), and offers each of them.

The package's imports sit under ``TYPE_CHECKING`` (for type checkers and readers); the
interpreter finds each name through ``hrbench._LAZY``. The two must say the same: each name
from the module it is imported from, and every name of ``__all__``.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import hrbench

INIT = Path(hrbench.__file__)


def _type_checking_imports() -> dict[str, str]:
    """Name -> the dotted path it is imported from, under ``if typing.TYPE_CHECKING:`` in the package."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    guard = next(
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "typing.TYPE_CHECKING"
    )
    out = {}
    for node in guard.body:
        assert isinstance(node, ast.ImportFrom) and node.module, ast.unparse(node)
        for alias in node.names:
            out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return out


def test_the_lazy_table_says_what_the_type_checking_imports_say() -> None:
    lazy = {name: f"{module}.{name}" for module, names in hrbench._LAZY.items() for name in names}
    assert {**lazy, **hrbench._SUBMODULES} == _type_checking_imports()
    assert sorted({*lazy, *hrbench._SUBMODULES} - {"ledger"}) == sorted(hrbench.__all__)  # README's hb.ledger


def _fresh(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout.strip()


def test_importing_the_package_imports_none_of_its_modules() -> None:
    code = "import sys, hrbench; print(sorted(m for m in sys.modules if m.startswith('hrbench.')))"
    assert _fresh(code) == "[]"


def test_a_name_is_imported_on_first_use_and_a_submodule_too() -> None:
    code = (
        "import sys, hrbench as hb; hb.Arm; hb.stats.report; "
        "print('hrbench.arm' in sys.modules, 'hrbench.stats' in sys.modules, 'hrbench.store' in sys.modules)"
    )
    assert _fresh(code) == "True True False"


def test_every_public_name_is_the_object_its_module_defines() -> None:
    for name, path in _type_checking_imports().items():
        module, _, attr = path.rpartition(".")
        defined = (
            importlib.import_module(path)
            if name in hrbench._SUBMODULES
            else getattr(importlib.import_module(module), attr)
        )
        assert getattr(hrbench, name) is defined, name


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        hrbench.no_such_name  # noqa: B018
    assert not hasattr(hrbench, "__wrapped__")
