"""The limits on reading another tool's file, and their environment variables.

An import reads a file a user got from elsewhere: a zip can inflate a thousandfold (a 32 KB
``.eval`` with zstd members inflates to 1 GiB), a JSON document can nest past the parser's
stack or hold millions of tiny values. Every read of an Inspect log, lm-eval samples or
promptfoo results is bounded by :class:`ImportLimits`:

========================  ====================================  =================================
limit                     environment variable                  default
========================  ====================================  =================================
``max_bytes``             ``HRBENCH_IMPORT_MAX_BYTES``          256 MiB read from one file, inflated
``max_member_bytes``      ``HRBENCH_IMPORT_MAX_MEMBER_BYTES``   64 MiB in one zip member or JSON line
``max_members``           ``HRBENCH_IMPORT_MAX_MEMBERS``        100,000 zip members
``max_ratio``             ``HRBENCH_IMPORT_MAX_RATIO``          100: inflated / compressed bytes
``max_depth``             ``HRBENCH_IMPORT_MAX_DEPTH``          100 levels of JSON nesting
``max_values``            ``HRBENCH_IMPORT_MAX_VALUES``         4,000,000 JSON values in one file
========================  ====================================  =================================

The ratio is checked once a member (or the members read together) has inflated past 1 MiB,
as Apache POI's ``ZipSecureFile`` does for Office files (its default minimum inflate ratio,
0.01, is this 100). JSON values are counted before a document is parsed, from its ``[``, ``{``
and ``,`` characters (an upper bound: those inside strings count too); whatever ``max_depth``
says, Python's JSON parser follows at most about 900 levels. Together the limits
bound the memory an import takes: about ``max_bytes`` of text plus some 70 bytes a value.

The variables are read from the environment of the process that reads the file: the
library's, or for ``hrb`` the daemon's (set it where the daemon starts). Sizes take a unit
(``512MiB``, ``2GiB``, ``500MB``; plain digits are bytes).
"""

from __future__ import annotations

import os
import re

import msgspec

from hrbench.errors import ConfigError

__all__ = ["LIMIT_VARIABLES", "RATIO_FLOOR", "ImportLimits", "import_limits", "over_limit", "shown"]

MiB = 1 << 20

RATIO_FLOOR = MiB
"""Bytes a member (or the members read so far) may inflate to before ``max_ratio`` applies."""


class ImportLimits(msgspec.Struct, frozen=True, kw_only=True):
    """The limits of one import (see the module's table).

    Attributes:
        max_bytes: bytes read from one file, inflated (the members read of a zip, summed).
        max_member_bytes: bytes of one zip member, inflated, or of one JSON line.
        max_members: members of a zip (its central directory's count, checked before it is read).
        max_ratio: inflated bytes per compressed byte, past :data:`RATIO_FLOOR`.
        max_depth: nesting of a JSON document (``[[1]]`` is 2 deep).
        max_values: JSON values in one file, all its documents together.
    """

    max_bytes: int = 256 * MiB
    max_member_bytes: int = 64 * MiB
    max_members: int = 100_000
    max_ratio: int = 100
    max_depth: int = 100
    max_values: int = 4_000_000


LIMIT_VARIABLES = {
    "max_bytes": "HRBENCH_IMPORT_MAX_BYTES",
    "max_member_bytes": "HRBENCH_IMPORT_MAX_MEMBER_BYTES",
    "max_members": "HRBENCH_IMPORT_MAX_MEMBERS",
    "max_ratio": "HRBENCH_IMPORT_MAX_RATIO",
    "max_depth": "HRBENCH_IMPORT_MAX_DEPTH",
    "max_values": "HRBENCH_IMPORT_MAX_VALUES",
}
"""Each limit's environment variable."""

_SIZES = ("max_bytes", "max_member_bytes")
_UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1 << 10, "mib": MiB, "gib": 1 << 30}
_NUMBER = re.compile(r"\s*(\d{1,15})\s*([a-z]*)\s*", re.IGNORECASE)


def _parse(name: str, raw: str) -> int:
    var = LIMIT_VARIABLES[name]
    m = _NUMBER.fullmatch(raw)
    unit = m.group(2).lower() if m else None
    if m is None or unit not in _UNITS or (unit and name not in _SIZES) or int(m.group(1)) < 1:
        want = "a size, e.g. 512MiB or 2GiB" if name in _SIZES else "a whole number of 1 or more"
        raise ConfigError(var, raw, f"expected {want}")
    return int(m.group(1)) * _UNITS[unit]


def import_limits() -> ImportLimits:
    """The limits, each from its environment variable when set (see :data:`LIMIT_VARIABLES`).

    Raises:
        ConfigError: a variable that is not a size (``512MiB``) or a whole number of 1 or more,
            naming it.

    Example:
        >>> os.environ["HRBENCH_IMPORT_MAX_BYTES"] = "1GiB"
        >>> import_limits().max_bytes == 1 << 30
        True
        >>> del os.environ["HRBENCH_IMPORT_MAX_BYTES"]
    """
    given = {
        name: _parse(name, os.environ[var]) for name, var in LIMIT_VARIABLES.items() if os.environ.get(var)
    }
    return ImportLimits(**given)


def shown(name: str, value: int) -> str:
    """A limit's value as its variable takes it: sizes in MiB or GiB when whole, else digits.

    Example:
        >>> shown("max_bytes", 256 << 20), shown("max_bytes", 3 << 30), shown("max_values", 4_000_000)
        ('256MiB', '3GiB', '4000000')
    """
    if name in _SIZES:
        for unit, size in (("GiB", 1 << 30), ("MiB", MiB)):
            if value % size == 0:
                return f"{value // size}{unit}"
    return str(value)


def over_limit(source: str, limits: ImportLimits, name: str, what: str) -> ConfigError:
    """The refusal of a file over limit ``name``: what was found, the limit, how to raise it.

    Args:
        source: the file.
        limits: the limits in force.
        name: which limit (a field of :class:`ImportLimits`).
        what: what was found, with its place (``"member samples/1_epoch_1.json inflates past
            64MiB"``).

    Example:
        >>> exc = over_limit("x.eval", ImportLimits(), "max_depth", "header.json nests deeper than 100")
        >>> for part in str(exc).split("; "):
        ...     print(part)
        path: header.json nests deeper than 100: over the import limit HRBENCH_IMPORT_MAX_DEPTH=100
        to read this file, raise it (e.g. HRBENCH_IMPORT_MAX_DEPTH=400) in the environment of the process that reads it (for hrb, the daemon's: stop it and start it with the variable set) (got 'x.eval')
    """
    var, value = LIMIT_VARIABLES[name], getattr(limits, name)
    return ConfigError(
        "path",
        source,
        f"{what}: over the import limit {var}={shown(name, value)}; to read this file, raise it "
        f"(e.g. {var}={shown(name, value * 4)}) in the environment of the process that reads it "
        "(for hrb, the daemon's: stop it and start it with the variable set)",
    )
