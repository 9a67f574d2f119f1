"""Signatures and modules, the DSPy-style side of seed 003, and running them on rows.

A :class:`Signature` names a module's inputs and typed outputs; a module fills the outputs,
either with one model call (:func:`module`) or with a plain function (:func:`module_fn`).
:func:`run` runs a module once; :func:`run_dataset` runs it on every row of a data set.

Signature grammar (white space is free between tokens)::

    signature := fields "->" fields
    fields    := field ("," field)*
    field     := NAME [":" type] [DESCRIPTION]
    type      := "str" | "int" | "float" | "bool" | "list[" scalar "]"
               | "enum(" STRING ("," STRING)* ")"
    scalar    := "str" | "int" | "float" | "bool"
    NAME      := a Python identifier that is not a keyword and does not start with "_"
    STRING    := '...' or "..." (a backslash escapes the quote)
    DESCRIPTION := STRING

A field without a type is ``str``. Names must be unique across inputs and outputs. Examples:
``"text -> sentiment: enum('positive', 'negative')"``,
``'question: str "the question", context -> answer: str "a short span", confidence: float'``.
Instructions are not part of the string: pass ``signature(..., instructions=...)`` or
``module(..., instructions=...)``. A malformed signature raises
:class:`~hrbench.errors.SignatureError` with the column and the fragment at fault.

Example:
    >>> sig = signature("text -> sentiment: enum('positive', 'negative')")
    >>> [f.name for f in sig.inputs], sig.outputs[0].choices
    (['text'], ('positive', 'negative'))
    >>> rule = module_fn("text -> sentiment",
    ...                  lambda text: "positive" if "love" in text.lower() else "negative")
    >>> run(rule, text="I love it!")
    Prediction(sentiment='positive')
"""

from __future__ import annotations

import typing

from hrbench.evaluation.modules._base import Module
from hrbench.evaluation.modules._dataset import run_dataset, run_dataset_async
from hrbench.evaluation.modules._fn import FnModule, module_fn
from hrbench.evaluation.modules._lm import LMModule, module
from hrbench.evaluation.modules._lm import parse_outputs as parse_outputs
from hrbench.evaluation.modules._records import Example, Prediction, RowResult, Trace
from hrbench.evaluation.modules._running import rows_of, run, run_async
from hrbench.evaluation.modules._signatures import Field, Signature, signature

__all__ = [
    "Example",
    "Field",
    "FnModule",
    "LMModule",
    "Module",
    "Outcome",
    "Prediction",
    "RowResult",
    "Signature",
    "Trace",
    "check_concurrency",
    "check_inputs",
    "module",
    "module_fn",
    "row_result",
    "rows_of",
    "run",
    "run_async",
    "run_dataset",
    "run_dataset_async",
    "run_rows",
    "settings_of",
    "signature",
]


# -- tools/privatize.py: names other packages use, imported on first use (PEP 562)
if typing.TYPE_CHECKING:
    from hrbench.evaluation.modules._base import settings_of
    from hrbench.evaluation.modules._dataset import check_concurrency, row_result, run_rows
    from hrbench.evaluation.modules._running import Outcome, check_inputs

_LAZY = {
    "Outcome": "hrbench.evaluation.modules._running",
    "check_concurrency": "hrbench.evaluation.modules._dataset",
    "check_inputs": "hrbench.evaluation.modules._running",
    "row_result": "hrbench.evaluation.modules._dataset",
    "run_rows": "hrbench.evaluation.modules._dataset",
    "settings_of": "hrbench.evaluation.modules._base",
}

if not typing.TYPE_CHECKING:  # type checkers read the imports above; a typo stays an error
    from hrbench._util.lazy import lazy_names

    __getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)

# -- end of tools/privatize.py's block
