"""pass^k and the flip rate through a real daemon: `hrb report --text` shows them, `hrb gate --metric` gates on them."""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from hrbench.testing import LoopbackServer
from tests.clients.test_cli import ON_SHARED, _stop_daemon, hrb, lines  # noqa: F401
from tests.clients.test_cli_gate import spec


def flaky(shaky: set[str]) -> Callable[[str, object, int], str]:
    """Right ("yes") on every item, but on the items in ``shaky`` wrong on about one call in three.

    Which of an item's calls are wrong depends on the item and how many times it was asked, not
    on the server's global call count, so every benchmark gets the same multiset of answers per
    item whatever order its concurrent calls arrive in.
    """
    asked: Counter[str] = Counter()

    def reply(prompt: str, seed: object, call: int) -> str:
        item = prompt.strip()
        asked[item] += 1
        if item in shaky and zlib.crc32(f"{item}/{asked[item]}".encode()) % 3 == 0:
            return "no"
        return "yes"

    return reply


def bench(tmp_path: Path, name: str, shaky: set[str]) -> str:
    with LoopbackServer(reply_fn=flaky(shaky)) as srv:
        out = hrb("bench", str(spec(tmp_path, name, srv.base_url, runs=5)), "--no-rows").stdout
    return str(lines(out)[-1]["id"])


def test_report_text_shows_pass_k_and_flip_rate_and_the_gate_gates_on_them(tmp_path: Path) -> None:
    steady = bench(tmp_path, "steady", set())
    shaky = bench(tmp_path, "shaky", {f"q{i}" for i in range(0, 40, 2)})
    text = hrb("report", shaky, "--text").stdout
    assert (
        "Repeat consistency (pass^5: 5 runs of an item all right; flip rate: two runs of an item disagree):"
        in text
    )
    row = next(
        ln.split()
        for ln in text.splitlines()
        if ln.startswith(" ask") and len(ln.split()) == 7 and "flip" not in ln
    )
    pass_k, flip = float(row[1]), float(row[4] if row[4][0] != "[" else row[5])
    assert 0.4 < pass_k < 0.95 and 0.0 < flip < 0.5
    report = hrb("report", shaky).stdout
    assert '"pass_k":' in report and '"flip_rate":' in report and '"pass_k_runs":5' in report.replace(" ", "")
    # the accuracy drop is small; pass^5 and the flip rate show the regression
    acc = hrb("gate", shaky, "--baseline", steady, "--max-drop", "0.2")
    assert acc.stdout.startswith("gate PASS: candidate - baseline = ")
    on_pass = hrb("gate", shaky, "--baseline", steady, "--max-drop", "0.2", "--metric", "pass^k", check_rc=1)
    assert on_pass.stdout.startswith("gate FAIL: candidate - baseline (pass^5) = ")
    assert "candidate is worse by more than 0.200 in pass^5" in on_pass.stdout
    on_flip = hrb(
        "gate",
        shaky,
        "--baseline",
        steady,
        "--max-drop",
        "0.05",
        "--metric",
        "flip_rate",
        "--json",
        check_rc=1,
    )
    got = lines(on_flip.stdout)[-1]
    assert got["metric"] == "flip_rate" and got["decision"] == "fail" and got["ci_low"] > 0.05
    bad = hrb("gate", shaky, "--baseline", steady, "--metric", "pass^k", "--pass-k", "9", check_rc=2)
    assert "--pass-k 9: must be a whole number from 1 to the runs per item (5)" in bad.stderr
