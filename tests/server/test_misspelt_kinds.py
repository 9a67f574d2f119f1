"""A misspelt ``kind`` or other enumerated spec field: the field, the value, the closest value and every value.

Rule (hrbench._util.forms.check_one_of, hrbench_client.protocol.enum_hint): the library and
the daemon's wire say ``arms[0].kind: unknown value; did you mean 'prompt'? expected one of
... (got 'promtp')``, whether the value is a tag of a tagged union (an arm's or a client's
``kind``), a ``Literal`` (``reference.format``) or an enumeration the library checks itself.
"""

from __future__ import annotations

from typing import Any

import pytest

import hrbench as hb
import hrbench_client as hc
from hrbench.metrics import as_metric
from hrbench.models import check_reasoning
from hrbench.specs import build_arm, build_client
from tests.server._daemon import Daemon, spec


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (lambda: build_arm({"kind": "promtp", "name": "p", "template": "x"}), "arm.kind: unknown arm kind; did you mean 'prompt'? expected one of import, outputs, prompt, reading (got 'promtp')"),
        (lambda: build_client({"kind": "mokc"}), "client.kind: unknown client kind; did you mean 'mock'? expected one of openai, anthropic, mock, replay (got 'mokc')"),
        (lambda: build_arm({"kind": "reading", "name": "r", "recipe": "chunkd"}), "recipe: unknown reading recipe; did you mean 'chunked'?"),
        (lambda: hb.StopWhenSure(goal="tolerence", tolerance=0.02), "goal: unknown value; did you mean 'tolerance'? expected one of rank, tolerance"),
        (lambda: check_reasoning({"reasoning_effort": "hihg"}), "reasoning_effort: unknown value; did you mean 'high'? expected one of none, minimal"),
        (lambda: as_metric("exact_macth"), "metric: unknown metric; did you mean 'exact_match'? expected one of"),
    ],
    ids=["arm-kind", "client-kind", "recipe", "stop-goal", "reasoning-effort", "metric"],
)  # fmt: skip
def test_the_library_names_the_closest_value_and_every_value(build: Any, said: str) -> None:
    with pytest.raises(hb.ConfigError) as info:
        build()
    assert str(info.value).startswith(said), str(info.value)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"arms": [{"kind": "promtp", "name": "ask", "template": "{item}"}]}, "arms[0].kind: unknown value; did you mean 'prompt'? expected one of prompt, reading, outputs, import (got 'promtp')"),
        ({"client": {"kind": "mokc"}}, "client.kind: unknown value; did you mean 'mock'? expected one of openai, anthropic, replay, mock (got 'mokc')"),
        ({"reference": {"path": "/x.jsonl", "format": "sqaud"}}, "reference.format: unknown value; did you mean 'squad'? expected one of rows, squad, tatqa"),
    ],
    ids=["arm-kind", "client-kind", "reference-format"],
)  # fmt: skip
def test_the_wire_names_the_closest_value_and_every_value(
    shared_daemon: Daemon, change: dict[str, Any], said: str
) -> None:
    with shared_daemon.client() as c:
        with pytest.raises(hc.InvalidParams) as info:
            list(c.benchmark({**spec(), **change}))
        assert str(info.value).startswith(said), str(info.value)
        assert len(list(c.benchmark(spec(n=1, runs=1)))) == 1  # and it keeps serving
