"""The daemon's client spec carries the library client's output limit and ``billed_as``.

A real daemon and a real loopback server that serves a dearer model than the one asked for.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import hrbench_client as hc
from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.server._daemon import Daemon, spec

CAP = 0.05  # USD


def _openai(srv: LoopbackServer, **kw: Any) -> dict[str, Any]:
    return {
        "kind": "openai",
        "model": "gpt-4o-mini",
        "base_url": srv.base_url,
        "api_key_env": None,
        "max_attempts": 1,
        **kw,
    }


@pytest.mark.parametrize("declared", [True, False])
def test_a_capped_benchmark_with_billed_as_is_priced_at_the_dearer_model(
    shared_daemon: Daemon, declared: bool
) -> None:
    # asked for gpt-4o-mini, billed as gpt-4o (16x dearer output): a router's switch
    with LoopbackServer() as srv, shared_daemon.client() as c:
        srv.set(reply_words=300, serve_model="gpt-4o")
        client = _openai(srv, max_tokens=400, billed_as=["gpt-4o"] if declared else [])
        bench = spec(
            n=10, runs=1, concurrency=1, client=client, governor={"max_usd": CAP}, cache=False,
            name=f"billed-{declared}",
        )  # fmt: skip
        stream = c.benchmark(bench)
        rows = list(stream)
        res = stream.result
        assert res is not None
        sent = list(srv.requests)
    assert {r.body["max_tokens"] for r in sent} == {400}  # the spec's output limit was sent
    spent = sum(r.usd or 0.0 for r in rows)
    assert spent <= CAP
    if declared:  # reserved at gpt-4o: every run fits under the cap and is answered
        assert len(sent) == 10 and not {r.failure_kind for r in rows} & {"error", "budget_stop"}
    else:  # reserved at gpt-4o-mini: the first dearer reply passed its reservation, and stopped it
        assert len(sent) == 1
        assert any("billed_as" in w for w in res.warnings), res.warnings


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_tokens", 0),
        ("max_tokens", -5),
        ("max_tokens", 1.5),
        ("max_tokens", "64"),
        ("billed_as", "gpt-4o"),
        ("billed_as", [""]),
        ("billed_as", [3]),
    ],
)
def test_a_bad_output_limit_or_billed_as_is_refused_naming_the_field(
    shared_daemon: Daemon, field: str, value: Any
) -> None:
    with shared_daemon.client() as c, pytest.raises(hc.HrbenchError) as err:
        list(c.benchmark(spec(n=1, runs=1, client={"kind": "openai", "model": "m", field: value})))
    assert f"client.{field}" in str(err.value), str(err.value)


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_tokens", 0), ("max_tokens", True), ("billed_as", "gpt-4o"), ("billed_as", ["ok", ""])],
)
def test_the_library_refuses_the_same_values_naming_the_field(field: str, value: Any) -> None:
    from hrbench.errors import ConfigError
    from hrbench.specs import build_client

    with pytest.raises(ConfigError) as err:
        build_client({"kind": "openai", "model": "m", "api_key_env": None, field: value})
    assert err.value.field == f"client.{field}"


@pytest.mark.parametrize(
    ("client", "field"),
    [
        ({"model": "no-such-model-x"}, "client.model"),  # unpriced under an explicit USD cap
        ({"model": "gpt-4o-mini", "billed_as": ["no-such-router-y"]}, "client.model"),
        ({"model": "gpt-4o-mini", "api_key_env": "HRB_UNSET_KEY_Z"}, "client.api_key_env"),
    ],
)
def test_a_refused_benchmark_leaves_nothing_stored(
    shared_daemon: Daemon, monkeypatch: pytest.MonkeyPatch, client: dict[str, Any], field: str
) -> None:
    # an unpriced model under a USD cap is refused before the first call, and no empty
    # benchmark is stored (status failed, 0 rows)
    monkeypatch.delenv("HRB_UNSET_KEY_Z", raising=False)
    with LoopbackServer() as srv, shared_daemon.client() as c:
        before = {b.id for b in c.benchmarks()}
        name = f"refused-{field}-{len(before)}"
        remote = {"kind": "openai", "base_url": srv.base_url, "api_key_env": None, **client}
        with pytest.raises(hc.ConfigError) as err:
            list(c.benchmark(spec(n=2, runs=1, client=remote, governor={"max_usd": 1.0}, name=name)))
        assert err.value.field == field
        assert {b.id for b in c.benchmarks()} == before and srv.requests == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (
            {"arms": [{"kind": "prompt", "name": "ask", "template": "Capital of {country}?"}]},
            "arms[0].template",
        ),
        ({"arms": [{"kind": "prompt", "name": "ask", "template": "Capital of {item?"}]}, "arms[0].template"),
        ({"metrics": ["tatqa"]}, None),
        # outputs for ids of no item are refused, not scored 0 with exit 0 and no warning
        ({"arms": [{"kind": "outputs", "name": "base", "outputs": {"Q0": "x"}}]}, "arms[0].outputs"),
        (
            {"arms": [{"kind": "outputs", "name": "base", "outputs": {"q0": "x", "q9": "y"}}]},
            "arms[0].outputs",
        ),
    ],
    ids=[
        "missing-field",
        "malformed",
        "tatqa-metric-on-plain-labels",
        "outputs-of-no-item",
        "outputs-one-unknown",
    ],
)
def test_a_spec_error_found_before_the_first_run_leaves_nothing_stored(
    shared_daemon: Daemon, change: dict[str, Any], field: str | None
) -> None:
    # inputc's up-front checks ran inside the library, after the daemon had stored the
    # benchmark: `hrb ls` then showed a failed benchmark with 0 rows
    with shared_daemon.client() as c:
        before = {b.id for b in c.benchmarks()}
        with pytest.raises(hc.ConfigError) as err:
            list(c.benchmark(spec(n=2, runs=1, name=f"spec-error-{len(before)}", **change)))
        if field is not None:
            assert err.value.field == field
        assert {b.id for b in c.benchmarks()} == before


@pytest.mark.parametrize(
    ("arm", "said"),
    [
        ('outputs = { Q1 = "Paris" }', "'Q1' (closest item: 'q1')"),
        ('path = "{dup}"', "lines 1 and 3 have the same item 'q1' with different outputs"),
    ],
    ids=["ids-of-no-item", "duplicate-line"],
)
def test_hrb_bench_refuses_a_bad_outputs_arm_with_exit_2_and_stores_nothing(
    shared_daemon: Daemon, tmp_path: Path, arm: str, said: str
) -> None:
    # `outputs = { Q1 = "Paris" }` against the item q1 is refused, not scored 0 with exit 0
    dup = tmp_path / "preds.jsonl"
    dup.write_text(
        '{"item": "q1", "output": "Paris"}\n{"item": "q2", "output": "Lima"}\n{"item": "q1", "output": "x"}\n'
    )
    toml = tmp_path / "bench.toml"
    toml.write_text(
        textwrap.dedent(f"""
        name = "outputs-refused-{tmp_path.name}"
        runs = 3
        [reference]
        items = {{ q1 = "France", q2 = "Peru" }}
        labels = ["Paris", "Lima"]
        [[arms]]
        kind = "outputs"
        name = "base"
        {arm.replace("{dup}", str(dup))}
        """)
    )
    with shared_daemon.client() as c:
        before = {b.id for b in c.benchmarks()}
    proc = subprocess.run(
        [sys.executable, "-m", "hrbench_client.cli", "--no-autostart", "bench", str(toml)],
        capture_output=True,
        text=True,
        timeout=slow(60),
        env=shared_daemon.env,
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert said in proc.stderr and proc.stdout == ""
    with shared_daemon.client() as c:
        assert {b.id for b in c.benchmarks()} == before
