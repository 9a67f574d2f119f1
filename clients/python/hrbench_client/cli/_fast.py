"""``hrb score OUTPUT`` on the standard library's cheapest modules (sys, os, json, socket).

A shell one-liner's wall time is mostly interpreter start-up and imports. This path parses
the plain forms of ``hrb [--home H] score [--scorer S] [--label L]... [--label-json J]
[--item I] [--settings J] [--check] OUTPUT`` by hand and makes one call over the Unix
socket; anything else (``--help``, ``--opt=value``, an output starting with ``-``, no daemon
running, stdin input) returns ``None`` and the full ``argparse`` path handles it, with the same
output and exit codes.
"""

from __future__ import annotations

import json
import socket
import sys

from hrbench_client import _paths
from hrbench_client.errors import HrbenchError, from_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["call_once", "try_score"]

_VALUED = {"--scorer", "--label", "--label-json", "--item", "--settings"}


def call_once(sock_path: str, method: str, params: Any, timeout_s: float = 60.0) -> Any:
    """Call ``method`` on the daemon at ``sock_path``; return its result (plain JSON).

    Raises:
        FileNotFoundError, ConnectionRefusedError: no daemon listens there.
        HrbenchError: the daemon answered with an error (typed, see :mod:`hrbench_client.errors`).
    """
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, separators=(",", ":")
    ).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout_s)
        s.connect(sock_path)
        s.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        f = s.makefile("rb")
        while True:
            length = None
            while True:
                line = f.readline(1 << 16)
                if not line:
                    raise HrbenchError("the daemon closed the connection", code=-32099)
                if line in (b"\r\n", b"\n") and length is not None:
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            msg = json.loads(f.read(length))
            if msg.get("id") != 1:
                continue  # a notification
            if "error" in msg:
                raise from_error(msg["error"])
            return msg.get("result")


def _parse(argv: list[str]) -> tuple[str | None, dict[str, Any], bool] | None:
    home: str | None = None
    i = 0
    while i < len(argv) and argv[i] != "score":
        if argv[i] == "--home" and i + 1 < len(argv):
            home, i = argv[i + 1], i + 2
        else:
            return None
    i += 1
    opts: dict[str, list[str]] = {}
    check = False
    output = None
    while i < len(argv):
        a = argv[i]
        if a in _VALUED and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            opts.setdefault(a, []).append(argv[i + 1])
            i += 2
        elif a == "--check":
            check, i = True, i + 1
        elif a == "--home" and i + 1 < len(argv):  # global options may follow the subcommand
            home, i = argv[i + 1], i + 2
        elif a.startswith("-") or output is not None:
            return None
        else:
            output, i = a, i + 1
    if output is None or any(len(v) > 1 for k, v in opts.items() if k != "--label"):
        return None
    try:
        if "--label-json" in opts:
            if "--label" in opts:
                return None
            label: Any = json.loads(opts["--label-json"][0])
        else:
            labels = opts.get("--label", [])
            label = None if not labels else labels[0] if len(labels) == 1 else labels
        settings = json.loads(opts["--settings"][0]) if "--settings" in opts else {}
        if not isinstance(settings, dict):
            return None
    except ValueError:
        return None
    item: Any = None
    if "--item" in opts:
        try:
            item = json.loads(opts["--item"][0])
        except ValueError:
            item = opts["--item"][0]
    if check and label is None:
        return None  # the full path says why that is a usage error
    scorer = opts.get("--scorer", ["exact"])[0]
    params = {"output": output, "label": label, "item": item, "scorer": scorer, "settings": settings}
    return home, params, check


def try_score(argv: list[str]) -> int | None:
    """Run ``hrb score`` on the fast path; ``None`` when the full path must handle ``argv``."""
    parsed = _parse(argv)
    if parsed is None:
        return None
    home, params, check = parsed
    try:
        result = call_once(_paths.check_socket(_paths.home_str(home)), "score", params)
    except (FileNotFoundError, ConnectionRefusedError):
        return None  # the full client starts a daemon
    except HrbenchError as exc:
        from hrbench_client.cli.exit_codes import exit_code

        print(f"hrb: {type(exc).__name__}: {exc}", file=sys.stderr)
        return exit_code(exc, "score")
    except OSError as exc:
        print(f"hrb: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 3
    sys.stdout.write(json.dumps(result, separators=(",", ":"), ensure_ascii=False) + "\n")
    return 1 if (check and result.get("correct") is False) else 0
