"""Every printed example of the seeds, printed by the Python API, compared with the seed's text verbatim.

The seeds (``../shared/seeds``) are the behavioural contract; each of their examples that
prints (an R statement followed by ``#>`` lines) is found here by reading the seed files, and
each must have its Python mapping below (SPEC.md maps the R names to Python): a test fails for
a printed example no mapping covers. The comparison is verbatim, line by line, trailing spaces
aside. A printout hrbench owns (``print(bench)``, an evaluation) is compared as printed; an R
value (``[1] TRUE``, a named list, a data frame) is the Python value printed in R's notation
(:mod:`tests._rprint`). Where a later rule changed a printout, the seed's text stands.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench import metrics
from hrbench.evaluation.modules import module_fn
from tests import _rprint
from tests.conftest import seeds_dir

R_NAMES = {"DSPrrr": "hrbench"}
"""The R original's package names as the Python product prints them (the only words mapped)."""

PAGE_JOIN = "Skip to contents"
"""The next page's first words, glued to a seed file's last line where two pages were joined."""


def printed_examples(folder: Path) -> dict[tuple[str, str], list[str]]:
    """``{(seed number, the R statement that prints): its printed lines}`` of every seed file.

    The statement is the last code line before a run of ``#>`` lines; the printed lines are
    those lines without their ``#>`` mark (and one space after it).
    """
    files = sorted(folder.glob("0*.txt"))
    if len(files) < 4:
        raise FileNotFoundError(f"the four seeds are not in {folder} (set HRBENCH_SEEDS to the seeds folder)")
    out: dict[tuple[str, str], list[str]] = {}
    for path in files:
        statement = None
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("#>"):
                if statement is None:
                    raise ValueError(f"{path.name}: printed lines with no statement before them")
                key = (path.name[:3], statement)
                out.setdefault(key, []).append(line[3:] if line.startswith("#> ") else line[2:])
            elif line.strip() and not line.lstrip().startswith("#"):
                statement = line.strip()
    for lines in out.values():
        lines[-1] = lines[-1].removesuffix(PAGE_JOIN)
    return out


SEEDS = printed_examples(seeds_dir())


# -- seed 000: the scorer contract ----------------------------------------------------------
def within_1pct(item: Any, output: Any, label: Any) -> dict[str, Any]:
    """The seed's own scorer: a number within 1% of the label."""
    try:
        x = float(output)
    except (TypeError, ValueError):
        return {"correct": False, "outcome": None, "failure_kind": "parse_failure"}
    return {"correct": abs(x - label) <= 0.01 * abs(label), "outcome": format(x, "g"), "failure_kind": None}


def near() -> hb.Scorer:
    return hb.scorer(within_1pct, name="within_1pct")


# -- seed 001: the reading scorer -----------------------------------------------------------
def units_item() -> dict[str, Any]:
    return {"question": "How many units?", "document": hb.example_document()}


# -- seed 002: the benchmark runner ---------------------------------------------------------
CAPITALS = {"France": "Paris", "Peru": "Lima", "Chad": "Ndjamena", "Fiji": "Suva"}


def seed_bench() -> hb.Bench:
    ref = hb.Reference(
        items={"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Fiji"},
        labels=["Paris", "Lima", "N'Djamena", "Suva"],
        cluster=["a", "a", "b", "b"],
        split="test",
    )
    cl = hb.MockClient(lambda messages, params: CAPITALS[messages[0]["content"].removeprefix("Capital of ")])
    ask = hb.Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}").text)
    return hb.benchmark(ask, ref, runs=5, client=cl)


def head_of_bench() -> str:
    cols = ["item", "run", "correct", "failure_kind", "draw_index"]
    df = seed_bench().to_pandas()[cols]
    missing = df.isna()  # pandas' missing value is R's NA
    return _rprint.data_frame(
        {c: [None if m else v for v, m in zip(df[c].tolist(), missing[c], strict=True)] for c in cols}, n=6
    )


# -- seed 003: evaluate() -------------------------------------------------------------------
def rule() -> Any:
    return module_fn(
        "text -> sentiment",
        lambda text: "positive" if re.search("love|great", text, re.IGNORECASE) else "negative",
    )


TESTSET = {
    "text": ["I love it!", "Awful.", "Great value", "Not great"],
    "sentiment": ["positive", "negative", "positive", "negative"],
}


