"""The public surface of ``hrbench.reading``: a sorted, complete ``__all__`` with docstrings."""

from __future__ import annotations

import hrbench.reading as reading


def test_all_is_sorted_and_complete() -> None:
    assert reading.__all__ == sorted(reading.__all__)
    public = {n for n in dir(reading) if not n.startswith("_")}
    submodules = {n for n in public if type(getattr(reading, n)).__name__ == "module"}
    assert public - submodules - {"annotations", "lazy_names"} == set(reading.__all__)  # the first-use helper


def test_every_exported_callable_has_a_docstring() -> None:
    for name in reading.__all__:
        obj = getattr(reading, name)
        if callable(obj):
            assert obj.__doc__, name


def test_a_name_taken_from_the_facade_loads_only_its_own_module() -> None:
    """The facade imports a name on first use: the specs, interop and the daemon's cache method
    take one helper from it without loading the recipes or the outputs arms."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from hrbench.reading import json_lines\n"
        "print(sorted(m for m in sys.modules if m.startswith('hrbench.reading.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['hrbench.reading._reference']"
