"""``evaluate()`` of a module over a data set (:mod:`~hrbench.evaluation.evaluate`), modules and signatures (:mod:`~hrbench.evaluation.modules`) and its metrics (:mod:`~hrbench.metrics`).

``hrbench.evaluation.metrics`` is :mod:`hrbench.metrics` under this package's name, imported on
first use.

Example:
    >>> from hrbench.evaluation import metrics
    >>> from hrbench.metrics import exact_match
    >>> metrics.exact_match is exact_match
    True
"""

import sys
import typing

__all__ = [
    "metrics",
]


# -- tools/privatize.py: names other packages use, imported on first use (PEP 562)
if typing.TYPE_CHECKING:
    from hrbench import metrics

_LAZY = {
    "metrics": "hrbench",
}

if not typing.TYPE_CHECKING:  # type checkers read the imports above; a typo stays an error

    def __getattr__(name: str) -> typing.Any:
        """Import ``name`` from its module on first use (:pep:`562`), as an ``import`` does.

        ``python -X importtime`` names the module then (``importlib.import_module`` does not).
        """
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        __import__(module)
        value = getattr(sys.modules[module], name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


# -- end of tools/privatize.py's block
