"""A real local Ray cluster of 2 CPUs, one per test session (``make test-ray``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import ray


@pytest.fixture(scope="session")
def cluster() -> Iterator[str]:
    """Start a 2-CPU local Ray cluster for the session; yield its address; stop it after."""
    # on 127.0.0.1: tests use no network
    ctx: Any = ray.init(
        num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1"
    )
    try:
        yield ctx.address_info["gcs_address"]
    finally:
        ray.shutdown()
