"""Other eval tools' files, read and written together: Inspect logs, lm-eval samples, promptfoo results.

- in: :func:`read_imported` reads a file of one of :data:`FILE_FORMATS` into an
  :class:`Imported` (its items, labels and per arm the outputs of each run), which
  :func:`imported_arm` makes an outputs arm and :func:`imported_reference` a reference;
- out: :func:`bench_to_inspect` writes a benchmark as Inspect eval logs, one per arm, ``.json``
  or ``.eval``, named as Inspect names them (:func:`inspect_logs` builds them from rows,
  :func:`write_inspect_logs` writes them, :func:`stored_to_inspect` does both for a stored
  benchmark).

The guide is ``docs/guides/interop.md``. Names load on first use (PEP 562), so reading a spec
that names no other tool's file imports none of the readers.
"""

from __future__ import annotations

import typing

if typing.TYPE_CHECKING:
    from hrbench.interop._foreign import ErrorRun, Imported, ImportedRunError
    from hrbench.interop._imported import (
        FILE_FORMATS,
        imported_arm,
        imported_reference,
        imported_spec_arm,
        imported_spec_reference,
        read_imported,
    )
    from hrbench.interop._inspect_files import (
        LOG_FORMATS,
        bench_to_inspect,
        stored_to_inspect,
        write_inspect_logs,
    )
    from hrbench.interop._inspect_read import read_inspect
    from hrbench.interop._inspect_write import inspect_logs
    from hrbench.interop._lmeval import read_lmeval
    from hrbench.interop._promptfoo import read_promptfoo

_WHERE = {
    "hrbench.interop._foreign": ("ErrorRun", "Imported", "ImportedRunError"),
    "hrbench.interop._imported": (
        "FILE_FORMATS",
        "imported_arm",
        "imported_reference",
        "imported_spec_arm",
        "imported_spec_reference",
        "read_imported",
    ),
    "hrbench.interop._inspect_files": (
        "LOG_FORMATS",
        "bench_to_inspect",
        "stored_to_inspect",
        "write_inspect_logs",
    ),
    "hrbench.interop._inspect_read": ("read_inspect",),
    "hrbench.interop._inspect_write": ("inspect_logs",),
    "hrbench.interop._lmeval": ("read_lmeval",),
    "hrbench.interop._promptfoo": ("read_promptfoo",),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "ErrorRun",
    "FILE_FORMATS",
    "Imported",
    "ImportedRunError",
    "LOG_FORMATS",
    "bench_to_inspect",
    "imported_arm",
    "imported_reference",
    "imported_spec_arm",
    "imported_spec_reference",
    "inspect_logs",
    "read_imported",
    "read_inspect",
    "read_lmeval",
    "read_promptfoo",
    "stored_to_inspect",
    "write_inspect_logs",
]


if not typing.TYPE_CHECKING:  # type checkers read the imports above; a typo stays an error
    from hrbench._util.lazy import lazy_names

    __getattr__, __dir__ = lazy_names(__name__, _MODULE_OF, __all__)
