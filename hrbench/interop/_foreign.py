"""What the readers of other tools' results share: :class:`Imported`, :class:`ErrorRun`, the version check.

The readers (:mod:`._inspect_read`, :mod:`._lmeval`, :mod:`._promptfoo`) build an :class:`Imported`;
:mod:`._imported` turns it into an arm or a reference.
"""

from __future__ import annotations

from typing import Any

import msgspec

from hrbench.errors import ConfigError

__all__ = ["ErrorRun", "Imported", "ImportedRunError", "check_version"]


class ErrorRun(msgspec.Struct, frozen=True):
    """A run the other tool recorded as failed; its arm raises :class:`ImportedRunError`."""

    message: str


class ImportedRunError(RuntimeError):
    """Raised by an imported arm for a run the other tool recorded as failed (its message is the tool's)."""


class Imported(msgspec.Struct, kw_only=True):
    """What a reader found in one file.

    Attributes:
        source: the file read.
        fmt: its format (one of :data:`FILE_FORMATS`).
        items: item id -> item, in the file's order.
        labels: item id -> label (``None``: unlabelled).
        arms: arm name -> item id -> the outputs of runs 1, 2, ... (an :class:`ErrorRun` for a
            failed run, ``NO_OUTPUT`` for a run the file leaves out).
        clusters: item id -> cluster, where the file names one.
        splits: item id -> split, where the file names one.
    """

    source: str
    fmt: str
    items: dict[str, Any]
    labels: dict[str, Any]
    arms: dict[str, dict[str, list[Any]]]
    clusters: dict[str, str] = msgspec.field(default_factory=dict)
    splits: dict[str, str] = msgspec.field(default_factory=dict)

    def add_run(self, arm: str, item: str, run: int | None, output: Any) -> None:
        """Put ``output`` as run ``run`` (1-based; ``None``: the next) of ``item`` on ``arm``.

        The runs a file leaves out before ``run`` are held as ``NO_OUTPUT``; inside
        :func:`~hrbench.interop._boundary.reading` each counts as a JSON value of the file, so a
        run number of ``10**30`` is refused by ``max_values`` instead of filling memory.
        """
        from hrbench.interop._boundary import current
        from hrbench.reading._outputs import NO_OUTPUT

        runs = self.arms.setdefault(arm, {}).setdefault(item, [])
        if run is None:
            runs.append(output)
            return
        reading = current()
        if reading is not None and run > len(runs) + 1:
            found = f"item {item!r} has run {run} (arm {arm!r}): more runs than the file may hold"
            reading.charge_values(run - len(runs) - 1, "", found)
        while len(runs) < run:
            runs.append(NO_OUTPUT)
        if runs[run - 1] is not NO_OUTPUT:
            raise ConfigError("path", self.source, f"item {item!r} has run {run} twice (arm {arm!r})")
        runs[run - 1] = output


def check_version(source: str, tool: str, field: str, version: Any, known: tuple[Any, ...]) -> None:
    """Refuse a file whose format version the reader does not know, naming it."""
    if version not in known:
        shown = ", ".join(map(str, known))
        raise ConfigError(
            "path",
            source,
            f"is a {tool} file of format {field} {version!r}; this reader knows {field} {shown}",
        )
