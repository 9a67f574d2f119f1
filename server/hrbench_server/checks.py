"""The daemon's ``benchmark/gate`` (the CI gate) and ``prices`` (its price table) methods.

``benchmark/gate`` runs :func:`hrbench.stats.gate` on the daemon's store; ``prices``
answers from :meth:`hrbench.models.Pricing.describe`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio.to_thread
import msgspec

from hrbench.errors import ConfigError
from hrbench_client import protocol as p
from hrbench_server.app import App

__all__ = ["register_checks"]


def register_checks(feature: Callable[[str], Any], app: App, wrap: Callable[..., Any]) -> None:
    """Register ``benchmark/gate`` and ``prices`` with ``feature``; ``wrap(Params, fn)`` makes a handler.

    A candidate or baseline given as an absolute path is read as a rows file; anything else is
    looked up as a stored benchmark's id, id prefix or name (:func:`hrbench.stats.gate`).
    """

    async def gate(args: p.GateParams) -> p.GateResult:
        from hrbench.stats import gate

        def run() -> p.GateResult:
            for field in ("candidate", "baseline"):
                if not getattr(args, field).strip():
                    raise ConfigError(field, getattr(args, field), "must name a benchmark or a rows file")
            res = gate(
                args.candidate,
                args.baseline,
                arm=args.arm,
                max_drop=args.max_drop,
                alpha=args.alpha,
                store=app.store,
                metric=args.metric,
                pass_k=args.pass_k,
            )
            return msgspec.convert(msgspec.to_builtins(res), p.GateResult)

        out: Awaitable[p.GateResult] = anyio.to_thread.run_sync(run)
        return await out

    feature("benchmark/gate")(wrap(p.GateParams, gate))

    async def prices(args: p.PricesParams) -> p.PricesResult:
        from hrbench.models import default_pricing

        def look() -> p.PricesResult:
            table = default_pricing()
            found = {m: table.describe(m) for m in dict.fromkeys(args.models)}
            return p.PricesResult(
                prices=[msgspec.convert(i, p.ModelPrice, from_attributes=True) for i in found.values() if i],
                unpriced=[m for m, i in found.items() if i is None],
                closest={m: near for m, i in found.items() if i is None and (near := table.closest(m))},
            )

        out: Awaitable[p.PricesResult] = anyio.to_thread.run_sync(look)
        return await out

    feature("prices")(wrap(p.PricesParams, prices))
