"""``evaluate()`` of a module over a data set (:mod:`~hrbench.evaluation.evaluate`), modules and signatures (:mod:`~hrbench.evaluation.modules`) and its metrics (:mod:`~hrbench.metrics`).

``hrbench.evaluation.metrics`` is :mod:`hrbench.metrics` under this package's name, imported on
first use.

Example:
    >>> from hrbench.evaluation import metrics
    >>> from hrbench.metrics import exact_match
    >>> metrics.exact_match is exact_match
    True
"""

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
    from hrbench._util.lazy import lazy_names

    __getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)

# -- end of tools/privatize.py's block
