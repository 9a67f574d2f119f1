"""``hrbench.interop`` names each public name once and loads it on first use."""

from __future__ import annotations

import subprocess
import sys

import hrbench.interop as interop


def test_every_lazy_name_is_public_and_resolves() -> None:
    assert sorted(interop._MODULE_OF) == interop.__all__
    for name in interop.__all__:
        assert getattr(interop, name) is not None


def test_importing_the_facade_loads_no_reader_or_writer() -> None:
    code = (
        "import sys, hrbench.interop\n"
        "print(sorted(m for m in sys.modules if m.startswith('hrbench.interop.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
