"""hb.gate(): the decision reads the one-sided bound of compare()'s paired interval; what it refuses."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest

import hrbench as hb
from hrbench.records import Row
from hrbench.stats import gate


def rows(arm: str, wrong: Iterable[int], n: int = 40, runs: int = 5, first: int = 0) -> list[Row]:
    bad = set(wrong)
    return [
        Row(cluster=f"c{i // 2}", item=f"q{i}", arm=arm, run=r, split="test", correct=i not in bad,
            outcome=None, failure_kind=None if i not in bad else "wrong")
        for i in range(first, first + n) for r in range(1, runs + 1)
    ]  # fmt: skip


def test_the_decision_is_the_one_sided_bound_of_compare_at_level_1_minus_2_alpha() -> None:
    cand, base = rows("new", range(0, 40, 4)), rows("old", [1, 2])
    g = hb.gate(cand, base, alpha=0.05, max_drop=0.02)
    c = hb.compare(
        [*cand, *base], "new", "old", level=0.90, descriptive=True, warn=False
    )  # the same pairing, by hand
    assert (g.diff, g.ci_low, g.ci_high) == (c.diff, c.ci_low, c.ci_high)
    assert g.diff == pytest.approx(-0.2) and g.n_items == 40 and g.n_clusters == 20
    assert g.decision == "fail" and g.exit_code == 1 and g.ci_high < -0.02
    assert g.arm_candidate == "new" and g.arm_baseline == "old" and not g.descriptive
    # a tolerance beyond the bound passes the same data
    loose = hb.gate(cand, base, max_drop=-g.ci_high + 0.001)
    assert loose.decision == "pass" and loose.exit_code == 0
    assert hb.gate(cand, base, max_drop=-g.ci_high - 0.001).decision == "fail"


def test_an_improvement_and_an_unchanged_candidate_pass() -> None:
    base = rows("a", range(0, 40, 5))
    assert gate(rows("a", []), base).decision == "pass"
    same = gate(rows("a", range(0, 40, 5)), base)
    assert same.decision == "pass" and same.diff == 0.0 and same.note is not None


@pytest.mark.parametrize(
    ("cand", "base", "arm", "why"),
    [
        (rows("a", []), rows("a", []), "z", "arm 'z' is not in the candidate (its arms: a)"),
        (rows("a", [], n=2), rows("a", [1], n=2), None, "one cluster"),
    ],
)
def test_what_cannot_be_compared_says_why(
    cand: list[Row], base: list[Row], arm: str | None, why: str
) -> None:
    g = gate(cand, base, arm=arm)
    assert g.decision == "cannot" and g.exit_code == 3
    assert g.reason.startswith("cannot compare: ") and why in g.reason


def test_several_arms_and_no_arm_named_is_bad_input() -> None:
    with pytest.raises(
        hb.ConfigError, match=r"^arm: the benchmarks have several arms \(candidate: a; baseline: b, c\)"
    ):
        gate(rows("a", []), rows("b", []) + rows("c", []))


def test_the_arm_is_picked_by_name_when_both_have_several() -> None:
    cand = rows("a", range(0, 40, 2)) + rows("b", [])
    base = rows("a", []) + rows("b", [])
    assert gate(cand, base, arm="b").decision == "pass"
    assert gate(cand, base, arm="a").decision == "fail"


@pytest.mark.parametrize(("field", "kw"), [("max_drop", {"max_drop": -0.1}), ("alpha", {"alpha": 0.5})])
def test_bad_settings_are_named(field: str, kw: dict[str, float]) -> None:
    with pytest.raises(hb.ConfigError, match=f"^{field}: "):
        gate(rows("a", []), rows("a", []), **kw)  # type: ignore[arg-type]


def test_a_baseline_is_a_stored_id_or_name_or_a_rows_file(tmp_path: Path) -> None:
    store = hb.Store(":memory:")
    base = rows("ask", [1, 2])
    store.benchmark_put("b-base", {"params": {"name": "nightly", "runs": 5}, "arms": [{"name": "ask"}]}, "h")
    store.rows_put("b-base", list(enumerate(base)))
    cand = rows("ask", range(0, 40, 4))
    by_id, by_name = gate(cand, "b-base", store=store), gate(cand, "nightly", store=store)
    jsonl, csv = tmp_path / "base.jsonl", tmp_path / "base.csv"
    jsonl.write_text(
        "".join(json.dumps({f: getattr(r, f) for f in Row.__struct_fields__}) + "\n" for r in base)
    )
    csv.write_text(
        "cluster,item,arm,run,correct,failure_kind\n"
        + "".join(f"{r.cluster},{r.item},{r.arm},{r.run},{r.correct},{r.failure_kind or ''}\n" for r in base)
    )
    by_file, by_csv = gate(cand, jsonl), gate(cand, str(csv))
    assert {g.decision for g in (by_id, by_name, by_file, by_csv)} == {"fail"}
    assert by_id.diff == by_name.diff == by_file.diff == by_csv.diff == pytest.approx(-0.2)
    assert (by_id.baseline, by_name.baseline, by_file.baseline) == ("b-base", "b-base", str(jsonl))
    with pytest.raises(hb.NotFound, match="^baseline: no file and no stored benchmark"):
        gate(cand, "nothing", store=store)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item": "q1"}\nnot json\n')
    with pytest.raises(hb.ConfigError, match="line 1 is not a row|line 2 is not JSON"):
        gate(cand, bad)


def test_a_benchmark_stopped_when_sure_is_not_gated_on_a_fixed_sample_interval(tmp_path: Path) -> None:
    # which clusters a stopped benchmark ran depended on its results: the gate's interval does not hold
    ids = [f"q{i}" for i in range(60)]
    ref = hb.Reference(
        {i: i for i in ids}, labels={i: f"L{i}" for i in ids}, cluster={i: f"c{int(i[1:]) // 3}" for i in ids}
    )

    def right(item: str, ctx: object) -> str:
        return f"L{item}"

    def some(item: str, ctx: object) -> str:
        return f"L{item}" if int(item[1:]) % 3 else "nope"

    arms = [hb.Arm("new", right), hb.Arm("old", some)]
    stopped = hb.benchmark(arms, ref, runs=5, stop=hb.StopWhenSure(seed=1))
    full = hb.benchmark(arms, ref, runs=5)
    assert stopped.stop is not None
    got = gate(stopped, full, arm="new")
    assert (got.decision, got.exit_code) == ("cannot", 3)
    assert "ran under a stop rule" in got.reason and got.reason.startswith("cannot compare: the candidate")
    assert gate(full, stopped, arm="new").reason.startswith("cannot compare: the baseline")
    assert gate(full, full, arm="new").decision == "pass"
    store = hb.Store(tmp_path / "s.sqlite3")  # stored: the stop record kept with the benchmark
    store.benchmark_put("stopped-1", {"name": "st"}, "x", status="done")
    store.benchmark_stop_put("stopped-1", {"reason": "decided"})
    store.rows_put("stopped-1", list(enumerate(stopped.rows)), fresh=len(stopped.rows))
    assert gate("stopped-1", full, arm="new", store=store).decision == "cannot"


@pytest.mark.parametrize(
    ("suffix", "data", "why"),
    [
        ("jsonl", bytes(range(128, 256)) * 16, "is not UTF-8 text: byte 0 (line 1) is 0x80"),  # random bytes
        (
            "parquet",
            b"cluster,item,arm,run,correct\nc0,q0,a,1,True\n",
            "is not a Parquet file pyarrow can read",
        ),
        ("csv", b"", "is empty (0 bytes)"),
        (
            "jsonl",
            b'[{"item": "q0"}, 2]\n',
            "line 1 is not a row of `hrb rows` (a JSON array, not an object)",
        ),
        ("csv", b"item,arm,correct\nq0,a,True\n", "line 1 (the header) has no column run"),
    ],
    ids=["random bytes", "text named .parquet", "empty", "JSON array of non-rows", "CSV missing columns"],
)
def test_a_bad_baseline_file_is_a_config_error_naming_the_file(
    tmp_path: Path, suffix: str, data: bytes, why: str
) -> None:
    bad = tmp_path / f"base.{suffix}"
    bad.write_bytes(data)
    with pytest.raises(hb.ConfigError) as got:
        hb.gate(rows("a", []), bad)
    assert str(got.value).startswith(f"baseline: {why}") and str(got.value).endswith(f"(got {str(bad)!r})")
    with pytest.raises(hb.ConfigError, match="^candidate: "):
        hb.gate(str(bad), rows("a", []))


@pytest.mark.parametrize(
    ("base_first", "base_n", "on", "coverage"),
    [
        (0, 14, (14, 28), "14 of them are not in the baseline"),  # exactly half: decided, and said
        (0, 40, (28, 28), "the baseline's 12 other items are not in the candidate"),
        (20, 20, (8, 28), None),  # 8 of 28: refused
        (100, 28, (0, 28), None),  # no item in common: refused
        (0, 28, (28, 28), None),  # the same items: nothing to say
    ],
)
def test_a_baseline_holding_part_of_the_candidates_items_is_said_or_refused(
    base_first: int, base_n: int, on: tuple[int, int], coverage: str | None
) -> None:
    cand, base = rows("a", range(0, 28, 3), n=28), rows("a", [1], first=base_first, n=base_n)
    if 2 * on[0] < on[1]:
        with pytest.raises(hb.ConfigError) as got:
            gate(cand, base)
        assert str(got.value).startswith(
            f"baseline: holds {on[0]} of the 28 items the candidate 'rows' ran (arm 'a'); {28 - on[0]} are not in it"
        )
        assert "another reference" in str(got.value) and str(got.value).endswith("(got 'rows')")
        return
    g = gate(cand, base)
    assert (g.n_items, g.n_items_candidate, g.n_items_baseline) == (*on, base_n)
    assert g.n_items_not_in_baseline == on[1] - on[0] and g.coverage == coverage
    assert g.decision in ("pass", "fail")


def test_items_in_both_but_not_scored_in_both_are_said() -> None:
    cand, base = rows("a", [], n=20), rows("a", [], n=20)
    for r in base:
        if r.item in ("q0", "q1"):
            r.correct = None  # no label in the baseline
    g = gate(cand, base)
    assert (
        g.n_items == 18
        and g.coverage == "2 were not scored on both sides (no label, or no scored run in one)"
    )
