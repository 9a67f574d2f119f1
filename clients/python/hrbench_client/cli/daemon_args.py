"""``hrb``'s daemon commands: ``hrb status``, ``hrb daemon start|stop|status`` and ``hrb serve``."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["add_daemon_commands"]


def add_daemon_commands(sub: Any) -> None:
    """``hrb status``, ``hrb daemon start|stop|status`` and ``hrb serve``."""
    sub.add_parser("status", help="the daemon's status")

    d = sub.add_parser(
        "daemon",
        help="start, stop or query the shared daemon",
        description="start, stop or query the shared daemon; `stop` returns once the daemon has exited, "
        '`status` prints {"running": false} and exits 1 when none runs',
    )
    d.add_argument(
        "daemon_cmd",
        choices=["start", "stop", "status"],
        help="start (a daemon that stays up), stop or status",
    )
    d.add_argument("--tcp", metavar="HOST:PORT", help="also listen on loopback TCP (token in the state dir)")
    d.add_argument(
        "--allow-code-over-tcp",
        action="store_true",
        help="let TCP clients send import-path specs (module:function): code run as you",
    )
    d.add_argument(
        "--idle-exit",
        metavar="AGE",
        help="with start: stop after this long without a client (90s, 10m, 1h); by default a daemon "
        "started this way stays up, while one started on demand by another command stops after "
        "$HRBENCH_IDLE_EXIT seconds (default 600; `never` keeps it)",
    )

    sv = sub.add_parser("serve", help="serve JSON-RPC on stdin/stdout (for editors)")
    sv.add_argument("--stdio", action="store_true", required=True, help="use stdin/stdout (the only mode)")
