"""Stop when sure, simulated: false stops and clusters spent, beside the fixed design.

For each design (hrbench.testing._designs: logit random effects for clusters and items shared by
correlated arms, an arm x item effect each, optionally an arm x cluster effect or a skewed one),
the fixed design is power()'s plan (80% power at alpha 0.05, from the design's stated
components and cluster sizes) of ``n`` clusters. N benchmarks (default 2,000) of ``4 n``
clusters are drawn and the sequential test looks after every cluster through the array
functions hrbench.stats.SequentialTest calls (hrbench.stats._sequential_math), tuned
by the same StopWhenSure.params() and margin_for(). Printed per design and configuration:

- FS: false stops (a better arm declared) by 4 n under three nulls: "eq" (arms equally good
  everywhere), "axc" (an arm x cluster effect of sd 0.3 each: gains and losses that mirror each
  other) and "skew" (arm a better by 0.15 on the logit on 90% of clusters and worse by 1.35 on
  10%, its accuracy still arm b's: equal on average, gains and losses that do not mirror);
- EN: the mean clusters run, over n, with max_clusters = 2 n, at 0 (EN0: equal arms; EN0o: the
  more of the two other nulls), 0.5, 1 and 2 times the planned difference; P(ok): the better arm
  decided by 2 n at 1x; cover: the smallest share of benchmarks whose confidence sequence held
  the truth at every look (default method).

Configurations: the default (StopWhenSure(plan=plan): the symmetric test, the margin 1.75 times
the plan's difference), other methods when asked (--methods), and the fixed design (compare()'s
own test on the first n clusters, vectorised: its false positive rate under each null and its
power; it runs n clusters, 1.00). The designs: equal clusters, lognormal cluster sizes, a
skewed null, plans of 3-5 clusters, ties (near the ceiling most clusters hold no
disagreement), k = 3 and 5 arms (every pair, decided by the closed step-down; one arm better by the multiple, the
rest equal; the fixed design is power() at alpha / pairs, Bonferroni), and an uneven design for
order="informative": 70% of its clusters easy (both arms all but always right), 30% hard, the
history two earlier benchmarks of two other arms on the same reference (a right history) or the
same spreads on clusters shuffled (a wrong one).

Targets (PASS/FAIL): false stops <= 0.05 (every configuration, null and design; the
informative order with a right and a wrong history); wrong-direction stops <= 0.005; for the
default: EN at 0 (equal arms) <= 1.0, at 0.5x <= 1.3, at 1x <= 1.35, at 2x <= 0.8, P(ok) >= the
fixed design's simulated power - 0.05 (with k arms: every lead pair decided, beside the fixed
design's tests of them all), coverage >= 0.94; for the informative order on the uneven design: EN at
1x <= 0.6; for the fixed design: false positives <= 0.065 (printed with the share of
benchmarks in which no skewed cluster came up, 0.9 ** n: no test on the data can tell those
from a real difference).

Usage: .venv/bin/python bench/sequential.py [N] [--quick] [--strict] [--only NAME[,NAME...]] [--methods auto,exact,asymptotic,strict]

Ends with the targets missed, if any; with --strict it then exits 1 (make bench runs it without,
so that the scripts after it still run, as bench/coverage.py does).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _common, when loaded from its file
from _common import verdict  # noqa: E402

from hrbench.stats import StopWhenSure, draw_probabilities, power, scale, weighted_order
from hrbench.stats import _sequential_math as sm
from hrbench.stats._power_sim import _rejects
from hrbench.testing import (
    ARM_X_CLUSTER_SD,
    SKEW_SHARE,
    Design,
    lognormal_sizes,
    simulate,
    stated_components,
)
from hrbench.testing._designs import _solve_mu

SKEW = 0.15
"""The skewed null's logit advantage on 90% of clusters (its loss on 10%: 9 times it)."""

