"""What a benchmark run under a stop rule prints, and its report: never a number it does not show.

Rules (docs/guides/stop-when-sure.md): a report of a benchmark that stopped when sure withholds
the fixed-sample interval and p of each pair, so the pair's note neither cites that p nor says
how to read it, and says what holds instead (the stop's confidence sequence and anytime p); a
benchmark's printout shows no paired differences, so it never says "the paired differences below".
"""

from __future__ import annotations

import warnings
from typing import Any

import hrbench as hb
from hrbench.stats import StopWhenSure


def _reference(n_clusters: int) -> hb.Reference:
    ids = [f"q{i}" for i in range(n_clusters * 3)]
    return hb.Reference(
        {i: i for i in ids},
        labels={i: f"L{i}" for i in ids},
        cluster={i: f"c{int(i[1:]) // 3:02d}" for i in ids},
    )


def _half(item: str, ctx: Any) -> str:  # right on two items in three
    return f"L{item}" if int(item[1:]) % 3 else "nope"


def _all(item: str, ctx: Any) -> str:
    return f"L{item}"


def _bench(n_clusters: int, stop: StopWhenSure) -> hb.Bench:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few clusters: warned, and meant here
        return hb.benchmark(
            [hb.Arm("all", _all), hb.Arm("half", _half)], _reference(n_clusters), runs=5, stop=stop
        )


def test_a_pair_whose_p_is_withheld_after_a_stop_has_no_note_citing_that_p() -> None:
    bench = _bench(6, StopWhenSure(seed=1))
    assert bench.stop is not None and bench.stop.reason == "decided" and bench.stop.clusters == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = hb.report(bench)
    lines = str(rep).splitlines()
    at = lines.index(" all - half  0.333  0.000       -  -       -      6        0.000")
    assert lines[at + 1 : at + 3] == [
        "  all - half: fixed-sample interval and p not shown: the benchmark stopped when sure, looking after",
        "    every cluster, so they are not valid; see the stop's confidence sequence and anytime p.",
    ]


def test_a_printout_of_a_stop_rule_that_ran_through_never_points_to_differences_below() -> None:
    plan = hb.power(0.1, var_within=0.4, var_between=0.02, runs=5, items_per_cluster=3)
    bench = _bench(4, StopWhenSure(seed=1, plan=plan))
    assert bench.stop is not None and bench.stop.reason == "max_clusters"
    assert str(bench).splitlines()[-2:] == [
        "  Sequential test: symmetric, alpha 0.05, clusters in a seeded order (seed 1); the confidence sequence and "
        "anytime p hold at every look. A pair is settled as no different within +-0.175. Estimand: clusters like "
        "these.",
        "  The stop rule ran its most clusters, a number fixed before it began: the report shows the fixed design's "
        "paired differences over them, to describe the difference, not to decide it (the stop's own decisions hold "
        "at alpha; taken as a second decision on the same clusters, a p below alpha there would add its false "
        "positives to the stop's).",
    ]
