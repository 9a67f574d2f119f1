"""`hrb bench --stop rank` on a loopback provider: a clear winner stops early, exits 0, and the report and view show it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401
from tests.view.conftest import View

pytestmark = pytest.mark.timeout(240)

N_CLUSTERS = 30
PER = 2  # items per cluster


@pytest.fixture(scope="module")
def srv() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        server.set(latency_s=0.01)
        yield server


def _spec(tmp_path: Path, srv: LoopbackServer, extra: str = "", n_clusters: int = N_CLUSTERS) -> Path:
    ids = [f"q{i}" for i in range(n_clusters * PER)]
    items = ", ".join(f'{i} = "[[reply:L{i}]] {i}"' for i in ids)
    labels = ", ".join(f'{i} = "L{i}"' for i in ids)
    clusters = ", ".join(f'{i} = "c{int(i[1:]) // PER:02d}"' for i in ids)
    spec = tmp_path / "stop.toml"
    spec.write_text(
        f"runs = 5\nconcurrency = 16\n{extra}\n"
        f"[reference]\nitems = {{{items}}}\nlabels = {{{labels}}}\ncluster = {{{clusters}}}\n"
        f'[client]\nkind = "openai"\nmodel = "loopback-1"\nbase_url = "{srv.base_url}"\nmax_tokens = 10\n'
        "price = {input = 1.0, output = 1.0}\n"
        '[[arms]]\nkind = "prompt"\nname = "good"\ntemplate = "{item}"\n'
        '[[arms]]\nkind = "prompt"\nname = "bad"\ntemplate = "[[reply:nope]] {item}"\n'
    )
    return spec


def test_a_clear_winner_stops_early_exits_0_and_the_report_and_view_show_the_stop(
    tmp_path: Path, srv: LoopbackServer
) -> None:
    proc = hrb(
        "bench",
        str(_spec(tmp_path, srv)),
        "--no-rows",
        "--stop",
        "rank",
        "--alpha",
        "0.05",
        "--stop-seed",
        "3",
    )
    result = lines(proc.stdout)[-1]
    full = N_CLUSTERS * PER * 2 * 5
    assert result["status"] == "done" and 0 < result["n_rows"] < full
    assert "Stopped when sure: good is better, after " in result["text"]
    bench_id = result["id"]
    rep = lines(hrb("report", bench_id).stdout)[-1]
    stop = rep["stop"]
    assert stop["reason"] == "decided" and stop["stopped_when_sure"] and stop["winner"] == "good"
    assert 2 <= stop["clusters"] < N_CLUSTERS and stop["of"] == N_CLUSTERS and stop["order_seed"] == 3
    assert stop["rows"] == result["n_rows"] and stop["full_rows"] == full
    (pair,) = stop["pairs"]
    assert (pair["a"], pair["b"], pair["decided"]) == ("good", "bad", "good") and pair["e_value"] >= 20
    assert stop["estimand"] == "clusters like these"
    # the fixed-sample interval and p are not shown; the arms' intervals are conditional
    (comp,) = rep["comparisons"]
    assert comp["p_value"] is None and comp["ci_low"] is None and "not valid" in comp["note"]
    assert all("conditional on the clusters run" in a["note"] for a in rep["arms"])
    assert all(a["n_items"] == stop["clusters"] * PER for a in rep["arms"])  # the committed clusters only
    text = hrb("report", bench_id, "--text").stdout
    assert f"after {stop['clusters']} of {N_CLUSTERS} clusters" in text and "anytime p" in text
    md = hrb("report", bench_id, "--format", "markdown").stdout
    assert "> **Stopped when sure: good is better" in md and "| confidence sequence |" in md
    # rows of clusters cancelled at the stop are stored, not reportable
    rows = lines(hrb("rows", bench_id).stdout)
    hidden = [r for r in rows if not r["reportable"]]
    assert len(hidden) == stop["unreported_rows"] and len(rows) == result["n_rows"]
    # the view's JSON, over HTTP, carries the stop; its page's script shows it
    view = View(Path(os.environ["HRBENCH_HOME"]))
    try:
        page = view.get(f"/api/benchmark/{bench_id}")
        assert page["report"]["stop"]["clusters"] == stop["clusters"]
        assert page["report"]["stop"]["pairs"][0]["e_value"] == pytest.approx(pair["e_value"])
        assert all(d["p_value"] is None for d in page["differences"])
        with view.opener.open(view.base + "/static/app.js", timeout=slow(30)) as r:
            assert b'id: "stopped-when-sure"' in r.read()
        with view.opener.open(view.base + f"/b/{bench_id}", timeout=slow(30)) as r:
            assert r.status == 200
    finally:
        view.stop()


def test_a_stop_rule_on_too_few_clusters_warns_on_stderr_and_its_report_keeps_the_fixed_p(
    tmp_path: Path, srv: LoopbackServer
) -> None:
    spec = str(_spec(tmp_path, srv, n_clusters=4))
    proc = hrb("bench", spec, "--no-rows", "--stop", "rank", "--stop-method", "symmetric")
    said = [ln for ln in proc.stderr.splitlines() if ln.startswith("hrb: warning: ")]
    few = [ln for ln in said if "StopFewClustersWarning" in ln]
    assert len(few) == 1 and "the reference has 4 cluster(s)" in few[0], proc.stderr
    assert "run without a stop rule and read the report's interval and p-value" in few[0]
    (never,) = [ln for ln in said if "StopUndecidableWarning" in ln]  # the symmetric test needs 5
    assert "the report then shows the fixed-sample interval and p, labelled" in never
    result = lines(proc.stdout)[-1]
    assert result["status"] == "done" and result["n_rows"] == 4 * PER * 2 * 5  # every cluster ran
    rep = lines(hrb("report", result["id"]).stdout)[-1]
    assert rep["stop"]["reason"] == "max_clusters" and rep["stop"]["fixed_valid"] is True
    (comp,) = rep["comparisons"]  # ran through: the fixed-sample interval and p, labelled
    assert comp["p_value"] is not None and comp["ci_low"] > 0 and "ran its most clusters" in comp["note"]


HARD = 8  # clusters c00-c07: arm B is wrong there, right elsewhere


def _uneven(prompt: str, seed: object, call: int) -> str:
    """Arm A ("A q<i>") always right; arm B ("B q<i>") wrong on the first HARD clusters."""
    arm, item = prompt.split()[-2:]
    n = int(item[1:])
    return "nope" if arm == "B" and n // PER < HARD else f"L{n}"


def _uneven_spec(tmp_path: Path, base_url: str) -> Path:
    ids = [f"q{i}" for i in range(N_CLUSTERS * PER)]
    items = ", ".join(f'{i} = "{i}"' for i in ids)
    labels = ", ".join(f'{i} = "L{i[1:]}"' for i in ids)
    clusters = ", ".join(f'{i} = "c{int(i[1:]) // PER:02d}"' for i in ids)
    spec = tmp_path / "uneven.toml"
    spec.write_text(
        f"runs = 5\nconcurrency = 16\n[reference]\nitems = {{{items}}}\nlabels = {{{labels}}}\n"
        f"cluster = {{{clusters}}}\n"
        f'[client]\nkind = "openai"\nmodel = "loopback-1"\nbase_url = "{base_url}"\nmax_tokens = 10\n'
        "[governor]\nmax_calls = 10000\n"
        '[[arms]]\nkind = "prompt"\nname = "a"\ntemplate = "A {item}"\n'
        '[[arms]]\nkind = "prompt"\nname = "b"\ntemplate = "B {item}"\n'
    )
    return spec


def test_the_informative_order_reads_the_history_of_the_reference_from_the_store(tmp_path: Path) -> None:
    with LoopbackServer(reply_fn=_uneven) as server:
        spec = str(_uneven_spec(tmp_path, server.base_url))
        flags = ("--no-rows", "--stop", "rank", "--stop-order", "informative", "--stop-seed", "4")
        # no earlier benchmark of this reference: the uniform order, as without the setting
        first = lines(hrb("bench", spec, *flags).stdout)[-1]
        assert lines(hrb("report", first["id"]).stdout)[-1]["stop"]["order"] == "uniform"
        hrb("bench", spec, "--no-rows")  # a full run: the history (arms differ on c00-c07 only)
        again = lines(hrb("bench", spec, *flags).stdout)[-1]
    stop = lines(hrb("report", again["id"]).stdout)[-1]["stop"]
    assert stop["order"] == "informative" and stop["order_seed"] == 4
    assert stop["reason"] == "decided" and stop["winner"] == "a" and stop["clusters"] < N_CLUSTERS
    assert (
        "clusters drawn with probabilities from earlier benchmarks"
        in hrb("report", again["id"], "--text").stdout
    )
    # the informative clusters come first: over half of those run where a uniform order has 8 in 30
    items = {r["item"] for r in lines(hrb("rows", again["id"]).stdout) if r["reportable"]}
    ran = {int(i[1:]) // PER for i in items}
    assert len(ran) == stop["clusters"] and len(ran & set(range(HARD))) > len(ran) / 2, sorted(ran)


@pytest.mark.usefixtures("shared_home")  # refusals only: its store stays empty
@pytest.mark.parametrize(
    ("extra", "flags", "said"),
    [
        ("[stop]\nalpah = 0.1\n", (), "alpah"),
        ("[stop]\nalpha = 2\n", (), "alpha"),
        (
            '[stop]\npairs = [["good", "nobody"]]\n',
            (),
            "stop.pairs: names an arm that is not in the benchmark ('nobody')",
        ),
        ("", ("--alpha", "0.01"), "--alpha set the stop rule: give --stop GOAL too"),
        (
            "",
            ("--stop", "rank", "--max-clusters", "1"),
            "stop.max_clusters: must be at least min_clusters (2)",
        ),
    ],
)
def test_a_bad_stop_setting_is_a_clear_error_and_the_daemon_lives_on(
    tmp_path: Path, srv: LoopbackServer, extra: str, flags: tuple[str, ...], said: str
) -> None:
    proc = hrb("bench", str(_spec(tmp_path, srv, extra)), "--no-rows", *flags, check_rc=None)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert said in proc.stderr, proc.stderr
    assert lines(hrb("ls").stdout) == []  # nothing was stored, and the daemon still answers


def test_a_resume_keeps_its_stored_rule_so_stop_flags_are_refused_with_it() -> None:
    proc = hrb("bench", "--resume", "abcd1234", "--stop", "rank", check_rc=2)
    assert "a resume continues the stored [stop] rule: leave out --stop and its flags" in proc.stderr


def test_the_stop_flags_are_in_the_help() -> None:
    out = hrb("bench", "--help").stdout
    for flag in (
        "--stop GOAL",
        "--alpha",
        "--tolerance",
        "--max-clusters N",
        "--stop-method",
        "--stop-seed N",
    ):
        assert flag in out


def test_the_few_clusters_warning_gives_the_earliest_of_the_test_that_runs(
    tmp_path: Path, srv: LoopbackServer
) -> None:
    """7 clusters: ``auto`` runs the asymptotic test, which can decide after ``min_clusters``; the warning says so."""
    proc = hrb("bench", str(_spec(tmp_path, srv, n_clusters=7)), "--no-rows", "--stop", "rank")
    (few,) = [ln for ln in proc.stderr.splitlines() if "StopFewClustersWarning" in ln]
    assert "the reference has 7 cluster(s)" in few
    assert "(its asymptotic test can decide a pair after 2 at the earliest)" in few, few
    result = lines(proc.stdout)[-1]
    rep = lines(hrb("report", result["id"]).stdout)[-1]
    assert rep["stop"]["reason"] == "decided" and rep["stop"]["method"] == "asymptotic"
    assert 2 <= rep["stop"]["clusters"] < 7
    text = hrb("report", result["id"], "--format", "text").stdout
    assert f"Stopped when sure: good is better, after {rep['stop']['clusters']} of 7 clusters" in text


def test_a_tolerance_stop_that_ran_to_max_clusters_reports_the_pair_it_decided(
    tmp_path: Path, srv: LoopbackServer
) -> None:
    """reason max_clusters, winner good: the report's first line says both, as the pair's line does."""
    spec = str(_spec(tmp_path, srv, n_clusters=8))
    args = ("--no-rows", "--stop", "tolerance", "--tolerance", "0.001", "--max-clusters", "6")
    result = lines(hrb("bench", spec, *args, "--stop-method", "symmetric").stdout)[-1]
    rep = lines(hrb("report", result["id"]).stdout)[-1]
    stop = rep["stop"]
    assert (stop["reason"], stop["winner"], stop["clusters"]) == ("max_clusters", "good", 6)
    head = (
        "Stopped at its most clusters before every difference was known within the tolerance, after 6 of 8 "
        "clusters"
    )
    assert stop["headline"].startswith(head) and "; good was decided better" in stop["headline"]
    text = hrb("report", result["id"], "--format", "text").stdout
    assert stop["headline"] in text and "Not decided" not in text and "; decided: good better" in text
    md = hrb("report", result["id"], "--format", "markdown").stdout
    assert f"> **{stop['headline']}**" in md
