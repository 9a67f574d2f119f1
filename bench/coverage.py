"""Coverage, false positives and power of hrbench's intervals, simulated, beside other tests.

Each design (hrbench.testing._designs: logit random effects for clusters and items shared by two
correlated arms, an arm x item effect each, and optionally an arm x cluster effect) is
simulated N times (default 2,000) at the level of per-item mean scores, and each benchmark goes
through the functions report() and compare() call (proportion_interval, difference_interval).
Every design is run under three nulls, one row each:

- "equal": the arms are equally good everywhere (arm b drawn at arm a's accuracy);
- "axc":   the arms differ cluster by cluster with no average difference (an arm x cluster effect
  of sd 0.3 on the logit scale, each arm its own): gains and losses that mirror each other; its
  alternative has the same effect;
- "skew":  arm a is a little better on 90% of clusters (0.15 on the logit scale) and much worse on
  10% (1.35), its accuracy still arm b's: equal on average, gains and losses that do not mirror
  each other; its alternative has the same skew. With G clusters, 0.9**G of the benchmarks hold
  no such bad cluster and look like a small real difference: no test on the data can tell them
  from one, so the false positives there rise above 0.05 with few clusters whatever the test
  (the verdict says how often none came up). bench/skew.py sets the skewness corrections of a t
  test beside hrbench's on these designs, and measures how many clusters the skewed null needs.

Printed per row:

- arm: coverage of arm a's 95% interval (target 0.935-0.965), its mean width, and the naive
  Wald interval over all runs as if independent;
- pair: coverage of the paired difference's 95% interval when the arms differ by `diff`;
- FPR: rejections at alpha 0.05 on the null benchmarks, by hrbench's test, the clustered t test
  and the exact cluster sign-flip test on the same benchmarks, and "<=5": the share of them in
  which 5 or fewer clusters hold any disagreement (where the report adds a note);
- power: rejections when the arms differ by `diff`, by the same three tests (with 10 or fewer
  clusters on three times the benchmarks, to bring their Monte Carlo error to 0.006); beside it
  what power() promises at the design's items, from the components stated (the model's own,
  computed without drawing runs, with the arms' accuracy and how much its clusters differ in
  difficulty, var_cluster_accuracy) and estimated from one pilot of the
  design (its clusters repeated to about 2,000, 5 runs per item at least); with 10 or fewer
  clusters power() simulates compare()'s own test on benchmarks drawn from those components;
  from the pilot (two arms, nothing stated), with up to 100 clusters, on benchmarks resampled from
  the pilot's own clusters; in a "skew" row the stated promise is shown in brackets and not
  judged (summary numbers cannot tell a skewed spread from a symmetric one: power() assumes it
  symmetric);
- verdict: "ok", or what fails by the rules below.

The rules (hrbench.testing.verdict): coverage within 0.935-0.965; FPR at most 0.065
under both nulls, always; FPR at least 0.035, or, where the test cannot reach it, power at
least that of both the clustered t test and the sign-flip test minus two Monte Carlo errors;
no interval of zero width; power() within 0.03 of the simulated power, both ways (under the
skew, from the pilot only).

Why a floor on power rather than on the FPR: hrbench's paired test is model-based (it leans on
Student's t over the clusters' spread), not a randomisation test. Near the ceiling with few
clusters (10 clusters of 3 items at accuracy 0.97) most null benchmarks hold disagreement in a
handful of clusters and the test rejects less than 5% of the time; it is not thereby weak,
which the power beside the t and sign-flip tests shows. The sign-flip test is exact whatever
the distribution, but with G clusters its p-value is at least 2 / 2**G, so with 5 or fewer
clusters it can never reject at 0.05.

A design whose true accuracy is 1 (all correct) covers trivially (any interval reaching 1
does); its row shows the interval's width, which must not be 0. Its two arms are identical
(every run right), so no test can reject: its FPR and power are "n/a". The design right on every
run but for clusters that fail whole (each with chance 0.05: true accuracy 0.95) must cover at
least 0.935: most of its benchmarks show no failure at all, and an interval sized on the items
([0.975, 1] for 200 items in 10 clusters) missed there.

Then: designs sized by power() itself (target 0.80), the simulated power at that size; 2- and
3-cluster benchmarks checked for intervals of zero width and p-values below 1e-12; and the
cluster bootstrap (report(..., method="bootstrap")) on some designs, with fewer benchmarks and
500 resamples: it is not the default and under-covers with few clusters.

Ends with the rows that fail, if any; with --strict it then exits 1 (make bench runs it without,
so that the scripts after it still run).

Usage: .venv/bin/python bench/coverage.py [N] [--quick] [--strict] [--sized-only] [--no-bootstrap] [--only NAME[,NAME...]]
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from typing import Any

import numpy as np

from hrbench.stats import difference_interval, power, proportion_interval
from hrbench.stats._intervals import _DIFF, _UNIT, _boot_summary, _boot_totals, _compact
from hrbench.stats._wilson import _t_sf
from hrbench.testing import (
    ARM_X_CLUSTER_SD,
    DESIGNS,
    Design,
    check,
    promised_power,
    rows_for,
    simulate,
    stated_components,
    verdict,
)


def run_row(
    d: Design, label: str, n: int, seed: int, quick: bool
) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """One row: the simulation, power()'s promises and the verdict."""
    # with 10 or fewer clusters, three times the benchmarks for the powers: power() is judged
    # within 0.03 there, where the Monte Carlo error of 2,000 alone is 0.010
    r = check(d, n, seed, n_power=3 * n if len(d.sizes) <= 10 else None)
    promised: dict[str, float] = {}
    if d.diff:
        promised["stated"] = promised_power(d, seed + 7)
        if not quick or d.n_items <= 200 or d.skew:
            promised["pilot"] = promised_power(d, seed + 11, pilot=True)
    # stated components cannot say that the arms' differences are skewed (power() assumes them
    # symmetric, and says so): under the skew only the pilot's promise is judged
    judged = {k: v for k, v in promised.items() if not (d.skew and k == "stated")}
    return r, promised, verdict(r, n, judged)


