"""A real local Ray cluster of 2 CPUs, one per test session (``make test-ray``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import ray


@pytest.fixture(scope="session")
def cluster() -> Iterator[str]:
    """Start a 2-CPU local Ray cluster for the session; yield its address; stop it after."""
    ctx: Any = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ctx.address_info["gcs_address"]
    finally:
        ray.shutdown()