DESIGNS: list[tuple[str, Design]] = [
    ("equal clusters", Design("50x10x5", (10,) * 50, 5, 0.7, diff=0.04)),
    ("equal clusters", Design("20x20x5 strong cluster", (20,) * 20, 5, 0.7, diff=0.05, sd_cluster=1.5)),
    ("equal clusters", Design("10x10x5", (10,) * 10, 5, 0.7, diff=0.06)),
    ("lognormal sizes", Design("40 lognormal 1-40 items", lognormal_sizes(40, 8, 0.8, 1), 5, 0.7, diff=0.05)),
    (
        "lognormal sizes",
        Design("20 lognormal 1-60 items", lognormal_sizes(20, 10, 1.0, 3), 5, 0.8, diff=0.06),
    ),
    ("skewed null", Design("30x10x5 skewed", (10,) * 30, 5, 0.7, diff=0.05, skew=SKEW)),
    ("3-5 clusters", Design("4x30x5 few clusters", (30,) * 4, 5, 0.7, diff=0.15)),
    ("3-5 clusters", Design("5x40x5 few clusters", (40,) * 5, 5, 0.6, diff=0.12)),
    ("ties", Design("20x10x5 @0.95 near ceiling", (10,) * 20, 5, 0.95, diff=0.03)),
    ("ties", Design("30x5x5 @0.92 near ceiling", (5,) * 30, 5, 0.92, diff=0.04)),
]
K_ARMS = [
    (3, Design("3 arms 20x10x5", (10,) * 20, 5, 0.7, diff=0.06)),
    (5, Design("5 arms 20x10x5", (10,) * 20, 5, 0.7, diff=0.06)),
]
UNEVEN = Design("uneven 70% easy 40x10x5", (10,) * 40, 5, 0.85, diff=0.04)
EASY_SHARE, EASY_SHIFT = (
    0.7,
    6.0,
)  # the uneven design: this share of clusters shifted up (all but always right)
MULTIPLES = (0.5, 1.0, 2.0)
METHODS = ("auto",)
TARGETS = {
    "false_stop": 0.05,
    "wrong_dir": 0.005,
    "cover": 0.94,
    "power_slack": 0.05,
    "en_0": 1.0,
    "en_half": 1.3,
    "en_1x": 1.35,
    "en_2x": 0.8,
    "en_informative": 0.6,
    "fixed_fpr": 0.065,
}


@dataclass
class Path:
    """Each sequence's first stop: the look (``inf``: none by the cap), how, and coverage."""

    tau: np.ndarray
    kind: np.ndarray  # +1 / -1: arm a / arm b decided better; 2: within the margin; 0: none
    covered: np.ndarray


def plan_for(d: Design, seed: int, alpha: float = 0.05) -> Any:
    """power()'s fixed plan for ``d`` from its stated components and cluster sizes."""
    c = stated_components(replace(d, skew=0.0), seed, clusters=1000, items=100)
    return power(
        d.diff,
        alpha,
        var_within=c["var_within"],
        var_between=c["var_between"],
        var_cluster=c["var_cluster"],
        runs=d.runs,
        items_per_cluster=float(np.mean(d.sizes)),
        accuracy=d.accuracy - d.diff / 2,
        cluster_sizes=d.sizes,
    )


def tiled(d: Design, g: int, rng: np.random.Generator) -> Design:
    """``d`` with ``g`` clusters: its sizes repeated and shuffled."""
    sizes = np.resize(np.asarray(d.sizes), g)
    return replace(d, sizes=tuple(int(x) for x in rng.permutation(sizes)))


