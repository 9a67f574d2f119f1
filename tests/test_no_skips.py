"""The suite never skips a declared dependency, our own module or the shared data.

Only optional extras (``[project.optional-dependencies]`` other than ``dev``) may be
``importorskip``-ed, and only the listed environment checks may call ``pytest.skip``: on a fresh
clone ``make test`` runs every other test or fails.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# skips that depend on the machine, not on what we ship (root without CAP_SYS_ADMIN, no tmpfs,
# no user namespaces, an allocator other than glibc's)
MACHINE_SKIPS = {
    "tests/clients/test_cli_full_disk.py",
    "tests/server/test_malloc_arenas.py",
    "tests/server/test_store_faults.py",
    "tests/unit/store/test_store_faults.py",
    "tests/server/test_store_full_at_finish.py",
    "tests/clients/test_cli_state_folder.py",
}


def _optional_modules() -> set[str]:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {
        req.split(">")[0].split("=")[0].split("[")[0].strip().replace("-", "_")
        for extra, reqs in extras.items()
        if extra != "dev"
        for req in reqs
    }
    return names


def _calls(attr: str) -> list[tuple[str, int, ast.Call]]:
    out = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == attr
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "pytest"
            ):
                out.append((str(path.relative_to(REPO)), node.lineno, node))
    return out


def test_importorskip_only_optional_extras() -> None:
    optional = _optional_modules()
    assert {"pandas", "polars", "ray"} <= optional
    bad = []
    for path, line, call in _calls("importorskip"):
        arg = call.args[0]
        name = arg.value if isinstance(arg, ast.Constant) else None
        if not isinstance(name, str) or name.split(".")[0] not in optional:
            bad.append(f"{path}:{line} importorskip({ast.unparse(arg)})")
    assert not bad, "skips of a declared dependency or our own module:\n" + "\n".join(bad)


def test_skip_only_for_machine_limits() -> None:
    bad = [f"{path}:{line}" for path, line, _ in _calls("skip") if path not in MACHINE_SKIPS]
    assert not bad, "pytest.skip outside the machine checks (shared data is never skipped):\n" + "\n".join(
        bad
    )
