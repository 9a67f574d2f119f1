"""The demo's headlines agree with each data set's official metric, computed independently.

``make demo`` must not score TAT-QA with ``answer_contains``, which has no rounding
tolerance: its headline ``codex_cot - codex_pot`` comes out +0.082 (p<0.001) where the official
TAT-QA EM gives -0.076. Each demo spec (``examples/*.toml``, read as ``hrb bench`` reads it) is
run here through the library on the shared data, and every arm's accuracy and every paired
difference of its report must equal the official metric's:

- TAT-QA: the totals printed by the official ``tatqa_eval.py`` (``OFFICIAL_TOTALS`` of
  ``tests/unit/reading/test_tatqa.py``, computed by the official script, see its docstring);
- SQuAD 2.0: each question scored by a transcription of the official ``evaluate-v2.0.py``
  (``official_scores`` of ``tests/unit/evaluation/test_metrics.py``), an abstention as the empty answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

import hrbench as hb
from hrbench import specs
from hrbench.reading import is_not_found
from hrbench_client.cli.bench import bench_params
from tests.unit.evaluation.test_metrics import official_scores
from tests.unit.reading.test_tatqa import OFFICIAL_TOTALS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TATQA_RUN = {
    "gpt3_direct": "gpt3_text-davinci-002_direct",
    "gpt3_cot": "gpt3_text-davinci-002_cot",
    "codex_direct": "codex_code-davinci-002_direct",
    "codex_cot": "codex_code-davinci-002_cot",
    "codex_pot": "codex_code-davinci-002_pot",
}
N_TATQA = 1668


def _run_spec(name: str, data: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, hb.Bench]:
    monkeypatch.setenv("HRBENCH_DATA", str(data))
    params = bench_params(str(EXAMPLES / name))
    # one prediction per question, as in the demo; tatqa.toml's `missing = "error"`: the
    # question the official runs leave out is an error run of each arm
    expected = (hb.FewRunsWarning, hb.ArmErrorWarning) if name == "tatqa.toml" else hb.FewRunsWarning
    with pytest.warns(expected):
        bench = hb.benchmark(
            [specs.build_arm(a) for a in params.arms],
            specs.build_reference(params.reference),
            runs=params.runs,
            scorer=specs.build_scorer(params.scorer, params.scorer_settings),
            metrics=specs.build_metrics(params.metrics),
        )
    return params, bench


def _check_headlines(bench: hb.Bench, official: Mapping[str, float]) -> None:
    """Every arm's accuracy and every paired difference equal the official metric's."""
    summary = {s["arm"]: s for s in bench.summary()}
    assert set(summary) == set(official)
    for arm, acc in official.items():
        assert summary[arm]["accuracy"] == pytest.approx(acc, abs=1e-12), arm
    rep = hb.report(bench, descriptive=True)
    assert len(rep.comparisons) == len(official) * (len(official) - 1) // 2
    for c in rep.comparisons:
        want = official[c.arm_a] - official[c.arm_b]
        assert c.diff is not None and c.ci_low is not None and c.ci_high is not None
        assert c.diff == pytest.approx(want, abs=1e-12), (c.arm_a, c.arm_b)
        assert c.ci_low <= c.diff <= c.ci_high
        if c.ci_low > 0 or c.ci_high < 0:  # a difference the report calls clear points the official way
            assert (c.diff > 0) == (want > 0), (c.arm_a, c.arm_b)


def test_tatqa_demo_headline_is_the_official_tatqa_em(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    params, bench = _run_spec("tatqa.toml", data, monkeypatch)
    assert params.scorer == "tatqa"  # type: ignore[attr-defined]
    official = {arm: OFFICIAL_TOTALS[run][0] / N_TATQA for arm, run in TATQA_RUN.items()}
    _check_headlines(bench, official)
    # the TAT-QA headline: program of thought beats chain of thought under the official EM
    c = hb.compare(bench, "codex_cot", "codex_pot", descriptive=True)
    assert c.diff == pytest.approx((1024 - 1150) / N_TATQA, abs=1e-12)  # -0.0755
    assert c.ci_high is not None and c.ci_high < 0
    # answer_contains stays a side column, and it is the one that points the other way (no
    # rounding tolerance: '-22.2222222222%' is not the gold -22.22)
    side = {s["arm"]: s["metrics"] for s in bench.summary()}
    assert side["codex_cot"]["tatqa_em"] == pytest.approx(1024 / N_TATQA, abs=1e-12)
    assert side["codex_cot"]["answer_contains"] > side["codex_pot"]["answer_contains"]


@pytest.mark.parametrize("name", ["squad2-shared-50.toml", "squad2-1000.toml"])
def test_squad_demo_headline_is_the_official_squad_em(
    name: str, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params, bench = _run_spec(name, data, monkeypatch)
    assert params.scorer == "squad"  # type: ignore[attr-defined]
    base = data / "squad2-dev-llama32-3b"
    questions = {q["qid"]: q for q in map(json.loads, (base / "questions.jsonl").read_text().splitlines())}
    items = {r.item for r in bench.rows}
    official: dict[str, float] = {}
    for arm in params.arms:  # type: ignore[attr-defined]
        preds = {r["qid"]: r["prediction"] for r in map(json.loads, Path(arm.path).read_text().splitlines())}
        ems = [
            official_scores(questions[q]["answers"], "" if is_not_found(preds[q]) else preds[q])[0]
            for q in items
        ]
        official[arm.name] = sum(ems) / len(ems)
    assert len(items) == (50 if "50" in name else 1000)
    _check_headlines(bench, official)
    for s in bench.summary():
        assert s["metrics"]["squad_em"] == pytest.approx(official[s["arm"]], abs=1e-12)
