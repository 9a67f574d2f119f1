"""Results of other eval tools as arms and references: Inspect logs, lm-eval samples, promptfoo results.

Each reader (:mod:`._inspect_read`, :mod:`._lmeval`, :mod:`._promptfoo`) turns its tool's file into
one :class:`Imported`: the items and labels it names, and per arm the outputs of each item's
runs. :func:`imported_arm` makes one of those arms an outputs arm (the outputs rules apply: an
id no item has, or an item or run the file lacks, is refused before the first run, or with
``missing = "error"`` is an error run); :func:`imported_reference` makes the items and labels
a :class:`~hrbench.Reference`. A run the tool recorded as failed is an error run here, with the
tool's message as its cause.

Each imported run's trace holds one ``request`` step of source ``"log"``
(:data:`~hrbench.interop._foreign.LOG_SOURCE`): the output as its text (so
:func:`hrbench.judge_agreement` rescores it), the tokens the file records as its usage and the
cost it records as its ``usd_nominal`` (the run's list price; ``None`` when the file records
none). Nothing is sent or paid: ``usd`` is 0, the governor counts nothing, and the row's
``usd_provenance`` is ``"log"`` (from the log, not paid here).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from hrbench._util.forms import check_one_of
from hrbench._util.messages import did_you_mean, field_under
from hrbench.arm import Arm, Context
from hrbench.errors import ConfigError
from hrbench.interop._boundary import naming
from hrbench.interop._foreign import LOG_SOURCE, ErrorRun, Imported, ImportedRunError, LogUsage
from hrbench.records import Step, Usage
from hrbench.reference import Reference

__all__ = [
    "FILE_FORMATS",
    "ErrorRun",
    "Imported",
    "ImportedRunError",
    "imported_arm",
    "imported_reference",
    "imported_spec_arm",
    "imported_spec_reference",
    "read_imported",
]

FILE_FORMATS = ("inspect", "lm-eval", "promptfoo")
"""The formats of other tools' results an outputs arm (and a reference) reads."""


def read_imported(path: str | os.PathLike[str], fmt: str, id_var: str | None = None) -> Imported:
    """Read another tool's results file.

    Args:
        path: the file.
        fmt: ``"inspect"`` (an Inspect eval log, ``.json`` or ``.eval``), ``"lm-eval"`` (an
            lm-eval ``samples_*.jsonl``) or ``"promptfoo"`` (promptfoo's results JSON).
        id_var: promptfoo: the test variable holding the item id (default ``"id"``); refused
            for the other formats, whose items carry their own ids.

    Raises:
        ConfigError: an unknown format, a file of another format or version, or malformed
            (naming the place in it, ``samples[3].output``, and what was expected: one error
            boundary, :mod:`hrbench.interop._boundary`); a file over an import limit
            (``HRBENCH_IMPORT_MAX_BYTES`` and the others of :mod:`hrbench.interop._limits`);
            ``id_var`` with a format other than promptfoo, or a promptfoo result without it.
        OSError: the file cannot be read.
    """
    p = str(Path(path).expanduser())
    if id_var is not None and fmt != "promptfoo":
        raise ConfigError(
            "id_var",
            id_var,
            f"names a promptfoo test variable; the items of {fmt} results carry their own ids",
        )
    if fmt == "inspect":
        from hrbench.interop._inspect_read import read_inspect

        return read_inspect(p)
    if fmt == "lm-eval":
        from hrbench.interop._lmeval import read_lmeval

        return read_lmeval(p)
    if fmt == "promptfoo":
        from hrbench.interop._promptfoo import read_promptfoo

        return read_promptfoo(p, "id" if id_var is None else id_var)
    check_one_of("format", fmt, FILE_FORMATS)
    raise AssertionError(fmt)  # every format of FILE_FORMATS is read above


def _one_arm(found: Imported, source_arm: str | None) -> str:
    names = list(found.arms)
    if source_arm is not None:
        if source_arm not in found.arms:
            hint = did_you_mean(source_arm, names)
            raise ConfigError(
                "source_arm", source_arm, f"{found.source} holds no such arm; {hint}it holds {names}"
            )
        return source_arm
    if len(names) == 1:
        return names[0]
    if not names:
        raise ConfigError("path", found.source, "holds no outputs")
    raise ConfigError("source_arm", None, f"{found.source} holds {len(names)} arms, {names}: name one")


