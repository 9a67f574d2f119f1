"""Files a caller names: read, and written whole; inside the exchange folders for a confined caller.

Every file the library opens because a caller named it (a reference, an outputs file, another
tool's log, a rows file, a recording; an export, a report's plot) is opened here:
:func:`open_input` / :func:`read_text` to read (UTF-8 text, or a clear refusal:
:func:`decoded`), :func:`output_file` to write (whole or not at
all: :func:`hrbench_client.files.atomic_file`), :func:`make_folder` for a folder to write into.

A caller who may not be the daemon's user (a TCP client holding the token: SPEC §4) is
*confined* while :data:`confinement` is set (the daemon sets it for each TCP connection): it
reads only inside the state folder's exchange folders ``imports/`` and ``exports/`` and writes
only inside ``exports/`` (each made 0700 when missing). The path must be absolute, lie under one
of those folders and hold no ``..``; it is then opened race-free, from a descriptor of the
exchange folder down, one component at a time with ``O_NOFOLLOW`` (``openat(2)``), so a
symbolic link swapped in at any moment is refused instead of followed, and a write is a
temporary file created exclusively in the final folder and renamed (``renameat(2)``) over the
name. Unconfined (the library, the daemon's own user on its socket), a path is opened as given.

Example:
    >>> import tempfile, os
    >>> home = tempfile.mkdtemp()
    >>> token = confinement.set(Confinement(home))
    >>> with output_file(os.path.join(home, "exports", "a.txt")) as f:
    ...     _ = f.write(b"ok")
    >>> read_text(os.path.join(home, "exports", "a.txt"))
    'ok'
    >>> try:
    ...     read_text(os.path.join(home, "secret.txt"))
    ... except ConfigError as exc:
    ...     "over TCP the daemon reads files only inside" in str(exc)
    True
    >>> confinement.reset(token)
"""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from hrbench._util.atomic import atomic_file, why_not_written
from hrbench._util.utf8 import not_utf8
from hrbench.errors import ConfigError

__all__ = [
    "Confinement",
    "confinement",
    "decoded",
    "make_folder",
    "open_input",
    "output_file",
    "read_text",
    "skip_bom",
    "text_lines",
]

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Confinement:
    """The exchange folders of a state folder, the only places a confined caller's files may be.

    Attributes:
        home: the state folder (trusted: the daemon's own, 0700).
        reads: the folders under ``home`` a confined caller's files are read from.
        writes: the folders under ``home`` they are written into.
        who: how an error names the confined side.
    """

    home: str
    reads: tuple[str, ...] = ("imports", "exports")
    writes: tuple[str, ...] = ("exports",)
    who: str = "over TCP the daemon"


confinement: contextvars.ContextVar[Confinement | None] = contextvars.ContextVar(
    "hrbench_confinement", default=None
)
"""The current caller's confinement (``None``: not confined, paths are opened as given)."""


def _refuse(conf: Confinement, path: str, field: str, folders: tuple[str, ...], verb: str) -> ConfigError:
    where = " or ".join(os.path.join(conf.home, f) for f in folders)
    if verb == "writes":
        hint = "give a path there, leave `path` out to get the data in the reply, or use the Unix socket"
    else:
        hint = f"put the file in {os.path.join(conf.home, folders[0])}, or use the Unix socket"
    return ConfigError(
        field,
        path,
        f"{conf.who} {verb} files only inside {where} (a TCP client may not be the daemon's user); {hint}",
    )


def _split(
    conf: Confinement, path: str, field: str, folders: tuple[str, ...], verb: str
) -> tuple[str, list[str]]:
    """The exchange folder ``path`` lies in and its components below it; refused otherwise."""
    given = os.path.expanduser(os.fspath(path))
    if not os.path.isabs(given):
        raise ConfigError(
            field, path, "the daemon needs an absolute path (its working directory is not yours)"
        )
    parts = [p for p in given.split(os.sep) if p not in ("", ".")]
    if ".." in parts:
        raise ConfigError(
            field,
            path,
            f"`..` is not allowed in a path {conf.who} opens: name the file inside its folder directly",
        )
    for base in dict.fromkeys((os.path.abspath(conf.home), os.path.realpath(conf.home))):
        head = [p for p in base.split(os.sep) if p]
        n = len(head)
        if parts[:n] == head and len(parts) > n and parts[n] in folders:
            return parts[n], parts[n + 1 :]
    raise _refuse(conf, path, field, folders, verb)


