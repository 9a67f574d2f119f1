"""``python -m hrbench_server serve --stdio | daemon [--tcp 127.0.0.1:PORT]``.

The ``hrb`` command runs this module (``hrb serve --stdio`` replaces itself with it;
``hrb daemon start`` spawns it detached), so the client never imports pygls.
"""

from __future__ import annotations

import os
import sys


def _safe_import_path() -> None:
    """Keep the caller's working directory off the import path.

    ``python -m`` puts the working directory first on ``sys.path`` (the clients start the
    server with ``-P``, which does not); relative entries (``""``, from ``PYTHONPATH``) would
    follow the working directory too, and ``PYTHONPATH=.`` adds it again as an absolute path
    ahead of the standard library, where a ``json.py`` or ``hrbench.py`` in it would shadow
    ours. Every entry naming the working directory before the standard library is dropped;
    the installed packages' entries (after it) stay. User code is imported only from a
    spec's explicit ``python_path``.
    """
    cwd = os.path.realpath(os.getcwd())
    stdlib = os.path.realpath(os.path.dirname(os.__file__))
    real = [os.path.realpath(p) if p and os.path.isabs(p) else None for p in sys.path]
    first_std = real.index(stdlib) if stdlib in real else len(real)
    sys.path[:] = [
        p
        for i, (p, r) in enumerate(zip(sys.path, real, strict=True))
        if r is not None and not (i < first_std and r == cwd)
    ]


_safe_import_path()

import argparse  # noqa: E402 - after the import path is made safe
from pathlib import Path  # noqa: E402

from hrbench_client import _paths  # noqa: E402


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
        "--allow-code-over-tcp",
        action="store_true",
        help="let TCP clients send import-path specs (module:function), which run as code",
    )
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
    return serve_daemon(
        home, args.tcp, max_bytes, args.idle_exit, allow_code_over_tcp=args.allow_code_over_tcp
    )


if __name__ == "__main__":
    sys.exit(main())
