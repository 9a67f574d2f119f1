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

__all__ = [
    "UnsafeDirectory",
    "check_socket",
    "check_socket_dir",
    "home",
    "home_str",
    "log_path",
    "pid_path",
    "socket_path",
    "socket_path_str",
    "token_path",
]

_MAX_SUN_PATH = 100  # sockaddr_un.sun_path is 104-108 bytes depending on the OS


def home_str(override: str | os.PathLike[str] | None = None) -> str:
    """The state directory as an absolute path string (see :func:`home`).

    Rule (a relative ``--home relhome`` or ``HRBENCH_HOME=relhome`` passed as is to the
    daemon, which runs in its state folder, would make ``relhome/relhome/``, and the client
    would wait for a socket that is elsewhere): a relative path is resolved against
    the current directory here, once, before any daemon is started or contacted.

    Example:
        >>> home_str("relhome") == os.path.join(os.getcwd(), "relhome")
        True
    """
    if override:
        return os.path.abspath(os.path.expanduser(os.fspath(override)))
    env = os.environ.get("HRBENCH_HOME")
    if env:
        return os.path.abspath(os.path.expanduser(env))
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
        ``override``, else ``$HRBENCH_HOME``, else the platform's user state directory; a
        relative path is made absolute against the current directory (:func:`home_str`).
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


class UnsafeDirectory(PermissionError):
    """Raised when the socket's directory (or the socket) is not safely ours; says what to do."""


def _refuse(path: str, why: str, fix: str) -> UnsafeDirectory:
    return UnsafeDirectory(f"refusing the socket directory {path}: {why}; {fix}")


def _check_dir(directory: str, *, dedicated: bool, tighten: bool) -> None:
    import stat

    me = os.geteuid()
    st = os.lstat(directory) if dedicated else os.stat(directory)
    if stat.S_ISLNK(st.st_mode):
        raise _refuse(directory, "it is a symbolic link", "remove it; the daemon makes its own")
    if not stat.S_ISDIR(st.st_mode):
        raise _refuse(directory, "it is not a directory", "remove it")
    if st.st_uid != me:
        raise _refuse(
            directory,
            f"it is owned by uid {st.st_uid}, not by you (uid {me})",
            "another user may be waiting for your requests; remove it (or set HRBENCH_HOME to a "
            "short private path)",
        )
    mode = stat.S_IMODE(st.st_mode)
    if dedicated and mode != 0o700:
        raise _refuse(directory, f"its mode is {mode:04o}, not 0700", "remove it; the daemon makes it again")
    if not dedicated and mode & 0o022:
        raise _refuse(
            directory, f"other users can write to it (mode {mode:04o})", f"run `chmod 700 {directory}`"
        )
    if tighten and mode & 0o077:
        os.chmod(directory, 0o700)


def check_socket_dir(state: str | os.PathLike[str], *, create: bool = False) -> str:
    """Check (with ``create``: make) the state directory and the socket's; returns the socket path.

    Rule (another user could pre-make the temporary socket directory and capture a
    request): the directories must be ours, checked by the daemon on every start and by a
    client before it connects.

    - The state directory (where the socket lives unless its path is too long) must be a
      directory owned by us that no other user can write to. With ``create`` (the daemon) it
      is made 0700, and one that others can only read is tightened to 0700.
    - A state path too long for ``sockaddr_un`` puts the socket in ``hrbench-UID`` under the
      temporary directory: that directory must be made by us, owned by us, mode exactly 0700
      and not a symbolic link; anything else is refused (a stale one of ours can be removed).

    Args:
        state: the state directory.
        create: make the directories when missing (the daemon).

    Returns:
        The socket path (as :func:`socket_path_str`).

    Raises:
        UnsafeDirectory: (a ``PermissionError``) naming the directory, what is wrong and the fix.
        FileNotFoundError: without ``create``, when a directory does not exist.

    Example:
        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> check_socket_dir(d) == os.path.join(d, "daemon.sock")
        True
    """
    state = os.fspath(state)
    if create:
        os.makedirs(state, mode=0o700, exist_ok=True)
    missing = None
    try:
        _check_dir(state, dedicated=False, tighten=create)
    except FileNotFoundError as exc:  # (only without create) still check a socket directory
        missing = exc
    sock = socket_path_str(state)
    directory = os.path.dirname(sock)
    if os.path.normpath(directory) != os.path.normpath(state):
        if create:
            try:
                os.mkdir(directory, 0o700)
            except FileExistsError:
                pass
        _check_dir(directory, dedicated=True, tighten=False)
    if missing is not None:
        raise missing
    return sock


def check_socket(state: str | os.PathLike[str]) -> str:
    """What a client checks before it connects; returns the socket path.

    The directories as :func:`check_socket_dir` (without ``create``), and that the socket
    itself is a socket owned by us.

    Raises:
        UnsafeDirectory: when either is not ours.
        FileNotFoundError: when there is no socket (no daemon).
    """
    import stat

    sock = check_socket_dir(state)
    st = os.lstat(sock)
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.geteuid():
        raise UnsafeDirectory(
            f"refusing the socket {sock}: it is not a socket made by you (uid {os.geteuid()}); "
            "stop any daemon and remove it"
        )
    return sock


def pid_path(state: Path) -> Path:
    """The daemon's pid file (JSON: pid, socket, tcp, started)."""
    return state / "daemon.pid"


def token_path(state: Path) -> Path:
    """The 0600 file holding the TCP transport's token."""
    return state / "daemon.token"


def log_path(state: Path) -> Path:
    """The daemon's log file."""
    return state / "daemon.log"
