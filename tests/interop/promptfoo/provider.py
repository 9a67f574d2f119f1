"""A promptfoo python provider (``file://provider.py``): a capital, wrong on its second asking.

promptfoo calls ``call_api`` once per test and repeat, several at a time; the number of
askings per prompt is kept in ``calls.json`` beside the config (under a lock), so the
replies do not depend on which worker process promptfoo uses.
"""

from __future__ import annotations

import fcntl
import json
from pathlib import Path
from typing import Any

CAPITALS = {"France": "Paris", "Peru": "Lima", "Chile": "Santiago", "Japan": "Tokyo"}
WRONG = {"France": "Lyon", "Peru": "Cusco", "Chile": "Valparaiso", "Japan": "Osaka"}


def _asking(prompt: str) -> int:
    path = Path.cwd() / "calls.json"
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        calls = json.loads(path.read_text()) if path.exists() else {}
        calls[prompt] = calls.get(prompt, 0) + 1
        path.write_text(json.dumps(calls))
        return calls[prompt]


def call_api(prompt: str, options: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    """The capital of the country the prompt names; the wrong one on the second asking."""
    country = str(context["vars"]["country"])
    if country == "Atlantis":
        return {"error": "no such country"}
    table = WRONG if _asking(prompt) == 2 else CAPITALS
    return {"output": table[country]}
