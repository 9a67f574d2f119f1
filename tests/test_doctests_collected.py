"""Every package's doctests run under `make test` (those under clients/ once were not)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_root_is_a_test_path_with_doctests() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pytest_ini = project["tool"]["pytest"]["ini_options"]
    assert "--doctest-modules" in pytest_ini["addopts"]
    collected = {ROOT / p for p in pytest_ini["testpaths"]}
    for root in project["tool"]["hatch"]["build"]["dev-mode-dirs"]:  # where the packages live
        for init in (ROOT / root).glob("*/__init__.py"):
            package = init.parent
            if package.name == "tests":
                continue
            assert package in collected or package.parent in collected, f"{package} is not collected"
