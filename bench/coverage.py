"""Coverage, test size and power of hrbench's intervals, simulated, beside naive iid ones (issue 14).

Each design (hrbench.testing.designs: logit random effects for clusters and items shared by two
correlated arms, an arm x item effect each) is simulated N times (default 2,000) at the level
of per-item mean scores, and each benchmark goes through the same functions report() and
compare() call (proportion_interval, difference_interval). Printed per design:

- arm: coverage of arm a's 95% interval (target 0.935-0.965), its mean width, and the naive
  Wald interval over all runs as if independent;
- pair: coverage of the paired difference's 95% interval when the arms differ by `diff`, and
  the naive unpaired interval;
- FPR: rejections at alpha 0.05 when the arms are equally good (target 0.035-0.065), naive too,
  and "bound": the most any deterministic test valid under an arm x cluster effect could reject
  on the same null benchmarks (hrbench.testing.designs.fpr_bound: with k clusters in which
  the arms' data differ at all, floor(0.05 * 2**k) / 2**k);
- power: rejections when they differ by `diff`, against what power() promises for the design
  (noncentral t on clusters - 1 df, components from pilots of the design; target within
  0.03) and what the normal approximation (the old power()) promised.

Then designs sized by power() itself (5, 10 and 20-cluster families, target power 0.80) are
simulated: the power power() promised for the whole clusters run, against the simulated power.
The variance components come from pilots of the design (its clusters repeated, 5 runs per item
at least): the mean of power(bench=pilot)'s components over PILOTS pilots of 2,000 clusters
each. Under a strong cluster effect the design effect estimated from one pilot of 2,000
clusters varies by +-6%, and the promise at 0.83 by +-0.03 with it: that is pilot noise, not
power()'s reference distribution, which is what this checks.

At accuracy 0.97 on 10 clusters of 3 items the test is cautious (FPR about 0.02): in 63% of
the null benchmarks at most 4 clusters hold any disagreement, and no deterministic test valid
under an arm x cluster effect can reject there (swapping the arms inside any of those clusters
gives data just as likely under such a null, and 0.05 * 2**4 < 1). The "bound" column is that
ceiling, computed on the same null benchmarks: the FPR cannot reach 0.035 there without a
randomised p-value (which can call two arms that never disagree different) or assuming arms
never differ cluster by cluster.

A design whose true accuracy is 1 (all correct) covers trivially (any interval reaching 1
does); its rows show the interval's width, which must not be 0. Its two arms are identical
(every run right), so no test can reject: its FPR is shown as "n/a".

Last, the cluster bootstrap (report(..., method="bootstrap") and compare's) on some designs,
the same code path on the simulated item means (percentile interval; p on t with the
bootstrap standard error), with fewer benchmarks and 500 resamples: it is not the default and
under-covers with few clusters.

Usage: .venv/bin/python bench/coverage.py [N] [--quick] [--sized-only] [--no-bootstrap]
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import replace
from statistics import NormalDist

import numpy as np

from hrbench.stats import power
from hrbench.stats.intervals import (
    _DIFF,
    _UNIT,
    _boot_summary,
    _boot_totals,
    _compact,
    _sps,
    difference_interval,
    proportion_interval,
)
from hrbench.testing.designs import Design, arm_rows, check, simulate

PILOTS = 10  # pilots of 2,000 clusters each whose power components are averaged


def pilot_components(d: Design, seed: int, pilots: int) -> tuple[float, float, float]:
    """(var_within, var_between, design_effect) of a paired difference, averaged over pilots."""
    rng = np.random.default_rng(seed)
    m = d.n_items / len(d.sizes)
    got = []
    for _ in range(pilots):
        pilot = arm_rows(d, rng, copies=max(1, 2000 // len(d.sizes)), runs=max(d.runs, 5))
        plan = power(d.diff, bench=pilot, runs=d.runs, items_per_cluster=m)
        got.append((plan.var_within, plan.var_between, plan.design_effect))
    vw, vb, deff = np.mean(got, axis=0)
    return float(vw), float(vb), float(deff)


def promised(d: Design, comps: tuple[float, float, float], n_items: int) -> tuple[float, float]:
    """(power() at n_items, the normal approximation's power) for the design's difference."""
    vw, vb, deff = comps
    m = d.n_items / len(d.sizes)
    plan = power(
        d.diff,
        var_within=vw,
        var_between=vb,
        design_effect=deff,
        runs=d.runs,
        items_per_cluster=m,
        n_items=n_items,
    )
    ncp = abs(d.diff) / math.sqrt(deff * (vb + vw / d.runs) / n_items)
    z = NormalDist().inv_cdf(0.975)
    return plan.achieved, NormalDist().cdf(ncp - z) + NormalDist().cdf(-z - ncp)


UNEQUAL = tuple(int(x) for x in np.linspace(2, 40, 15).round())  # 15 clusters of 2-40 items

DESIGNS = [
    Design("50x10x5", (10,) * 50, 5, 0.7, diff=0.04),
    Design("20x20x5 strong cluster", (20,) * 20, 5, 0.7, diff=0.05, sd_cluster=1.5),
    Design("5x40x5", (40,) * 5, 5, 0.7, diff=0.06),
    Design("10x10x5", (10,) * 10, 5, 0.7, diff=0.06),
    Design("40x2x10", (2,) * 40, 10, 0.7, diff=0.08),
    Design("15 cl of 2-40 @0.90", UNEQUAL, 5, 0.9, diff=0.04),
    Design("25x8x1 descriptive", (8,) * 25, 1, 0.7, diff=0.1, descriptive=True),
    Design("10x3x5 @0.97", (3,) * 10, 5, 0.97, diff=0.05),
    Design("all correct, 5 items", (1,) * 5, 5, 1.0),
    Design("all correct, 30 items", (3,) * 10, 5, 1.0),
    Design("all correct, 300 items", (5,) * 60, 5, 1.0),
]


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quick = "--quick" in sys.argv
    n = int(args[0]) if args else (300 if quick else 2000)
    print(f"{n} simulated benchmarks per design; 95% intervals, alpha 0.05; naive = every run iid\n")
    head = (
        f"{'design':24} {'arm cov':>7} {'naive':>6} {'width':>6} | {'pair cov':>8} {'naive':>6} | "
        f"{'FPR':>6} {'naive':>6} {'bound':>6} | {'power':>6} {'power()':>7} {'normal':>6}"
    )
    print(head)
    print("-" * len(head))
    start = time.perf_counter()
    for i, d in enumerate(DESIGNS if "--sized-only" not in sys.argv else []):
        r = check(d, n, seed=1000 + i)
        pilots = 1 if quick else PILOTS
        plan = promised(d, pilot_components(d, 2000 + i, pilots), d.n_items) if d.diff else None
        if d.accuracy >= 1.0:  # both arms right on every run: identical, nothing to reject
            r.pop("fpr", None), r.pop("fpr_naive", None), r.pop("fpr_bound", None)

        def f(key: str, r: dict[str, float] = r) -> str:
            return f"{r[key]:.3f}" if key in r else ("n/a" if key.startswith("fpr") else "-")

        planned = "-" if plan is None else f"{plan[0]:.3f}"
        normal = "-" if plan is None else f"{plan[1]:.3f}"
        print(
            f"{d.name:24} {f('arm_cover'):>7} {f('arm_naive'):>6} {f('arm_width'):>6} | "
            f"{f('pair_cover'):>8} {f('pair_naive'):>6} | {f('fpr'):>6} {f('fpr_naive'):>6} {f('fpr_bound'):>6} | "
            f"{f('power'):>6} {planned:>7} {normal:>6}",
            flush=True,
        )
    print("\nDesigns sized by power() itself (target 0.80 at alpha 0.05), in whole clusters of the")
    print("design's size; the normal approximation's size beside it:")
    for i, d in enumerate([DESIGNS[2], DESIGNS[3], DESIGNS[1]]):
        m = d.sizes[0]
        vw, vb, deff = pilot_components(d, 3000 + i, 1 if quick else PILOTS)
        plan = power(
            d.diff, var_within=vw, var_between=vb, design_effect=deff, runs=d.runs, items_per_cluster=m
        )
        g = plan.n_clusters
        sized = replace(d, name=f"{d.name} -> {g} clusters", sizes=(m,) * g)
        sim = check(sized, n, seed=4000 + i)["power"]
        at, _ = promised(sized, (vw, vb, deff), g * m)
        z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
        normal_n = math.ceil(z * z * deff * (vb + vw / d.runs) / d.diff**2)
        print(
            f"  {sized.name:36} needs {plan.n_items:>4} items (normal approx. {normal_n:>4}); at {g * m:>4} "
            f"items power() promises {at:.3f}, simulated {sim:.3f}",
            flush=True,
        )
    if "--no-bootstrap" not in sys.argv:
        nb = max(100, n // 4)
        print(f"\nCluster bootstrap ({nb} benchmarks per design, 500 resamples), beside the default method:")
        print(f"  {'design':24} {'arm cov':>7} {'default':>7} | {'pair cov':>8} {'default':>7} | {'FPR':>6}")
        for i, d in enumerate(x for x in DESIGNS if x.diff):
            b = bootstrap_check(d, nb, seed=5000 + i)
            print(
                f"  {d.name:24} {b['arm_cover']:>7.3f} {b['arm_default']:>7.3f} | {b['pair_cover']:>8.3f} "
                f"{b['pair_default']:>7.3f} | {b['fpr']:>6.3f}",
                flush=True,
            )
    se = (0.95 * 0.05 / n) ** 0.5
    print(
        f"\nMonte Carlo standard error of a coverage near 0.95: {se:.4f}; of an FPR near 0.05: "
        f"{se:.4f}. {time.perf_counter() - start:.0f} s."
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
                p = 2 * float(_sps().t.sf(abs(diff) / b_se, dv.df)) if diff else 1.0
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
