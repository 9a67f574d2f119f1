"""Claims of a difference between equally good arms under a stop rule: the sequential decision and the fixed result after max_clusters.

A stop rule that runs to its most clusters (reason ``max_clusters``) has run a number of clusters
fixed before it began, and its report shows the fixed-sample interval and p-value over them. A
user who reads "X better" from the stop's decision, or from that fixed p below alpha, has been
told of a difference; under equal arms the chance of either is the error the user meets. This
script measures it for equal arms (no effect) with bench/sequential.py's designs and machinery
(the sequential test through hrbench.stats._sequential_math, as SequentialTest runs it; compare()'s
test on the clusters run, vectorised), for three rules on the same data:

- rank, no margin (``margin=0``): a pair stops only when decided, so it stops early under
  equal arms at most alpha of the time;
- rank with the plan's margin (the default with a plan): equal arms mostly stop early as "no
  difference larger than the margin";
- tolerance (``goal="tolerance"``, the tolerance 0.6 of the plan's difference): equal arms stop early
  once every confidence sequence is narrow enough; pairs decided on the way stay decided;
- rank with the plan's margin and ``max_clusters`` the plan's own clusters (not twice them):
  more benchmarks run to the end, and those are the ones whose difference looked larger.

Columns: ``seq`` the share of benchmarks in which the stop decided an arm better (by
max_clusters); ``through`` the share that ran to max_clusters; ``fix|thr`` compare()'s
significant results among those (with several pairs: Holm's, at alpha, on any pair); ``all
old`` the share told of a difference when the fixed result after max_clusters is read as a
decision (``seq`` or a ran-through fixed result), as the report once presented it, and ``+-``
its Monte Carlo standard error; ``all now`` the share the report presents as a decision now:
the stop's decisions only (the fixed design's interval and p after max_clusters are shown to
describe, :data:`hrbench.stats._stopped.RAN_THROUGH`). ``fixed`` is the fixed design of
max_clusters clusters alone.

Target (PASS/FAIL): ``all now`` <= alpha + 2 Monte Carlo standard errors (at alpha) in every cell.

Usage: .venv/bin/python bench/stop_claims.py [N] [--quick] [--strict] [--arms 2|5] [--skip RULE] [--rule RULE]
(RULE: a rule's label or its start, e.g. ``tolerance`` or ``rank``).
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sequential as seq  # noqa: E402  (bench/sequential.py: the designs and the looking)
from _common import verdict  # noqa: E402

from hrbench.stats import StopWhenSure  # noqa: E402
from hrbench.stats import _sequential_math as sm  # noqa: E402
from hrbench.testing import Design, lognormal_sizes  # noqa: E402

ALPHA = 0.05
TOLERANCE = 0.6
"""The tolerance goal's tolerance, in the plan's differences: equal arms then stop early about half the time."""
CHECK_EVERY = 3
"""The tolerance goal's precision is checked every this many looks and at the last (the symmetric confidence
sequence costs seconds per look; a sequence precise at one look is nearly always precise a few looks on)."""
DESIGNS: list[tuple[int, str, Design]] = [
    (2, "equal clusters", Design("2 arms 20x10x5", (10,) * 20, 5, 0.7, diff=0.06)),
    (
        2,
        "lognormal sizes",
        Design("2 arms 40 lognormal 1-40", lognormal_sizes(40, 8, 0.8, 1), 5, 0.7, diff=0.05),
    ),
    (5, "equal clusters", Design("5 arms 20x10x5", (10,) * 20, 5, 0.7, diff=0.06)),
    (
        5,
        "lognormal sizes",
        Design("5 arms 20 lognormal 1-60", lognormal_sizes(20, 10, 1.0, 3), 5, 0.8, diff=0.06),
    ),
]


def rules(plan: Any, cap: int) -> list[tuple[str, StopWhenSure]]:
    """The rules compared, each run to at most ``cap`` clusters (the last to the plan's own clusters)."""
    tolerance = TOLERANCE * float(plan.diff)
    return [
        ("rank, no margin", StopWhenSure(plan=plan, max_clusters=cap, margin=0)),
        ("rank, margin", StopWhenSure(plan=plan, max_clusters=cap)),
        ("tolerance", StopWhenSure(goal="tolerance", tolerance=tolerance, plan=plan, max_clusters=cap)),
        ("rank, margin, max n", StopWhenSure(plan=plan, max_clusters=int(plan.n_clusters))),
    ]


def look(
    dd: np.ndarray, w: np.ndarray, rule: StopWhenSure, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Run ``rule`` on cluster differences ``dd`` (N, pairs, G) as SequentialTest does.

    Returns per benchmark whether any pair was decided (by the stop) and whether it ran to
    ``max_clusters`` (= G) without stopping sooner.
    """
    n, k, g = dd.shape
    p = rule.params(k, sizes)
    tol = rule.tolerance
    acc = sm.new_acc(p, (n, k))
    decided = np.zeros((n, k), dtype=bool)
    settled = np.zeros((n, k), dtype=bool)
    stopped = np.zeros(n, dtype=bool)
    for t in range(g):
        on = ~settled & ~stopped[:, None]
        sm.update(acc, p, np.where(on, dd[:, :, t], 0.0), np.where(on, w[t], 0.0))
        hit = sm.sure_closed(acc, p, t + 1, rule.min_clusters) & on & ~decided
        decided |= hit
        if rule.goal == "tolerance":
            if t + 1 >= rule.min_clusters and (t % CHECK_EVERY == 0 or t + 1 == g):
                rows = on.any(axis=1)
                if rows.any():
                    lo, hi = sm.cs({key: v[rows] for key, v in acc.items()}, p)
                    precise = np.zeros((n, k), dtype=bool)
                    precise[rows] = hi - lo <= 2 * tol + 1e-12
                    settled |= precise & on
        else:
            eq = seq.inside(acc, p, rule, on & ~hit, k) if t + 1 >= rule.min_clusters else hit & False
            settled |= hit | eq
        stopped |= settled.all(axis=1)
        if stopped.all():
            break
    return decided.any(axis=1), ~stopped


def cell(
    k: int, kind: str, d: Design, n: int, seed: int, skip: str | None = None, keep: str | None = None
) -> tuple[list[str], list[str]]:
    """Every rule on ``n`` benchmarks of ``k`` equally good arms of design ``d``: printed lines, failures."""
    rng = np.random.default_rng(seed)
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    plan = seq.plan_for(d, seed, alpha=ALPHA / len(pairs))
    g = int(plan.n_clusters)
    cap = 2 * g
    big = seq.tiled(d, cap, np.random.default_rng(seed + 1))
    sizes = np.asarray(big.sizes, dtype=float)
    w = sizes / sizes.mean()
    if k == 2:
        dd, items, _ = seq.draw(seq.null_design(big, "eq"), n, cap, rng, 0.0)
        dd, diffs = dd[:, None, :], [items]
    else:
        y = seq.k_arm_means(replace(big, skew=0.0), k, n, rng, 0.0)
        diffs = [y[:, a] - y[:, b] for a, b in pairs]
        dd = np.stack([seq.cluster_means(big, x) for x in diffs], axis=1)
    lines, bad = [], []
    fixed_at: dict[int, np.ndarray] = {}
    for label, rule in rules(plan, cap):
        if skip and label.startswith(skip) or (keep and not label.startswith(keep)):
            continue
        most = int(rule.max_clusters or cap)
        if most not in fixed_at:  # compare() on the clusters run; with several pairs Holm's at alpha, which
            # under equal arms rejects some pair exactly when the smallest p is below alpha / pairs
            rej = [seq.fixed_rejects(big, x, most, ALPHA / len(pairs)) != 0 for x in diffs]
            fixed_at[most] = np.stack(rej, axis=1).any(axis=1)
        fixed = fixed_at[most]
        by_stop, through = look(dd[:, :, :most], w, rule, sizes)
        old = by_stop | (through & fixed)  # the fixed result after max_clusters read as a second decision
        now = by_stop  # the report's decisions: the stop's (hrbench.stats._stopped.RAN_THROUGH)
        se = float(np.sqrt(np.mean(old) * (1 - np.mean(old)) / n))
        se_now = float(np.sqrt(ALPHA * (1 - ALPHA) / n))
        thr = float(np.mean(through))
        fix_thr = float(np.mean(fixed[through])) if through.any() else float("nan")
        if np.mean(now) > ALPHA + 2 * se_now:
            bad.append(f"{d.name} {label}: claims shown as decisions {np.mean(now):.3f} > {ALPHA} + 2 se")
        lines.append(
            f"  {d.name:26} {kind:15} {label:19} {most:>4} | {np.mean(by_stop):>6.3f} {thr:>7.3f} {fix_thr:>7.3f} | "
            f"{np.mean(old):>7.3f} {se:>6.3f} {np.mean(now):>7.3f} | {np.mean(fixed):>6.3f}"
        )
    return lines, bad


def _opt(argv: list[str], name: str) -> str | None:
    """The value after option ``name`` in ``argv``, or ``None``."""
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    nums = [
        a
        for i, a in enumerate(argv)
        if not a.startswith("--") and not (i and argv[i - 1] in ("--arms", "--skip", "--rule"))
    ]
    n = int(nums[0]) if nums else (300 if "--quick" in argv else 1500)
    print(
        f"{n} simulated benchmarks of equally good arms per cell; alpha {ALPHA}; max_clusters = 2 n, n the "
        "fixed design's clusters (power() at 0.80, alpha / pairs)\n"
    )
    head = (
        f"  {'design':26} {'kind':15} {'rule':19} {'max':>4} | {'seq':>6} {'through':>7} {'fix|thr':>7} | "
        f"{'all old':>7} {'+-':>6} {'all now':>7} | {'fixed':>6}"
    )
    print(head)
    print("  " + "-" * (len(head) - 2))
    start = time.perf_counter()
    failures: list[str] = []
    only = _opt(argv, "--arms")
    for i, (k, kind, d) in enumerate(DESIGNS):
        if only and str(k) != only:
            continue
        lines, bad = cell(k, kind, d, n, 11000 + 17 * i, _opt(argv, "--skip"), _opt(argv, "--rule"))
        for line in lines:
            print(line, flush=True)
        failures += bad
    print(
        "\nseq: an arm decided better by the stop; through: ran to max_clusters; fix|thr: compare()'s significant "
        "result among those (Holm's with several pairs); all old: told of a difference when that result counts "
        "as a decision; all now: what the report presents as a decision; fixed: the fixed design of max "
        f"clusters alone. {time.perf_counter() - start:.0f} s."
    )
    return verdict(failures, argv)


if __name__ == "__main__":
    sys.exit(main())
