"""The editor setups in clients/editors/ work with a real editor (Neovim) when one is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests._slow import slow

EDITORS = Path(__file__).resolve().parents[2] / "clients" / "editors"


def _nvim_script(tmp_path: Path, name: str) -> dict[str, Any]:
    """Run ``tests/clients/NAME`` in headless Neovim against ``hrb serve --stdio``; its JSON line."""
    server = [sys.executable, "-m", "hrbench_server", "--home", str(tmp_path / "home"), "serve", "--stdio"]
    script = Path(__file__).with_name(name)
    proc = subprocess.run(
        ["nvim", "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {script}"],
        env={
            **os.environ,
            "HRBENCH_LSP_CMD": json.dumps(server),
            "HRBENCH_NVIM_LUA": str(EDITORS / "nvim" / "lua"),
            "HOME": str(tmp_path),
        },
        capture_output=True,
        text=True,
        timeout=slow(180),
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return out


@pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim (an optional editor) is not installed")
def test_headless_neovim_attaches_scores_and_stops_cleanly(tmp_path: Path) -> None:
    server = [sys.executable, "-m", "hrbench_server", "--home", str(tmp_path / "home"), "serve", "--stdio"]
    proc = subprocess.run(
        [str(EDITORS / "nvim" / "smoke.sh")],
        env={**os.environ, "HRBENCH_LSP_CMD": json.dumps(server), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=slow(120),
    )
    assert proc.returncode == 0, proc.stderr
    scored = json.loads(proc.stdout.splitlines()[0])
    assert scored["correct"] is True and scored["outcome"] == "paris"
    assert "stopped cleanly (exit code 0)" in proc.stdout


@pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim (an optional editor) is not installed")
def test_headless_neovim_pairs_each_item_with_its_own_label(tmp_path: Path) -> None:
    """A Lua table of items reaches the daemon in hash order.

    The keyed form pairs every item with its own label, whatever order the table's keys came in;
    a list of labels beside the table is refused with the keyed form, not paired by position.
    """
    out = _nvim_script(tmp_path, "nvim_pairing.lua")
    items, labels = out["items"], out["labels"]
    ids = [f"q{n}" for n in range(1, 13)]
    assert sorted(out["wire_order"]) == sorted(ids)
    assert out["wire_order"] != ids  # the keys left Neovim out of order: pairing them by position is wrong
    by_item = {r["item"]: r for r in out["rows"]}
    assert sorted(by_item) == sorted(ids) and len(out["rows"]) == len(ids)
    for i in ids:  # item by item: the reply to this item's country, scored against this item's label
        assert by_item[i]["outcome"] == labels[i].lower(), (i, items[i], by_item[i])
        assert by_item[i]["correct"] is True, (i, items[i], by_item[i])
        assert by_item[i]["cluster"] == ("a" if int(i[1:]) <= 6 else "b")
    assert out["summary"][0]["accuracy"] == 1.0
    positional = out["positional"]
    assert positional["accepted"] is False
    assert "reference.labels: a list is not paired by position" in positional["error"]
    assert 'key it by item id, "labels": {"' in positional["error"]
    assert out["reference_hashes"]["by_hand"] == out["reference_hashes"]["from_records"]


def test_the_editor_readme_names_the_files_it_describes() -> None:
    text = (EDITORS / "README.md").read_text()
    for rel in ("nvim/lua/hrbench.lua", "nvim/smoke.sh", "emacs/smoke.el"):
        assert rel in text and (EDITORS / rel).exists()


@pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim (an optional editor) is not installed")
def test_headless_neovim_waits_long_enough_for_a_report_and_says_which_limit_ran_out(tmp_path: Path) -> None:
    """A first ``report`` on a busy daemon took longer than the 10 s every request used to wait.

    Requests wait by method (``hrbench.timeouts``): two minutes by default, an hour for a
    benchmark; a request that runs out of time names the method, the limit and how to raise it.
    """
    out = _nvim_script(tmp_path, "nvim_timeouts.lua")
    assert out["timeouts"]["default"] >= 120000 and "report" not in out["timeouts"]
    assert out["timeouts"]["benchmark"] >= 3600000 and out["timeouts"]["evaluate"] >= 3600000
    assert out["status"]["version"]
    assert out["no_time"]["answered"] is False
    assert "report got no reply within 0 ms" in out["no_time"]["error"]
    assert "require('hrbench').timeouts.report" in out["no_time"]["error"]


def _eglot() -> bool:
    """Emacs with Eglot (built in from Emacs 29; Debian's elpa-eglot before), an optional editor."""
    if shutil.which("emacs") is None:
        return False
    probe = subprocess.run(
        ["emacs", "--batch", "--eval", "(kill-emacs (if (require 'eglot nil t) 0 1))"],
        capture_output=True,
        timeout=60,
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _eglot(), reason="Emacs with Eglot (an optional editor) is not installed")
def test_emacs_eglot_attaches_scores_stores_and_what_it_stored_survives_its_kill(tmp_path: Path) -> None:
    """Eglot attaches ``hrb serve --stdio``, calls hrbench's methods, and SIGKILLs it after exit.

    Emacs kills the server right after ``exit``; the reference it had stored must still be in
    the store.
    """
    home = tmp_path / "home"
    server = [sys.executable, "-m", "hrbench_server", "--home", str(home), "serve", "--stdio"]
    proc = subprocess.run(
        ["emacs", "--batch", "-l", str(EDITORS / "emacs" / "smoke.el")],
        env={**os.environ, "HRBENCH_LSP_CMD": json.dumps(server), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=slow(180),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    scored = json.loads(lines[0])
    assert scored["correct"] is True and scored["outcome"] == "paris"
    assert lines[1].startswith("version ") and lines[-1] == "stopped"
    digest = lines[2].removeprefix("reference ")
    from hrbench.store import Store

    store = Store(home / "hrbench.sqlite3")
    try:
        assert [r["hash"] for r in store.reference_list() if r["name"] == "eglot-smoke"] == [digest]
    finally:
        store.close()
