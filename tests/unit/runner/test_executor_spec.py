"""The executor choice without Ray: parsing from Python, TOML and the wire; no Ray import."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from typing import Any

import msgspec
import pytest

from hrbench.errors import ConfigError
from hrbench.runner.ray import RayExecutor, resolve_executor
from hrbench_client import protocol as p


@pytest.mark.parametrize("value", [None, "local", {"kind": "local"}])
def test_local_is_the_runner_itself(value: Any) -> None:
    assert resolve_executor(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("ray", RayExecutor()),
        ({"kind": "ray"}, RayExecutor()),
        ({"kind": "ray", "address": "local", "num_cpus": 2}, RayExecutor(address="local", num_cpus=2)),
        ({"kind": "ray", "address": "ray://head:10001"}, RayExecutor(address="ray://head:10001")),
        (
            {"kind": "ray", "address": "10.0.0.1:6379", "worker_concurrency": 100},
            RayExecutor("10.0.0.1:6379", worker_concurrency=100),
        ),
        (RayExecutor(batch_size=7), RayExecutor(batch_size=7)),
        (p.RayExecutorSpec(address="local", max_retries=0), RayExecutor(address="local", max_retries=0)),
    ],
)
def test_ray_forms(value: Any, expected: RayExecutor) -> None:
    assert resolve_executor(value) == expected


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("spark", "executor"),
        (3, "executor"),
        ({"kind": "spark"}, "executor.kind"),
        ({"kind": "local", "address": "auto"}, "executor.kind"),
        ({"kind": "ray", "address": "nowhere"}, "executor.address"),
        ({"kind": "ray", "address": ""}, "executor.address"),
        ({"kind": "ray", "num_cpus": 0}, "executor.num_cpus"),
        ({"kind": "ray", "worker_concurrency": True}, "executor.worker_concurrency"),
        ({"kind": "ray", "batch_size": 2.5}, "executor.batch_size"),
        ({"kind": "ray", "max_retries": -1}, "executor.max_retries"),
        ({"kind": "ray", "adress": "auto"}, "executor.adress"),
    ],
)
def test_bad_executors_name_the_field_and_value(value: Any, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        resolve_executor(value)
    assert err.value.field == field
    assert "got" in str(err.value)


def test_toml_and_wire_forms() -> None:
    table = tomllib.loads('runs = 5\n[executor]\nkind = "ray"\naddress = "ray://head:10001"\nnum_cpus = 4\n')
    params = msgspec.convert(table, p.BenchmarkParams)
    assert resolve_executor(params.executor) == RayExecutor(address="ray://head:10001", num_cpus=4)
    assert msgspec.convert(tomllib.loads('executor = "ray"'), p.BenchmarkParams).executor == "ray"
    assert p.BenchmarkParams().executor == "local"
    with pytest.raises(msgspec.ValidationError, match="executor"):
        msgspec.convert({"executor": "dask"}, p.BenchmarkParams)
    with pytest.raises(msgspec.ValidationError, match="executor"):
        msgspec.convert({"executor": {"kind": "ray", "num_cpus": 0}}, p.BenchmarkParams)


def test_the_core_never_imports_ray_unless_asked() -> None:
    code = (
        "import sys, hrbench as hb, hrbench.runner.ray\n"
        "ref = hb.Reference({'a': 'x'}, labels='x')\n"
        "arm = hb.Arm('a', lambda item, ctx: item)\n"
        "for ex in (None, 'local', {'kind': 'local'}):\n"
        "    hb.benchmark(arm, ref, runs=5, executor=ex, governor=hb.Governor())\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
