"""hrbench and the real lm-eval: samples files lm-eval 0.4.13 writes read as lm-eval scored them.

Run by ``make test-interop`` in ``.venv-interop`` (``lm-eval[api]==0.4.13``: no torch). lm-eval's
own CLI runs the tasks of ``tests/interop/lmeval`` against the loopback model of
``tests/interop/lmeval/serve.py`` (``local-chat-completions`` for the generation task,
``local-completions`` with the tiktoken tokenizer for the loglikelihood ones), offline, into a
temporary folder; hrbench's rows must give lm-eval's own per-sample metric on every document.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.interop._imported import imported_arm, imported_reference, read_imported
from tests._slow import slow
from tests.interop.lmeval.serve import Server

TASKS = Path(__file__).parent / "lmeval"
SHIPPED = Path(__file__).parents[1] / "unit" / "interop" / "data"
CHOICE_TASKS = ("hr_choice_index", "hr_choice_text", "hr_choice_letter")
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def samples(tiktoken_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """lm-eval's samples file of each task of ``tests/interop/lmeval``, written by its CLI now."""
    out = tmp_path_factory.mktemp("lmeval")
    home = out / "hf-home"
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tiktoken_cache), "HF_HOME": str(home)}
    env |= {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    with Server() as srv:
        runs = [
            ("local-chat-completions", f"model=loopback,base_url={srv.base_url}/chat/completions,tokenizer_backend=None", "hr_arith"),
            ("local-completions", f"model=gpt-4o,base_url={srv.base_url}/completions,tokenizer_backend=tiktoken", ",".join([*CHOICE_TASKS, "hr_greedy", "hr_rolling"])),
        ]  # fmt: skip
        for model, args, tasks in runs:
            command = [sys.executable, "-m", "lm_eval", "--model", model, "--model_args", args]
            command += [
                "--include_path",
                ".",
                "--tasks",
                tasks,
                "--output_path",
                str(out / "out"),
                "--log_samples",
            ]
            if model == "local-chat-completions":
                command.append("--apply_chat_template")
            proc = subprocess.run(
                command, cwd=TASKS, env=env, capture_output=True, text=True, timeout=slow(600)
            )
            assert proc.returncode == 0, proc.stderr[-3000:]
    found = {
        p.name.split("_20")[0].removeprefix("samples_"): p for p in (out / "out").rglob("samples_*.jsonl")
    }
    assert sorted(found) == sorted([*CHOICE_TASKS, "hr_arith", "hr_greedy", "hr_rolling"])
    return found


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _rows(path: Path, runs: int) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few runs
        return hb.benchmark(
            imported_arm("lm", path, "lm-eval"), imported_reference(path, "lm-eval"), runs=runs
        ).rows


@pytest.mark.parametrize("task", ["hr_arith", *CHOICE_TASKS, "hr_greedy"])
def test_every_row_gives_lm_evals_own_per_sample_metric(samples: dict[str, Path], task: str) -> None:
    lines = _lines(samples[task])
    metric = "exact_match" if task == "hr_arith" else "acc"
    rows = _rows(samples[task], runs=2 if task == "hr_arith" else 1)
    for line in lines:  # a generation's exact_match is the mean over its repeats
        got = [r.correct for r in rows if r.item == str(line["doc_id"])]
        assert sum(got) / len(got) == line[metric], (task, line["doc_id"])
    assert {r.correct for r in rows} == {True, False}
    assert all(
        isinstance(x, str)
        for line in lines
        for r in line["filtered_resps"]
        for x in (r if isinstance(r, list) else [r])
    )


def test_h4_04_on_lm_evals_output_the_text_order_would_pick_another_choice(samples: dict[str, Path]) -> None:
    lines, rows = _lines(samples["hr_choice_index"]), _rows(samples["hr_choice_index"], runs=1)
    differs = 0
    for line, row in zip(lines, rows, strict=True):
        texts = [pair[0] for pair in line["filtered_resps"]]
        numbers = [float(t) for t in texts]
        assert row.outcome == str(numbers.index(max(numbers)))
        differs += texts.index(max(texts)) != numbers.index(max(numbers))
    assert differs >= 1


def test_h4_05_lm_evals_invalid_placeholder_is_a_parse_failure(samples: dict[str, Path]) -> None:
    lines, rows = _lines(samples["hr_arith"]), _rows(samples["hr_arith"], runs=2)
    invalid = {
        (str(x["doc_id"]), n)
        for x in lines
        for n, a in enumerate(x["filtered_resps"][0], 1)
        if a == "[invalid]"
    }
    assert invalid == {("5", 1)}
    assert {(r.item, r.run) for r in rows if r.failure_kind == "parse_failure"} == invalid


def test_a_rolling_loglikelihood_task_is_refused(samples: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match=r"a loglikelihood_rolling \(perplexity\) task"):
        read_imported(samples["hr_rolling"], "lm-eval")


@pytest.mark.parametrize("task", ["hr_arith", *CHOICE_TASKS, "hr_greedy", "hr_rolling"])
def test_the_files_the_unit_tests_ship_are_what_lm_eval_writes(samples: dict[str, Path], task: str) -> None:
    assert _lines(samples[task]) == _lines(SHIPPED / f"lmeval_samples_{task}.jsonl")
