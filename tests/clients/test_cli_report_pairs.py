"""Paired differences as `hrb report` prints them, through a real daemon.

Rules (docs/guides/statistics.md, "What a paired difference means"): `--compare A B`'s JSON
``p_holm`` is the number the text report gives the pair (Holm over every pair); the few-clusters
note is said only beside a p-value below the exact sign-flip test's floor ``2 / 2**k``, and says
"only" only when some clusters hold no item scored differently.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests._slow import slow

HRB = [sys.executable, "-m", "hrbench_client.cli"]


def hrb(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [*HRB, *args], capture_output=True, text=True, timeout=slow(180), cwd=cwd, env=os.environ
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def _bench(tmp_path: Path) -> str:
    """Three outputs arms on 16 items in 4 clusters, 5 runs: `good` right on all, `bad` wrong on 3 per cluster."""
    ids = [f"q{i}" for i in range(16)]
    items = ", ".join(f'{i} = "x {i}"' for i in ids)
    labels = ", ".join(f'{i} = "x"' for i in ids)
    clusters = ", ".join(f'{i} = "c{n // 4}"' for n, i in enumerate(ids))
    good = ", ".join(f'{i} = "x"' for i in ids)
    bad = ", ".join(f'{i} = "{"y" if n % 4 else "x"}"' for n, i in enumerate(ids))
    mid = ", ".join(f'{i} = "{"y" if n % 4 == 1 else "x"}"' for n, i in enumerate(ids))
    (tmp_path / "s.toml").write_text(
        f"runs = 5\n[reference]\nitems = {{{items}}}\nlabels = {{{labels}}}\ncluster = {{{clusters}}}\n"
        f'[[arms]]\nkind = "outputs"\nname = "good"\noutputs = {{{good}}}\n'
        f'[[arms]]\nkind = "outputs"\nname = "bad"\noutputs = {{{bad}}}\n'
        f'[[arms]]\nkind = "outputs"\nname = "mid"\noutputs = {{{mid}}}\n'
    )
    return str(json.loads(hrb("bench", "s.toml", "--no-rows", cwd=tmp_path).stdout.splitlines()[-1])["id"])


def test_compare_json_and_the_text_report_give_one_p_holm(tmp_path: Path, shared_home: Path) -> None:
    bid = _bench(tmp_path)
    full = {(c["arm_a"], c["arm_b"]): c for c in json.loads(hrb("report", bid).stdout)["comparisons"]}
    one = json.loads(hrb("report", bid, "--compare", "good", "bad").stdout)
    assert one["p_holm"] is not None and one["p_holm"] == full[("good", "bad")]["p_holm"]
    text = hrb("report", bid, "--compare", "good", "bad", "--text").stdout
    row = next(ln for ln in text.splitlines() if ln.startswith(" good - bad"))
    assert f"{one['p_holm']:.3f}" in row.split() or (one["p_holm"] < 0.001 and "<0.001" in row), row


def test_the_few_clusters_note_is_said_only_where_true(tmp_path: Path, shared_home: Path) -> None:
    bid = _bench(tmp_path)
    for c in json.loads(hrb("report", bid).stdout)["comparisons"]:
        k, g, p = c["n_clusters_disagree"], c["n_clusters"], c["p_value"]
        note = c["note"] or ""
        assert ("rests on the t model" in note) is (p is not None and k > 0 and p < 2 / 2**k), c
        assert f"only {k} of {g}" not in note or k < g, note  # never "only 4 of 4"
        assert "cannot reject at 0.05" not in note, note
    good_bad = next(c for c in json.loads(hrb("report", bid).stdout)["comparisons"] if c["arm_b"] == "bad")
    assert good_bad["note"].startswith("all 4 of 4 cluster(s) hold an item scored differently"), good_bad