def seed_result() -> Any:
    return hb.evaluate(rule(), TESTSET, metric=metrics.exact_match(field="sentiment"))


def same_label(prediction: Any, expected: Any) -> bool:
    return bool(prediction.sentiment == expected.sentiment)


PYTHON: dict[tuple[str, str], Callable[[], str]] = {
    ("000", 'exact$fn("Capital of France?", "  paris ", "Paris")'): lambda: _rprint.show(
        hb.exact_scorer()("Capital of France?", "  paris ", "Paris")
    ),
    ("000", 'exact$fn("Capital of France?", "Lyon", "Paris")$failure_kind'): lambda: _rprint.show(
        hb.exact_scorer()("Capital of France?", "Lyon", "Paris").failure_kind
    ),
    ("000", 'near$fn(NULL, "45.3", 45.2)'): lambda: _rprint.show(near()(None, "45.3", 45.2)),
    ("001", 's$fn(item, "Sheffield produced 12,400 units.", "12400")$correct'): lambda: _rprint.show(
        hb.answer_scorer()(units_item(), "Sheffield produced 12,400 units.", "12400").correct
    ),
    ("001", 's$fn(item, "NOT_IN_DOCUMENT", "12400")$failure_kind'): lambda: _rprint.show(
        hb.answer_scorer()(units_item(), "NOT_IN_DOCUMENT", "12400").failure_kind
    ),
    ("001", 's$fn(item, "NOT_IN_DOCUMENT", "NOT_IN_DOCUMENT")$correct'): lambda: _rprint.show(
        hb.answer_scorer()(units_item(), "NOT_IN_DOCUMENT", "NOT_IN_DOCUMENT").correct
    ),
    ("002", "bench"): lambda: str(seed_bench()),
    ("002", 'head(bench[, c("item", "run", "correct", "failure_kind", "draw_index")])'): head_of_bench,
    ("003", "result"): lambda: str(seed_result()),
    ("003", "result$scores"): lambda: _rprint.show(seed_result().scores),
    ("003", "evaluate(rule, testset, metric = same_label)$mean_score"): lambda: _rprint.show(
        hb.evaluate(rule(), TESTSET, metric=same_label).mean_score
    ),
}


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.split("\n")]


def _seed_text(lines: list[str]) -> str:
    text = "\n".join(lines)
    for r_name, python_name in R_NAMES.items():
        text = text.replace(r_name, python_name)
    return text


def test_every_printed_example_of_the_seeds_has_its_python_mapping() -> None:
    assert (
        len(SEEDS) >= 11
    )  # the seeds' examples as read when this test was written: a parse that finds none fails
    assert sorted(SEEDS) == sorted(PYTHON)


@pytest.mark.parametrize("key", sorted(SEEDS), ids=lambda k: f"seed{k[0]}:{k[1][:40]}")
def test_the_seed_s_printed_example_is_printed_verbatim(key: tuple[str, str]) -> None:
    want = _seed_text(SEEDS[key])
    got = PYTHON[key]()
    assert _lines(got) == _lines(want), f"seed {key[0]}, {key[1]}:\n{got}\n--- the seed prints ---\n{want}"


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        (True, "[1] TRUE"),
        (None, "[1] NA"),
        ("wrong", '[1] "wrong"'),
        ([1.0, 1.0, 1.0, 0.0], "[1] 1 1 1 0"),
        (0.75, "[1] 0.75"),
        ([1, 0.5, None], "[1] 1.0 0.5  NA"),
        ([12, 3], "[1] 12  3"),
        ({"correct": False, "outcome": None}, "$correct\n[1] FALSE\n\n$outcome\n[1] NA\n"),
    ],
)
def test_the_r_printer_prints_as_r_does(value: Any, printed: str) -> None:
    assert _rprint.show(value) == printed


def test_the_r_printer_prints_a_data_frame_as_r_does() -> None:
    frame = {"item": ["q1", "q10"], "correct": [True, None], "kind": [None, "wrong"], "n": [1, 10]}
    assert _rprint.data_frame(frame) == (
        "  item correct  kind  n\n"  # row names left-aligned, cells right-aligned to the header
        "1   q1    TRUE  <NA>  1\n"
        "2  q10      NA wrong 10"
    )
