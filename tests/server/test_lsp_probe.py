"""Shared cases S14a-S14c: the LSP base lifecycle over stdio, as VS Code, Neovim and Eglot open it.

Raw frames to ``python -m hrbench_server serve --stdio`` (what ``hrb serve --stdio`` runs), each
with a ``Content-Type`` header as VS Code sends it; the server process is stopped on every path.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests._slow import slow
from tests.server._wire import frame, req

CT = {"Content_Type": "application/vscode-jsonrpc; charset=utf-8"}

VSCODE_INIT = {
    "processId": 4242,
    "clientInfo": {"name": "Visual Studio Code", "version": "1.95.3"},
    "locale": "en",
    "rootPath": "/tmp/ws",
    "rootUri": "file:///tmp/ws",
    "capabilities": {
        "workspace": {"configuration": True, "workspaceFolders": True, "didChangeConfiguration": {}},
        "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}},
        "general": {"positionEncodings": ["utf-16"]},
    },
    "workDoneToken": "b7e0c2d4-1",
    "trace": "off",
    "workspaceFolders": [{"uri": "file:///tmp/ws", "name": "ws"}],
    "initializationOptions": {"anything": [1, 2]},
}
NEOVIM_INIT = {
    "processId": 77,
    "clientInfo": {"name": "Neovim", "version": "0.10.2"},
    "rootUri": None,
    "rootPath": None,
    "workspaceFolders": None,
    "trace": "off",
    "capabilities": {"workspace": {"configuration": True}, "general": {"positionEncodings": ["utf-16"]}},
}
EGLOT_INIT = {
    "processId": 88,
    "clientInfo": {"name": "Eglot", "version": "1.17"},
    "rootPath": "/tmp/ws/",
    "rootUri": "file:///tmp/ws",
    "initializationOptions": {},
    "capabilities": {"general": {"positionEncodings": ["utf-32", "utf-8", "utf-16"]}, "experimental": {}},
    "workspaceFolders": [{"uri": "file:///tmp/ws", "name": "/tmp/ws/"}],
}


class Stdio:
    """``hrbench_server serve --stdio`` with raw frames; killed on every path."""

    def __init__(self, home: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hrbench_server", "--home", str(home), "serve", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def send(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame(body, **CT))
        self.proc.stdin.flush()

    def recv(self) -> Any:
        assert self.proc.stdout is not None
        headers = {}
        while (line := self.proc.stdout.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("ascii").partition(":")
            headers[name.strip().lower()] = value.strip()
        assert "content-length" in headers, "the server closed stdout"
        return json.loads(self.proc.stdout.read(int(headers["content-length"])))

    def wait(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=slow(30))

    def __enter__(self) -> Stdio:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=slow(30))
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None and not f.closed:
                f.close()


def test_s14a_vscode_lifecycle_answers_requests_only(tmp_path: Path) -> None:
    """S14a: notifications get no reply, unknown requests -32601, status after shutdown -32600."""
    with Stdio(tmp_path / "home") as s:
        s.send(req("initialize", VSCODE_INIT, 1))
        init = s.recv()
        assert init["id"] == 1 and init["result"]["serverInfo"]["name"] == "hrbench"
        assert "capabilities" in init["result"]
        for method, params in [
            ("initialized", {}),
            ("$/setTrace", {"value": "verbose"}),
            ("workspace/didChangeConfiguration", {"settings": {"hrbench": {}}}),
            (
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": "file:///tmp/ws/a.py",
                        "languageId": "python",
                        "version": 1,
                        "text": "x",
                    }
                },
            ),
            ("$/cancelRequest", {"id": 12345}),
        ]:
            s.send(req(method, params, None))
        s.send(
            req(
                "textDocument/hover",
                {"textDocument": {"uri": "file:///a"}, "position": {"line": 0, "character": 0}},
                2,
            )
        )
        s.send(req("$/unknownRequest", {}, 3))
        s.send(req("score", {"output": " paris ", "label": "Paris"}, 4))
        s.send(req("shutdown", None, 5))
        s.send(req("status", {}, 6))
        # a reply to a notification would be among the first five; replies may come in any order
        replies = sorted((s.recv() for _ in range(5)), key=lambda r: r["id"])
        assert [r["id"] for r in replies] == [2, 3, 4, 5, 6]
        assert replies[0]["error"]["code"] == -32601 and replies[1]["error"]["code"] == -32601
        assert replies[2]["result"]["correct"] is True
        assert replies[3] == {"jsonrpc": "2.0", "id": 5, "result": None}
        assert replies[4]["error"]["code"] == -32600
        s.send(req("exit", None, None))
        assert s.wait() == 0


@pytest.mark.slow  # four server processes (~6 s each); make test-slow
@pytest.mark.parametrize("init", [NEOVIM_INIT, EGLOT_INIT], ids=["neovim", "eglot"])
@pytest.mark.parametrize("shutdown_params", ["null", "absent"])
def test_s14b_neovim_and_eglot_initialize_and_shutdown_forms(
    tmp_path: Path, init: dict[str, Any], shutdown_params: str
) -> None:
    """S14b: Neovim's nulls and Eglot's utf-32 encodings; shutdown with params null or absent."""
    with Stdio(tmp_path / "home") as s:
        s.send(req("initialize", init, 1))
        assert s.recv()["result"]["serverInfo"]["name"] == "hrbench"
        s.send(req("initialized", {}, None))
        body = (
            b'{"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": null}'
            if shutdown_params == "null"
            else b'{"jsonrpc": "2.0", "id": 2, "method": "shutdown"}'
        )
        s.send(body)
        assert s.recv() == {"jsonrpc": "2.0", "id": 2, "result": None}
        s.send(req("exit", None, None))
        assert s.wait() == 0


def test_s14c_exit_without_shutdown_is_exit_code_1(tmp_path: Path) -> None:
    """S14c: LSP's base protocol: exit with no shutdown before it ends the server with code 1."""
    with Stdio(tmp_path / "home") as s:
        s.send(req("initialize", VSCODE_INIT, 1))
        assert s.recv()["id"] == 1
        s.send(req("exit", None, None))
        assert s.wait() == 1
