"""A facade's names imported on first use (:pep:`562`): one ``__getattr__`` and ``__dir__`` for all.

A package's ``__init__.py`` (its facade, docs/development.md "Layout") offers names of its
private modules without importing them at start: it lists them in a table and takes its
module-level ``__getattr__`` and ``__dir__`` from :func:`lazy_names`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, table: Mapping[str, str], names: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A facade's ``__getattr__`` and ``__dir__``: ``name`` imported from ``table[name]`` on first use.

    The module is imported as an ``import`` statement does, so ``python -X importtime`` names it
    (``importlib.import_module`` does not); the value is then kept in the facade, so later
    lookups never reach ``__getattr__``.

    Args:
        package: the facade's ``__name__`` (already in :data:`sys.modules`).
        table: name -> the dotted module that defines it.
        names: the facade's ``__all__``, which ``dir()`` lists beside what is bound.

    Returns:
        ``(__getattr__, __dir__)``; ``__getattr__`` raises :class:`AttributeError` for a name
        not in ``table``.

    Example:
        >>> import types
        >>> pkg = sys.modules["hrbench_lazy_demo"] = types.ModuleType("hrbench_lazy_demo")
        >>> pkg.__getattr__, pkg.__dir__ = lazy_names("hrbench_lazy_demo", {"dumps": "json"}, ["dumps"])
        >>> pkg.dumps([1]), "dumps" in vars(pkg)
        ('[1]', True)
        >>> del sys.modules["hrbench_lazy_demo"]
    """
    space = sys.modules[package].__dict__
    listed = tuple(names)

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        __import__(module)
        value = getattr(sys.modules[module], name)
        space[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(space) | set(listed))

    return __getattr__, __dir__
