"""Files written whole or not at all: a temporary file in the same folder, fsync, rename.

Every file ``hrb`` and the daemon write for a caller (rows, reports, pages, exports,
recordings) goes through :func:`atomic_file`: a reader never sees half a file, and a write
that fails (a full disk, a file-size limit, an interrupted process) leaves the old file, or no
file, as it was, never a partial or empty one. This is the rename rule POSIX gives
(``rename(2)`` replaces the target in one step) and what SQLite's and git's own writes do.

Standard library only: ``hrb`` writes its files with the same code, a copy that ``make schema``
writes to ``hrbench_client/files.py`` (the client imports nothing of the core; a test fails when
the copy is stale). :mod:`hrbench._util.files` adds the daemon's rule for callers confined to
its exchange folders.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from typing import BinaryIO

__all__ = ["atomic_file", "client_copy", "why_not_written"]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def why_not_written(exc: OSError) -> str:
    """A short reason for a failed write, for an error message that names the file.

    Example:
        >>> why_not_written(OSError(errno.ENOSPC, "No space left on device"))
        'the disk is full (No space left on device); nothing was written'
        >>> why_not_written(OSError(errno.EFBIG, "File too large"))
        'the file would be larger than this process may write (File too large); nothing was written'
        >>> why_not_written(PermissionError(errno.EACCES, "Permission denied"))
        'Permission denied'
    """
    reason = exc.strerror or type(exc).__name__
    if exc.errno == errno.ENOSPC:
        return f"the disk is full ({reason}); nothing was written"
    if exc.errno == errno.EDQUOT:
        return f"the disk quota is used up ({reason}); nothing was written"
    if exc.errno == errno.EFBIG:
        return f"the file would be larger than this process may write ({reason}); nothing was written"
    return reason


def _temp(dir_fd: int | None, folder: str, name: str, mode: int) -> tuple[int, str]:
    """Create a fresh temporary file next to ``name``: its descriptor and its name (in ``folder``)."""
    for _ in range(100):
        tmp = f".{name[:200]}.{secrets.token_hex(6)}.tmp"
        where = tmp if dir_fd is not None else os.path.join(folder, tmp)
        try:
            return os.open(where, _FLAGS, mode, dir_fd=dir_fd), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", os.path.join(folder, name))


@contextlib.contextmanager
def atomic_file(
    path: str | os.PathLike[str], *, dir_fd: int | None = None, mode: int | None = None
) -> Iterator[BinaryIO]:
    """Open ``path`` to write (binary); on a clean exit it replaces ``path`` whole.

    The bytes go to a temporary file in the same folder (created exclusively, never through a
    symbolic link), which is flushed, ``fsync``-ed and renamed over ``path``; the folder is
    ``fsync``-ed too. On any error (in the ``with`` block or while writing) the temporary file
    is removed and ``path`` is left as it was.

    A ``path`` that is a symbolic link is resolved (the file it points to is replaced, as
    ``open(path, "wb")`` would write it); one that is not a regular file (``/dev/null``, a
    FIFO, ``/dev/stdout``) is written in place, as nothing can be renamed over it.

    Args:
        path: the file; with ``dir_fd``, a name in that folder (never resolved).
        dir_fd: an open folder to write in (:func:`os.open` with ``O_DIRECTORY``).
        mode: the new file's permission bits; ``None``: an existing file's, else ``0o666``
            under the umask (what :func:`open` gives).

    Yields:
        The open temporary file.

    Raises:
        OSError: the file cannot be written (``filename`` is ``path``); a full disk or a
            file-size limit is ``ENOSPC`` / ``EFBIG`` (:func:`why_not_written`).

    Example:
        >>> import tempfile
        >>> target = os.path.join(tempfile.mkdtemp(), "out.txt")
        >>> with atomic_file(target) as f:
        ...     _ = f.write(b"whole")
        >>> from pathlib import Path
        >>> Path(target).read_bytes(), sorted(os.listdir(os.path.dirname(target)))
        (b'whole', ['out.txt'])
    """
    name = os.fspath(path)
    if dir_fd is None:
        name = os.path.abspath(name)
        try:
            st = os.stat(name)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, name) from None
        if st is not None and not stat.S_ISREG(st.st_mode):
            with open(name, "wb") as direct:  # a device or a pipe: nothing to rename over
                yield direct
            return
        name = os.path.realpath(name)
        folder, base = os.path.split(name)
        if mode is None and st is not None:
            mode = stat.S_IMODE(st.st_mode)
    else:
        folder, base = "", name
    fd, tmp = -1, ""
    try:
        fd, tmp = _temp(dir_fd, folder, base, 0o666 if mode is None else mode)
        if mode is not None:
            os.fchmod(fd, mode)  # exactly: the umask does not apply to a kept mode
        with os.fdopen(fd, "wb") as f:
            fd = -1
            yield f
            f.flush()
            os.fsync(f.fileno())
        if dir_fd is None:
            os.rename(os.path.join(folder, tmp), name)
        else:
            os.rename(tmp, base, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        tmp = ""
        _sync_folder(dir_fd, folder)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp if dir_fd is not None else os.path.join(folder, tmp), dir_fd=dir_fd)


def _sync_folder(dir_fd: int | None, folder: str) -> None:
    """``fsync`` the folder so the rename survives a crash (where the system allows it)."""
    with contextlib.suppress(OSError):
        if dir_fd is not None:
            os.fsync(dir_fd)
            return
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def client_copy(source: str = __file__) -> str:
    """The text of a client's copy of ``source``: this module, or another of standard library only.

    The copy is ``source`` up to its ``client_copy`` function, for a client that imports no core
    (``hrbench_client/files.py`` of this module, ``hrbench_client/utf8.py`` of
    :mod:`hrbench._util.utf8`). ``make schema`` writes them; a test fails when a file differs
    (they are never hand-edited).
    """
    from pathlib import Path

    own = Path(source).read_text(encoding="utf-8")
    body = own[: own.index("\n\ndef client_copy(")].rstrip() + "\n"
    head = f"# Generated from hrbench/_util/{Path(source).name} by `make schema`: never hand-edited.\n"
    return head + body.replace('"client_copy", ', "")  # the copy offers no copier
