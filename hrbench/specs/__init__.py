"""Arms, clients, references, scorers and governors built from specs (SPEC §4).

Over the wire and in TOML files, arms and clients are *specs*, never code: small records
tagged by ``kind``. This package turns a spec into the library object. It reads specs by
attribute (the daemon passes the msgspec Structs of ``hrbench_client.protocol``) or by key (a
plain dict, e.g. from ``tomllib``), so the core imports nothing from the daemon or the clients.

One module per kind of spec: :mod:`~hrbench.specs._arms`, :mod:`~hrbench.specs._clients`,
:mod:`~hrbench.specs._references`, :mod:`~hrbench.specs._scorers` (scorers and metrics),
:mod:`~hrbench.specs._limits` (the governor's caps and the ``[stop]`` rule), and
:mod:`~hrbench.specs._loader` (reading a spec's fields, loading the code it names). Every name
is importable from ``hrbench.specs`` itself.

Arms:

- ``prompt``: ``template`` formatted with ``{item}`` and, for a mapping payload, its keys; an
  optional ``system`` message, ``model`` and sampling ``params``; the arm answers with the reply.
- ``reading``: a reading recipe of :mod:`hrbench.reading` by name, with its ``settings``.
- ``outputs``: fixed outputs by item id (one for every run, or a list: one per run), inline or
  from a file: scores outputs made elsewhere.
- ``import``: ``package.module:attribute``: an :class:`~hrbench.arm.Arm`, a function
  ``fn(item, ctx)``, or (with ``settings``) a factory called with them.

Clients: ``openai``, ``anthropic`` (the key is read from the environment variable named by
``api_key_env``, at request time, by the client; a spec never holds a key), ``replay`` (a
recording in the store), ``mock`` (a function by import path, or canned replies).
"""

from __future__ import annotations

from hrbench._util.messages import field_under
from hrbench.specs._arms import ARM_FIELDS, build_arm, build_arms, check_prompt, format_prompt
from hrbench.specs._clients import CLIENT_FIELDS, build_client, build_pricing, check_recording
from hrbench.specs._limits import (
    GOVERNOR_LIMITS,
    PLAN_FIELDS,
    STOP_FIELDS,
    build_governor,
    build_stop,
)
from hrbench.specs._loader import check_code_allowed, code_allowed, load_object
from hrbench.specs._references import REFERENCE_FIELDS, build_reference, read_reference
from hrbench.specs._scorers import (
    SCORERS,
    build_metrics,
    build_scorer,
    client_scorers_module,
    stored_scorer,
)

__all__ = [
    "ARM_FIELDS",
    "CLIENT_FIELDS",
    "GOVERNOR_LIMITS",
    "PLAN_FIELDS",
    "REFERENCE_FIELDS",
    "SCORERS",
    "STOP_FIELDS",
    "build_arm",
    "build_arms",
    "build_client",
    "build_governor",
    "build_metrics",
    "build_pricing",
    "build_reference",
    "build_scorer",
    "build_stop",
    "check_code_allowed",
    "check_prompt",
    "check_recording",
    "client_scorers_module",
    "code_allowed",
    "field_under",
    "format_prompt",
    "load_object",
    "read_reference",
    "stored_scorer",
]
