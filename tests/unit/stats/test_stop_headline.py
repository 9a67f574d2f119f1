"""A stopped benchmark's reason, winner and report agree, for every goal and every way it ended.

Rule (docs/guides/stop-when-sure.md, "In a benchmark"): ``reason`` says what ended the
benchmark; a pair decided along the way stays decided whatever ended it, so ``winner`` and the
pairs' ``decided`` are said by the headline too; only a stop that decided no pair reads "Not decided".
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import hrbench as hb
from hrbench.stats import stop_section


def _bench(stop: hb.StopWhenSure, n_clusters: int = 7) -> hb.Bench:
    ids = [f"q{i}" for i in range(3 * n_clusters)]
    ref = hb.Reference(
        {i: i for i in ids}, labels=dict.fromkeys(ids, "L"), cluster={i: f"c{int(i[1:]) // 3}" for i in ids}
    )
    arms = [
        hb.Arm("terse", lambda item, ctx: "L"),
        hb.Arm("chatty", lambda item, ctx: "L" if int(item[1:]) % 2 else "x"),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few clusters: warned, and meant here
        return hb.benchmark(arms, ref, runs=5, stop=stop)


def _report(bench: hb.Bench) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hb.report(bench)


def test_a_tolerance_goal_that_ran_to_max_clusters_says_the_pair_it_decided() -> None:
    bench = _bench(hb.StopWhenSure(pairs=[("terse", "chatty")], goal="tolerance", tolerance=0.1, seed=1))
    assert bench.stop is not None and bench.stop.reason == "max_clusters" and bench.stop.winner == "terse"
    rep = _report(bench)
    text, md = str(rep), rep.to_markdown()
    head = text.splitlines()[1].strip()
    assert head.startswith(
        "Stopped at its most clusters before every difference was known within the tolerance, after 7 of 7 clusters"
    )
    assert "; terse was decided better" in head and "Not decided" not in text + md
    assert "terse - chatty: diff 0.524" in text and "; decided: terse better" in text
    assert "> **Stopped at its most clusters before every difference" in md and "Not decided" not in str(
        bench
    )
    assert rep.stop is not None and rep.stop["headline"] == head  # the view shows the same line


def _record(reason: str, goal: str, decided: list[str | None], winner: str | None) -> dict[str, Any]:
    pairs = [{"a": "x", "b": f"y{j}", "decided": d, "diff": 0.1} for j, d in enumerate(decided)]
    return {"reason": reason, "clusters": 5, "of": 10, "winner": winner, "pairs": pairs,
            "summary": {"goal": goal, "alpha": 0.05, "method": "symmetric"}}  # fmt: skip


@pytest.mark.parametrize("goal", ["rank", "tolerance", "rank_or_tolerance", "full_run"])
@pytest.mark.parametrize("reason", ["decided", "tolerance", "max_clusters", "budget", "cancelled"])
@pytest.mark.parametrize(
    ("decided", "winner", "said"),
    [
        (["x", "x"], "x", "x was decided better"),
        (["x", None], None, "1 of 2 pairs were decided"),
        ([None, None], None, None),
    ],
)
def test_the_headline_says_what_was_decided_whatever_ended_the_benchmark(
    goal: str, reason: str, decided: list[str | None], winner: str | None, said: str | None
) -> None:
    if reason == "decided" and said is None:
        return  # a stop decided with no pair decided does not happen
    head = stop_section(_record(reason, goal, decided, winner))["headline"]
    if said is None:  # nothing decided: a stop that was not sure says so; one that was names no winner
        assert head.startswith(
            "Not decided: " if reason not in ("decided", "tolerance") else "Stopped when sure"
        ), head
        assert "better" not in head and "were decided" not in head
    else:
        assert "Not decided" not in head, head
        if reason == "decided":  # the stop was sure: its winner, if one, is the headline's
            assert head.startswith(
                f"Stopped when sure: {winner} is better" if winner else "Stopped when sure, "
            )
        else:
            assert said in head, head
