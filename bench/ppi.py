"""A judge and a few humans: coverage, false positives and width of the PPI++ intervals, simulated.

Each benchmark has G clusters of M items, two arms and R runs per item (2,000 judge verdicts by
default). An item's human truth is drawn per run at logit accuracy alpha_arm + u_cluster +
v_item (u ~ N(0, 0.8), v ~ N(0, 1)). The judge's verdict is the truth flipped with a probability
that depends on the arm, on the truth and on the cluster (logit error = base + eta_cluster,
eta ~ N(0, 1): errors correlated within clusters): it calls a wrong answer of arm b right far
more often than one of arm a (a judge lenient with one arm's style), so the judge alone sees a
difference where humans see none. Human grades are drawn by hrbench.next_grades, in two rounds
of n/2 (the second round's strata sized from the first round's grades), or uniformly ("srs").

Printed per number of grades n (30, 50, 100, 200) and sampling:

- cover a, cover b: coverage of each arm's accuracy as humans grade it (goal >= 0.935);
- cover d: coverage of the paired difference a - b when arm b is better by DIFF;
- FP ppi / human / judge: the share of null benchmarks (the same human accuracy, the lenient
  judge) whose 95% interval of the difference excludes 0 (goal <= 0.065), by PPI++, by the
  human grades alone and by the judge alone (the report's interval: biased, no goal);
- width: the mean width of the PPI++ interval over the human-only one (never above 1: "wider"
  counts the benchmarks where it is), and "worth", the mean human grades the PPI++ interval is
  worth.

The truth is the super-population accuracy (items and clusters drawn afresh for each
benchmark), what the report's intervals are for. Usage:
    .venv/bin/python bench/ppi.py [N] [--quick] [--strict] [--how=next|--how=srs]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from hrbench.stats import next_grades, ppi_estimate

G, M, R = 40, 5, 5
ALPHA_A = 0.85  # logit of arm a's typical accuracy: about 0.66 over items
DIFF_LOGIT = 0.5  # arm b's advantage under the alternative
SD_U, SD_V, SD_ETA = 0.8, 1.0, 1.0
ERR = {  # the judge's base logit error rate by (arm, truth): lenient with arm b's wrong answers
    (0, 1): -2.6,
    (0, 0): -2.2,
    (1, 1): -2.6,
    (1, 0): -0.9,
}
NS = (30, 50, 100, 200)


def expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def truth(alpha: float, rng: np.random.Generator, n: int = 2_000_000) -> float:
    """The super-population accuracy: the mean of expit(alpha + u + v) over clusters and items."""
    return float(expit(alpha + rng.normal(0, SD_U, n) + rng.normal(0, SD_V, n)).mean())


def draw(rng: np.random.Generator, alpha_b: float) -> dict[str, np.ndarray]:
    """One benchmark's rows as columns: the judge's verdict in `correct`, the human truth in `truth`."""
    u = rng.normal(0, SD_U, G)
    v = rng.normal(0, SD_V, (G, M))
    eta = rng.normal(0, SD_ETA, G)
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("cluster", "item", "arm", "run", "correct", "truth")}
    for a, alpha in enumerate((ALPHA_A, alpha_b)):
        p = expit(alpha + u[:, None] + v)  # (G, M)
        y = rng.random((G, M, R)) < p[:, :, None]
        e_logit = np.where(y, ERR[(a, 1)], ERR[(a, 0)]) + eta[:, None, None]
        flip = rng.random((G, M, R)) < expit(e_logit)
        f = y ^ flip
        gi, mi, ri = np.meshgrid(np.arange(G), np.arange(M), np.arange(R), indexing="ij")
        cols["cluster"].append(np.char.add("c", gi.ravel().astype(str)))
        cols["item"].append(
            np.char.add(np.char.add("q", gi.ravel().astype(str)), np.char.add("_", mi.ravel().astype(str)))
        )
        cols["arm"].append(np.full(gi.size, "ab"[a]))
        cols["run"].append(ri.ravel() + 1)
        cols["correct"].append(f.ravel())
        cols["truth"].append(y.ravel())
    out = {k: np.concatenate(v) for k, v in cols.items()}
    n = out["item"].size
    out["failure_kind"] = np.array([None] * n, dtype=object)
    out["usd"] = np.zeros(n)
    out["reportable"] = np.ones(n, dtype=bool)
    return out


def grades_for(bench: dict[str, np.ndarray], n: int, how: str, rng: np.random.Generator) -> list[dict]:
    """n human grades: two rounds of next_grades, or a simple random sample of all rows."""

    def grade(idx: int, pi: float | None) -> dict:
        return {
            "arm": str(bench["arm"][idx]),
            "item": str(bench["item"][idx]),
            "run": int(bench["run"][idx]),
            "correct": bool(bench["truth"][idx]),
            "pi": pi,
        }

    if how == "srs":
        return [grade(int(i), None) for i in rng.choice(bench["item"].size, n, replace=False)]
    where = {
        (str(a), str(i), int(r)): j
        for j, (a, i, r) in enumerate(zip(bench["arm"], bench["item"], bench["run"], strict=True))
    }
    got: list[dict] = []
    for k in (n // 2, n - n // 2):
        for row in next_grades(bench, k, got, seed=int(rng.integers(1 << 30))):
            got.append(grade(where[(row["arm"], row["item"], row["run"])], row["pi"]))
    return got


def run(n_sims: int, how: str, rng: np.random.Generator, t_a: float, t_b_alt: float) -> list[dict]:
    rows = []
    for n in NS:
        t0 = time.perf_counter()
        cov = {"a": 0, "b": 0, "d": 0}
        fp = {"ppi": 0, "human": 0, "judge": 0}
        ratio, worth, wider, missing = [], [], 0, 0
        for _ in range(n_sims):
            for null in (False, True):
                alpha_b = ALPHA_A if null else ALPHA_A + DIFF_LOGIT
                t_b = t_a if null else t_b_alt
                bench = draw(rng, alpha_b)
                s = ppi_estimate(bench, grades_for(bench, n, how, rng))
                a, b, d = s.arms[0], s.arms[1], s.pairs[0]
                if d.ci_low is None or a.ci_low is None or b.ci_low is None:
                    missing += 1
                    continue
                if null:
                    fp["ppi"] += not (d.ci_low <= 0 <= d.ci_high)
                    fp["human"] += not (d.human_low <= 0 <= d.human_high)
                    fp["judge"] += not (d.judge_low <= 0 <= d.judge_high)
                else:
                    cov["a"] += a.ci_low <= t_a <= a.ci_high
                    cov["b"] += b.ci_low <= t_b <= b.ci_high
                    cov["d"] += d.ci_low <= t_a - t_b <= d.ci_high
                w, hw = d.ci_high - d.ci_low, d.human_high - d.human_low
                ratio.append(w / hw)
                wider += w > hw + 1e-12
                worth.append(d.worth)
        rows.append(
            dict(
                n=n,
                how=how,
                cover_a=cov["a"] / n_sims,
                cover_b=cov["b"] / n_sims,
                cover_d=cov["d"] / n_sims,
                fp_ppi=fp["ppi"] / n_sims,
                fp_human=fp["human"] / n_sims,
                fp_judge=fp["judge"] / n_sims,
                width=float(np.mean(ratio)),
                wider=wider,
                worth=float(np.mean(worth)),
                missing=missing,
                seconds=time.perf_counter() - t0,
            )
        )
        r = rows[-1]
        print(
            f"{how:>5} {n:>4}  {r['cover_a']:.3f}  {r['cover_b']:.3f}  {r['cover_d']:.3f}   {r['fp_ppi']:.3f}  "
            f"{r['fp_human']:.3f}  {r['fp_judge']:.3f}   {r['width']:.3f}  {r['wider']:>5}  {r['worth']:7.1f}  "
            f"{r['missing']:>3}  {r['seconds']:6.1f}s",
            flush=True,
        )
    return rows


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n_sims = int(args[0]) if args else (200 if "--quick" in sys.argv else 1000)
    rng = np.random.default_rng(20261207)
    t_a, t_b = truth(ALPHA_A, rng), truth(ALPHA_A + DIFF_LOGIT, rng)
    print(
        f"PPI++ with a judge and a few humans: {G} clusters x {M} items x {R} runs x 2 arms "
        f"({2 * G * M * R} judge verdicts), {n_sims} benchmarks per row and hypothesis"
    )
    print(f"truth: arm a {t_a:.3f}, arm b {t_b:.3f} (alternative), {t_a:.3f} (null); seed 20261207")
    print("  how    n  cov a  cov b  cov d    FP ppi  human  judge   width  wider    worth  n/a  time")
    hows = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--how=")] or ["next", "srs"]
    rows = [r for how in hows for r in run(n_sims, how, rng, t_a, t_b)]
    bad = [
        r
        for r in rows
        if min(r["cover_a"], r["cover_b"], r["cover_d"]) < 0.935 or r["fp_ppi"] > 0.065 or r["wider"] > 0
    ]
    print(
        "goals: coverage >= 0.935, FP <= 0.065, never wider than human-only: "
        + ("all met" if not bad else "MISSED in " + ", ".join(f"{r['how']} n={r['n']}" for r in bad))
    )
    return 1 if bad and "--strict" in sys.argv else 0


if __name__ == "__main__":
    sys.exit(main())
