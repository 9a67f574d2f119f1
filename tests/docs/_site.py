"""Running the docs' blocks: a working folder per page, one daemon and one loopback model server.

The blocks run as a reader runs them: ``hrb`` and ``python`` of this interpreter's folder on
``PATH``, a state folder (``HRBENCH_HOME``) shared by the blocks of a session, and a working
folder per page holding ``examples/`` (the README's blocks name ``examples/capitals.toml``).
The pages give a local model server's address, ``http://127.0.0.1:8000/v1``; the tests start
a loopback OpenAI-compatible server and put its address there, nothing else is changed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests._slow import slow
from tests.docs._blocks import LOCAL_SERVER, REPO, Block

CAPITALS = {
    "France": "Paris",
    "Peru": "Lima",
    "Chad": "Ndjamena",
    "Fiji": "Suva",
    "Japan": "Tokyo",
    "Kenya": "Nairobi",
}


def reply(prompt: str, seed: Any, call: int) -> str:
    """A small model: a capital, tersely when asked to be terse; a judge that says CORRECT."""
    if "CORRECT or INCORRECT" in prompt:
        return "CORRECT"
    for country, city in CAPITALS.items():
        if country in prompt:
            terse = any(w in prompt for w in ("name only", "One word", "one word"))
            return city if terse or call % 3 else f"The capital of {country} is {city}."
    return "I do not know."


_DRIVER = r"""
import json, sys, traceback
blocks = json.load(open(sys.argv[1]))
scope = {"__name__": "__main__"}
for where, code in blocks:
    print(f"=== {where}", flush=True)
    try:
        exec(compile(code, where, "exec"), scope)
    except BaseException:
        traceback.print_exc()
        print(f"block {where} failed", file=sys.stderr)
        sys.exit(1)
"""


@dataclass
class Site:
    """What a page's blocks run against."""

    home: Path
    base_url: str
    env: dict[str, str] = field(default_factory=dict)

    def environment(self) -> dict[str, str]:
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        env = {**os.environ, "PATH": path, "HRBENCH_HOME": str(self.home), **self.env}
        for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
            env.pop(key, None)  # the pages' blocks that need one are marked no-run
        return env

    def as_written(self, code: str) -> str:
        return code.replace(LOCAL_SERVER, self.base_url)


@dataclass
class Ran:
    """What one block printed."""

    block: Block
    stdout: str
    stderr: str


def workdir(tmp: Path) -> Path:
    (tmp / "examples").symlink_to(REPO / "examples")
    return tmp


def _run(args: list[str], site: Site, cwd: Path, block: Block, timeout_s: float = 180) -> Ran:
    proc = subprocess.run(
        args, cwd=cwd, env=site.environment(), capture_output=True, text=True, timeout=slow(timeout_s)
    )
    assert proc.returncode == 0, (
        f"{block.where()} ({block.lang}) exited {proc.returncode}:\n{block.code}\n"
        f"--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"
    )
    return Ran(block, proc.stdout, proc.stderr)


def _python(group: list[Block], site: Site, cwd: Path) -> list[Ran]:
    driver = cwd / ".docs-driver.py"
    driver.write_text(_DRIVER, encoding="utf-8")
    payload = cwd / ".docs-blocks.json"
    payload.write_text(json.dumps([[b.where(), site.as_written(b.code)] for b in group]), encoding="utf-8")
    ran = _run([sys.executable, str(driver), str(payload)], site, cwd, group[0])
    parts = re.split(r"^=== .*\n", ran.stdout, flags=re.M)[1:]
    return [Ran(b, out, ran.stderr) for b, out in zip(group, parts, strict=True)]


def run_page(found: list[Block], site: Site, cwd: Path) -> list[Ran]:
    """Run a page's blocks in order in ``cwd``; returns what each block that ran printed."""
    out: list[Ran] = []
    group: list[Block] = []

    def flush() -> None:
        if group:
            out.extend(_python(list(group), site, cwd))
            group.clear()

    for i, block in enumerate(found):
        if block.no_run is not None:
            assert block.no_run.strip(), f"{block.where()}: a no-run mark must say why"
            continue
        if block.file:
            flush()
            (cwd / block.file).write_text(site.as_written(block.code), encoding="utf-8")
            continue
        if block.lang == "python":
            group.append(block)
            continue
        flush()
        if block.lang in ("sh", "bash"):
            out.append(
                _run(["bash", "-c", "set -euo pipefail\n" + site.as_written(block.code)], site, cwd, block)
            )
        elif block.lang == "toml":
            tomllib.loads(block.code)  # a TOML error names the line: clearer than the daemon's
            spec = cwd / f"block-{i}.toml"
            spec.write_text(site.as_written(block.code), encoding="utf-8")
            out.append(_run(["hrb", "bench", str(spec), "--no-rows"], site, cwd, block))
        elif block.lang == "json":
            json.loads(block.code)
            out.append(Ran(block, "", ""))
        else:
            assert block.lang == "text", (
                f"{block.where()}: a ```{block.lang or '(no language)'} block: give it a language that runs "
                "(python, sh, toml, json), `text` for output, or mark it <!-- no-run: why -->"
            )
    flush()
    return out
