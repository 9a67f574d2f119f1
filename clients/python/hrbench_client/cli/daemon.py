"""``hrb status``, ``hrb daemon start|stop|status`` and ``hrb serve --stdio``."""

from __future__ import annotations

import json
import os
import sys

from hrbench_client import _paths
from hrbench_client.cli._common import _err, _fail_usage, _msgspec, _out, parse_age
from hrbench_client.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_WRONG

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def cmd_status(args: argparse.Namespace) -> int:
    """``{"running": true, "pid": ..., ...}`` and exit 0, or ``{"running": false}`` and exit 1.

    Scripts test ``hrb daemon status >/dev/null`` (it never starts a daemon). The status's list
    of running benchmark ids is printed as ``running_benchmarks``.
    """
    from hrbench_client.client import daemon_status

    status = daemon_status(args.home)
    if status is None:
        _out({"running": False})
        return EXIT_WRONG
    info = _msgspec().structs.asdict(status)
    info["running_benchmarks"] = info.pop("running")
    _out({"running": True, **info})
    return EXIT_OK


def cmd_daemon(args: argparse.Namespace) -> int:
    from hrbench_client.client import daemon_status, start_daemon, stop_daemon

    if args.daemon_cmd == "start":
        if args.tcp:
            _check_tcp(args.tcp)
        idle = None if args.idle_exit is None else parse_age(args.idle_exit, "--idle-exit", bare="s")
        pid = start_daemon(
            args.home, tcp=args.tcp, idle_exit_s=idle or None, allow_code_over_tcp=args.allow_code_over_tcp
        )
        status = daemon_status(args.home)
        try:
            tcp = json.loads(_paths.pid_path(_paths.home(args.home)).read_text()).get("tcp")
        except (OSError, ValueError):
            tcp = None
        if status is not None and status.idle_exit_s is not None and args.idle_exit is None:
            _err(
                f"note: the running daemon was started on demand and stops after {status.idle_exit_s:g} s "
                "without a client; `hrb daemon stop` then `hrb daemon start` keeps one up"
            )
        if args.tcp and not tcp:
            _err("a daemon without --tcp is already running for this state dir; `hrb daemon stop` it first")
            return EXIT_ERROR
        _out(
            {
                "running": True,
                "pid": pid,
                "socket": str(_paths.socket_path(_paths.home(args.home))),
                "transport": status.transport if status else None,
                "idle_exit_s": status.idle_exit_s if status else None,
                "tcp": tcp,
                "token_file": str(_paths.token_path(_paths.home(args.home))) if tcp else None,
            }
        )
        return EXIT_OK
    if args.daemon_cmd == "stop":
        _out({"stopped": stop_daemon(args.home)})
        return EXIT_OK
    return cmd_status(args)


def _check_tcp(value: str) -> None:
    import ipaddress

    host, sep, port = value.rpartition(":")
    host = host.strip("[]")
    try:
        ok = bool(sep) and port.isdigit() and (host == "localhost" or ipaddress.ip_address(host).is_loopback)
    except ValueError:
        ok = False
    if not ok:
        _fail_usage(f"--tcp needs a loopback HOST:PORT such as 127.0.0.1:8765 (got {value!r})")


def cmd_serve(args: argparse.Namespace) -> int:
    from hrbench_client.client import _server_command

    cmd = _server_command()
    if args.home:
        cmd += ["--home", args.home]
    cmd += ["serve", "--stdio"]
    sys.stdout.flush()
    os.execv(cmd[0], cmd)  # the server owns stdin/stdout from here on
