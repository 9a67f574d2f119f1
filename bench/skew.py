"""Skewness corrections of compare()'s paired test, simulated on every design of bench/coverage.py.

Under the "skew" null (arm a a little better on 90% of clusters, much worse on 10%, equal on
average) compare()'s test rejects more than 0.065 on some designs. This script sets beside it,
on the same simulated benchmarks, the established corrections of a t test for a skewed mean,
each on the clusters' paired differences (hrbench.testing._oracles):

- t:        the clustered t test (CR2 standard error, the design's df), the uncorrected baseline;
- johnson:  Johnson's (1978) modified t, t + s/6 + s t**2 / 3 (s: the mean's estimated skewness;
            0 with 2 clusters, where it cannot be estimated);
- hall:     Hall's (1992) monotone transformation of it, with the interval it inverts to;
- boot-t:   the cluster bootstrap-t (studentized) interval and its p-value (199 resamples; none
            with 2 clusters);
- hrb&hall: compare()'s test and Hall's both rejecting (the hull of the two intervals).

Per design and null (equal, axc, skew, as bench/coverage.py): the false-positive rate at 0.05,
the paired interval's coverage and the power at the design's difference, and for the skew row the
share of null benchmarks holding no skewed cluster ("clean": 0.9**G, to the data a real shift,
which no test on them can tell from one). A method's cell is marked "*" where it breaks the rules
of bench/coverage.py (hrbench.testing.verdict: FPR above 0.065; coverage outside 0.935-0.965; FPR
below 0.035 with power under the t and sign-flip tests' less two Monte Carlo errors).

With --many, the same on 30-50 clusters of 20-40 items (MANY). Then, with --clusters, the skew null's FPR of compare()'s test as the clusters grow, for three
cluster shapes: the fewest clusters at which it holds 0.065.

Usage: .venv/bin/python bench/skew.py [N] [--only NAME[,NAME...]] [--nulls skew,...] [--many] [--clusters [--seed S]] [--boot B]
(--only none --clusters: the clusters alone)
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace

import numpy as np
from scipy.special import stdtrit

from hrbench.stats import difference_interval
from hrbench.testing import DESIGNS, Design, rows_for, simulate
from hrbench.testing._designs import SKEW, verdict
from hrbench.testing._oracles import bootstrap_t, clustered_t_p, hall_t, johnson_t_p, sign_flip_p, skewed_t

METHODS = ("hrb", "t", "johnson", "hall", "boot-t", "hrb&hall")


def _tests(
    ya: np.ndarray, yb: np.ndarray, d: Design, rng: np.random.Generator, n_boot: int
) -> dict[str, tuple]:
    """Each method's ``(low, high, p)`` on one benchmark (Johnson's test has the t interval: it is not monotone)."""
    g, n_g = d.cluster, len(d.sizes)
    dd = ya - yb
    dv = difference_interval(ya, yb, g, n_g, 0.95, d.n_items * d.runs)
    assert dv.low is not None and dv.high is not None and dv.p_value is not None
    parts = skewed_t(dd, g, n_g)  # None: no spread, where the t test does not reject
    if parts is None:
        t_iv: tuple = (-1.0, 1.0, 1.0)
    else:
        half = float(stdtrit(parts.df, 0.975)) * parts.se
        t_iv = (parts.est - half, parts.est + half, clustered_t_p(dd, g, n_g))
    h = hall_t(dd, g, n_g)
    return {
        "hrb": (dv.low, dv.high, dv.p_value),
        "t": t_iv,
        "johnson": (t_iv[0], t_iv[1], johnson_t_p(dd, g, n_g)),
        "hall": h,
        "boot-t": bootstrap_t(dd, g, n_g, rng, n_boot),
        "hrb&hall": (min(dv.low, h[0]), max(dv.high, h[1]), max(dv.p_value, h[2])),
        "sf": (0.0, 0.0, sign_flip_p(np.rint(dd * d.runs), g, n_g)),
    }


def run_row(d: Design, n: int, seed: int, n_boot: int) -> dict[str, dict[str, float]]:
    """FPR, pair coverage and power of each method on ``n`` null and ``n`` alternative benchmarks of ``d``."""
    rng = np.random.default_rng(seed)
    alt, null = simulate(d, n, rng), simulate(d, n, rng, diff=0.0)
    keys = (*METHODS, "sf")
    fpr = {k: 0 for k in keys}
    power = {k: 0 for k in keys}
    cover = {k: 0 for k in keys}
    truth = alt.truth_a - alt.truth_b
    for s in range(n):
        for k, (_, _, p) in _tests(null.ya[s], null.yb[s], d, rng, n_boot).items():
            fpr[k] += p < 0.05
        for k, (lo, hi, p) in _tests(alt.ya[s], alt.yb[s], d, rng, n_boot).items():
            power[k] += p < 0.05
            cover[k] += lo <= truth <= hi
    clean = float(np.mean(null.extra["skewed_clusters"] == 0)) if d.skew else 0.0
    return {
        k: {"fpr": fpr[k] / n, "pair_cover": cover[k] / n, "power": power[k] / n, "clean": clean}
        for k in keys
    }


def _judged(r: dict[str, dict[str, float]], k: str, n: int) -> list[str]:
    """What breaks the rules of bench/coverage.py for method ``k`` (power floors from the t and sign-flip tests)."""
    row = dict(r[k], power_t=r["t"]["power"], power_sf=r["sf"]["power"])
    return verdict(row, n)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opt = {
        a: sys.argv[i + 1]
        for i, a in enumerate(sys.argv[:-1])
        if a in ("--only", "--nulls", "--boot", "--seed")
    }
    args = [a for a in args if a not in opt.values()]
    n = int(args[0]) if args else 1000
    n_boot = int(opt.get("--boot", 199))
    only = opt["--only"].split(",") if "--only" in opt else None
    nulls = opt["--nulls"].split(",") if "--nulls" in opt else None
    print(f"{n} simulated benchmarks per row (null and alternative each); alpha 0.05; 95% intervals; ")
    print("each method: FPR / pair coverage / power; * where it breaks bench/coverage.py's rules\n")
    head = f"{'design':24} {'null':5} {'clean':>5} | " + " | ".join(f"{m:^19}" for m in METHODS)
    print(head)
    print("-" * len(head))
    start = time.perf_counter()
    for i, design in enumerate(DESIGNS):
        if design.accuracy >= 1.0 or not design.diff or (only and not any(x in design.name for x in only)):
            continue
        for j, (label, d) in enumerate(rows_for(design)):
            if nulls and label not in nulls:
                continue
            r = run_row(d, n, 1000 + 10 * i + j, n_boot)
            cells = []
            for k in METHODS:
                bad = "*" if _judged(r, k, n) else " "
                cells.append(f"{r[k]['fpr']:.3f} {r[k]['pair_cover']:.3f} {r[k]['power']:.3f}{bad}")
            clean = f"{r['hrb']['clean']:.2f}" if d.skew else "-"
            print(f"{design.name:24} {label:5} {clean:>5} | " + " | ".join(cells), flush=True)
    if "--many" in sys.argv:
        many_clusters(n, n_boot)
    if "--clusters" in sys.argv:
        fewest_clusters(n, int(opt.get("--seed", 7000)))
    print(f"\n{time.perf_counter() - start:.0f} s.")


MANY = (
    (Design("30x40x5", (40,) * 30, 5, 0.7, diff=0.03), 9000),
    (Design("50x40x5", (40,) * 50, 5, 0.7, diff=0.03), 9001),
    (Design("40x20x5 strong cluster", (20,) * 40, 5, 0.7, diff=0.04, sd_cluster=1.5), 9002),
)
"""Designs of 30-50 clusters, where a skewness estimate has clusters to rest on (``--many``), with their seeds."""


def many_clusters(n: int, n_boot: int) -> None:
    """The methods on :data:`MANY` under the skew and equal nulls (the row's seed serves both)."""
    print("\nMany clusters (--many):")
    for d, seed in MANY:
        for label, dd in (("skew", replace(d, skew=SKEW)), ("equal", d)):
            r = run_row(dd, n, seed, n_boot)
            cells = [
                f"{r[k]['fpr']:.3f} {r[k]['pair_cover']:.3f} {r[k]['power']:.3f}{'*' if _judged(r, k, n) else ' '}"
                for k in METHODS
            ]
            clean = f"{r['hrb']['clean']:.2f}" if dd.skew else "-"
            print(f"{d.name:24} {label:5} {clean:>5} | " + " | ".join(cells), flush=True)


SHAPES = (
    ("of 40 items, 5 runs", Design("", (40,), 5, 0.7)),
    ("of 20 items, strong cluster", Design("", (20,), 5, 0.7, sd_cluster=1.5)),
    ("of 10 items, 5 runs", Design("", (10,), 5, 0.7)),
)


def fewest_clusters(n: int, seed: int, counts: tuple[int, ...] = (5, 10, 15, 20, 25, 30, 40, 50, 60)) -> None:
    """The skew null's FPR of compare()'s test and the t test as the clusters grow, per cluster shape (seeds ``seed + G``)."""
    print("\nThe skew null as the clusters grow: FPR of compare()'s test (t test), and the share of it from")
    print("benchmarks holding no skewed cluster (clean: 0.9**G of them)")
    for name, shape in SHAPES:
        cells = []
        for g in counts:
            d = replace(shape, sizes=shape.sizes * g, skew=SKEW)
            rng = np.random.default_rng(seed + g)
            sim = simulate(d, n, rng, diff=0.0)
            tot = d.n_items * d.runs
            rej = np.array(
                [
                    difference_interval(sim.ya[s], sim.yb[s], d.cluster, g, 0.95, tot).p_value < 0.05
                    for s in range(n)
                ]
            )
            rej_t = np.array([clustered_t_p(sim.ya[s] - sim.yb[s], d.cluster, g) < 0.05 for s in range(n)])
            clean = sim.extra["skewed_clusters"] == 0
            mark = "*" if rej.mean() > 0.065 else " "
            cells.append(f"{g}: {rej.mean():.3f}{mark}({rej_t.mean():.3f}, clean {np.mean(rej & clean):.3f})")
        print(f"  {name:28} " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