def cluster_means(d: Design, items: np.ndarray) -> np.ndarray:
    """Per-cluster means of per-item values ``items`` (..., n_items) of design ``d``."""
    sizes = np.asarray(d.sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return np.add.reduceat(items, starts, axis=-1) / sizes


def null_design(d: Design, null: str) -> Design:
    """``d`` under a null: "eq" (no arm x cluster effect, no skew), "axc" or "skew"."""
    if null == "axc":
        return replace(d, sd_arm_cluster=d.sd_arm_cluster or ARM_X_CLUSTER_SD, skew=0.0)
    if null == "skew":
        return replace(d, sd_arm_cluster=0.0, skew=d.skew or SKEW)
    return replace(d, sd_arm_cluster=0.0, skew=0.0)


# ---------------------------------------------------------------------------------------------
# looking after every cluster


def _over(acc: sm.Acc, p: sm.Params) -> Any:
    """Where the e-process against candidate differences ``mu`` (shape (..., k)) reaches the threshold."""
    if p.method == "symmetric":
        return sm._symmetric_over(acc, p)

    def exact(mu: np.ndarray) -> np.ndarray:
        s = acc["s"][..., None] - mu * acc["sw"][..., None]
        v = np.maximum(
            acc["v"][..., None] - 2.0 * mu * acc["q"][..., None] + mu * mu * acc["sw2"][..., None], 0.0
        )
        return sm.log_e_mixture(s, v, p.rho) >= p.log_threshold

    return exact


def inside(acc: sm.Acc, p: sm.Params, rule: StopWhenSure, rows: np.ndarray, n_pairs: int = 1) -> np.ndarray:
    """For the rows ``rows`` (a boolean mask), whether SequentialTest settles the pair within the margin.

    As SequentialTest decides it. One pair: the confidence sequence within +-margin and the
    difference seen within margin / 3.5; the symmetric and exact sequences invert their
    e-processes, so inside exactly when the e-process against -margin and against +margin both
    reach the threshold (the rows near 0 only are tried). Several pairs: the function it calls
    (hrbench.stats._sequential_math.within_margin, two one-sided tests), with the difference
    seen within rule.near_for(n_pairs).
    """
    margin, near = rule.margin_for(), rule.near_for(n_pairs)
    if margin is None or near is None:
        return np.zeros(rows.shape, dtype=bool)
    if n_pairs > 1:
        return sm.within_margin(acc, p, margin, near, rows)
    mu = sm.mean(acc)
    out = np.zeros(mu.shape, dtype=bool)
    rows = rows & (np.abs(mu) <= near)
    if not rows.any():
        return out
    if p.method in ("asymptotic", "strict", "wor"):
        lo, hi = sm.cs(acc, p)
        return rows & (lo > -margin) & (hi < margin)
    sub = {k: v[rows] for k, v in acc.items()}
    ends = np.stack([np.full(int(rows.sum()), -margin), np.full(int(rows.sum()), margin)], axis=-1)
    out[rows] = _over(sub, p)(ends).all(axis=-1)
    return out


def run_paths(
    dd: np.ndarray, w: np.ndarray, p: sm.Params, rule: StopWhenSure, cap: int, truth: Any = None
) -> Path:
    """Look after every cluster up to ``cap``, as SequentialTest does, vectorised over the rows of ``dd``.

    ``dd``: (N, G) cluster mean differences in the order run; ``w``: their weights, (G,) or (N, G).
    A row stops at its first decision (a better arm, or the margin); ``truth`` (a number or one per
    row) is checked against the confidence sequence at every look from ``min_clusters`` on.
    """
    n, g = dd.shape
    w = np.broadcast_to(w, dd.shape)
    margin = rule.margin_for()
    acc = sm.new_acc(p, (n,))
    shifted = sm.new_acc(p, (n,)) if p.method == "symmetric" and truth is not None else None
    tau, kind = np.full(n, np.inf), np.zeros(n)
    covered = np.ones(n, dtype=bool)
    for t in range(min(g, cap)):
        sm.update(acc, p, dd[:, t], w[:, t])
        open_ = np.isinf(tau)
        hit = sm.sure(acc, p, t + 1, rule.min_clusters) & open_
        tau[hit], kind[hit] = t + 1, np.sign(sm.mean(acc))[hit]
        if margin is not None and t + 1 >= rule.min_clusters:
            eq = inside(acc, p, rule, open_ & ~hit)
            tau[eq], kind[eq] = t + 1, 2
        if truth is not None and t + 1 >= rule.min_clusters:
            if shifted is not None:
                sm.update(shifted, p, dd[:, t] - truth, w[:, t])
                covered &= sm.log_e(shifted, p) < p.log_threshold
            else:
                lo, hi = sm.cs(acc, p)
                covered &= (lo <= truth + 1e-12) & (truth - 1e-12 <= hi)
        elif shifted is not None:
            sm.update(shifted, p, dd[:, t] - truth, w[:, t])
        if not np.isinf(tau).any() and truth is None:
            break
    return Path(tau, kind, covered)


# ---------------------------------------------------------------------------------------------
# two arms


def draw(
    d: Design, n: int, g: int, rng: np.random.Generator, diff: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """``n`` benchmarks of ``g`` clusters of ``d``: cluster mean differences (n, g), item differences, truth."""
    sim = simulate(d, n, rng, diff=diff)
    items = sim.ya - sim.yb
    return cluster_means(d, items), items, sim.truth_a - sim.truth_b


def fixed_rejects(d: Design, items: np.ndarray, n_g: int, alpha: float = 0.05) -> np.ndarray:
    """compare()'s test (vectorised) on the first ``n_g`` clusters of each benchmark: rejects, signed."""
    sizes = np.asarray(d.sizes)[:n_g]
    k = int(sizes.sum())
    g = np.repeat(np.arange(n_g), sizes)
    part = items[:, :k]
    rej = _rejects(part, g, n_g, alpha, float(k * d.runs))
    return rej * np.sign(part.mean(axis=1))


def two_arm_design(
    kind: str, d: Design, n: int, seed: int, methods: tuple[str, ...]
) -> tuple[list[str], list[str]]:
    """Every configuration of a two-arm design: printed lines and failures."""
    rng = np.random.default_rng(seed)
    plan = plan_for(d, seed)
    g = int(plan.n_clusters)
    big = tiled(d, 4 * g, np.random.default_rng(seed + 1))
    sizes = np.asarray(big.sizes, dtype=float)
    w = sizes / sizes.mean()
    alt = replace(big, skew=0.0) if kind != "skewed null" else big
    data = {null: draw(null_design(big, null), n, 4 * g, rng, 0.0) for null in ("eq", "axc", "skew")}
    data |= {f"{m}x": draw(alt, n, 4 * g, rng, m * d.diff) for m in MULTIPLES}
    lines, bad = [], []
    fixed_power = float(np.mean(fixed_rejects(big, data["1.0x"][1], g) > 0))  # the fixed design's, simulated
    for m in methods:
        rule = StopWhenSure(method=m, plan=plan, max_clusters=2 * g)
        p = rule.params(1, sizes)
        fs = {k: run_paths(data[k][0], w, p, rule, 4 * g) for k in ("eq", "axc", "skew")}
        runs = {
            k: run_paths(data[k][0], w, p, rule, 2 * g, data[k][2] if m == "auto" else None) for k in data
        }
        line, miss = _judge(d, kind, m, g, fixed_power, fs, runs, p.method)
        lines.append(line)
        bad += miss
    lines.append(_fixed_line(big, d.name, g, float(plan.achieved), data, bad))
    return lines, bad


def _judge(
    d: Design,
    kind: str,
    m: str,
    g: int,
    fixed_power: float,
    fs: dict[str, Path],
    runs: dict[str, Path],
    chosen: str,
) -> tuple[str, list[str]]:
    bad = []
    stops = {k: float(np.mean(np.isfinite(v.tau) & (np.abs(v.kind) == 1))) for k, v in fs.items()}
    en = {k: float(np.mean(np.minimum(v.tau, 2 * g))) / g for k, v in runs.items()}
    en0, en0_other = en["eq"], max(en["axc"], en["skew"])
    wrong = max(float(np.mean(runs[f"{x}x"].kind == -1)) for x in MULTIPLES)
    correct = float(np.mean(runs["1.0x"].kind == 1))
    cover = min(float(np.mean(v.covered)) for v in runs.values())
    label = f"{m}:{chosen[:4]}" if m == "auto" else m
    for k, v in stops.items():
        if v > TARGETS["false_stop"]:
            bad.append(f"{d.name} {label}: false stops ({k}) {v:.3f} > {TARGETS['false_stop']}")
    if wrong > TARGETS["wrong_dir"]:
        bad.append(f"{d.name} {label}: wrong-direction stops {wrong:.4f} > {TARGETS['wrong_dir']}")
    if m == "auto":
        checks = [
            (en0, "en_0", "EN at 0"),
            (en["0.5x"], "en_half", "EN at 0.5x"),
            (en["1.0x"], "en_1x", "EN at 1x"),
            (en["2.0x"], "en_2x", "EN at 2x"),
        ]
        bad += [
            f"{d.name} {label}: {what} {v:.2f} > {TARGETS[key]}"
            for v, key, what in checks
            if v > TARGETS[key]
        ]
        if correct < fixed_power - TARGETS["power_slack"]:
            bad.append(f"{d.name} {label}: P(ok) {correct:.3f} < the fixed design's {fixed_power:.3f} - 0.05")
        if cover < TARGETS["cover"]:
            bad.append(f"{d.name} {label}: uniform coverage {cover:.3f} < {TARGETS['cover']}")
    line = (
        f"  {d.name:28} {kind:15} {label:12} {g:>4} | {stops['eq']:>6.3f} {stops['axc']:>6.3f} {stops['skew']:>6.3f} | "
        f"{en0:>5.2f} {en0_other:>5.2f} {en['0.5x']:>5.2f} {en['1.0x']:>5.2f} {en['2.0x']:>5.2f} | {correct:>6.3f} | "
        f"{cover:>6.3f}"
    )
    return line, bad


def _fixed_line(big: Design, name: str, g: int, promised: float, data: dict[str, Any], bad: list[str]) -> str:
    """The fixed design of ``g`` clusters: compare()'s false positives under each null and its power at 1x."""
    fpr = {k: float(np.mean(fixed_rejects(big, data[k][1], g) != 0)) for k in ("eq", "axc", "skew")}
    power_1x = float(np.mean(fixed_rejects(big, data["1.0x"][1], g) > 0))
    unseen = (1 - SKEW_SHARE) ** g
    for k, v in fpr.items():
        if v > TARGETS["fixed_fpr"]:
            bad.append(
                f"{name} fixed: false positives ({k}) {v:.3f} > {TARGETS['fixed_fpr']}"
                + (f" (no skewed cluster in {unseen:.2f} of benchmarks)" if k == "skew" else "")
            )
    return (
        f"  {name:28} {'':15} {'fixed':12} {g:>4} | {fpr['eq']:>6.3f} {fpr['axc']:>6.3f} {fpr['skew']:>6.3f} | "
        f"{1.0:>5.2f} {1.0:>5.2f} {1.0:>5.2f} {1.0:>5.2f} {1.0:>5.2f} | {power_1x:>6.3f} | promised {promised:.3f}; "
        f"no skewed cluster in {unseen:.2f}"
    )


# ---------------------------------------------------------------------------------------------
# k arms


def k_arm_means(d: Design, k: int, n: int, rng: np.random.Generator, lead: float) -> np.ndarray:
    """``n`` benchmarks of ``k`` arms on ``d``: per-item mean scores (n, k, items); arm 0 ahead by ``lead``."""
    from scipy.special import expit

    u = rng.normal(0.0, d.sd_cluster, (n, len(d.sizes)))[:, d.cluster]
    v = rng.normal(0.0, d.sd_item, (n, d.n_items))
    out = []
    for arm in range(k):
        mu = _solve_mu(d.accuracy if arm == 0 else d.accuracy - lead, d.sd)
        own = rng.normal(0.0, d.sd_arm_item, (n, d.n_items))
        out.append(rng.binomial(d.runs, expit(mu + u + v + own)) / d.runs)
    return np.stack(out, axis=1)


def k_arm_design(k: int, d: Design, n: int, seed: int) -> tuple[list[str], list[str]]:
    """k arms, every pair of interest: false stops under equal arms, clusters spent when arm 0 leads."""
    rng = np.random.default_rng(seed)
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    plan = plan_for(d, seed, alpha=0.05 / len(pairs))
    g = int(plan.n_clusters)
    big = tiled(d, 4 * g, np.random.default_rng(seed + 1))
    sizes = np.asarray(big.sizes, dtype=float)
    rule = StopWhenSure(plan=plan, max_clusters=2 * g)
    p = rule.params(len(pairs), sizes)
    w = sizes / sizes.mean()
    out: dict[str, tuple[float, float, float]] = {}
    fixed: dict[str, float] = {}
    for m in (0.0, *MULTIPLES):
        y = k_arm_means(big, k, n, rng, m * d.diff)
        dd = np.stack([cluster_means(big, y[:, a] - y[:, b]) for a, b in pairs], axis=1)  # (n, pairs, G)
        acc = sm.new_acc(p, (n, len(pairs)))
        settled = np.zeros((n, len(pairs)), dtype=bool)
        kind = np.zeros((n, len(pairs)))
        tau = np.full(n, np.inf)
        cap = 4 * g if m == 0 else 2 * g
        for t in range(cap):
            on = ~settled
            sm.update(acc, p, np.where(on, dd[:, :, t], 0.0), np.where(on, w[t], 0.0))
            hit = sm.sure_closed(acc, p, t + 1, rule.min_clusters) & on
            kind[hit] = np.sign(sm.mean(acc))[hit]
            eq = inside(acc, p, rule, on & ~hit, len(pairs)) if t + 1 >= rule.min_clusters else hit & False
            kind[eq] = 2
            settled |= hit | eq
            done = settled.all(axis=1) & np.isinf(tau)
            tau[done] = t + 1
            if settled.all():
                break
        ranked = np.abs(kind) == 1
        if m == 0:
            out["fs"] = (float(np.mean(ranked.any(axis=1))), 0.0, 0.0)
        lead = [j for j, (a, _) in enumerate(pairs) if a == 0]
        ok = float(np.mean((kind[:, lead] == 1).all(axis=1)))
        wrong = float(np.mean(((kind == -1)[:, lead]).any(axis=1)))
        out[f"{m}x"] = (float(np.mean(np.minimum(tau, 2 * g))) / g, ok, wrong)
        rej = np.stack(
            [fixed_rejects(big, y[:, a] - y[:, b], g, 0.05 / len(pairs)) for a, b in pairs], axis=1
        )
        fixed[f"{m}x"] = (
            float((rej[:, lead] > 0).all(axis=1).mean()) if m else float((rej != 0).any(axis=1).mean())
        )
    bad = []
    fs = out["fs"][0]
    if fs > TARGETS["false_stop"]:
        bad.append(f"{d.name}: false stops {fs:.3f} > {TARGETS['false_stop']}")
    for key, limit in (("0.0x", "en_0"), ("0.5x", "en_half"), ("1.0x", "en_1x"), ("2.0x", "en_2x")):
        if out[key][0] > TARGETS[limit]:
            bad.append(f"{d.name} auto: EN at {key} {out[key][0]:.2f} > {TARGETS[limit]}")
    if out["1.0x"][1] < fixed["1.0x"] - TARGETS["power_slack"]:
        bad.append(
            f"{d.name} auto: P(ok) {out['1.0x'][1]:.3f} < the fixed design's {fixed['1.0x']:.3f} - 0.05"
        )
    if max(out[f"{x}x"][2] for x in MULTIPLES) > TARGETS["wrong_dir"]:
        bad.append(f"{d.name}: wrong-direction stops")
    line = (
        f"  {d.name:28} {f'k = {k} arms':15} {'auto:' + p.method[:4]:12} {g:>4} | {fs:>6.3f} {'-':>6} {'-':>6} | "
        f"{out['0.0x'][0]:>5.2f} {'-':>5} {out['0.5x'][0]:>5.2f} {out['1.0x'][0]:>5.2f} {out['2.0x'][0]:>5.2f} | "
        f"{out['1.0x'][1]:>6.3f} | {'-':>6}"
    )
    fixed_line = (
        f"  {d.name:28} {'':15} {'fixed':12} {g:>4} | {fixed['0.0x']:>6.3f} {'-':>6} {'-':>6} | "
        f"{1.0:>5.2f} {1.0:>5.2f} {1.0:>5.2f} {1.0:>5.2f} {1.0:>5.2f} | {fixed['1.0x']:>6.3f} | alpha / {len(pairs)} pairs"
    )
    return [line, fixed_line], bad


# ---------------------------------------------------------------------------------------------
# order="informative" on an uneven design


def _uneven_mu(accuracy: float, sd: float) -> float:
    """The logit mean whose arm has ``accuracy`` over the uneven design's easy and hard clusters."""
    from scipy.optimize import brentq

    from hrbench.testing._designs import _accuracy

    def acc(m: float) -> float:
        return (1 - EASY_SHARE) * _accuracy(m, sd) + EASY_SHARE * _accuracy(m + EASY_SHIFT, sd)

    return float(brentq(lambda m: acc(m) - accuracy, -40.0, 40.0, xtol=1e-12))


def uneven_reference(d: Design, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` references of ``d``: each cluster's shared logit effect (easy ones shifted up) and each item's."""
    easy = rng.random((n, len(d.sizes))) < EASY_SHARE
    u = rng.normal(0.0, d.sd_cluster, easy.shape) + np.where(easy, EASY_SHIFT, 0.0)
    return u[:, d.cluster], rng.normal(0.0, d.sd_item, (n, d.n_items))


def uneven_pair(
    d: Design, ref: tuple[np.ndarray, np.ndarray], rng: np.random.Generator, diff: float
) -> np.ndarray:
    """Two arms on the references ``ref``, arm a ahead by ``diff``: per-item differences of mean scores."""
    from scipy.special import expit

    u, v = ref
    out = []
    for acc in (d.accuracy, d.accuracy - diff):
        mu = _uneven_mu(acc, d.sd)
        own = rng.normal(0.0, d.sd_arm_item, u.shape)
        out.append(rng.binomial(d.runs, expit(mu + u + v + own)) / d.runs)
    return out[0] - out[1]


def uneven_plan(d: Design, seed: int) -> Any:
    """power()'s fixed plan for the uneven design (clusters drawn uniformly), from its true components."""
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    big = replace(d, sizes=(100,) * 2000)
    u, v = uneven_reference(big, 1, rng)
    p = [
        expit(_uneven_mu(acc, d.sd) + u[0] + v[0] + rng.normal(0.0, d.sd_arm_item, v.shape[1]))
        for acc in (d.accuracy, d.accuracy - d.diff)
    ]
    diff = (p[0] - p[1]).reshape(2000, 100)
    within = float(np.mean(p[0] * (1 - p[0]) + p[1] * (1 - p[1])))
    between = float(np.mean(diff.var(axis=1, ddof=1)))
    cluster = max(float(diff.mean(axis=1).var(ddof=1)) - between / 100, 0.0)
    return power(
        d.diff, var_within=within, var_between=between, var_cluster=cluster, runs=d.runs,
        items_per_cluster=float(np.mean(d.sizes)), accuracy=d.accuracy - d.diff / 2,
    )  # fmt: skip


def informative_weights(
    spread: np.ndarray, sizes: np.ndarray, seeds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per benchmark: the informative order (cluster indices) and each step's weight (size x inverse probability)."""
    g = sizes.size
    ids = [f"c{i:04d}" for i in range(g)]
    size_of = dict(zip(ids, sizes.tolist(), strict=True))
    orders = np.empty((spread.shape[0], g), dtype=np.intp)
    weights = np.empty((spread.shape[0], g))
    mean = sizes.mean()
    for r in range(spread.shape[0]):
        history = dict(zip(ids, spread[r].tolist(), strict=True))
        p = draw_probabilities(ids, size_of, history)
        order = [int(c[1:]) for c in weighted_order(ids, p, int(seeds[r]))]
        pr = np.array([p[ids[i]] for i in order])
        left = np.cumsum(pr[::-1])[::-1]  # the drawing weight of the clusters left at each step
        orders[r] = order
        weights[r] = sizes[order] / mean * left / ((g - np.arange(g)) * pr) * scale(p, size_of, history)
    return orders, weights


def informative_design(n: int, seed: int) -> tuple[list[str], list[str]]:
    """order="informative" on the uneven design, with a right and a wrong history, beside the uniform order."""
    d = UNEVEN
    rng = np.random.default_rng(seed)
    plan = uneven_plan(d, seed)
    g = int(plan.n_clusters)
    big = replace(d, sizes=(d.sizes[0],) * (4 * g))
    sizes = np.asarray(big.sizes, dtype=float)
    ref = uneven_reference(big, n, rng)
    # two earlier benchmarks of two other arms (equally good) on the same references: the RMS of
    # each cluster's item differences, as cluster_spread() reads it from stored rows
    earlier = [uneven_pair(big, ref, rng, 0.0) for _ in range(2)]
    history = np.sqrt(sum(cluster_means(big, e**2) for e in earlier) / len(earlier))
    wrong = rng.permuted(history, axis=1)  # another reference's: its spreads fall on the wrong clusters
    seeds = np.arange(n) + 1000 * seed
    rule = StopWhenSure(plan=plan, max_clusters=2 * g, order="informative", history={"x": 1.0})
    uniform_rule = StopWhenSure(plan=plan, max_clusters=2 * g)
    p = rule.params(1, sizes)
    lines, bad = [], []
    data = {m: cluster_means(big, uneven_pair(big, ref, rng, m * d.diff)) for m in (0.0, *MULTIPLES)}
    for label, hist in (("informative", history), ("wrong history", wrong)):
        order, w = informative_weights(hist, sizes, seeds)
        runs = {
            m: run_paths(np.take_along_axis(dd, order, axis=1), w, p, rule, 2 * g) for m, dd in data.items()
        }
        null = run_paths(np.take_along_axis(data[0.0], order, axis=1), w, p, rule, 4 * g)
        lines.append(_informative_line(d.name, label, g, null, runs, bad))
    w0 = sizes / sizes.mean()
    runs = {m: run_paths(dd, w0, p, uniform_rule, 2 * g) for m, dd in data.items()}
    null = run_paths(data[0.0], w0, p, uniform_rule, 4 * g)
    lines.append(_informative_line(d.name, "uniform", g, null, runs, []))
    return lines, bad


def _informative_line(
    name: str, label: str, g: int, null: Path, runs: dict[float, Path], bad: list[str]
) -> str:
    fs = float(np.mean(np.isfinite(null.tau) & (np.abs(null.kind) == 1)))
    en = {m: float(np.mean(np.minimum(v.tau, 2 * g))) / g for m, v in runs.items()}
    ok = float(np.mean(runs[1.0].kind == 1))
    if fs > TARGETS["false_stop"]:
        bad.append(f"{name} {label}: false stops {fs:.3f} > {TARGETS['false_stop']}")
    if label == "informative" and en[1.0] > TARGETS["en_informative"]:
        bad.append(f"{name} {label}: EN at 1x {en[1.0]:.2f} > {TARGETS['en_informative']}")
    return (
        f"  {name:28} {'uneven':15} {label:12} {g:>4} | {fs:>6.3f} {'-':>6} {'-':>6} | "
        f"{en[0.0]:>5.2f} {'-':>5} {en[0.5]:>5.2f} {en[1.0]:>5.2f} {en[2.0]:>5.2f} | {ok:>6.3f} | {'-':>6}"
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    methods = tuple(argv[argv.index("--methods") + 1].split(",")) if "--methods" in argv else METHODS
    skip = {only, ",".join(methods)}
    nums = [a for a in argv if not a.startswith("--") and a not in skip]
    n = int(nums[0]) if nums else (300 if quick else 2000)
    print(
        f"{n} simulated benchmarks per cell; alpha 0.05; n = the fixed design's clusters (power() at 0.80); "
        "false stops looked for up to 4 n, clusters run up to max_clusters = 2 n"
    )
    print(
        "  hrbench:  the sequential test (StopWhenSure, each method) looking after every cluster\n"
        "  baseline: the fixed design of n clusters power() plans at 80% power, and the truth the design "
        "drew each benchmark from\n"
    )
    head = (
        f"  {'design':28} {'kind':15} {'config':12} {'n':>4} | {'FS eq':>6} {'FS axc':>6} {'FS skw':>6} | "
        f"{'EN0':>5} {'EN0o':>5} {'EN.5x':>5} {'EN1x':>5} {'EN2x':>5} | {'P(ok)':>6} | {'cover':>6}"
    )
    print(head)
    print("  " + "-" * (len(head) - 2))
    start = time.perf_counter()
    failures: list[str] = []
    jobs: list[tuple[str, Any]] = [
        (d.name, lambda d=d, kind=kind, i=i: two_arm_design(kind, d, n, 7000 + 13 * i, methods))
        for i, (kind, d) in enumerate(DESIGNS)
    ]
    jobs += [
        (d.name, lambda k=k, d=d, i=i: k_arm_design(k, d, n, 8000 + 13 * i))
        for i, (k, d) in enumerate(K_ARMS)
    ]
    jobs.append((UNEVEN.name, lambda: informative_design(n, 9000)))
    for name, job in jobs:
        if only and not any(x in name for x in only.split(",")):
            continue
        lines, bad = job()
        for line in lines:
            print(line, flush=True)
        failures += bad
    print(
        f"\nFS: false stops by 4 n (for the fixed design: false positives of compare() on its n clusters); EN: "
        "mean clusters run (max_clusters 2 n) over n, at 0 (EN0: equal arms; EN0o: the more of the axc and skewed "
        "nulls), 0.5, 1 and 2 times the "
        "planned difference; P(ok): the better arm decided at 1x (the fixed design: its power); cover: the "
        f"smallest uniform coverage over the cells. {time.perf_counter() - start:.0f} s."
    )
    return verdict(failures, argv)


if __name__ == "__main__":
    sys.exit(main())