def _raise_error(run: ErrorRun) -> Any:
    raise ImportedRunError(run.message)


def _log_step(ctx: Context, out: Any, used: LogUsage | None, model: str) -> Step:
    """The trace step of an imported run: its output, and the usage and cost the file records."""
    failed = isinstance(out, ErrorRun)
    if failed or out is None or isinstance(out, str):
        text = None if failed else out
    else:  # a number, a list or a table: as JSON text
        text = msgspec.json.encode(out).decode()
    usage = None
    if used is not None:
        usage = Usage(
            tokens_in=used.tokens_in,
            tokens_out=used.tokens_out,
            tokens_reasoning=used.tokens_reasoning,
            tokens_cached=used.tokens_cached,
            provenance=LOG_SOURCE,
        )
    return Step(
        ledger_id=ctx.ledger_id,
        kind="request",
        source=LOG_SOURCE,
        model=(used.model if used is not None else None) or model,
        draw_index=ctx.draw_index,
        text=text,
        usage=usage,
        usd=0.0,
        usd_nominal=None if used is None else used.usd,
        error=out.message if failed else None,
    )


def imported_arm(
    name: str,
    path: str | os.PathLike[str],
    fmt: str,
    *,
    source_arm: str | None = None,
    id_var: str | None = None,
    missing: str = "refuse",
) -> Arm:
    """An outputs arm answering with one arm's outputs in another tool's results file.

    Args:
        name: the arm's name here.
        path: the file (see :func:`read_imported` for the formats).
        fmt: ``"inspect"``, ``"lm-eval"`` or ``"promptfoo"``.
        source_arm: which of the file's arms (an Inspect log has one, named by its model; an
            lm-eval file one per filter; promptfoo one per ``PROVIDER | PROMPT``); ``None``:
            the only one.
        id_var: promptfoo: the test variable holding the item id (default ``"id"``).
        missing: ``"refuse"`` (default: an item or run the file lacks refuses the benchmark
            before its first run) or ``"error"`` (each such run is an error run).

    Raises:
        ConfigError: as :func:`read_imported`; ``source_arm`` names no arm of the file, or is
            needed and not given.

    Example:
        >>> import json, tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "samples_demo.jsonl"
        >>> _ = p.write_text(json.dumps({"doc_id": 0, "doc": {}, "target": "4", "arguments": [],
        ...     "resps": [["4"]], "filtered_resps": ["4"], "filter": "none", "metrics": ["exact_match"]}))
        >>> arm = imported_arm("lm", p, "lm-eval")
        >>> arm.name, arm.settings["format"]
        ('lm', 'lm-eval')
    """
    from hrbench.reading import NO_OUTPUT, as_output, missing_output, with_check

    found = read_imported(path, fmt, id_var)
    picked = _one_arm(found, source_arm)
    table, usage = found.arms[picked], found.usage.get(picked, {})
    source = found.source

    async def answer(item: Any, ctx: Context) -> Any:
        runs = table.get(ctx.item_id)
        if runs is None:  # refused before the first run (check_outputs), or missing = "error"
            raise missing_output(ctx.arm, ctx.item_id, source=source)
        if ctx.run > len(runs) or runs[ctx.run - 1] is NO_OUTPUT:
            raise missing_output(ctx.arm, ctx.item_id, ctx.run, source=source)
        out = runs[ctx.run - 1]
        used = usage.get(ctx.item_id, ())
        ctx.trace.append(_log_step(ctx, out, used[ctx.run - 1] if ctx.run <= len(used) else None, picked))
        return _raise_error(out) if isinstance(out, ErrorRun) else as_output(out)

    shown = {
        k: [None if v is NO_OUTPUT else msgspec.to_builtins(v) for v in runs] for k, runs in table.items()
    }
    settings = {"kind": "outputs", "format": fmt, "source_arm": source_arm, "outputs": shown}
    arm = Arm(name, answer, settings=settings)
    return with_check(arm, list(table), per_run=table, source=source, missing=missing)


