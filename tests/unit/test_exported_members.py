"""The public surface: ``hrbench.__all__`` is sorted and matches the public names (httpx, anyio)."""

from __future__ import annotations

import hrbench


def test_all_is_sorted_and_complete() -> None:
    assert hrbench.__all__ == sorted(hrbench.__all__)
    public = {n for n in dir(hrbench) if not n.startswith("_")}
    submodules = {n for n in public if type(getattr(hrbench, n)).__name__ == "module"} - {"reading", "metrics"}
    assert public - submodules - {"annotations"} == set(hrbench.__all__)


def test_every_exported_name_has_a_docstring() -> None:
    for name in hrbench.__all__:
        obj = getattr(hrbench, name)
        if callable(obj):
            assert obj.__doc__, name


def test_core_never_imports_server_or_clients() -> None:
    import subprocess
    import sys

    code = "import sys, hrbench; bad = [m for m in sys.modules if m.split('.')[0] in ('hrbench_server', 'hrbench_client', 'pygls')]; print(bad)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]"
