"""The typed errors of the store: an SQLite or OS failure on the database file, named with its fix."""

from __future__ import annotations

import errno
import os
import sqlite3

import msgspec

from hrbench.errors import StoreCorrupt, StoreError, StoreFull, StoreReadOnly

_FULL, _CORRUPT, _NOTADB, _READONLY, _CANTOPEN, _PERM, _IOERR = 13, 11, 26, 8, 14, 3, 10
"""SQLite's primary result codes (``sqlite3.Error.sqlite_errorcode & 0xFF``)."""


def _writable(path: str) -> bool:
    folder = os.path.dirname(os.path.abspath(path))
    return os.access(folder, os.W_OK) and (not os.path.exists(path) or os.access(path, os.W_OK))


def _disk_full(path: str) -> bool:
    try:
        st = os.statvfs(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024


def store_error(exc: BaseException, path: str) -> BaseException:
    """The typed error for an SQLite or OS failure on the database ``path`` (else ``exc``).

    Each names the file and what to do, never only "internal error".

    Example:
        >>> e = store_error(OSError(errno.ENOSPC, "No space left on device"), "/x/hrbench.sqlite3")
        >>> type(e).__name__, str(e).startswith("the disk holding the database /x/hrbench.sqlite3 is full")
        ('StoreFull', True)
    """
    if isinstance(exc, StoreError):
        return exc
    folder = os.path.dirname(os.path.abspath(path))
    detail = str(exc)
    if isinstance(exc, sqlite3.Error):
        code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
        detail = f"SQLite {getattr(exc, 'sqlite_errorname', 'error')}: {exc}"
    elif isinstance(exc, msgspec.DecodeError):  # a stored batch that does not decode: a scribbled page
        code, detail = _CORRUPT, f"a stored row or trace does not decode: {exc}"
    elif isinstance(exc, OSError):
        code = {errno.ENOSPC: _FULL, errno.EDQUOT: _FULL, errno.EROFS: _READONLY, errno.EACCES: _PERM}.get(
            exc.errno or 0, 0
        )
    else:
        return exc
    if code == _IOERR:
        code = _FULL if _disk_full(path) else _READONLY if not _writable(path) else 0
    if code in (_CANTOPEN, _PERM):
        code = _READONLY if not _writable(path) else 0
    if code == _FULL:
        return StoreFull(
            f"the disk holding the database {path} is full ({detail}); the last changes were not "
            "saved. Free some space, then run again (a benchmark resumes with its id)",
            path,
        )
    if code in (_CORRUPT, _NOTADB):
        return StoreCorrupt(
            f"the database {path} is corrupt or not an hrbench database ({detail}). Stop the daemon, "
            f"move the file aside (the next start makes a new one); `sqlite3 {path} .recover` may "
            "save what it holds",
            path,
        )
    if code == _READONLY:
        return StoreReadOnly(
            f"cannot write the database {path}: the file or its folder is read-only ({detail}). "
            f"Make {folder} writable, or point HRBENCH_HOME (or --home) at a writable folder",
            path,
        )
    return exc
