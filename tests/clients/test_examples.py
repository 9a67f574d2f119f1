"""The demo's benchmark specs (examples/*.toml) load and run on a small slice of the real data."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

import hrbench
from hrbench import specs
from hrbench_client import protocol as p
from hrbench_client.cli.bench import bench_params
from hrbench_client.client import Client
from hrbench_client.errors import InvalidParams

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEMO_SPECS = ["squad2-shared-50.toml", "squad2-1000.toml", "tatqa.toml"]


@pytest.mark.filterwarnings("ignore::hrbench.FewRunsWarning")
@pytest.mark.parametrize("name", DEMO_SPECS)
def test_demo_spec_runs_on_a_slice(
    name: str, data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HRBENCH_DATA", str(data))
    params = bench_params(str(EXAMPLES / name))
    assert isinstance(params.reference, p.ReferenceSpec)
    assert params.reference.path is not None and params.reference.path.startswith(str(data))
    params = msgspec.structs.replace(params, reference=msgspec.structs.replace(params.reference, limit=60))
    with Client.spawn_stdio(tmp_path / "home") as hb:
        stream = hb.benchmark(params)
        rows = list(stream)
    result = stream.result
    assert result is not None and result.status == "done"
    n_arms = len(params.arms)
    assert len(rows) == result.n_rows and result.n_rows % n_arms == 0 and 0 < result.n_rows <= 60 * n_arms
    assert {r.arm for r in rows} == {a.name for a in params.arms}
    # real answers score: every arm gets some right and the failure kinds are the seed's
    for arm in params.arms:
        arm_rows = [r for r in rows if r.arm == arm.name]
        assert any(r.correct for r in arm_rows), arm.name
        assert {r.failure_kind for r in arm_rows} <= {None, "wrong", "not_in_document", "parse_failure"}
    # the official metric decides each row, answer_contains is a side column: the daemon's
    # figures are the library's (tests/clients/test_demo_headline.py checks them against the
    # official scripts on the whole data)
    metric = "tatqa" if name == "tatqa.toml" else "squad"
    assert params.scorer == metric and params.metrics == [metric, "answer_contains"]
    library = hrbench.benchmark(
        [specs.build_arm(a) for a in params.arms],
        specs.build_reference(params.reference),
        runs=1,
        scorer=specs.build_scorer(params.scorer, params.scorer_settings),
        metrics=specs.build_metrics(params.metrics),
    )
    assert [msgspec.to_builtins(s) for s in result.summary] == library.summary()
    for s in result.summary:
        assert set(s.metrics) == {f"{metric}_em", f"{metric}_f1", "answer_contains"}
        assert 0 < s.metrics[f"{metric}_em"] <= s.metrics[f"{metric}_f1"] < 1  # type: ignore[operator]
        assert s.accuracy == s.metrics[f"{metric}_em"]  # the scorer is the official EM
    assert f"{metric}_em" in result.text and "beside accuracy" in result.text.lower()


def test_unset_variable_in_a_spec_path_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HRBENCH_NOPE", raising=False)
    spec = tmp_path / "s.toml"
    spec.write_text(
        '[reference]\npath = "${HRBENCH_NOPE}/q.jsonl"\n\n[[arms]]\nkind = "outputs"\nname = "a"\npath = "x.jsonl"\n'
    )
    with pytest.raises(InvalidParams, match="HRBENCH_NOPE"):
        bench_params(str(spec))
    monkeypatch.setenv("HRBENCH_NOPE", str(tmp_path))
    params = bench_params(str(spec))
    assert params.reference.path == str(tmp_path / "q.jsonl")
    assert params.arms[0].path == str(tmp_path / "x.jsonl")


def test_the_agents_example_compares_two_efforts_and_two_tool_prompts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/agents.toml against the loopback it names: an effort that exhausts its reasoning, a search that errs."""
    from hrbench.testing import LoopbackServer

    params = bench_params(str(EXAMPLES / "agents.toml"))
    assert [a.name for a in params.arms] == ["think", "lookup", "search"]
    with LoopbackServer() as srv:
        client = msgspec.structs.replace(params.client, base_url=srv.base_url)
        params = msgspec.structs.replace(params, client=client)
        with Client.spawn_stdio(tmp_path / "home") as hb:
            stream = hb.benchmark(params)
            rows = list(stream)
            result = stream.result
            rep = hb.report(result.id) if result is not None else None
        monkeypatch.syspath_prepend(str(EXAMPLES))  # the spec's tools, as the daemon imports them
        library = hrbench.benchmark(
            [arm for a in params.arms for arm in specs.build_arms(a)],
            specs.build_reference(params.reference),
            runs=params.runs,
            client=specs.build_client(client),
            governor=specs.build_governor(params.governor),
            pricing=specs.build_pricing(client),
        )
    assert result is not None and result.status == "done" and rep is not None
    summary = {s.arm: s for s in result.summary}
    assert list(summary) == ["think-low", "think-high", "lookup", "search"]
    wire = [msgspec.to_builtins(s) for s in result.summary]
    money = ("usd", "usd_list")  # summed in the order runs finished: equal up to float rounding
    assert [{k: v for k, v in s.items() if k not in money} for s in wire] == [
        {k: v for k, v in s.items() if k not in money} for s in library.summary()
    ]
    for ours, theirs in zip(wire, library.summary(), strict=True):
        assert [ours[k] for k in money] == pytest.approx([theirs[k] for k in money])
    # the high effort runs out of its output limit on the three hard items, every run
    assert summary["think-high"].reasoning_exhausted == 15 and summary["think-low"].reasoning_exhausted == 0
    assert {r.failure_kind for r in rows if r.arm == "think-high" and r.item in ("q3", "q5", "q8")} == {
        "reasoning_exhausted"
    }
    assert summary["think-high"].usd > summary["think-low"].usd > 0
    # the lookup prompt is right on every item; the search answers with the largest city
    assert summary["lookup"].accuracy == 1.0 and summary["search"].accuracy == 0.375
    assert [(s["cheaper"], s["dearer"]) for s in rep["frontier"]] == [("search", "lookup")]
    assert "Cost-accuracy frontier" in rep["text"] and "reasoning_exhausted 15" in rep["text"]
