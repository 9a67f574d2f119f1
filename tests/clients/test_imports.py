"""hrbench_client imports only the standard library and msgspec."""

from __future__ import annotations

import json
import subprocess
import sys

from tests._slow import slow

FORBIDDEN = {
    "httpx",
    "httpx2",
    "pygls",
    "lsprotocol",
    "cattrs",
    "sqlite_utils",
    "hrbench",
    "hrbench_server",
    "anyio",
    "numpy",
    "scipy",
    "platformdirs",
}


def test_client_and_cli_import_no_core_or_server_packages() -> None:
    code = (
        "import sys, json, hrbench_client, hrbench_client.cli, hrbench_client.client, hrbench_client.protocol;"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=slow(60)
    )
    loaded = set(json.loads(out.stdout))
    assert not loaded & FORBIDDEN, loaded & FORBIDDEN
    third_party = {m for m in loaded if m not in sys.stdlib_module_names and not m.startswith("_")}
    assert third_party <= {"hrbench_client", "msgspec", "typing_extensions"}, third_party
