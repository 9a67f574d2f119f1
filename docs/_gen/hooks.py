"""MkDocs hooks: add the reference pages generated from the code (``refgen.py``) to the site."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _refgen() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "hrbench_docs_refgen", Path(__file__).with_name("refgen.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for uri, make in _refgen().PAGES.items():
        files.append(File.generated(config, uri, content=make()))
    return files
