"""hrbench_client imports only the standard library and msgspec."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests._slow import slow

FORBIDDEN = {
    "httpx",
    "httpx2",
    "pygls",
    "lsprotocol",
    "cattrs",
    "sqlite_utils",
    "hrbench",
    "hrbench_server",
    "anyio",
    "numpy",
    "scipy",
    "platformdirs",
}


def test_client_and_cli_import_no_core_or_server_packages() -> None:
    code = (
        "import sys, json, hrbench_client, hrbench_client.cli, hrbench_client.client, hrbench_client.protocol;"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=slow(60)
    )
    loaded = set(json.loads(out.stdout))
    assert not loaded & FORBIDDEN, loaded & FORBIDDEN
    third_party = {m for m in loaded if m not in sys.stdlib_module_names and not m.startswith("_")}
    assert third_party <= {"hrbench_client", "msgspec", "typing_extensions"}, third_party


def test_the_library_imports_neither_the_daemon_nor_the_client() -> None:
    """``hrbench/`` works without the daemon: no module of it names ``hrbench_server`` or ``hrbench_client``."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "hrbench"
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            found += [
                f"{path.relative_to(root.parent)}:{node.lineno} {n}"
                for n in names
                if n.split(".")[0] in {"hrbench_server", "hrbench_client"}
            ]
    assert not found, found


@pytest.mark.parametrize(("client", "core"), [("files", "atomic"), ("utf8", "utf8")])
def test_the_clients_standard_library_helpers_are_the_librarys_copies(client: str, core: str) -> None:
    """``hrbench_client/files.py`` and ``utf8.py`` are written by ``make schema`` from ``hrbench/_util/``."""
    import importlib
    from pathlib import Path

    copy = importlib.import_module(f"hrbench_client.{client}")
    want = importlib.import_module(f"hrbench._util.{core}").client_copy()
    assert copy.__file__ is not None
    assert Path(copy.__file__).read_text(encoding="utf-8") == want, "stale: run `make schema`"
