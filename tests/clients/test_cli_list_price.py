"""`hrb report` and `hrb ls` over a real daemon: costs at list price, printed so cheap arms differ.

A new user saw an arm the cache served get $0 per run and "-" for accuracy per USD, and two
cheap arms both print `0.00000` per run. One daemon for the module (its own home).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests._benches import cost_row, priced_spec
from tests.clients.test_cli import hrb, lines
from tests.clients.test_cli_draws import home  # noqa: F401 (the module's own daemon)

pytestmark = pytest.mark.timeout(240)


def _toml(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def _spec_file(path: Path, name: str) -> Path:
    spec = priced_spec(name)
    arms = spec.pop("arms")
    text = "".join(f"{k} = {_toml(v)}\n" for k, v in spec.items() if not isinstance(v, dict))
    text += "".join(f"[{k}]\n" + "".join(f"{kk} = {_toml(vv)}\n" for kk, vv in v.items()) for k, v in spec.items() if isinstance(v, dict))  # fmt: skip
    text += "".join("[[arms]]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in arm.items()) for arm in arms)
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def paid_then_cached(
    home: Path,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[str, str]:
    where = tmp_path_factory.mktemp("cli-list-price-specs")
    ids = []
    for name in ("cli-priced-paid", "cli-priced-cached"):
        out = hrb("bench", str(_spec_file(where / f"{name}.toml", name)), "--no-rows", "--home", str(home))
        ids.append(lines(out.stdout)[-1]["id"])
    return ids[0], ids[1]


def test_hrb_report_prices_an_arm_the_cache_served_as_when_it_paid(
    home: Path,  # noqa: F811
    paid_then_cached: tuple[str, str],
) -> None:
    paid, cached = paid_then_cached
    first, again = (lines(hrb("report", i, "--home", str(home)).stdout)[0] for i in (paid, cached))
    for a, b in zip(first["arms"], again["arms"], strict=True):
        assert a["usd"] > 0 and b["usd"] == 0.0 and b["usd_list"] == pytest.approx(a["usd"])
        assert b["usd_per_run"] == pytest.approx(a["usd_per_run"]) and b["usd_per_run"] > 0
        assert b["accuracy_per_usd"] == pytest.approx(a["accuracy_per_usd"])
    was, now = (hrb("report", i, "--text", "--home", str(home)).stdout for i in (paid, cached))
    for arm in ("ask", "wordy"):
        before, after = cost_row(was, arm), cost_row(now, arm)
        assert after[3] == "0.0000" and before[3] != "0.0000"  # usd paid
        assert before[4:] == after[4:]  # usd_list, usd/run, acc/usd and their intervals
    # a few millionths of a USD per run, told apart (four decimals printed both as 0.0000)
    ask, wordy = cost_row(now, "ask")[5], cost_row(now, "wordy")[5]
    assert "e-06" in ask and "e-06" in wordy and ask != wordy


def test_hrb_ls_prints_a_cheap_spend_with_its_digits(
    home: Path,  # noqa: F811
    paid_then_cached: tuple[str, str],
) -> None:
    paid, cached = paid_then_cached
    out = hrb("ls", "--text", "--home", str(home)).stdout.splitlines()
    at = next(i for i, ln in enumerate(out) if ln.startswith(paid))
    limits = next(ln for ln in out[at + 1 :] if "limits" in ln)
    spent = limits.split("usd ", 1)[1].split(" of ")[0]
    listed = next(b for b in lines(hrb("ls", "--home", str(home)).stdout) if b["id"] == paid)
    assert listed["usd"] > 0 and float(spent) == pytest.approx(listed["usd"], rel=0.01)  # not 0.0001