def _clean_part(r: dict[str, float]) -> str:
    """How much of a skewed null's FPR comes from benchmarks holding no skewed cluster (a real shift to the data)."""
    clean = r["clean"]
    rate = r["fpr_clean"] / clean if clean else 0.0
    room = max(0.065 - (r["fpr"] - r["fpr_clean"]), 0.0) / clean if clean else 1.0
    return (
        f"no skewed cluster in {clean:.2f} of them, {r['fpr_clean']:.3f} of the FPR from those (t {r['fpr_t_clean']:.3f}, "
        f"s-f {r['fpr_sf_clean']:.3f}): they reject {rate:.3f} of them, as they would a real shift; with the rest "
        f"as it is, 0.065 needs a test rejecting such a shift at most {room:.3f} of the time"
    )


def _f(r: dict[str, float], key: str, na: str = "-") -> str:
    return f"{r[key]:.3f}" if key in r else na


def _stated(promised: dict[str, float], skew: float, na: str) -> str:
    """The stated promise; in brackets under a skew, where it is shown but not judged."""
    return f"({promised['stated']:.3f})" if skew and "stated" in promised else _f(promised, "stated", na)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quick = "--quick" in sys.argv
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    if only:
        args = [a for a in args if a != only]
    n = int(args[0]) if args else (300 if quick else 2000)
    print(
        f"{n} simulated benchmarks per row; 95% intervals, alpha 0.05; hrb = hrbench's test, t = clustered t "
        "test, s-f = exact cluster sign-flip test; naive = every run iid"
    )
    print(
        "  hrbench:   proportion_interval and difference_interval (what report() and compare() call) on each "
        "simulated benchmark's per-item means\n  baselines: the naive Wald interval, the clustered t test and "
        "the sign-flip test on the same benchmarks; the truth the design drew them from\n"
    )
    head = (
        f"{'design':24} {'null':5} | {'arm cov':>7} {'naive':>6} {'width':>6} | {'pair cov':>8} | "
        f"{'FPR hrb':>7} {'t':>6} {'s-f':>6} {'<=5':>5} | {'power':>6} {'t':>6} {'s-f':>6} | "
        f"{'stated':>7} {'pilot':>6} | verdict"
    )
    print(head)
    print("-" * len(head))
    start = time.perf_counter()
    failures: list[str] = []
    rows = 0
    for i, design in enumerate(DESIGNS if "--sized-only" not in sys.argv else []):
        if only and not any(x in design.name for x in only.split(",")):
            continue
        for j, (label, d) in enumerate(rows_for(design)):
            r, promised, bad = run_row(d, label, n, 1000 + 10 * i + j, quick)
            if label == "skew" and any(b.startswith("fpr") for b in bad):
                bad = [f"{b} ({_clean_part(r)})" if b.startswith("fpr") else b for b in bad]
            rows += 1
            na = "n/a" if d.accuracy >= 1.0 else "-"
            print(
                f"{design.name:24} {label:5} | {_f(r, 'arm_cover'):>7} {_f(r, 'arm_naive'):>6} {_f(r, 'arm_width'):>6} | "
                f"{_f(r, 'pair_cover', na):>8} | {_f(r, 'fpr', na):>7} {_f(r, 'fpr_t', na):>6} {_f(r, 'fpr_sf', na):>6} "
                f"{_f(r, 'few_disagree', na)[1:] if 'few_disagree' in r else na:>5} | {_f(r, 'power', na):>6} "
                f"{_f(r, 'power_t', na):>6} {_f(r, 'power_sf', na):>6} | "
                f"{_stated(promised, d.skew, na):>7} {_f(promised, 'pilot', na):>6} | {'; '.join(bad) or 'ok'}",
                flush=True,
            )
            failures += [f"{design.name} ({label}): {b}" for b in bad]
    if "--sized-only" not in sys.argv and not only:
        failures += few_clusters_check(n, quick)
    if not only:
        sized(n, quick)
    if "--no-bootstrap" not in sys.argv and not only:
        bootstrap_table(n)
    se = (0.95 * 0.05 / n) ** 0.5
    print(
        f"\nMonte Carlo standard error of a coverage near 0.95: {se:.4f}; of an FPR near 0.05: {se:.4f}. "
        f"{time.perf_counter() - start:.0f} s."
    )
    if failures:
        print(f"\n{len(failures)} failure(s):")
        for f in failures:
            print(f"  {f}")
        if "--strict" in sys.argv:
            sys.exit(1)
        return
    print(f"\nEvery row passes ({rows} rows).")


