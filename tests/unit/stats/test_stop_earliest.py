"""The fewest clusters a stop rule's test can decide a pair after: the figure its warnings give is
the test that runs (``method="auto"`` included), never above when it does decide, and the warnings
point at the caller's line."""

from __future__ import annotations

import warnings

import pytest

import hrbench as hb
from hrbench.errors import StopFewClustersWarning, StopUndecidableWarning
from hrbench.stats import StopWhenSure


def first_decided(rule: StopWhenSure, arms: list[str], right: set[str], n: int, per: int = 3) -> int | None:
    """The clusters after which ``rule``'s test first decides a pair when the arms in ``right`` are
    right on every item and the others wrong (the largest difference there is)."""
    names = [f"c{i}" for i in range(n)]
    test = rule.start(arms, dict.fromkeys(names, per))
    for k, c in enumerate(rule.cluster_order(names), 1):
        test.commit(c, {a: {f"{c}-{j}": float(a in right) for j in range(per)} for a in arms})
        if any(d is not None for d in test.decided):
            return k
    return None


@pytest.mark.parametrize("method", ["auto", "exact", "symmetric", "asymptotic"])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
@pytest.mark.parametrize(("arms", "right"), [(["a", "b"], {"a"}), (["a", "b", "c", "d"], {"a"})])
@pytest.mark.parametrize("n", [7, 40])
def test_no_test_decides_before_the_fewest_clusters_it_is_said_to_need(
    method: str, alpha: float, arms: list[str], right: set[str], n: int
) -> None:
    rule = StopWhenSure(seed=1, method=method, alpha=alpha)
    n_pairs = len(rule.resolve_pairs(arms))
    earliest = rule.fewest_to_decide(n_pairs, n, [3] * n)
    assert earliest is not None  # every ranking test but the strict one has a bound
    got = first_decided(rule, arms, right, n)
    assert got is None or got >= earliest, (rule.resolved_method(n_pairs, n, [3] * n), got, earliest)
    if rule.resolved_method(n_pairs, n, [3] * n) == "asymptotic":
        assert got == earliest == rule.min_clusters  # one cluster of the largest difference is enough


def test_the_strict_test_claims_no_earliest() -> None:
    rule = StopWhenSure(method="strict")
    assert rule.fewest_to_decide(1, 7, [3] * 7) is None
    few = rule.few_clusters_warning(1, 7, [3] * 7)
    assert few is not None and "at the earliest" not in few and "needs about 13" in few


def _bench(n_clusters: int, rule: StopWhenSure) -> tuple[hb.Bench, list[warnings.WarningMessage]]:
    ids = [f"q{i}" for i in range(3 * n_clusters)]
    ref = hb.Reference(
        {i: i for i in ids}, labels=dict.fromkeys(ids, "L"), cluster={i: f"c{int(i[1:]) // 3}" for i in ids}
    )
    arms = [
        hb.Arm("terse", lambda item, ctx: "L"),
        hb.Arm("chatty", lambda item, ctx: "L" if int(item[1:]) % 2 else "x"),
    ]
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        bench = hb.benchmark(arms, ref, runs=5, stop=rule)
    return bench, got


def test_the_few_clusters_warning_names_the_test_that_runs_and_its_true_earliest_at_the_callers_line() -> (
    None
):
    bench, got = _bench(7, StopWhenSure(seed=1))  # auto on 7 clusters of one size: the asymptotic test
    (few,) = [w for w in got if w.category is StopFewClustersWarning]
    assert "its asymptotic test can decide a pair after 2 at the earliest" in str(few.message)
    assert few.filename == __file__  # the user's line, not hrbench/runner
    assert bench.stop is not None and bench.stop.summary["method"] == "asymptotic"
    assert bench.stop.reason == "decided" and bench.stop.clusters >= 2


def test_the_undecidable_warning_says_when_the_symmetric_test_could_decide_at_this_alpha() -> None:
    _, got = _bench(9, StopWhenSure(seed=1, method="exact", alpha=0.01))
    (never,) = [w for w in got if w.category is StopUndecidableWarning]
    assert "its exact test needs at least 13" in str(never.message)
    assert 'or method="symmetric" (it can decide after 7)' in str(never.message)  # 2**7 > 1 / 0.01
    assert never.filename == __file__