def _oserror(exc: OSError, path: str, field: str, action: str) -> ConfigError:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        why = "it or a folder on its way is a symbolic link (not followed here) or not a folder"
    else:
        why = why_not_written(exc) if action == "write" else exc.strerror or type(exc).__name__
    return ConfigError(field, path, f"cannot {action} the file: {why}")


def _folder_fd(conf: Confinement, folder: str, below: list[str], make: bool) -> int:
    """A descriptor of ``home/folder/below...``, each component opened with ``O_NOFOLLOW``."""
    fd = os.open(conf.home, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, part in enumerate([folder, *below]):
            if i == 0 or make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700, dir_fd=fd)
            nfd = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_input(path: str | os.PathLike[str], field: str = "path") -> BinaryIO:
    """Open a file a caller named, to read (binary); confined as the module says.

    Args:
        path: the file.
        field: the field that named it, for errors.

    Returns:
        The open file.

    Raises:
        OSError: unconfined, the file cannot be opened (as :func:`open` raises it).
        ConfigError: confined, ``path`` outside the exchange folders, with ``..``, through a
            symbolic link, not a regular file, or not readable (naming ``field``).
    """
    conf = confinement.get()
    if conf is None:
        return open(path, "rb")  # noqa: SIM115 - the caller closes it
    spath = os.fspath(path)
    folder, below = _split(conf, spath, field, conf.reads, "reads")
    if not below:
        raise ConfigError(field, spath, "is a folder, not a file")
    try:
        dfd = _folder_fd(conf, folder, below[:-1], make=False)
        try:
            fd = os.open(below[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
        finally:
            os.close(dfd)
    except OSError as exc:
        raise _oserror(exc, spath, field, "read") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise ConfigError(field, spath, "cannot read the file: not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def skip_bom(f: BinaryIO) -> BinaryIO:
    r"""``f`` past a leading UTF-8 byte-order mark, when it starts with one (else as it stands).

    Excel's "CSV UTF-8" and Windows' Notepad write ``EF BB BF`` before the text; read as text it
    would be a ``\ufeff`` glued to the first header or key. Only the first three bytes are looked
    at (:meth:`io.BufferedReader.peek`, so a pipe is not consumed), so a bounded reader stays bounded.

    Example:
        >>> import io
        >>> skip_bom(io.BufferedReader(io.BytesIO(b"\xef\xbb\xbfid,item"))).read()
        b'id,item'
        >>> skip_bom(io.BufferedReader(io.BytesIO(b"id,item"))).read()
        b'id,item'
    """
    peek = getattr(f, "peek", None)
    head = peek(3)[:3] if peek is not None else None
    if head is None and f.seekable():
        at = f.tell()
        head = f.read(3)
        f.seek(at)
    if head == codecs.BOM_UTF8:
        f.read(3)
    return f


def decoded(
    data: bytes, path: str | os.PathLike[str], field: str = "path", at: int = 0, line: int = 1
) -> str:
    r"""``data``, bytes of the file ``path`` a caller named, as UTF-8 text; refused when they are not.

    A leading UTF-8 byte-order mark (Excel's "CSV UTF-8") is dropped when ``data`` starts the file.

    Args:
        data: the file's bytes, or a part of them.
        path: the file, for errors.
        field: the field that named it, for errors.
        at: the offset of ``data`` in the file (bytes).
        line: the line of the file ``data`` starts on.

    Raises:
        ConfigError: not UTF-8, naming ``field``, the file, the byte offset and line, the bytes
            and what the file may be instead (:func:`hrbench._util.utf8.not_utf8`; these words
            are also its ``context["not_utf8"]``).

    Example:
        >>> decoded(b"\xef\xbb\xbfid,item", "a.csv")
        'id,item'
        >>> try:
        ...     decoded(b"caf\xe9", "a.csv", "reference.path")
        ... except ConfigError as exc:
        ...     print(str(exc).split("; ")[0])
        reference.path: is not UTF-8 text: byte 3 (line 1) is 0xE9, in b'caf\xe9'
    """
    try:
        return data.decode("utf-8-sig" if at == 0 else "utf-8")
    except UnicodeDecodeError as exc:
        why = not_utf8(data, exc, at, line)
        err = ConfigError(field, path, f"is {why}")
        err.context["not_utf8"] = why  # for a caller that says more of what the file may be
        raise err from None


def text_lines(f: BinaryIO, path: str | os.PathLike[str], field: str = "path") -> Iterator[str]:
    """The lines of an open file ``path`` as UTF-8 text (endings kept), each decoded as it is read.

    Raises:
        ConfigError: a line that is not UTF-8, as :func:`decoded` says (its byte offset in the file).
    """
    at = 0
    for n, raw in enumerate(f, 1):
        yield decoded(raw, path, field, at, n)
        at += len(raw)


def read_text(path: str | os.PathLike[str], field: str = "path") -> str:
    """The text (UTF-8, universal newlines) of a file a caller named: :func:`open_input`, decoded.

    A leading UTF-8 byte-order mark (Excel's "CSV UTF-8") is dropped, as :func:`skip_bom` says.

    Raises:
        OSError: as :func:`open_input`.
        ConfigError: as :func:`open_input`; the file is not UTF-8 (as :func:`decoded` says).
    """
    with open_input(path, field) as f:
        text = decoded(f.read(), path, field)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


@contextlib.contextmanager
def output_file(path: str | os.PathLike[str], field: str = "path") -> Iterator[BinaryIO]:
    """Write a file a caller named, whole or not at all (binary); confined as the module says.

    Args:
        path: the file (overwritten on success).
        field: the field that named it, for errors.

    Yields:
        The open temporary file (:func:`hrbench_client.files.atomic_file`).

    Raises:
        ConfigError: the file cannot be written, naming ``field`` and ``path`` and why (the disk
            is full, a missing folder, a symbolic link where a confined caller writes, ...);
            nothing is left behind. Confined: ``path`` outside ``exports/`` or with ``..``.
    """
    spath = os.fspath(path)
    conf = confinement.get()
    if conf is None:
        try:
            with atomic_file(spath) as f:
                yield f
        except OSError as exc:
            raise _oserror(exc, spath, field, "write") from None
        return
    folder, below = _split(conf, spath, field, conf.writes, "writes")
    if not below:
        raise ConfigError(field, spath, "is a folder: name the file to write in it")
    try:
        dfd = _folder_fd(conf, folder, below[:-1], make=False)
    except OSError as exc:
        raise _oserror(exc, spath, field, "write") from None
    try:
        with contextlib.suppress(FileNotFoundError):
            st = os.stat(below[-1], dir_fd=dfd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                raise ConfigError(field, spath, "cannot write the file: it is a symbolic link")
            if not stat.S_ISREG(st.st_mode):
                raise ConfigError(field, spath, "cannot write the file: not a regular file")
        try:
            with atomic_file(below[-1], dir_fd=dfd, mode=0o600) as f:
                yield f
        except OSError as exc:
            raise _oserror(exc, spath, field, "write") from None
    finally:
        os.close(dfd)


def make_folder(path: str | os.PathLike[str], field: str = "path") -> None:
    """Make the folder ``path`` (and its parents) when missing; confined, only inside ``exports/``.

    Raises:
        ConfigError: it cannot be made (naming ``field``); confined, outside ``exports/``, with
            ``..`` or through a symbolic link.
    """
    spath = os.fspath(path)
    conf = confinement.get()
    try:
        if conf is None:
            os.makedirs(spath, exist_ok=True)
            return
        folder, below = _split(conf, spath, field, conf.writes, "writes")
        os.close(_folder_fd(conf, folder, below, make=True))
    except OSError as exc:
        why = (
            "a symbolic link or a file is on its way"
            if exc.errno in (errno.ELOOP, errno.ENOTDIR)
            else exc.strerror
        )
        raise ConfigError(field, spath, f"cannot make the folder: {why}") from None
