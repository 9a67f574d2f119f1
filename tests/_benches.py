"""Benchmarks the view tests browse: a small mock one with 5 runs, and the shipped SQuAD runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from hrbench_client.client import Client

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

ITEMS = {f"q{i}": f"question {i}" for i in range(11)}
LABELS: dict[str, Any] = {f"q{i}": ("yes" if i % 2 else "no") for i in range(10)} | {"q10": None}
CLUSTERS = {f"q{i}": f"c{i // 2}" for i in range(11)}
SPLITS = {k: ("dev" if k == "q9" else "test") for k in ITEMS}


def _outputs(wrong_runs: dict[int, int]) -> dict[str, list[str | None]]:
    """Item -> 5 outputs: the label, except ``wrong_runs[i]`` runs of item i answer ``maybe``."""
    out: dict[str, list[str | None]] = {}
    for i in range(11):
        label = LABELS[f"q{i}"] or "yes"
        k = wrong_runs.get(i, 0)
        out[f"q{i}"] = ["maybe"] * k + [label] * (5 - k)
    return out


def mock_spec(name: str = "mock-view", flaky: dict[int, int] | None = None) -> dict[str, Any]:
    """Three arms on 11 items (one unlabelled, one dev) in 6 clusters, 5 runs each."""
    return {
        "name": name,
        "runs": 5,
        "scorer": "exact",
        "reference": {"items": ITEMS, "labels": LABELS, "cluster": CLUSTERS, "split": SPLITS},
        "split": ["test", "dev"],
        "arms": [
            {"kind": "outputs", "name": "steady", "outputs": _outputs({7: 5, 8: 5})},
            {"kind": "outputs", "name": "flaky", "outputs": _outputs(flaky or {0: 2, 1: 3, 2: 5, 7: 1})},
            {"kind": "outputs", "name": "same", "outputs": _outputs({7: 5, 8: 5})},
        ],
    }


def run(client: Client, spec: Any) -> str:
    """Run a benchmark to the end; its id."""
    stream = client.benchmark(spec)
    list(stream)
    assert stream.result is not None and stream.result.status == "done", stream.result
    return stream.result.id


def squad_spec(data: Path) -> Any:
    """``examples/squad2-shared-50.toml``: four Llama-3.2-3B pipelines' real answers, 50 questions."""
    from hrbench_client.cli.bench import bench_params

    old = os.environ.get("HRBENCH_DATA")
    os.environ["HRBENCH_DATA"] = str(data)
    try:
        params = bench_params(str(EXAMPLES / "squad2-shared-50.toml"))
    finally:
        if old is None:
            os.environ.pop("HRBENCH_DATA", None)
        else:
            os.environ["HRBENCH_DATA"] = old
    return msgspec.structs.replace(params, stream=True)


CAPITALS = {
    "France": "Paris",
    "Peru": "Lima",
    "Chad": "N'Djamena",
    "Fiji": "Suva",
    "Laos": "Vientiane",
    "Oman": "Muscat",
}


def priced_spec(name: str = "priced") -> dict[str, Any]:
    """Two prompt arms on a mock priced as ``gpt-4o-mini``: a few millionths of a USD per run.

    Run it twice on one daemon and the second benchmark is served wholly from the cache (it
    pays 0): its list price is the first one's. ``ask`` sends the shorter prompt, so it is
    the cheaper arm.
    """
    countries = list(CAPITALS)
    return {
        "name": name,
        "runs": 5,
        "reference": {
            "items": {f"q{i}": c for i, c in enumerate(countries)},
            "labels": {f"q{i}": CAPITALS[c] for i, c in enumerate(countries)},
            "cluster": {f"q{i}": f"c{i // 2}" for i in range(len(countries))},
        },
        "client": {
            "kind": "mock",
            "replies": {
                prompt.format(c): cap
                for c, cap in CAPITALS.items()
                for prompt in ("Capital of {}", "Please name the capital city of {}, in one word")
            },
            "default": "I am not sure which city is the capital of that country",
            "model": "gpt-4o-mini",
        },
        "arms": [
            {"kind": "prompt", "name": "ask", "template": "Capital of {item}"},
            {
                "kind": "prompt",
                "name": "wordy",
                "template": "Please name the capital city of {item}, in one word",
            },
        ],
    }


def cost_row(text: str, arm: str) -> list[str]:
    """The words of an arm's row in a text report's cost table (``str(report)``, ``hrb report --text``)."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Variance components"))
    return next(ln.split() for ln in lines[start + 2 :] if ln.split()[0] == arm)
