"""A paired difference's numbers and notes, the same wherever they are asked for, in plain sentences.

Rules: ``hb.compare`` gives a pair the Holm-adjusted p-value the report and ``hrb report
--compare`` give it (adjusted over every pair of the benchmark's arms; docs/guides/statistics.md);
a note on a p-value resting on the t model says so in a sentence that agrees with its one
cluster (docs/guides/statistics.md, "few clusters").
"""

from __future__ import annotations

import hrbench as hb
from hrbench.records import Row
from hrbench.stats import compare, compare_all, report, report_payload


def _rows(right: dict[str, set[int]], n_items: int = 8, runs: int = 5) -> list[Row]:
    """Each arm right on the items of ``right[arm]`` (every run), wrong elsewhere; item i in cluster i // 2."""
    return [
        Row(
            cluster=f"c{i // 2}",
            item=f"q{i}",
            arm=arm,
            run=r,
            split="test",
            correct=i in ok,
            outcome=None,
            failure_kind=None if i in ok else "wrong",
        )
        for arm, ok in right.items()
        for i in range(n_items)
        for r in range(1, runs + 1)
    ]


def test_compare_with_three_arms_gives_the_pair_the_reports_holm_p() -> None:
    rows = _rows({"a": {0, 1, 2, 3, 4, 5, 6}, "b": {0, 2, 4, 6}, "c": {1, 2}})
    text_p = {(c.arm_a, c.arm_b): c.p_holm for c in report(rows, warn=False).comparisons}
    assert len(text_p) == 3 and all(v is not None for v in text_p.values())
    one = hb.compare(rows, "a", "c", warn=False)
    assert one.p_holm is not None and one.p_holm > one.p_value
    assert (
        one.p_holm
        == text_p[("a", "c")]
        == {(c.arm_a, c.arm_b): c.p_holm for c in compare_all(rows)}[("a", "c")]
    )
    assert compare(rows, "c", "a", warn=False).p_holm == text_p[("a", "c")]  # either way round
    js = report_payload(rows, compare_pair=("a", "c"))["comparisons"][0]
    assert js["p_holm"] == one.p_holm
    two = _rows({"a": {0, 1, 2, 3, 4, 5, 6}, "b": {0, 2, 4, 6}})
    pair = compare(two, "a", "b", warn=False)
    assert pair.p_holm == pair.p_value  # a family of one pair


def test_a_disagreement_in_one_cluster_is_said_in_a_sentence_that_agrees_with_it() -> None:
    rows = _rows({"a": {0, 1}, "b": set()})  # only cluster c0 holds items scored differently
    c = compare(rows, "a", "b", warn=False)
    assert c.n_clusters_disagree == 1 and c.p_value is not None and c.p_value < 1
    assert c.note == (
        f"only 1 of 4 clusters holds any item scored differently, so p = {c.p_value:.3f} rests on the t model of "
        "how clusters vary alone: the exact sign-flip test, which assumes nothing about how clusters vary, has "
        "p = 1 with a single such cluster and cannot reject at any level"
    )
