"""What the readers of other tools' results share: :class:`Imported`, :class:`ErrorRun`, the version check.

The readers (:mod:`._inspect_read`, :mod:`._lmeval`, :mod:`._promptfoo`) build an :class:`Imported`;
:mod:`._imported` turns it into an arm or a reference.
"""

from __future__ import annotations

from typing import Any

import msgspec

from hrbench.errors import ConfigError

__all__ = ["LOG_SOURCE", "ErrorRun", "Imported", "ImportedRunError", "LogUsage", "check_version"]

LOG_SOURCE = "log"
"""The ``source`` of the trace step an imported run makes, and the ``usd_provenance`` of its row.

The run's output, tokens and cost come from another tool's log: nothing was sent or paid here,
so its row's ``usd`` is 0 (as for a recording hit) and the governor counts nothing; the cost the
log records is the step's ``usd_nominal``, the run's list price (:func:`hrbench.records.list_usd`).
"""


class ErrorRun(msgspec.Struct, frozen=True):
    """A run the other tool recorded as failed; its arm raises :class:`ImportedRunError`."""

    message: str


class LogUsage(msgspec.Struct, frozen=True, kw_only=True):
    """The usage another tool's log records for one run, in hrbench's token convention.

    Attributes:
        model: the model the log names for it, or ``None``.
        tokens_in: input tokens, cached ones included (tokens).
        tokens_out: output tokens, reasoning included (tokens).
        tokens_reasoning: reasoning tokens among ``tokens_out``.
        tokens_cached: input tokens read from a provider's prompt cache, among ``tokens_in``.
        usd: the cost the log records (USD), or ``None`` when it records none.

    Example:
        >>> LogUsage(model="openai/gpt-4o-mini", tokens_in=12, tokens_out=3).usd is None
        True
    """

    model: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_reasoning: int = 0
    tokens_cached: int = 0
    usd: float | None = None


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
        usage: arm name -> item id -> the usage the file records for runs 1, 2, ... (a
            :class:`LogUsage`, ``None`` for a run whose usage it does not record).
    """

    source: str
    fmt: str
    items: dict[str, Any]
    labels: dict[str, Any]
    arms: dict[str, dict[str, list[Any]]]
    clusters: dict[str, str] = msgspec.field(default_factory=dict)
    splits: dict[str, str] = msgspec.field(default_factory=dict)
    usage: dict[str, dict[str, list[LogUsage | None]]] = msgspec.field(default_factory=dict)

    def add_run(
        self, arm: str, item: str, run: int | None, output: Any, usage: LogUsage | None = None
    ) -> None:
        """Put ``output`` (and the ``usage`` recorded for it) as run ``run`` (1-based; ``None``: the next) of ``item`` on ``arm``.

        The runs a file leaves out before ``run`` are held as ``NO_OUTPUT``; inside
        :func:`~hrbench.interop._boundary.reading` each counts as a JSON value of the file, so a
        run number of ``10**30`` is refused by ``max_values`` instead of filling memory.
        """
        from hrbench.interop._boundary import current
        from hrbench.reading import NO_OUTPUT

        runs = self.arms.setdefault(arm, {}).setdefault(item, [])
        if run is None:
            run = len(runs) + 1
        reading = current()
        if reading is not None and run > len(runs) + 1:
            found = f"item {item!r} has run {run} (arm {arm!r}): more runs than the file may hold"
            reading.charge_values(run - len(runs) - 1, "", found)
        while len(runs) < run:
            runs.append(NO_OUTPUT)
        if runs[run - 1] is not NO_OUTPUT:
            raise ConfigError("path", self.source, f"item {item!r} has run {run} twice (arm {arm!r})")
        runs[run - 1] = output
        if usage is not None:
            used = self.usage.setdefault(arm, {}).setdefault(item, [])
            used.extend([None] * (run - len(used)))
            used[run - 1] = usage


def check_version(source: str, tool: str, field: str, version: Any, known: tuple[Any, ...]) -> None:
    """Refuse a file whose format version the reader does not know, naming it."""
    if version not in known:
        shown = ", ".join(map(str, known))
        raise ConfigError(
            "path",
            source,
            f"is a {tool} file of format {field} {version!r}; this reader knows {field} {shown}",
        )
