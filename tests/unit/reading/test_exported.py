"""The public surface of ``hrbench.reading``: a sorted, complete ``__all__`` with docstrings."""

from __future__ import annotations

import hrbench.reading as reading


def test_all_is_sorted_and_complete() -> None:
    assert reading.__all__ == sorted(reading.__all__)
    public = {n for n in dir(reading) if not n.startswith("_")}
    submodules = {n for n in public if type(getattr(reading, n)).__name__ == "module"}
    assert public - submodules - {"annotations"} == set(reading.__all__)


def test_every_exported_callable_has_a_docstring() -> None:
    for name in reading.__all__:
        obj = getattr(reading, name)
        if callable(obj):
            assert obj.__doc__, name
