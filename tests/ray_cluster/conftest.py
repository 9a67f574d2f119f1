"""A real local Ray cluster of 2 CPUs, one per test session (``make test-ray``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

# Tests use no network: Ray's switch for a loopback-only cluster (read when ray is imported;
# the workers and the daemons the tests start inherit it).
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"

import pytest  # noqa: E402
import ray  # noqa: E402


@pytest.fixture(scope="session")
def cluster() -> Iterator[str]:
    """Start a 2-CPU local Ray cluster on 127.0.0.1 for the session; yield its address; stop it after."""
    ctx: Any = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        address = ctx.address_info["gcs_address"]
        assert address.startswith("127.0.0.1:"), address
        yield address
    finally:
        ray.shutdown()
