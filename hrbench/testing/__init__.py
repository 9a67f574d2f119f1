"""Test infrastructure: loopback model servers and simulated designs, for tests and ``bench/``.

:class:`LoopbackServer` is a local OpenAI- and Anthropic-compatible server that misbehaves on
request (:class:`Fault`); ``python -m hrbench.testing --port 8000 --forever`` serves one from the
command line. Its names need the dev extras (starlette, uvicorn), so each name here is imported
on first use. The simulated designs (:class:`Design`, :func:`simulate`) are what the statistics'
promises are checked against.
"""

from __future__ import annotations

import typing

__all__ = [
    "ARM_X_CLUSTER_SD",
    "DESIGNS",
    "Design",
    "Fault",
    "LoopbackServer",
    "SKEW_SHARE",
    "check",
    "lognormal_sizes",
    "promised_power",
    "rows_for",
    "simulate",
    "stated_components",
    "verdict",
    "write_bombs",
]


# -- tools/privatize.py: names other packages use, imported on first use (PEP 562)
if typing.TYPE_CHECKING:
    from hrbench.testing._bombs import write_bombs
    from hrbench.testing._designs import (
        ARM_X_CLUSTER_SD,
        DESIGNS,
        SKEW_SHARE,
        Design,
        check,
        lognormal_sizes,
        promised_power,
        rows_for,
        simulate,
        stated_components,
        verdict,
    )
    from hrbench.testing._loopback import Fault, LoopbackServer

_LAZY = {
    "ARM_X_CLUSTER_SD": "hrbench.testing._designs",
    "DESIGNS": "hrbench.testing._designs",
    "Design": "hrbench.testing._designs",
    "Fault": "hrbench.testing._loopback",
    "LoopbackServer": "hrbench.testing._loopback",
    "SKEW_SHARE": "hrbench.testing._designs",
    "check": "hrbench.testing._designs",
    "lognormal_sizes": "hrbench.testing._designs",
    "promised_power": "hrbench.testing._designs",
    "rows_for": "hrbench.testing._designs",
    "simulate": "hrbench.testing._designs",
    "stated_components": "hrbench.testing._designs",
    "verdict": "hrbench.testing._designs",
    "write_bombs": "hrbench.testing._bombs",
}

if not typing.TYPE_CHECKING:  # type checkers read the imports above; a typo stays an error
    from hrbench._util.lazy import lazy_names

    __getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)

# -- end of tools/privatize.py's block
