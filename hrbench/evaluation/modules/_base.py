"""The module contract every kind of module fills.

Also the settings (model, cache, governor) a run resolves for a module.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from hrbench.errors import ConfigError
from hrbench.evaluation.modules._signatures import Signature

__all__ = ["Module"]


class RunFailure(Exception):
    def __init__(self, message: str, failure_kind: str) -> None:
        super().__init__(message)
        self.failure_kind = failure_kind


@dataclass
class Settings:
    """What row runs share: the model client, cache and governor, and the call runtime."""

    llm: Any = None
    cache: Any = None
    governor: Any = None
    runtime: Any = None


def _resolve_cache(cache: Any) -> Any:
    """``None``/``False``: no cache; ``True``: the default store; a Store: a Cache on it; a Cache."""
    from hrbench.runner import Cache
    from hrbench.store import Store

    if cache is None or cache is False:
        return None
    if cache is True:
        return Cache(Store())
    if isinstance(cache, Store):
        return Cache(cache)
    if isinstance(cache, Cache):
        return cache
    raise ConfigError("cache", cache, "expected None, False, True, a Cache or a Store")


def settings_of(mod: Module, llm: Any, cache: Any, governor: Any) -> Settings:
    """Resolve the cache and, for a model module, build the benchmark's call runtime.

    A model module's requests go through the same machinery as a benchmark arm's ``ctx.acall``
    (:class:`hrbench.arm.Context` on the benchmark runtime): the governor gate before every
    attempt, the draw-keyed cache (keyed by the module's name as the arm), pricing, duplicate-draw
    checks, and one trace step per request.
    """
    settings = Settings(llm=llm, cache=_resolve_cache(cache), governor=governor)
    if mod.uses_model:
        client = llm if llm is not None else getattr(mod, "client", None)
        if client is None:
            raise ConfigError(
                "llm", None, "the module has no model client; pass module(..., model=client) or llm="
            )
        if not hasattr(client, "send"):
            raise ConfigError("llm", client, "expected a model client (an object with async send(request))")
        from hrbench.models import default_pricing
        from hrbench.runner import Governor, default_governor
        from hrbench.runner.runtime import Runtime

        if governor is not None and not isinstance(governor, Governor):
            raise ConfigError("governor", governor, "expected an hrbench.Governor or None")
        gov = governor if governor is not None else default_governor()
        settings.llm = client
        settings.governor = gov
        settings.runtime = Runtime(client, gov, settings.cache, None, None, default_pricing())
    return settings


class Module:
    """The Module role: a signature and a way to fill its outputs.

    Attributes:
        signature: the module's signature.
        name: the module's name (part of its cache key and its ledger ids).
        uses_model: ``True`` when the module calls a model client.
    """

    signature: Signature
    name: str
    uses_model: bool = False

    @property
    def spec(self) -> dict[str, Any]:
        """What identifies the module: kind, name, signature and settings, as plain data."""
        raise NotImplementedError

    @property
    def hash(self) -> str:
        """The sha256 hex of :attr:`spec` (the program's identity)."""
        return hashlib.sha256(json.dumps(self.spec, sort_keys=True, default=str).encode()).hexdigest()

    @property
    def artifact_id(self) -> str:
        """``<name>-<first 12 hex of hash>``: the ``program_artifact_id`` of an evaluation."""
        return f"{self.name}-{self.hash[:12]}"

    async def _acall(self, inputs: dict[str, Any], ctx: Any) -> dict[str, Any]:
        raise NotImplementedError