def few_clusters_check(n: int, quick: bool) -> list[str]:
    """No interval of zero width and no p-value below 1e-12 in 2- and 3-cluster benchmarks."""
    count = max(100, n // 2) if quick else 1000
    bad: list[str] = []
    print(f"\n2- and 3-cluster benchmarks ({count} of each design, both nulls and the alternative):")
    for i, d in enumerate(x for x in DESIGNS if len(x.sizes) <= 3):
        rng = np.random.default_rng(6000 + i)
        g, n_g = d.cluster, len(d.sizes)
        total = d.n_items * d.runs
        widths, ps = [], []
        for sd_ac, diff in ((0.0, d.diff), (0.0, 0.0), (ARM_X_CLUSTER_SD, 0.0)):
            sim = simulate(replace(d, sd_arm_cluster=sd_ac), count, rng, diff=diff)
            for s in range(count):
                for y in (sim.ya[s], sim.yb[s]):
                    iv = proportion_interval(y, g, n_g, 0.95, total)
                    widths.append(iv.high - iv.low)
                dv = difference_interval(sim.ya[s], sim.yb[s], g, n_g, 0.95, total)
                widths.append(dv.high - dv.low)
                ps.append(dv.p_value)
        w, p = min(widths), min(ps)
        ok = w > 1e-9 and p >= 1e-12
        print(
            f"  {d.name:24} {len(widths)} intervals, narrowest {w:.4f}; {len(ps)} p-values, smallest {p:.2e}: {'ok' if ok else 'FAIL'}"
        )
        if not ok:
            bad.append(f"{d.name}: narrowest interval {w:.3g}, smallest p {p:.3g}")
    return bad


def sized(n: int, quick: bool) -> None:
    """Designs sized by power() itself (target 0.80): the simulated power at that size."""
    print("\nDesigns sized by power() (target 0.80 at alpha 0.05) from its stated components, in whole")
    print("clusters of the design's size; simulated power of hrbench's test at that size:")
    for i, d in enumerate([DESIGNS[2], DESIGNS[3], DESIGNS[1], DESIGNS[10]]):
        m = d.sizes[0]
        c = stated_components(d, 3000 + i)
        stated: dict[str, Any] = dict(
            var_within=c["var_within"],
            var_between=c["var_between"],
            var_cluster=c["var_cluster"],
            var_cluster_accuracy=c["var_cluster_accuracy"],
            runs=d.runs,
            items_per_cluster=m,
            accuracy=d.accuracy - d.diff / 2,
        )
        plan = power(d.diff, **stated)
        g = plan.n_clusters
        at_whole = power(d.diff, **stated, n_items=g * m).achieved  # the promise at whole clusters
        big = replace(d, name=f"{d.name} -> {g} clusters", sizes=(m,) * g)
        sim = check(big, max(200, n // 2) if quick else n, seed=4000 + i)["power"]
        print(
            f"  {big.name:40} needs {plan.n_items:>4} items; at {g * m:>4} items power() promises "
            f"{at_whole:.3f}, simulated {sim:.3f}",
            flush=True,
        )


def bootstrap_table(n: int) -> None:
    nb = max(100, n // 4)
    print(f"\nCluster bootstrap ({nb} benchmarks per design, 500 resamples), beside the default method:")
    print(f"  {'design':24} {'arm cov':>7} {'default':>7} | {'pair cov':>8} {'default':>7} | {'FPR':>6}")
    for i, d in enumerate(x for x in DESIGNS if x.diff and len(x.sizes) > 3):
        b = bootstrap_check(d, nb, seed=5000 + i)
        print(
            f"  {d.name:24} {b['arm_cover']:>7.3f} {b['arm_default']:>7.3f} | {b['pair_cover']:>8.3f} "
            f"{b['pair_default']:>7.3f} | {b['fpr']:>6.3f}",
            flush=True,
        )


def bootstrap_check(d: Design, n: int, seed: int, n_boot: int = 500, level: float = 0.95) -> dict[str, float]:
    """Coverage and FPR of the cluster bootstrap, report()'s and compare()'s code path on item means.

    As in hrbench.stats.report and comparisons: clusters resampled with replacement, the
    percentile interval (kept Wilson's/MOVER's when every resample agrees), the p-value on t with
    the bootstrap standard error and the design's df.
    """
    rng = np.random.default_rng(seed)
    g, n_g = _compact(d.cluster)
    total = float(d.n_items * d.runs)
    alt, null = simulate(d, n, rng), simulate(d, n, rng, diff=0.0)
    ones = np.ones(d.n_items)
    out: dict[str, list[bool]] = {
        k: [] for k in ("arm_cover", "arm_default", "pair_cover", "pair_default", "fpr")
    }
    for s in range(n):
        iv = proportion_interval(alt.ya[s], g, n_g, level, total)
        tot = _boot_totals(np.column_stack([alt.ya[s], ones]), g, n_g, rng, n_boot)
        se, lo, hi = _boot_summary(tot[:, 0] / tot[:, 1], level, _UNIT)
        lo, hi = (lo, hi) if se > 0 else (iv.low, iv.high)
        out["arm_cover"].append(lo <= alt.truth_a <= hi)
        out["arm_default"].append(iv.low <= alt.truth_a <= iv.high)
        for sim, key in ((alt, "pair"), (null, "fpr")):
            dv = difference_interval(sim.ya[s], sim.yb[s], g, n_g, level, total)
            dd = sim.ya[s] - sim.yb[s]
            tot = _boot_totals(np.column_stack([dd, ones]), g, n_g, rng, n_boot)
            b_se, b_lo, b_hi = _boot_summary(tot[:, 0] / tot[:, 1], level, _DIFF)
            diff = float(dd.mean())
            if b_se > 0:
                lo, hi = b_lo, b_hi
                p = 2 * _t_sf(abs(diff) / b_se, dv.df) if diff else 1.0
            else:
                lo, hi, p = dv.low, dv.high, dv.p_value
            if key == "pair":
                truth = sim.truth_a - sim.truth_b
                out["pair_cover"].append(lo <= truth <= hi)
                out["pair_default"].append(dv.low <= truth <= dv.high)
            else:
                out["fpr"].append(p < 1 - level)
    return {k: float(np.mean(v)) for k, v in out.items()}


if __name__ == "__main__":
    main()