def imported_reference(path: str | os.PathLike[str], fmt: str, id_var: str | None = None) -> Reference:
    """The items and labels of another tool's results file as a reference.

    ``id_var`` names the promptfoo test variable holding the item id (default ``"id"``), as
    for :func:`imported_arm`, so that the reference and the arms of one file agree on ids.

    Items are what the tool asked (an Inspect sample's ``input``, an lm-eval ``doc``, a
    promptfoo test's ``vars``); labels its targets (an Inspect ``target``, lm-eval ``target``,
    promptfoo's ``expected`` variable or first ``equals`` assertion); clusters and splits where
    the file names them (an Inspect sample's ``metadata.cluster`` and ``metadata.split``, as
    :meth:`hrbench.Bench.to_inspect` writes them).

    Raises:
        ConfigError: as :func:`read_imported`.

    Example:
        >>> import json, tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "samples_demo.jsonl"
        >>> _ = p.write_text(json.dumps({"doc_id": 0, "doc": {"q": "2+2"}, "target": "4", "arguments": [],
        ...     "resps": [["4"]], "filtered_resps": ["4"], "filter": "none", "metrics": ["exact_match"]}))
        >>> ref = imported_reference(p, "lm-eval")
        >>> ref.items, ref.labels
        ({'0': {'q': '2+2'}}, {'0': '4'})
    """
    found = read_imported(path, fmt, id_var)
    if not found.items:
        raise ConfigError("reference.path", found.source, "holds no items")
    splits = {k: found.splits.get(k, "test") for k in found.items}
    with naming(found.source):  # a label or an id the reference refuses: in which file
        return Reference(found.items, labels=found.labels, cluster=found.clusters or None, split=splits)


def _spec_id_var(spec: Any, fmt: str, get: Callable[..., Any]) -> str | None:
    """An outputs arm's promptfoo id variable: ``id_var``, else ``id_field`` (read before ``id_var`` was)."""
    id_var, id_field = get(spec, "id_var"), get(spec, "id_field") if fmt == "promptfoo" else None
    if id_var is not None and id_field is not None and id_var != id_field:
        raise ConfigError(
            "arm.id_field", id_field, f"and id_var {id_var!r} name two id variables: give id_var alone"
        )
    return id_var if id_var is not None else id_field


def imported_spec_arm(spec: Any, fmt: str, get: Callable[..., Any]) -> Arm:
    """The arm of an outputs arm spec whose ``format`` is another tool's (see :func:`imported_arm`).

    Its ``id_var`` names the promptfoo test variable holding the item id (``id_field`` is read
    the same way, as it was before ``id_var``).

    Raises:
        ConfigError: the spec gives ``outputs`` or no ``path``; ``id_var`` (or ``id_field``)
            on a format other than promptfoo, or both naming different variables; or as
            :func:`imported_arm`.
    """
    path = get(spec, "path")
    if path is None or get(spec, "outputs") is not None:
        raise ConfigError("arm.format", fmt, f"`{fmt}` reads a results file: give `path` (and no `outputs`)")
    try:
        with field_under("arm"):  # `arm.id_var`, and the caller's `arms[i].id_var`
            return imported_arm(
                get(spec, "name"),
                path,
                fmt,
                source_arm=get(spec, "source_arm"),
                id_var=_spec_id_var(spec, fmt, get),
                missing=get(spec, "missing", "refuse") or "refuse",
            )
    except OSError as exc:
        raise ConfigError("arm.path", path, f"cannot read the results ({type(exc).__name__})") from None


def imported_spec_reference(path: str, fmt: str, id_var: str | None = None) -> Reference:
    """The reference of a reference spec whose ``format`` is another tool's (see :func:`imported_reference`).

    ``id_var``: the spec's ``id_var`` (promptfoo's test variable holding the item id).

    Raises:
        ConfigError: as :func:`imported_reference`, its fields under ``reference.``
            (``reference.id_var``); a file that cannot be read.
    """
    try:
        with field_under("reference"):
            return imported_reference(path, fmt, id_var)
    except OSError as exc:
        raise ConfigError("reference.path", path, f"cannot read the results ({type(exc).__name__})") from None
