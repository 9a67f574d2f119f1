"""The daemon's read methods for ``hrb view`` (benchmark/list, view, matrix, cell, compare).

Each goes through a real daemon subprocess; the numbers are checked against hrbench.stats run
on the same stored rows, and the matrix filters against a brute-force filter of those rows.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

import hrbench_client as hc
from hrbench.records import Row
from hrbench.stats import compare, report
from tests._benches import CLUSTERS, mock_spec, run
from tests._slow import slow
from tests.server._daemon import Daemon


@pytest.fixture(scope="module")
def benches(shared_daemon: Daemon) -> Iterator[tuple[Daemon, str, str]]:
    with shared_daemon.client() as c:
        first = run(c, mock_spec("mock-view-first"))
        second = run(c, mock_spec("mock-view-second", flaky={0: 5, 3: 4}))
    yield shared_daemon, first, second


def lib_rows(c: hc.Client, bench_id: str) -> list[Row]:
    wire = c.rows(bench_id).rows
    return [msgspec.convert(msgspec.to_builtins(r), Row) for r in wire]


def test_list_searches_names_and_reports_best_arm(benches: tuple[Daemon, str, str]) -> None:
    d, first, second = benches
    with d.client() as c:
        listed = c.benchmarks()
        ids = [b.id for b in listed]
        assert ids.index(second) < ids.index(first)  # newest first
        one = next(b for b in listed if b.id == first)
        assert (one.name, one.status, one.arms, one.n_items, one.runs) == (
            "mock-view-first",
            "done",
            ["steady", "flaky", "same"],
            11,
            5,
        )
        assert one.rows == one.total == 3 * 11 * 5
        summary = {s["arm"]: s["accuracy"] for s in c.report(first)["arms"]}  # type: ignore[index]
        assert one.best_accuracy == max(summary.values()) and summary[one.best_arm] == one.best_accuracy
        assert [b.id for b in c.benchmarks(search="VIEW-SECOND")] == [second]
        assert [b.id for b in c.benchmarks(search=first[:10])] == [first]
        assert c.benchmarks(search="no benchmark is called this") == []


def test_view_numbers_are_the_reports(benches: tuple[Daemon, str, str]) -> None:
    d, first, _ = benches
    with d.client() as c:
        rows = lib_rows(c, first)
        traces = c.rows(first, traces=True).traces
        view = c.view(first)
    rep = report(rows, traces=traces)
    assert view.descriptive is False and view.against == "steady"
    assert view.report is not None and view.report["arms"] == msgspec.to_builtins(rep)["arms"]
    for arm, lib in zip(view.arms, rep.arms, strict=True):
        assert (arm.arm, arm.accuracy, arm.ci_low, arm.ci_high, arm.n_runs, arm.usd, arm.usd_list) == (
            lib.arm,
            lib.accuracy,
            lib.ci_low,
            lib.ci_high,
            lib.n_runs,
            lib.usd,
            lib.usd_list,
        )
        mine = [r for r in rows if r.arm == arm.arm]
        assert arm.tokens_in == sum(r.tokens_in for r in mine)
        assert arm.seconds == pytest.approx(sum(r.seconds for r in mine))
        assert sum(arm.failures.values()) == lib.failures
    assert view.arms[1].failures == {"wrong": rep.arms[1].wrong}
    by_pair = {(x.arm_a, x.arm_b): x for x in rep.comparisons}
    assert [x.arm for x in view.differences] == ["flaky", "same"]
    for diff in view.differences:
        lib_c = by_pair[("steady", diff.arm)]  # report() compares (steady, other): flipped here
        assert diff.diff == pytest.approx(-lib_c.diff)
        assert (diff.ci_low, diff.ci_high) == pytest.approx((-lib_c.ci_high, -lib_c.ci_low))
        assert (diff.p_value, diff.p_holm) == (lib_c.p_value, lib_c.p_holm)


@pytest.mark.parametrize("against", ["steady", "flaky", "same"])
def test_differences_against_each_arm_mirror_each_other(
    benches: tuple[Daemon, str, str], against: str
) -> None:
    d, first, _ = benches
    with d.client() as c:
        view = c.view(first, against)
        for diff in view.differences:
            back = next(x for x in c.view(first, diff.arm).differences if x.arm == against)
            assert back.diff == pytest.approx(-diff.diff)  # type: ignore[operator]
            assert back.p_holm == diff.p_holm
    assert {x.arm for x in view.differences} == {"steady", "flaky", "same"} - {against}
    assert all(x.against == against for x in view.differences)


FILTERS: list[dict[str, Any]] = [
    {},
    {"disagree": True},
    {"cluster": "c0"},
    {"cluster": "c3", "disagree": True},
    {"split": "dev"},
    {"failure_kind": "wrong"},
    {"failure_kind": "wrong", "disagree": True, "split": "test"},
    {"cluster": "no-such-cluster"},
]


@pytest.mark.parametrize(
    "filters", FILTERS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "none"
)
def test_matrix_filters_match_a_brute_force(
    benches: tuple[Daemon, str, str], filters: dict[str, Any]
) -> None:
    d, first, _ = benches
    with d.client() as c:
        rows = lib_rows(c, first)
        m = c.matrix(first, **filters)
    arms = ["steady", "flaky", "same"]
    expected = []
    for item in dict.fromkeys(r.item for r in rows):
        mine = [r for r in rows if r.item == item]
        means = []
        for arm in arms:
            runs = [r.correct for r in mine if r.arm == arm and r.correct is not None]
            means.append(sum(runs) / len(runs) if runs else None)
        disagree = len({x for x in means if x is not None}) > 1
        kinds = {r.failure_kind for r in mine} - {None}
        if filters.get("disagree") and not disagree:
            continue
        if "cluster" in filters and CLUSTERS[item] != filters["cluster"]:
            continue
        if "split" in filters and mine[0].split != filters["split"]:
            continue
        if "failure_kind" in filters and filters["failure_kind"] not in kinds:
            continue
        expected.append((item, means, disagree))
    assert m.arms == arms and m.n_items_total == 11 and m.n_items == len(expected)
    got = [(i.item, [None if x is None else x.mean for x in i.cells], i.disagree) for i in m.items]
    assert got == expected
    assert m.clusters == sorted(set(CLUSTERS.values())) and m.splits == ["dev", "test"]


def test_matrix_pages(benches: tuple[Daemon, str, str]) -> None:
    d, first, _ = benches
    with d.client() as c:
        whole = [i.item for i in c.matrix(first).items]
        for offset, limit in itertools.product((0, 3, 10, 12), (1, 4, None)):
            page = c.matrix(first, offset=offset, limit=limit)
            assert [i.item for i in page.items] == whole[offset : None if limit is None else offset + limit]
            assert page.n_items == len(whole)


def test_cell_has_every_run_with_trace_and_a_working_command(
    benches: tuple[Daemon, str, str], tmp_path: Path
) -> None:
    d = benches[0]
    spec = mock_spec("with-calls")
    spec["arms"].append({"kind": "prompt", "name": "ask", "template": "{item}?"})
    spec["client"] = {
        "kind": "mock",
        "replies": {"question 2?": "no"},
        "default": "maybe",
        "model": "no-price",
    }
    with d.client() as c:
        first = run(c, spec)
        cell = c.cell(first, "q2", "ask")
        rows = [r for r in c.rows(first).rows if r.item == "q2" and r.arm == "ask"]
        assert [x.row.outcome for x in c.cell(first, "q3", "ask").runs] == ["maybe"] * 5
        unpriced = c.view(first).arms[-1]  # a mock model has no price: USD is NA, as in report()
        assert (unpriced.arm, unpriced.usd, unpriced.usd_unpriced, unpriced.usd_list) == (
            "ask",
            None,
            50,
            None,
        )
    assert [x.row for x in cell.runs] == sorted(rows, key=lambda r: r.run)
    assert [x.row.draw_index for x in cell.runs] == [1, 2, 3, 4, 5]
    assert [(x.row.outcome, x.row.correct) for x in cell.runs] == [("no", True)] * 5
    assert (cell.payload, cell.label, cell.cluster, cell.split) == ("question 2", "no", "c1", "test")
    for x in cell.runs:
        step, note = x.trace  # the request, then the arm's output (hrb rows' output column)
        assert (note.kind, note.source, note.text) == ("note", "output", "no")
        assert step.ledger_id == x.row.ledger_id and step.draw_index == x.row.draw_index
        assert step.messages == [{"role": "user", "content": "question 2?"}] and step.text == "no"
        assert step.source == "live"
    assert cell.command == f"hrb rows {first} --traces --item q2 --arm ask"
    out = subprocess.run(
        [sys.executable, "-m", "hrbench_client.cli", "--home", str(d.home), *cell.command.split()[1:]],
        capture_output=True,
        text=True,
        check=True,
        timeout=slow(60),
    )
    printed = [msgspec.json.decode(line) for line in out.stdout.splitlines()]
    assert [(x["item"], x["arm"], x["run"]) for x in printed] == [("q2", "ask", r) for r in range(1, 6)]
    assert all(x["trace"] for x in printed)


def test_compare_two_benchmarks_per_arm(benches: tuple[Daemon, str, str]) -> None:
    d, first, second = benches
    with d.client() as c:
        res = c.compare_benchmarks(first, second)
        both = [msgspec.structs.replace(r, arm=f"a:{r.arm}") for r in lib_rows(c, first)] + [
            msgspec.structs.replace(r, arm=f"b:{r.arm}") for r in lib_rows(c, second)
        ]
    assert res.a.id == first and res.b.id == second and res.only_a == res.only_b == []
    assert [x.arm for x in res.differences] == ["steady", "flaky", "same"]
    for diff in res.differences:
        lib = compare(both, f"b:{diff.arm}", f"a:{diff.arm}")
        assert (diff.diff, diff.ci_low, diff.ci_high, diff.p_value) == (
            lib.diff,
            lib.ci_low,
            lib.ci_high,
            lib.p_value,
        )
    assert res.differences[0].diff == 0.0 and res.differences[1].diff != 0.0
    p = sorted(x.p_value for x in res.differences if x.p_value is not None)
    assert min(x.p_holm for x in res.differences if x.p_holm is not None) == pytest.approx(
        min(1.0, len(p) * p[0])
    )


def test_bad_reads_are_named_and_the_daemon_lives(benches: tuple[Daemon, str, str]) -> None:
    d, first, _ = benches
    with d.client() as c:
        with pytest.raises(hc.NotFound, match="nope"):
            c.view("nope")
        with pytest.raises(hc.NotFound, match="'q2'"):
            c.cell(first, "q2", "no-such-arm")
        with pytest.raises(hc.ConfigError, match="against.*'zzz'"):
            c.view(first, "zzz")
        with pytest.raises(hc.InvalidParams, match="level"):
            c.view(first, level=1.5)
        with pytest.raises(hc.InvalidParams, match="offset"):
            c.matrix(first, offset=-1)
        with pytest.raises(hc.InvalidParams, match="colour"):
            c.call("benchmark/matrix", {"id": first, "colour": "red"})
        arms = [{"kind": "outputs", "name": a["name"], "outputs": {"1": "y"}} for a in mock_spec()["arms"]]
        other = run(
            c, {**mock_spec("other-ref"), "reference": {"items": ["x"], "labels": ["y"]}, "arms": arms}
        )
        with pytest.raises(hc.ConfigError, match="does not share the reference"):
            c.compare_benchmarks(first, other)
        assert c.status().pid == d.proc.pid  # type: ignore[union-attr]


def test_squad_runs_view_is_descriptive_only(shared_daemon: Daemon, data: Path) -> None:
    from tests._benches import squad_spec

    with shared_daemon.client() as c:
        stream = c.benchmark(squad_spec(data))
        list(stream)
        assert stream.result is not None
        bench_id = stream.result.id
        view = c.view(bench_id)
        rows = lib_rows(c, bench_id)
        m = c.matrix(bench_id, disagree=True)
    rep = report(rows, descriptive=True)
    assert view.descriptive and view.note.startswith("Descriptive") and view.note == rep.note
    assert [a.accuracy for a in view.arms] == [a.accuracy for a in rep.arms]
    assert len(view.differences) == 3 and all(x.descriptive for x in view.differences)
    assert view.benchmark.n_items == 50 and 0 < m.n_items < 50
    # the spec's metrics (SQuAD v2.0 EM and F1) come from the stored summary
    assert [a.metrics for a in view.arms] == [s.metrics for s in stream.result.summary]
    assert all(
        len(a.metrics) == 3 and all(v is not None for v in a.metrics.values()) for a in view.arms
    )  # squad_em, squad_f1, answer_contains


def test_a_running_benchmark_shows_progress_and_spend_against_its_cap(shared_daemon: Daemon) -> None:
    spec = mock_spec("slow-one")
    spec["arms"] = [{"kind": "prompt", "name": "ask", "template": "{item}?"}]
    # 0.2 s a call: still running after 12 rows and a first `view` (which loads the report's
    # modules, 2-3 s on a loaded machine; at 0.05 s a call the 55 rows were done by then)
    spec["client"] = {"kind": "mock", "reply": "yes", "delay_s": 0.2}
    spec["concurrency"] = 1
    spec["governor"] = {"max_usd": 5.0, "max_calls": 1000}
    spec["cache"] = False
    notes: list[Any] = []
    with shared_daemon.client() as c, shared_daemon.client() as other:
        stream = c.benchmark(spec, on_progress=lambda done, total: notes.append(stream.progress))
        rows = iter(stream)
        for _ in range(12):
            next(rows)
        (listed,) = other.benchmarks(search="slow-one")
        assert listed.status == "running" and 0 < listed.rows < listed.total == 55
        assert (listed.max_usd, listed.max_calls) == (5.0, 1000)
        assert other.view(listed.id).benchmark.status == "running"
        stream.close()  # cancels: the rows so far are kept
    assert notes and all(n.max_usd == 5.0 and n.max_calls == 1000 and n.usd == 0.0 for n in notes)
    assert [n.done for n in notes] == sorted(n.done for n in notes) and notes[-1].calls >= notes[0].calls
    with shared_daemon.client() as c:
        (after,) = c.benchmarks(search="slow-one")
    assert after.status == "cancelled" and after.calls is not None and after.calls >= 12
