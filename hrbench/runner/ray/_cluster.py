"""Ray and cloudpickle, imported on demand, and the shapes of the work sent out and the rows sent back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from hrbench.errors import ConfigError

if TYPE_CHECKING:
    from hrbench.arm import Arm
    from hrbench.records import Row, Step


ADDRESSES = ("auto", "local")
"""The address forms besides ``ray://host:port`` (a Ray client) and ``host:port``."""


Work = tuple[int, str, str, "Arm", list[int]]
"""One cell sent out: (cell index, cluster, item, arm, runs still to make)."""


Deliver = Callable[[int, "Row", "list[Step]", "str | None", "dict[str, float] | None"], Awaitable[None]]
"""How the runner takes a row back: ``deliver(cell index, row, trace, duplicate message,
metric values)``."""


def load_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "executor", "ray", "the Ray executor needs Ray: pip install 'hrbench[ray]'"
        ) from exc
    return ray


def load_cloudpickle() -> Any:
    from ray import cloudpickle

    return cloudpickle
