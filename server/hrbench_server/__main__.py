"""``python -m hrbench_server serve --stdio | daemon [--tcp 127.0.0.1:PORT]``.

The ``hrb`` command runs this module (``hrb serve --stdio`` replaces itself with it;
``hrb daemon start`` spawns it detached), so the client never imports pygls.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hrbench_client import _paths


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and run a transport; returns the process's exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m hrbench_server", description="The hrbench JSON-RPC daemon."
    )
    parser.add_argument("--home", help="state directory (default: $HRBENCH_HOME or the user state dir)")
    parser.add_argument(
        "--max-message-mb", type=float, default=64.0, help="largest request body accepted (MB)"
    )
    sub = parser.add_subparsers(dest="mode", required=True)
    serve = sub.add_parser("serve", help="serve one client on stdin/stdout")
    serve.add_argument("--stdio", action="store_true", required=True, help="use stdin/stdout (the only mode)")
    daemon = sub.add_parser("daemon", help="serve many clients on a Unix socket in the state dir")
    daemon.add_argument("--tcp", metavar="HOST:PORT", help="also listen on loopback TCP (token required)")
    daemon.add_argument(
        "--idle-exit",
        type=float,
        metavar="SECONDS",
        help="stop after this many seconds without a client or a running benchmark (default: never)",
    )
    args = parser.parse_args(argv)
    home: Path = _paths.home(args.home)
    max_bytes = int(args.max_message_mb * 1024 * 1024)
    from hrbench_server.daemon import serve_daemon, serve_stdio

    if args.mode == "serve":
        return serve_stdio(home, max_bytes)
    return serve_daemon(home, args.tcp, max_bytes, args.idle_exit)


if __name__ == "__main__":
    sys.exit(main())
