"""The ``[stop]`` table of a spec: the rule it builds, errors that name the field, the record kept in the store."""

from __future__ import annotations

from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.records import Row
from hrbench.specs import build_stop
from hrbench.store import Store


def test_a_table_builds_the_rule_it_names() -> None:
    rule = build_stop(
        {"goal": "rank_or_tolerance", "tolerance": 0.03, "alpha": 0.01, "pairs": [["a", "b"]], "seed": 9}
    )
    assert isinstance(rule, hb.StopWhenSure)
    assert (rule.goal, rule.tolerance, rule.alpha, rule.pairs, rule.seed) == (
        "rank_or_tolerance",
        0.03,
        0.01,
        (("a", "b"),),
        9,
    )
    assert build_stop(None) is None


def test_a_plan_table_is_a_power_plan() -> None:
    rule = build_stop(
        {"plan": {"diff": 0.05, "var_within": 0.2, "var_between": 0.05, "runs": 5, "items_per_cluster": 4}}
    )
    assert rule.plan.diff == 0.05 and rule.plan.n_clusters > 0
    assert rule.limit(10_000) == 2 * rule.plan.n_clusters


def test_a_pilot_benchmark_gives_the_plan_its_variances(tmp_path: Any) -> None:
    store = Store(str(tmp_path / "s.db"))
    rows = [
        Row(
            cluster=f"c{i // 2}",
            item=f"q{i}",
            arm=arm,
            run=r,
            split="test",
            correct=(i + r) % 3 != 0 or arm == "b",
            outcome=None,
            failure_kind=None,
        )
        for i in range(20)
        for arm in ("a", "b")
        for r in range(1, 6)
    ]
    store.benchmark_put("pilot1", {"params": {"name": "pilot", "runs": 5}}, "h")
    store.rows_put("pilot1", list(enumerate(rows)))
    rule = build_stop({"plan": {"diff": 0.1, "pilot": "pilot"}}, store)
    assert rule.plan.source != "assumed" and rule.plan.var_within > 0


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({"alpah": 0.1}, "stop.alpah: unknown field; did you mean 'alpha'?"),
        ({"alpha": 1.5}, "stop.alpha: must be a number strictly between 0 and 1 (got 1.5)"),
        (
            {"goal": "fast"},
            "stop.goal: unknown value; expected one of rank, tolerance, rank_or_tolerance, full_run (got 'fast')",
        ),
        ({"goal": "tolerance"}, 'stop.tolerance: goal "tolerance" needs a tolerance'),
        ({"method": "magic"}, "stop.method: unknown value; expected one of"),
        ({"max_clusters": 0}, "stop.max_clusters: must be a whole number, at least 1 (got 0)"),
        ({"pairs": ["ab"]}, "stop.pairs: expected a list of [arm, arm] pairs"),
        ({"plan": {"var_within": 0.1}}, "stop.plan.diff: a plan needs the difference worth finding"),
        (
            {"plan": {"diff": 0.1, "pilot": "nope"}},
            "stop.plan.pilot: no stored benchmark has this id or name",
        ),
        ({"plan": {"diff": 0.1, "speed": 1}}, "stop.plan.speed: unknown field"),
    ],
)
def test_a_bad_setting_is_refused_naming_the_field_and_value(table: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_stop(table, Store(":memory:"))
    assert said in str(err.value)


def test_the_rule_is_checked_against_the_arms_and_clusters_before_any_run() -> None:
    ref = hb.Reference({"q1": "x", "q2": "y", "q3": "z"}, labels=["x", "y", "z"], cluster=["c1", "c1", "c2"])
    arms = [hb.Arm("a", lambda item, ctx: item), hb.Arm("b", lambda item, ctx: item)]
    with pytest.raises(ConfigError, match=r"stop\.pairs: names an arm that is not in the benchmark \('c'\)"):
        build_stop({"pairs": [["a", "c"]]}, None, arms, ref)
    with pytest.raises(ConfigError, match=r"stop\.min_clusters: the reference has 2 cluster\(s\)"):
        build_stop({"min_clusters": 3, "max_clusters": 3}, None, arms, ref)
    assert build_stop({}, None, arms, ref) is not None


def test_the_store_keeps_a_stop_record_and_reads_benchmarks_stored_before_without_one(tmp_path: Any) -> None:
    store = Store(str(tmp_path / "s.db"))
    store.benchmark_put("b1", {"params": {"runs": 5}}, "h")
    assert store.benchmark_stop_get("b1") is None  # a benchmark stored before stop rules: none
    store.benchmark_stop_put("b1", {"reason": "decided", "clusters": 3, "order": ["c2", "c0"]})
    assert store.benchmark_stop_get("b1") == {"reason": "decided", "clusters": 3, "order": ["c2", "c0"]}
    assert store.benchmark_get("b1")["spec"]["params"] == {"runs": 5}  # the rest of the spec is kept
    store.benchmark_stop_put("nobody", {"reason": "decided"})  # no such benchmark: nothing written
    assert store.benchmark_stop_get("nobody") is None
    # a row stored before the stop rule existed reads back reportable, as written
    row = Row(
        cluster="c", item="q", arm="a", run=1, split="test", correct=True, outcome=None, failure_kind=None
    )
    store.rows_put("b1", [(0, row)])
    assert store.rows_get("b1")[0].reportable is True
