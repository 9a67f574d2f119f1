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


TASKS = Path(__file__).with_name("inspect_tasks.py")
"""The tiny Inspect tasks on ``mockllm/model`` (:mod:`tests.interop.inspect_tasks`)."""


def inspect_cli() -> str:
    """The ``inspect`` command of the venv running the tests (``.venv-interop``)."""
    return str(Path(sys.executable).with_name("inspect"))


def inspect_env(tiktoken_cache: Path, log_dir: Path) -> dict[str, str]:
    """The environment Inspect runs in here: the shipped tiktoken encoding, no telemetry, no network."""
    return {**os.environ, "TIKTOKEN_CACHE_DIR": str(tiktoken_cache), "INSPECT_LOG_DIR": str(log_dir)}


@pytest.fixture
def run_inspect(tiktoken_cache: Path, tmp_path: Path) -> Callable[..., Path]:
    """Run ``inspect eval inspect_tasks.py@TASK`` with Inspect's own CLI; return the log it wrote.

    ``run(task, fmt, epochs=2, *extra)``: ``fmt`` is ``eval`` or ``json``; ``extra`` are more
    options (``--retry-on-error=1``).
    """

    def run(task: str, fmt: str, epochs: int = 2, *extra: str) -> Path:
        out = tmp_path / f"logs-{task}-{fmt}"
        proc = subprocess.run(
            [inspect_cli(), "eval", f"{TASKS}@{task}", "--model", "mockllm/model", "--epochs", str(epochs),
             "--max-samples", "1", "--log-dir", str(out), "--log-format", fmt, "--display", "none", *extra],
            capture_output=True,
            text=True,
            env=inspect_env(tiktoken_cache, out),
            cwd=Path(__file__).resolve().parents[2],
            timeout=slow(180),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        [log] = out.iterdir()
        return log

    return run
