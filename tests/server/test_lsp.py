"""The LSP base lifecycle: any LSP client attaches, calls hrbench's methods and stops cleanly.

Driven by pygls's own LSP client over stdio, start to stop, and by raw frames on the socket.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcInvalidRequest
from pygls.lsp.client import LanguageClient

from hrbench_client import protocol as p
from tests._slow import slow
from tests.server._daemon import Daemon, spec
from tests.server._wire import RawConn, frame, req, score

SERVE = ("-m", "hrbench_server", "--home")


async def _start(home: Path) -> tuple[LanguageClient, list[Any], list[Any]]:
    client = LanguageClient("hrbench-tests", "1.0")
    rows: list[Any] = []
    progress: list[Any] = []
    client.feature("hrbench/rows")(lambda ls, params: rows.extend(params.rows))
    client.feature("hrbench/progress")(lambda ls, params: progress.append(params))
    await client.start_io(sys.executable, *SERVE, str(home), "serve", "--stdio")
    return client, rows, progress


def _initialize_params() -> t.InitializeParams:
    return t.InitializeParams(
        capabilities=t.ClientCapabilities(),
        process_id=None,
        client_info=t.ClientInfo(name="hrbench-tests"),
        root_uri=None,
        trace=t.TraceValue.Off,
    )


def test_pygls_client_start_score_benchmark_stop(tmp_path: Path) -> None:
    async def main() -> tuple[Any, ...]:
        client, rows, progress = await _start(tmp_path / "home")
        init = await client.initialize_async(_initialize_params())
        client.initialized(t.InitializedParams())
        client.workspace_did_change_configuration(t.DidChangeConfigurationParams(settings=None))
        scored = await client.protocol.send_request_async("score", {"output": " paris ", "label": "Paris"})
        result = await client.protocol.send_request_async("benchmark", spec(n=3, runs=2))
        assert await client.shutdown_async(None) is None
        client.exit(None)
        await client.stop()
        assert client._server is not None
        return init, scored, result, rows, progress, client._server.returncode

    init, scored, result, rows, progress, code = asyncio.run(asyncio.wait_for(main(), slow(60)))
    assert init.server_info.name == "hrbench" and init.server_info.version
    caps = init.capabilities.experimental["hrbench"]
    assert {"benchmark", "score", "evaluate", "status"} <= set(caps["methods"])
    assert set(caps["methods"]) == set(p.METHODS)
    assert caps["notifications"] == sorted(p.NOTIFICATIONS) and caps["protocolVersion"] == p.PROTOCOL_VERSION
    assert (scored.correct, scored.outcome) == (True, "paris")
    assert result.status == "done" and result.n_rows == 6
    assert len(rows) == 6 and {r.arm for r in rows} == {"ask"} and all(r.correct for r in rows)
    assert progress and progress[-1].done == 6
    assert code == 0


def test_pygls_client_requests_after_shutdown_are_refused_and_exit_without_shutdown_is_1(
    tmp_path: Path,
) -> None:
    async def main() -> tuple[int | None, int | None]:
        client, _, _ = await _start(tmp_path / "a")
        await client.initialize_async(_initialize_params())
        await client.shutdown_async(None)
        with pytest.raises(JsonRpcInvalidRequest, match="shutdown"):
            await client.protocol.send_request_async("score", {"output": "a", "label": "a"})
        client.exit(None)
        await client.stop()
        other, _, _ = await _start(tmp_path / "b")
        await other.initialize_async(_initialize_params())
        other.exit(None)  # no shutdown first: LSP says exit code 1
        await other.stop()
        assert client._server is not None and other._server is not None
        return client._server.returncode, other._server.returncode

    assert asyncio.run(asyncio.wait_for(main(), slow(60))) == (0, 1)


def test_lsp_session_on_the_socket_ends_its_connection_not_the_daemon(shared_daemon: Daemon) -> None:
    with RawConn(shared_daemon.socket) as c, RawConn(shared_daemon.socket) as other:
        c.send(frame(req("initialize", {"processId": None, "rootUri": None, "capabilities": {}}, 1)))
        init = c.recv()["result"]
        assert init["serverInfo"]["name"] == "hrbench"
        c.send(frame(req("initialized", {}, None)) + frame(score(2)))
        assert c.recv()["result"]["correct"] is True
        c.send(frame(b'{"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": null}'))
        assert c.recv() == {"jsonrpc": "2.0", "id": 3, "result": None}
        c.send(frame(score(4)))
        refused = c.recv()
        assert refused["id"] == 4 and refused["error"]["code"] == -32600
        c.send(frame(b'{"jsonrpc": "2.0", "method": "exit", "params": null}'))
        assert c.recv_frame() is None  # the daemon closed this connection
        other.send(frame(score(5)))
        assert other.recv()["result"]["correct"] is True
    assert shared_daemon.proc is not None and shared_daemon.proc.poll() is None


def test_shutdown_with_null_params_without_initialize_stops_the_daemon(daemon: Daemon) -> None:
    with RawConn(daemon.socket) as c:
        c.send(frame(b'{"jsonrpc": "2.0", "id": 1, "method": "shutdown", "params": null}'))
        assert c.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}
    assert daemon.proc is not None and daemon.proc.wait(timeout=slow(15)) == 0


def test_a_second_initialize_is_an_invalid_request_and_the_session_goes_on(tmp_path: Path) -> None:
    async def main() -> tuple[Any, Any, int | None]:
        client, _, _ = await _start(tmp_path / "home")
        await client.initialize_async(_initialize_params())
        with pytest.raises(JsonRpcInvalidRequest, match="`initialize` was already sent") as err:
            await client.initialize_async(_initialize_params())
        scored = await client.protocol.send_request_async("score", {"output": "a", "label": "a"})
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
        assert client._server is not None
        return err.value, scored, client._server.returncode

    refused, scored, code = asyncio.run(asyncio.wait_for(main(), slow(60)))
    assert "once per session" in str(refused)
    assert scored.correct is True and code == 0


def test_a_second_initialize_on_the_socket_gets_32600_naming_the_rule(shared_daemon: Daemon) -> None:
    init = {"processId": None, "rootUri": None, "capabilities": {}}
    with RawConn(shared_daemon.socket) as c:
        c.send(frame(req("initialize", init, 1)))
        assert c.recv()["result"]["serverInfo"]["name"] == "hrbench"
        c.send(frame(req("initialize", init, 2)))
        again = c.recv()
        assert again["id"] == 2 and again["error"]["code"] == -32600
        assert again["error"]["data"]["name"] == "InvalidRequest"
        assert "LSP allows it once per session" in again["error"]["message"]
