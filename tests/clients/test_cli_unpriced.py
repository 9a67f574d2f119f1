"""A model with no price through `hrb` and a real daemon: one warning, and NA wherever its USD is shown.

Rule (seed 002: usd is NA when a model has no price): `hrb bench` warns once that the model
has no price; the summary, the rows, `hrb ls` (running, cancelled and done) and the progress line show
its USD as NA (``null`` in JSON), never as 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.clients.test_cli import _stop_daemon  # noqa: F401 - the autouse fixture that stops each test's daemon

HRB = [sys.executable, "-m", "hrbench_client.cli"]


def hrb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HRB, *args], capture_output=True, text=True, timeout=slow(180), env=os.environ)


def _spec(tmp_path: Path, srv: LoopbackServer, price: str = "") -> Path:
    items = ", ".join(f'q{i} = "Say x {i}. [[reply:x]]"' for i in range(6))
    labels = ", ".join(f'q{i} = "x"' for i in range(6))
    spec = tmp_path / "s.toml"
    spec.write_text(
        f"runs = 5\nconcurrency = 2\n[reference]\nitems = {{{items}}}\nlabels = {{{labels}}}\n"
        f'[client]\nkind = "openai"\nmodel = "loop"\nbase_url = "{srv.base_url}"\napi_key_env = false\n{price}'
        '[[arms]]\nkind = "prompt"\nname = "plain"\ntemplate = "{item}"\n'
    )
    return spec


def test_an_unpriced_model_is_warned_once_and_its_usd_is_na_everywhere(tmp_path: Path) -> None:
    with LoopbackServer(latency_s=0.3) as srv:
        sent = hrb("bench", str(_spec(tmp_path, srv)), "--detach")
        assert sent.returncode == 0, sent.stderr
        bid = json.loads(sent.stdout.splitlines()[-1])["id"]
        deadline = time.monotonic() + slow(60)
        while time.monotonic() < deadline:  # some rows in, still running
            listed = next(
                json.loads(ln) for ln in hrb("ls").stdout.splitlines() if json.loads(ln)["id"] == bid
            )
            if listed["rows"] >= 2 or listed["status"] != "running":
                break
            time.sleep(0.1)
        assert listed["status"] == "running", listed
        assert listed["usd"] is None, listed  # not the 0 its calls were counted at
        assert "usd NA of" in hrb("ls", "--text").stdout
        hrb("cancel", bid)
        cancelled = next(
            json.loads(ln) for ln in hrb("ls").stdout.splitlines() if json.loads(ln)["id"] == bid
        )
        # NA once cancelled too (or done, when the cancel came after its last run on a busy machine)
        assert cancelled["status"] in ("cancelled", "done") and cancelled["usd"] is None, cancelled
        assert "usd 0.0000" not in hrb("ls", "--text").stdout
        # the same spec to its end, with fresh draws: on a busy machine the first benchmark may
        # have finished before its cancel, and replies served from the cache cost usd 0, not NA
        fresh = _spec(tmp_path, srv)
        fresh.write_text("cache = false\n" + fresh.read_text())
        done = hrb("bench", str(fresh), "--no-rows")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("has no price") == 1, done.stderr  # warned once
    result = json.loads(done.stdout.splitlines()[-1])
    assert sum("UnpricedModelWarning" in w for w in result["warnings"]) == 1, result["warnings"]
    assert result["summary"][0]["usd"] is None and "NA" in result["text"]
    live = [json.loads(r) for r in hrb("rows", bid).stdout.splitlines()]  # the first run's: every call live
    assert live and all(r["usd"] is None for r in live), live
    assert "usd NA of" in hrb("ls", "--text").stdout


def test_a_model_given_a_price_is_not_warned(tmp_path: Path) -> None:
    with LoopbackServer() as srv:
        done = hrb("bench", str(_spec(tmp_path, srv, "price = {input = 1.0, output = 2.0}\n")), "--no-rows")
    assert done.returncode == 0, done.stderr
    assert "has no price" not in done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["summary"][0]["usd"] > 0


def test_a_misspelt_model_is_unpriced_through_the_daemon_and_the_name_it_may_mean_is_said(
    tmp_path: Path,
) -> None:
    with LoopbackServer() as srv:
        spec = _spec(tmp_path, srv)
        spec.write_text(spec.read_text().replace('model = "loop"', 'model = "gpt-4o-mni"'))
        done = hrb("bench", str(spec), "--no-rows")
        capped = hrb("bench", str(spec), "--no-rows", "--max-usd", "1")
    assert done.returncode == 0, done.stderr
    assert "'gpt-4o-mni' has no price (did you mean gpt-4o-mini?)" in done.stderr, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["summary"][0]["usd"] is None  # not priced as gpt-4o
    assert (
        capped.returncode != 0
        and "has no price (did you mean gpt-4o-mini?), so the explicit" in capped.stderr
    )
