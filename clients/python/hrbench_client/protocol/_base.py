"""What every wire Struct shares: the protocol version, the constrained strings, the params base."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

__all__ = ["CallerEnv", "EnvName", "ImportPath", "ItemId", "Name", "PROTOCOL_VERSION"]


PROTOCOL_VERSION = 2
"""Bumped when a method's params or result (or a notification) change incompatibly: 2 streams rows
as ``hrbench/rows`` batches instead of one ``hrbench/row`` notification per row."""

ImportPath = Annotated[
    str,
    Meta(
        pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$",
        description="`package.module:attribute`, loaded by the daemon.",
        examples=["mypkg.arms:ask"],
    ),
]
EnvName = Annotated[
    str,
    Meta(
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="The NAME of an environment variable of the daemon holding the key; never the key.",
    ),
]
Name = Annotated[str, Meta(min_length=1, max_length=200)]
CallerEnv = Annotated[
    dict[EnvName, str],
    Meta(
        description="Values of the environment variables the spec names (API keys), sent by the client "
        "from the caller's environment over the same-user local channel: used for this request only "
        "(before the daemon's own environment), never stored, logged or echoed."
    ),
]
ItemId = str


class _Spec(Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of every params Struct: unknown fields are errors, so typos are caught."""
