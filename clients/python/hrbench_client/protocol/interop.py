"""Other tools' formats (``hrb export ID --format inspect``): a stored benchmark as Inspect eval logs."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from hrbench_client.protocol._base import _Spec

__all__ = ["BenchmarkExportParams", "BenchmarkExportResult"]


class BenchmarkExportParams(_Spec):
    """Params of ``benchmark/export``: write a stored benchmark in another tool's format.

    ``format = "inspect"`` writes one Inspect eval log (log format version 2) per arm into the
    folder ``path`` (absolute: the daemon writes it), ``.json`` or ``.eval`` (``log_format``),
    named as Inspect names its logs, ``CREATED_TASK_ARM_TASKID.json`` (so ``inspect view`` and
    ``inspect log list`` list them); the task is ``name``, else the benchmark's name, else
    ``hrbench-<id>``.
    """

    id: Annotated[str, Meta(description="the benchmark: an id, a unique id prefix, or a name")]
    path: Annotated[str, Meta(description="the folder to write into (absolute), made when missing")]
    format: Annotated[Literal["inspect"], Meta(description="the format written")] = "inspect"
    name: Annotated[str | None, Meta(description="the task name in the logs; none: the benchmark's")] = None
    log_format: Annotated[
        Literal["json", "eval"],
        Meta(description="Inspect's log format: json (one JSON object) or eval (Inspect's zip)"),
    ] = "json"


class BenchmarkExportResult(Struct, kw_only=True):
    """What ``benchmark/export`` wrote: the benchmark's id and the files, one per arm."""

    id: str
    paths: list[str]
