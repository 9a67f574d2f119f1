"""A first user follows the getting-started page as written, against a local OpenAI-compatible server.

The page's server runs at ``http://127.0.0.1:8000/v1``; here a loopback server with the same
API stands in for it (its address is put where the page's is), with a fresh state folder and
no daemon running, as on a first user's machine.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hrbench.testing import LoopbackServer
from tests import _procs
from tests.docs import _blocks, _site

# a page runs a few dozen `hrb` commands, each a process: minutes on a busy machine
pytestmark = [pytest.mark.timeout(480), pytest.mark.pages]

PAGE = _blocks.DOCS / "getting-started.md"


def test_the_getting_started_page_as_written_gives_a_report(tmp_path: Path) -> None:
    found = _blocks.blocks(PAGE)
    home = tmp_path / "home"
    with LoopbackServer(reply_fn=_site.reply) as srv:
        site = _site.Site(home=home, base_url=srv.base_url)
        try:
            (tmp_path / "work").mkdir()
            ran = _site.run_page(found, site, _site.workdir(tmp_path / "work"))
        finally:
            _procs.stop_daemon(home)
        sent = [r.body for r in srv.requests if r.path.endswith("/chat/completions")]
    assert [r.block for r in ran] == [b for b in found if b.runs]
    bench = next(r for r in ran if r.block.code.startswith("hrb bench capitals-local.toml"))
    result = json.loads(bench.stdout.splitlines()[-1])
    assert result["status"] == "done" and result["n_rows"] == 60
    assert {a["arm"]: a["runs"] for a in result["summary"]} == {"terse": 30, "plain": 30}
    report = next(r for r in ran if r.block.code.startswith("hrb report capitals-local --text"))
    text = report.stdout
    assert "terse" in text and "plain" in text and "[" in text  # arms with their intervals
    terse = next(a for a in result["summary"] if a["arm"] == "terse")
    assert terse["accuracy"] == 1.0  # the loopback model answers a terse prompt with the capital
    # the page's spec reached the server as written: its model, and the plain arm's temperature
    models = {b["model"] for b in sent}
    assert models == {"Qwen/Qwen2.5-1.5B-Instruct"}
    assert sum(1 for b in sent if b.get("temperature") == 0.7) >= 30
    py = next(r for r in ran if r.block.lang == "python")
    assert "terse" in py.stdout and "plain" in py.stdout
    # the output the page shows for `hrb score` is how the line printed begins, as printed
    score = next(r for r in ran if "hrb score --label Paris" in r.block.code)
    [shown] = re.findall(r"The second line prints `(\{.*?)\.\.\.\}`", PAGE.read_text(encoding="utf-8"))
    assert score.stdout.splitlines()[1].startswith(shown), (shown, score.stdout)


def test_the_page_names_the_local_servers_and_a_hosted_provider() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for name in ("vLLM", "llama.cpp", "Ollama", "11434", "api_key_env = false", "OPENAI_API_KEY", "max_usd"):
        assert name in text, name
    assert _blocks.LOCAL_SERVER in text
