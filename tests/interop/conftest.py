"""``make test-interop``: hrbench against the real Inspect (inspect-ai in ``.venv-interop``).

Nothing here uses the network: Inspect runs its ``mockllm/model``, and the tiktoken encoding
Inspect counts tokens with comes from the copy hrbench ships, put where tiktoken's cache looks
(``TIKTOKEN_CACHE_DIR``, set for the subprocesses that run Inspect only).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest

from tests._slow import slow

_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
"""Where tiktoken fetches o200k_base from; its cache names the file by this URL's SHA-1."""


@pytest.fixture(scope="session")
def tiktoken_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiktoken cache holding o200k_base, from hrbench's shipped copy (no download)."""
    folder = tmp_path_factory.mktemp("tiktoken")
    shipped = resources.files("hrbench").joinpath("data/tiktoken/o200k_base.tiktoken.gz").read_bytes()
    (folder / hashlib.sha1(_URL.encode()).hexdigest()).write_bytes(gzip.decompress(shipped))
    return folder


@pytest.fixture
def run_inspect(tiktoken_cache: Path, tmp_path: Path) -> Callable[[str], Path]:
    """Run the tiny Inspect eval of ``_inspect_task`` in a subprocess; return its log (``eval`` or ``json``)."""

    def run(fmt: str) -> Path:
        env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tiktoken_cache), "INSPECT_LOG_DIR": str(tmp_path)}
        proc = subprocess.run(
            [sys.executable, "-m", "tests.interop._inspect_task", str(tmp_path / f"logs-{fmt}"), fmt],
            capture_output=True,
            text=True,
            env=env,
            cwd=Path(__file__).resolve().parents[2],
            timeout=slow(120),
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        return Path(proc.stdout.strip().splitlines()[-1].removeprefix("file://"))

    return run
