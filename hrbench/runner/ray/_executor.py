"""The Ray executor a benchmark is given (``executor="ray"`` or a :class:`RayExecutor`).

Also how an executor spec (a name, a mapping or a Struct) is read, and the connection to a cluster.
"""

from __future__ import annotations

import math
import os
import sys
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from hrbench.errors import ConfigError
from hrbench.runner.ray._cluster import ADDRESSES, Deliver, Work, load_cloudpickle, load_ray
from hrbench.runner.ray._driver import IDLE, drive, remote_classes, start_actors
from hrbench.runner.ray._worker import Shipped

if TYPE_CHECKING:
    from hrbench.runner._invoke import Plan
    from hrbench.runner.runtime import Runtime

__all__ = ["RayExecutor", "resolve_executor"]


@dataclass(frozen=True)
class RayExecutor:
    """Where and how a benchmark's cells run on Ray (see :mod:`hrbench.runner.ray` for the rules).

    Args:
        address: ``"auto"`` (a running cluster, as ``ray start`` made it), ``"local"`` (a
            cluster started for this run and stopped after it), ``"ray://host:port"`` (a Ray
            client) or ``"host:port"``. When Ray is already initialised in this process, that
            cluster is used whatever the address.
        num_cpus: CPUs of a cluster started for the run (``address="local"``); ``None`` for all.
        worker_concurrency: cells run at once in one task; by default ``concurrency`` shared
            equally among the cluster's CPUs.
        batch_size: cells per task; by default enough for about four tasks per slot, and at
            least ``worker_concurrency``.
        max_retries: how often Ray retries a task whose worker died.

    Raises:
        ConfigError: a bad field, named with its value.
    """

    address: str = "auto"
    num_cpus: int | None = None
    worker_concurrency: int | None = None
    batch_size: int | None = None
    max_retries: int = 3

    def __post_init__(self) -> None:
        if not isinstance(self.address, str) or not (
            self.address in ADDRESSES or self.address.startswith("ray://") or ":" in self.address
        ):
            raise ConfigError(
                "executor.address", self.address, 'expected "auto", "local", "ray://host:port" or "host:port"'
            )
        for name in ("num_cpus", "worker_concurrency", "batch_size"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"executor.{name}", value, "expected a whole number >= 1 or None")
        if (
            isinstance(self.max_retries, bool)
            or not isinstance(self.max_retries, int)
            or self.max_retries < 0
        ):
            raise ConfigError("executor.max_retries", self.max_retries, "expected a whole number >= 0")

    async def run(
        self, plan: Plan, rt: Runtime, work: list[Work], concurrency: int, deliver: Deliver
    ) -> None:
        """Run ``work`` on the cluster; each new row is handed to ``deliver`` on the driver."""
        if not work:
            return
        if getattr(rt.client, "provider", "") == "replay":
            raise ConfigError("executor", "ray", "a replay client reads the driver's store: run it locally")
        ray = load_ray()
        try:  # before any cluster starts: what cannot travel is a configuration error
            blob = load_cloudpickle().dumps((plan, rt.client, rt.pricing))
        except Exception as exc:
            raise ConfigError(
                "executor",
                "ray",
                f"the arms, scorer, metrics and client must be picklable to run on Ray workers: {exc}",
            ) from None
        started = _connect(ray, self)
        actors = None
        clean = False
        try:
            remotes = remote_classes()
            gov = rt.governor
            actors = await start_actors(
                ray, remotes, gov.limits, (gov.calls, gov.usd, gov.tokens, gov.refused)
            )
            hub, gov_actor = actors
            cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
            per_task = min(self.worker_concurrency or max(1, concurrency // cpus), concurrency)
            in_flight = max(1, concurrency // per_task)
            size = self.batch_size or max(per_task, math.ceil(len(work) / (4 * in_flight)))
            shipped = Shipped(
                key=uuid.uuid4().hex,
                blob=blob,
                sys_path=[p or os.getcwd() for p in sys.path],
                cache=None if rt.cache is None else (rt.cache.read, rt.cache.write),
                record=rt.record if rt.store is not None else None,
                concurrency=per_task,
                limits=dict(gov.limits),
                from_defaults=gov.from_defaults,
                ledger=getattr(gov, "journal", None) is not None,
            )
            await drive(
                ray, remotes, self.max_retries, rt, hub, gov_actor, shipped, work, size, in_flight, deliver
            )
            clean = True
        finally:
            if actors is not None and clean and not started:
                IDLE[ray.get_runtime_context().get_job_id()].append(actors)
            elif actors is not None:
                for actor in actors:
                    ray.kill(actor)
            if started:
                IDLE.clear()
                ray.shutdown()


def resolve_executor(value: Any) -> RayExecutor | None:
    """The executor a benchmark's ``executor=`` names; ``None`` for the local runner.

    Accepts ``None`` or ``"local"`` (local), ``"ray"`` (Ray, ``address="auto"``), a mapping or
    a msgspec Struct with ``kind="ray"`` and the fields of :class:`RayExecutor` (the TOML
    spec and the wire), or a :class:`RayExecutor`.

    Raises:
        ConfigError: anything else, or a bad field (named with its value).

    Example:
        >>> resolve_executor("ray")
        RayExecutor(address='auto', num_cpus=None, worker_concurrency=None, batch_size=None, max_retries=3)
    """
    if value is None or value == "local":
        return None
    if value == "ray":
        return RayExecutor()
    if isinstance(value, RayExecutor):
        return value
    if hasattr(value, "__struct_fields__"):
        value = msgspec.to_builtins(value)
    if isinstance(value, dict):
        fields = dict(value)
        kind = fields.pop("kind", None)
        if kind == "local" and not fields:
            return None
        if kind != "ray":
            raise ConfigError("executor.kind", kind, 'expected "local" or "ray"')
        unknown = sorted(set(fields) - set(RayExecutor.__dataclass_fields__))
        if unknown:
            raise ConfigError(f"executor.{unknown[0]}", fields[unknown[0]], "unknown field of a Ray executor")
        return RayExecutor(**fields)
    raise ConfigError("executor", value, 'expected "local", "ray", {"kind": "ray", ...} or a RayExecutor')


def _connect(ray: Any, ex: RayExecutor) -> bool:
    """Initialise Ray unless it is; ``True`` when this run started it (and must stop it)."""
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
    if ex.address == "local":
        ray.init(address="local", num_cpus=ex.num_cpus, **kwargs)
    else:
        ray.init(address=ex.address, **kwargs)
    return True
