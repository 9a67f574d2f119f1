"""Where the daemon keeps its state: the socket, pid file, token, log and database.

Standard library only, and cheap to import (``pathlib`` is imported on first use: the
``hrb score`` one-liner computes its socket path without it). The state directory is
``$HRBENCH_HOME`` when set, else the user state directory that
``platformdirs.user_state_dir("hrbench")`` names (the same rule as
``hrbench.store.default_home``; a test checks the two agree).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "home_str", "log_path", "pid_path", "socket_path", "socket_path_str", "token_path"]

_MAX_SUN_PATH = 100  # sockaddr_un.sun_path is 104-108 bytes depending on the OS


def home_str(override: str | os.PathLike[str] | None = None) -> str:
    """The state directory as a string (see :func:`home`)."""
    if override:
        return os.path.expanduser(os.fspath(override))
    env = os.environ.get("HRBENCH_HOME")
    if env:
        return os.path.expanduser(env)
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Application Support/hrbench")
    if sys.platform == "win32":  # pragma: no cover - Unix sockets are not offered there
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~/AppData/Local")
        return os.path.join(base, "hrbench", "hrbench")
    base = os.environ.get("XDG_STATE_HOME", "").strip() or "~/.local/state"
    return os.path.join(os.path.expanduser(base), "hrbench")


def home(override: str | os.PathLike[str] | None = None) -> Path:
    """The state directory.

    Args:
        override: a directory that wins over the environment (the ``--home`` flag).

    Returns:
        ``override``, else ``$HRBENCH_HOME``, else the platform's user state directory.
    """
    from pathlib import Path

    return Path(home_str(override))


def socket_path_str(state: str | os.PathLike[str]) -> str:
    """The daemon's Unix socket for a state directory, as a string (see :func:`socket_path`)."""
    state = os.fspath(state)
    path = os.path.join(state, "daemon.sock")
    if len(os.fsencode(path)) <= _MAX_SUN_PATH:
        return path
    import hashlib
    import tempfile

    digest = hashlib.sha256(os.fsencode(os.path.realpath(state))).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"hrbench-{os.getuid()}", f"{digest}.sock")


def socket_path(state: str | os.PathLike[str]) -> Path:
    """The daemon's Unix socket for a state directory.

    A path too long for ``sockaddr_un`` moves to a private (0700) directory under the temporary
    directory, named by a hash of the state directory, so client and daemon still agree.
    """
    from pathlib import Path

    return Path(socket_path_str(state))


def pid_path(state: Path) -> Path:
    """The daemon's pid file (JSON: pid, socket, tcp, started)."""
    return state / "daemon.pid"


def token_path(state: Path) -> Path:
    """The 0600 file holding the TCP transport's token."""
    return state / "daemon.token"


def log_path(state: Path) -> Path:
    """The daemon's log file."""
    return state / "daemon.log"
