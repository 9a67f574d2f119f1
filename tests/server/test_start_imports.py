"""What a daemon imports before it answers: read from a real daemon's own import log.

A daemon started with ``PYTHONPROFILEIMPORTTIME=1`` (``python -X importtime``) writes a line to
its stderr (its log) for every module it imports, as it imports it. Once it has answered
``status``, the log names every module its start imported: the transport (pygls), the store's
class and the runtime's limits, and none of what only a method needs (the runner, statistics,
numpy and scipy, the price package, the specs, the HTTP clients). Those are imported by the
first request that uses them, and show up in the same log then (checked too, so a log that
could not name them would fail here).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests._slow import slow
from tests.server._daemon import Daemon, spec

IMPORT_LOG = {"PYTHONPROFILEIMPORTTIME": "1"}

NOT_AT_START = (
    "numpy",
    "scipy",
    "sqlite_utils",
    "genai_prices",
    "pydantic",
    "httpx2",
    "regex",
    "hrbench.arm",
    "hrbench.evaluation",
    "hrbench.reading",
    "hrbench.specs",
    "hrbench.stats",
    "hrbench.results.browse",
    "hrbench.interop._inspect_write",
    "hrbench.runner._benchmark",
    "hrbench.models._openai",
    "hrbench.models._anthropic",
    "hrbench_server.bench",
    "hrbench_server.bench_spec",
)
"""Packages and modules (with their submodules) a daemon's start has no use for."""


def _imported(log: str) -> set[str]:
    """Every module an import-time log names."""
    return set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)", log, re.MULTILINE))


def _among(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The modules of ``modules`` that are one of ``names`` or inside one of them."""
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_a_started_daemon_has_imported_only_what_serving_needs(tmp_path: Path) -> None:
    with Daemon(tmp_path / "home", env=IMPORT_LOG) as d:
        at_start = _imported(d.read_log())
        assert {"hrbench_server.rpc", "pygls.protocol", "hrbench.store"} <= at_start  # the log is read
        assert _among(at_start, NOT_AT_START) == []
        with d.client() as c:
            rows = list(c.benchmark(spec(n=2, runs=1)))
        assert len(rows) == 2
        after = _imported(d.read_log())
        # the first benchmark imported the runner: lazy imports are in the log as they happen
        assert {"hrbench_server.bench", "hrbench.runner._benchmark", "hrbench.specs"} <= after


def _refused(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[str, set[str]]:
    cmd = [sys.executable, "-P", "-m", "hrbench_server", "--home", str(tmp_path / "home"), "daemon", *args]
    out = subprocess.run(
        cmd,
        env={**os.environ, **IMPORT_LOG, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=slow(60),
    )
    assert out.returncode == 2, out.stderr[-2000:]
    return out.stderr, _imported(out.stderr)


def test_a_bad_tcp_address_is_refused_before_the_library_or_pygls_is_imported(tmp_path: Path) -> None:
    stderr, imported = _refused(tmp_path, "--tcp", "0.0.0.0:8765")
    assert "refusing to listen on 0.0.0.0" in stderr
    assert "hrbench_server.daemon" in imported
    assert _among(imported, ("pygls", "lsprotocol", "hrbench", "hrbench_server.app")) == []


def test_a_bad_environment_is_refused_before_pygls_is_imported(tmp_path: Path) -> None:
    stderr, imported = _refused(tmp_path, env={"HRBENCH_MAX_CALLS": "abc"})
    assert "HRBENCH_MAX_CALLS" in stderr
    assert "hrbench.runner._governor" in imported  # what the check reads
    assert _among(imported, ("pygls", "lsprotocol", *NOT_AT_START)) == []
