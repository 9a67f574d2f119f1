"""The mutation check's own rules (tools/mutants.py; ``make mutants`` runs the patches).

Every patch applies to this tree exactly once (so code that moves fails here, in ``make test``,
before ``make mutants`` runs), a patch that no longer applies is named, never skipped, and a
patched file is put back on every path.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool() -> Any:
    spec = importlib.util.spec_from_file_location("hrbench_mutants", ROOT / "tools" / "mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


mutants = _tool()

PROMISES = (
    "keyed.",
    "governor.",
    "reservation.",
    "settlement.",
    "stop.",
    "inspect.",
    "lmeval.",
    "promptfoo.",
)
SCORERS = ("exact.", "label.", "choice.", "numeric.", "squad.", "answer-contains.", "judge.")


def test_at_least_30_named_patches_over_every_promise_each_applying_once() -> None:
    names = [mu.name for mu in mutants.MUTANTS]
    assert len(names) >= 30 and len(set(names)) == len(names)
    for prefix in (*PROMISES, *SCORERS, "gate.", "failed."):
        assert any(n.startswith(prefix) for n in names), prefix
    mutants.check_applies(mutants.MUTANTS)  # raises naming each patch that no longer applies
    for mu in mutants.MUTANTS:  # every test a patch names exists
        for test in mu.tests:
            assert (ROOT / test.split("::")[0]).exists(), (mu.name, test)


def test_a_patch_that_no_longer_applies_is_named_not_skipped() -> None:
    gone = mutants.Mutant("gate.gone", "hrbench/stats/_gate.py", "text that is not there", "x", ("t",))
    twice = mutants.Mutant("gate.twice", "hrbench/stats/_gate.py", "\n", "x", ("t",))
    nowhere = mutants.Mutant("gate.nowhere", "hrbench/no_such_module.py", "a", "b", ("t",))
    with pytest.raises(mutants.Broken) as got:
        mutants.check_applies((gone, twice, nowhere))
    msg = str(got.value)
    assert "gate.gone: its text is in hrbench/stats/_gate.py 0 times, not once" in msg
    assert "gate.twice: its text is in hrbench/stats/_gate.py" in msg and "gate.nowhere" in msg


@pytest.mark.parametrize(
    ("outcome", "verdict"),
    [(1, "caught"), (0, "SURVIVED"), (2, "broken"), (5, "broken"), (-1, "broken"), (KeyboardInterrupt, None)],
)
def test_the_patched_file_is_put_back_on_every_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcome: Any, verdict: str | None
) -> None:
    target = tmp_path / "pkg" / "mod.py"
    target.parent.mkdir()
    target.write_text("def f():\n    return 1 < 2\n")
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))
    before = target.read_bytes(), target.stat().st_mtime_ns
    seen: list[str] = []

    def fake_pytest(copy: Path, env: dict[str, str], tests: tuple[str, ...], *extra: str) -> Any:
        seen.append(target.read_text())
        if outcome is KeyboardInterrupt:
            raise KeyboardInterrupt
        return outcome, "tail", 0.1

    monkeypatch.setattr(mutants, "pytest", fake_pytest)
    mu = mutants.Mutant("x.flip", "pkg/mod.py", "1 < 2", "1 > 2", ("t",))
    if verdict is None:
        with pytest.raises(KeyboardInterrupt):
            mutants.run_one(mu, 0, tmp_path, {})
    else:
        assert mutants.run_one(mu, 0, tmp_path, {})[0] == verdict
    assert seen == ["def f():\n    return 1 > 2\n"]  # the tests ran on the patched file
    assert (target.read_bytes(), target.stat().st_mtime_ns) == before  # and it is back as it was
