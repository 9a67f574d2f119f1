"""The public surface: ``hrbench.__all__`` is sorted and matches the public names (httpx, anyio)."""

from __future__ import annotations

import hrbench


def test_all_is_sorted_and_complete() -> None:
    assert hrbench.__all__ == sorted(hrbench.__all__)
    public = {n for n in dir(hrbench) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(hrbench, n)).__name__ == "module"}
    submodules = modules - {"reading", "metrics"}
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


def test_import_hrbench_does_not_import_scipy() -> None:
    # scipy costs ~0.4 s at import, paid by the daemon's start-up and `hrb` autostart;
    # hrbench.stats imports it on first use
    import subprocess
    import sys

    code = "import hrbench, sys; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
