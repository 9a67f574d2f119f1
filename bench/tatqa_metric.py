"""The official TAT-QA EM and F1 of every shipped run, by hrbench, beside the official script's.

hrbench's figures come from a real benchmark: each run of ``tatqa-dev-llm/runs/`` is an
``outputs_arm`` of ``tatqa_outputs(..., scaled=True)`` on the 1,668 dev questions of
``tatqa_reference``, scored by ``tatqa_scorer()`` with ``metrics=[tatqa_scores]``; a question
a run did not answer counts as wrong. Also printed: the scores per second of ``tatqa_scores``,
cold, beside ``answer_contains`` on the same outputs in the same run.

The official script is not part of hrbench. To compare with it, put ``tatqa_metric.py``,
``tatqa_utils.py`` and ``tatqa_eval.py`` of GitHub NExTplusplus/TAT-QA (commit 870accc) in a
folder and pass it with ``--official DIR`` (it needs numpy, scipy and pandas): each question is
then scored by its ``TaTQAEmAndF1`` exactly as ``tatqa_eval.py`` does (a missing prediction is
``(None, None)``), and the script fails when a question's EM or F1 differs from hrbench's.

Usage: .venv/bin/python bench/tatqa_metric.py [--official DIR]
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from _common import data_dir

import hrbench as hb
from hrbench.reading import (
    answer_scorer,
    outputs_arm,
    tatqa_outputs,
    tatqa_reference,
    tatqa_scorer,
    tatqa_scores,
)


def run_files(data: Path) -> dict[str, Path]:
    runs = data / "tatqa-dev-llm" / "runs"
    return {f.stem: f for f in sorted(runs.iterdir()) if f.suffix in (".json", ".jsonl")}


def hrbench_scores(ref: hb.Reference, outputs: dict[str, Any], name: str) -> tuple[float, float, float]:
    """(accuracy of the tatqa scorer, tatqa_em, tatqa_f1) of one run through the runner."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hb.FewRunsWarning)
        warnings.simplefilter("ignore", hb.ArmErrorWarning)  # the questions a run left out
        bench = hb.benchmark(
            outputs_arm(name, outputs, missing="error"),  # as the official script: a miss is wrong
            ref,
            runs=1,
            scorer=tatqa_scorer(),
            metrics=[tatqa_scores],
        )
    (s,) = bench.summary()
    return s["accuracy"], s["metrics"]["tatqa_em"], s["metrics"]["tatqa_f1"]


def official_scores(folder: Path, gold_path: Path, path: Path) -> dict[str, tuple[float, float]]:
    """Each question's (EM, F1) by the official ``TaTQAEmAndF1``, as ``tatqa_eval.py`` calls it."""
    sys.path.insert(0, str(folder))
    metric_mod = importlib.import_module("tatqa_metric")
    if path.suffix == ".json":
        preds = json.loads(path.read_text(encoding="utf-8"))
    else:
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        preds = {r["question_id"]: [r["pred_answer"], r["pred_scale"]] for r in rows}
    metric = metric_mod.TaTQAEmAndF1()
    out = {}
    for ctx in json.loads(gold_path.read_text(encoding="utf-8")):
        for qa in ctx["questions"]:
            answer, scale = preds.get(qa["uid"], (None, None))
            metric(ground_truth=qa, prediction=answer, pred_scale=scale)
            detail = metric.get_raw()[-1]
            out[qa["uid"]] = (float(detail["em"]), float(detail["f1"]))
    return out


def rates(ref: hb.Reference, outputs: list[dict[str, Any]]) -> tuple[float, float]:
    """Cold scores per second of tatqa_scores and of answer_contains on the same outputs."""
    from hrbench.scoring import _tatqa as _tatqa

    triples = [(ref.items[i], out.get(i), ref.labels[i]) for out in outputs for i in ref.ids]
    _tatqa._normalize.cache_clear()
    _tatqa._is_number.cache_clear()
    _tatqa._piece.cache_clear()
    t = time.perf_counter()
    for item, output, label in triples:
        tatqa_scores(item, output, label)
    tatqa_rate = len(triples) / (time.perf_counter() - t)
    from hrbench.scoring._answer import _needles
    from hrbench.scoring._fold import _fold_cached
    from hrbench.scoring._not_found import _search_cached

    for cache in (_fold_cached, _search_cached, _needles):  # cold, as tatqa's above
        cache.cache_clear()
    contains = answer_scorer()
    t = time.perf_counter()
    for item, output, label in triples:
        contains(item, output, label)
    return tatqa_rate, len(triples) / (time.perf_counter() - t)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official", type=Path, help="a folder holding the official TAT-QA scripts")
    args = parser.parse_args()
    data = data_dir()
    gold = data / "tatqa-dev-llm" / "tatqa_dataset_dev.json"
    ref = tatqa_reference(gold)
    print(f"TAT-QA dev: {len(ref)} questions; EM and F1 in percent")
    print(
        "  hrbench:  hb.benchmark() of each run as an outputs_arm, tatqa_scorer() with metrics=[tatqa_scores]"
    )
    print(
        "  official: the official TaTQAEmAndF1 on the same predictions (with --official DIR), question by question"
    )
    print(
        "  rates:    tatqa_scores and answer_contains (the baseline) over the same outputs, one cold pass each"
    )
    header = f"{'run':32} {'hrbench EM':>10} {'F1':>6}"
    if args.official:
        header += f" {'official EM':>11} {'F1':>6} {'questions differing':>19}"
    print(header)
    all_outputs = []
    failed = False
    for name, path in run_files(data).items():
        outputs = tatqa_outputs(path, scaled=True)
        all_outputs.append(outputs)
        acc, em, f1 = hrbench_scores(ref, outputs, name)
        assert acc == em, (name, acc, em)
        line = f"{name:32} {100 * em:10.2f} {100 * f1:6.2f}"
        if args.official:
            off = official_scores(args.official, gold, path)
            o_em = sum(e for e, _ in off.values()) / len(off)
            o_f1 = sum(f for _, f in off.values()) / len(off)
            mine = {i: tatqa_scores(ref.items[i], outputs.get(i), ref.labels[i]) for i in ref.ids}
            differ = sum(off[i] != (mine[i]["tatqa_em"], mine[i]["tatqa_f1"]) for i in ref.ids)
            failed |= differ > 0 or abs(o_em - em) > 1e-9 or abs(o_f1 - f1) > 1e-9
            line += f" {100 * o_em:11.2f} {100 * o_f1:6.2f} {differ:19d}"
        print(line)
    tatqa_rate, contains_rate = rates(ref, all_outputs)
    print(
        f"\ntatqa_scores: {tatqa_rate:,.0f} scores/s cold; answer_contains on the same outputs: "
        f"{contains_rate:,.0f} scores/s (ratio {tatqa_rate / contains_rate:.2f})"
    )
    if failed:
        print("hrbench differs from the official script", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
