"""tools/privatize.py on a tiny package tree: modules made private, every reference rewritten, a facade.

Each test builds a small repository in ``tmp_path`` (a git repository, as the real one is): a
package ``hrbench/pkg`` with public modules, a module private from the start, a subpackage, a
root facade, code of another package, a test, a Markdown page, a tool naming a file and a
``pyproject.toml`` naming an entry point. It runs the script there and reads what it wrote; the
rewritten code is imported in a fresh interpreter to show it still runs.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool() -> Any:
    spec = importlib.util.spec_from_file_location("hrbench_privatize", ROOT / "tools" / "privatize.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


privatize = _tool()

TREE = {
    "hrbench/__init__.py": '''
        """The root facade."""

        import typing

        if typing.TYPE_CHECKING:
            from hrbench.pkg import beta as beta  # hb.beta, a module
            from hrbench.pkg.alpha import A

        _LAZY = {"hrbench.pkg.alpha": ("A",)}
        __all__ = ["A"]
        ''',
    "hrbench/pkg/__init__.py": '''
        """The package: ``from hrbench.pkg import A`` (see :mod:`hrbench.pkg.alpha`)."""

        from __future__ import annotations

        from hrbench.pkg.alpha import A
        from hrbench.pkg.power import power

        __all__ = ["A", "power"]
        ''',
    "hrbench/pkg/alpha.py": """
        from .beta import B

        A = 1
        _secret = 2


        def helper() -> int:
            return A + B


        def only_tests() -> str:
            return "internal"
        """,
    "hrbench/pkg/beta.py": """
        B = 2


        def uses_alpha() -> int:
            from hrbench.pkg import alpha

            return alpha.A
        """,
    "hrbench/pkg/power.py": """
        def power() -> str:
            return "the function"
        """,
    "hrbench/pkg/delta.py": """
        D = 4
        """,
    "hrbench/pkg/_gamma.py": """
        from hrbench.pkg.beta import B as G
        """,
    "hrbench/pkg/sub/__init__.py": """
        from hrbench.pkg.alpha import helper

        __all__ = ["helper"]
        """,
    "hrbench/other.py": """
        import hrbench.pkg.beta
        from hrbench.pkg.alpha import A, _secret, helper
        from hrbench.pkg.beta import B


        def total() -> int:
            from hrbench.pkg.delta import D  # on first use

            assert D == 4
            return A + B + _secret + helper() + hrbench.pkg.beta.B
        """,
    "tests/test_x.py": """
        from unittest import mock

        from hrbench.pkg import alpha
        from hrbench.pkg.alpha import only_tests
        from hrbench.pkg.beta import B

        PATCH = mock.patch("hrbench.pkg.alpha.helper")
        FUNCTION = "hrbench.pkg.power"
        CALLED = "hrbench.pkg.power.power"
        """,
    "docs/page.md": """
        Call `hrbench.pkg.alpha.helper` or `hrbench.pkg.power`; read `hrbench.pkg.alpha`'s source in
        hrbench/pkg/alpha.py, not tests/pkg/alpha.py.

        ```python
        from hrbench.pkg.alpha import helper
        from hrbench.pkg.alpha import only_tests
        ```
        """,
    "tools/m.py": """
        PATH = "hrbench/pkg/alpha.py"
        """,
    "pyproject.toml": """
        [project.scripts]
        x = "hrbench.pkg.alpha:helper"
        """,
    # the facades' first-use imports are the project's one helper
    "hrbench/_util/__init__.py": "",
    "hrbench/_util/lazy.py": (ROOT / "hrbench" / "_util" / "lazy.py").read_text(encoding="utf-8"),
}


def _make(root: Path, files: dict[str, str] = TREE) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "tree"], cwd=root, check=True)


def _snapshot(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and not any(part.startswith((".", "__pycache__")) for part in p.relative_to(root).parts)
    }


def _run_python(root: Path, code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    _make(tmp_path)
    assert privatize.run(["pkg"], tmp_path, format_=False) == 0
    return tmp_path


def test_public_modules_move_and_the_rest_stay(tree: Path) -> None:
    pkg = tree / "hrbench" / "pkg"
    assert sorted(p.name for p in pkg.glob("*.py")) == [
        "__init__.py",
        "_alpha.py",
        "_beta.py",
        "_delta.py",
        "_gamma.py",
        "_power.py",
    ]
    assert (pkg / "sub" / "__init__.py").exists()
    staged = subprocess.run(["git", "status", "--short"], cwd=tree, capture_output=True, text=True).stdout
    assert "R" + "M hrbench/pkg/alpha.py -> hrbench/pkg/_alpha.py" in staged  # git mv'd, then rewritten


def test_other_packages_import_from_the_facade_and_private_names_from_the_module(tree: Path) -> None:
    other = (tree / "hrbench" / "other.py").read_text()
    assert "from hrbench.pkg import A, helper\nfrom hrbench.pkg._alpha import _secret\n" in other
    assert "from hrbench.pkg import B\n" in other
    assert "import hrbench.pkg._beta\n" in other and "hrbench.pkg._beta.B" in other
    assert "hrbench.pkg.alpha" not in other and "hrbench.pkg.beta" not in other


def test_the_facade_offers_what_other_packages_use_in_all_and_on_first_use(tree: Path) -> None:
    init = (tree / "hrbench" / "pkg" / "__init__.py").read_text()
    assert "from hrbench.pkg._alpha import A\nfrom hrbench.pkg._power import power\n" in init
    assert '__all__ = [\n    "A",\n    "B",\n    "D",\n    "helper",\n    "power",\n]' in init
    lazy = '_LAZY = {\n    "B": "hrbench.pkg._beta",\n    "D": "hrbench.pkg._delta",\n    "helper": "hrbench.pkg._alpha",\n}'
    assert lazy in init
    assert "(see :mod:`hrbench.pkg._alpha`)" in init  # a module named in prose: its new path
    out = _run_python(
        tree,
        "import sys, hrbench.pkg as p; print(sorted(m for m in sys.modules if m.startswith('hrbench.pkg.')));"
        "print(p.helper(), p.B, sorted(p.__all__) == sorted(n for n in p.__all__ if hasattr(p, n)));"
        "import hrbench.other as o; print(o.total())",
    )
    # the facade's eager imports load _alpha (and _beta through it) and _power; helper is then found
    # a name imported on first use is imported as an `import` statement does: -X importtime names it
    log = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import hrbench.pkg as p; p.D"],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    assert log.rstrip().endswith("| hrbench.pkg._delta")
    assert out.splitlines() == [
        "['hrbench.pkg._alpha', 'hrbench.pkg._beta', 'hrbench.pkg._power']",
        "3 2 True",
        "10",
    ]


def test_inside_the_package_imports_name_the_private_modules(tree: Path) -> None:
    pkg = tree / "hrbench" / "pkg"
    assert "from ._beta import B\n" in (pkg / "_alpha.py").read_text()
    assert "from hrbench.pkg import _alpha as alpha\n" in (pkg / "_beta.py").read_text()
    assert "from hrbench.pkg._beta import B as G\n" in (pkg / "_gamma.py").read_text()
    assert "from hrbench.pkg._alpha import helper\n" in (pkg / "sub" / "__init__.py").read_text()
    root = (tree / "hrbench" / "__init__.py").read_text()
    assert "from hrbench.pkg._alpha import A\n" in root and '"hrbench.pkg._alpha": ("A",)' in root
    # a module re-exported as itself (`x as x`) is re-exported still: ruff is told so
    assert "from hrbench.pkg import _beta as beta  # noqa: F401  # hb.beta, a module\n" in root


def test_tests_use_the_facade_where_it_offers_the_name_and_patches_keep_their_target(tree: Path) -> None:
    text = (tree / "tests" / "test_x.py").read_text()
    assert "from hrbench.pkg import _alpha as alpha\n" in text
    assert "from hrbench.pkg._alpha import only_tests\n" in text  # an internal: the private module
    assert "from hrbench.pkg import B\n" in text
    assert 'mock.patch("hrbench.pkg._alpha.helper")' in text  # patched where it is looked up
    assert 'FUNCTION = "hrbench.pkg.power"' in text  # the facade's function, not the module
    assert 'CALLED = "hrbench.pkg._power.power"' in text


def test_pages_paths_entry_points_and_file_names(tree: Path) -> None:
    page = (tree / "docs" / "page.md").read_text()
    assert "Call `hrbench.pkg.helper` or `hrbench.pkg.power`" in page
    assert "read `hrbench.pkg._alpha`'s source in\nhrbench/pkg/_alpha.py, not tests/pkg/alpha.py." in page
    assert "from hrbench.pkg import helper\nfrom hrbench.pkg._alpha import only_tests\n" in page
    assert 'PATH = "hrbench/pkg/_alpha.py"' in (tree / "tools" / "m.py").read_text()
    assert 'x = "hrbench.pkg._alpha:helper"' in (tree / "pyproject.toml").read_text()


def test_a_second_run_changes_nothing(tree: Path) -> None:
    before = _snapshot(tree)
    assert privatize.run(["hrbench/pkg"], tree, check=True, format_=False) == 0
    assert privatize.run(["hrbench.pkg"], tree, format_=False) == 0
    assert _snapshot(tree) == before


def test_code_merged_from_before_the_move_is_rewritten_by_a_later_run(tree: Path) -> None:
    late = tree / "hrbench" / "late.py"
    late.write_text("from hrbench.pkg.alpha import helper, only_tests\nX = 'hrbench.pkg.beta:B'\n")
    assert privatize.run(["pkg"], tree, check=True, format_=False) == 1
    privatize.run(["pkg"], tree, format_=False)
    assert late.read_text() == "from hrbench.pkg import helper, only_tests\nX = 'hrbench.pkg._beta:B'\n"
    assert '"only_tests": "hrbench.pkg._alpha",' in (tree / "hrbench" / "pkg" / "__init__.py").read_text()
    assert _run_python(tree, "import hrbench.late as m; print(m.only_tests())") == "internal"


def test_with_ruff_the_files_come_out_sorted_and_formatted_and_stay_so(tmp_path: Path) -> None:
    _make(tmp_path)
    privatize.run(["pkg"], tmp_path)
    first = _snapshot(tmp_path)
    other = first["hrbench/other.py"]
    assert other.startswith("import hrbench.pkg._beta\nfrom hrbench.pkg import A, B, helper\n")
    privatize.run(["pkg"], tmp_path)
    assert _snapshot(tmp_path) == first
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "I", "--isolated", "hrbench"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert lint.returncode == 0, lint.stdout


def test_a_module_and_its_private_twin_are_refused(tmp_path: Path) -> None:
    _make(tmp_path, {**TREE, "hrbench/pkg/_beta.py": "B = 3\n"})
    with pytest.raises(SystemExit, match=r"beta\.py: _beta\.py exists too"):
        privatize.run(["pkg"], tmp_path, format_=False)


def test_a_folder_that_is_no_package_is_refused(tmp_path: Path) -> None:
    _make(tmp_path)
    with pytest.raises(SystemExit, match="no package at"):
        privatize.run(["nothing"], tmp_path, format_=False)
