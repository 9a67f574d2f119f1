"""Scores per second of ``answer_contains`` against ``exact`` in the same run.

Input: every bundled real answer (Llama-3.2-3B on SQuAD 2.0 dev, ``runs/*.jsonl``) against its
reference label, from the data folder (``$HRBENCH_DATA``, default ``<repo>/../shared/data``).
Both scorers start cold (caches cleared), then score the same answers again warm (answers
repeat across runs and arms in a benchmark). Target: >= 100,000 answer_contains scores/s.

Also prints the warm scores/s of the numeric, choice and pattern scorers.

Usage: .venv/bin/python bench/scorer.py [--repeat N]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from _common import data_dir, header

from hrbench.reading import answer_scorer, qa_reference
from hrbench.scoring import choice_scorer, exact_scorer, numeric_scorer, pattern_scorer, read_numbers
from hrbench.scoring._answer import _needles
from hrbench.scoring._fold import _fold_cached
from hrbench.scoring._not_found import _search_cached

TARGET = 100_000


def load(data: Path) -> list[tuple[Any, Any, Any]]:
    base = data / "squad2-dev-llama32-3b"
    ref = qa_reference(base / "questions.jsonl")
    out = []
    for f in sorted((base / "runs").glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            out.append((ref.items[row["qid"]], row["prediction"], ref.labels[row["qid"]]))
    return out


def rate(scorer: Any, triples: list[tuple[Any, Any, Any]], repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        for item, output, label in triples:
            scorer(item, output, label)
    return repeat * len(triples) / (time.perf_counter() - start)


CHOICE_FORMS = [
    "B",
    "(B)",
    "Answer: B",
    "**B**",
    "B) 1918",
    "The correct answer is (C).",
    "A or C",
    "I think A.",
]


def more_scorers(triples: list[tuple[Any, Any, Any]], repeat: int) -> dict[str, tuple[int, float]]:
    """Scores/s of numeric (answers whose label is one number), choice and pattern (all answers)."""
    numeric = []
    for item, output, label in triples:
        answers = [a for a in (label if isinstance(label, list) else [label]) if a != "NOT_IN_DOCUMENT"]
        if answers and all(len(read_numbers(str(a))) == 1 for a in answers):
            numeric.append((item, output, label))
    choice = [(None, f"{form} ({i})", "B") for i in range(300) for form in CHOICE_FORMS]
    pattern = pattern_scorer(r"(?:answer is|:)\s*(?P<answer>.+)$", then="answer_contains")
    return {
        "numeric": (len(numeric), rate(numeric_scorer(), numeric, repeat)),
        "choice": (len(choice), rate(choice_scorer(), choice, repeat)),
        "pattern": (len(triples), rate(pattern, triples, repeat)),
    }


def main() -> int:
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 10
    data = data_dir()
    if not (data / "squad2-dev-llama32-3b").is_dir():
        print(f"no real data under {data} (set HRBENCH_DATA)", file=sys.stderr)
        return 2
    triples = load(data)
    header(
        f"scorer: {len(triples):,} real answers (Llama-3.2-3B, SQuAD 2.0 dev) scored against their labels",
        {
            "answer_contains": "hrbench.reading.answer_scorer(), called in a plain loop over the answers",
            "exact": "exact_scorer() (the baseline), the same loop over the same answers",
        },
        f"both sides: one cold pass with their caches cleared, then {repeat} warm passes timed together",
    )
    for cache in (_fold_cached, _search_cached, _needles):
        cache.cache_clear()
    ac, ex = answer_scorer(), exact_scorer()
    cold_ac = rate(ac, triples, 1)
    cold_ex = rate(ex, triples, 1)
    warm_ac = rate(ac, triples, repeat)
    warm_ex = rate(ex, triples, repeat)
    print(f"{len(triples)} real answers; scores/s (higher is better)")
    print(f"  answer_contains  cold {cold_ac:>10,.0f}  warm {warm_ac:>10,.0f}")
    print(f"  exact            cold {cold_ex:>10,.0f}  warm {warm_ex:>10,.0f}")
    print(f"  ratio answer_contains/exact: cold {cold_ac / cold_ex:.2f}, warm {warm_ac / warm_ex:.2f}")
    more = more_scorers(triples, repeat)
    for name, (n, r) in more.items():
        print(f"  {name:<16} {n:>5} replies  warm {r:>10,.0f}")
    ok = min(cold_ac, warm_ac) >= TARGET
    print(f"  target >= {TARGET:,}/s: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
