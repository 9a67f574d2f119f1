"""Small real file systems for fault tests: a tiny tmpfs (disk full) and a read-only one.

Mounting needs root (CAP_SYS_ADMIN), which the suite has here. Without it, a read-only folder
is made with ``chmod`` (enough for a user other than root) and a full disk is simulated by
SQLite's own page limit (``PRAGMA max_page_count``, a real ``SQLITE_FULL``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests._slow import slow


def _mount(target: Path, options: str) -> bool:
    target.mkdir(parents=True, exist_ok=True)
    out = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True, timeout=slow(30)
    )
    return out.returncode == 0


def _umount(target: Path) -> None:
    subprocess.run(["umount", "-l", str(target)], capture_output=True, timeout=slow(30))


@contextlib.contextmanager
def tiny_fs(target: Path, size_kb: int) -> Iterator[bool]:
    """A tmpfs of ``size_kb`` KiB at ``target``; yields whether it is mounted (else a plain dir)."""
    mounted = _mount(target, f"size={size_kb}k,mode=0700")
    try:
        yield mounted
    finally:
        if mounted:
            _umount(target)


@contextlib.contextmanager
def made_read_only(target: Path) -> Iterator[None]:
    """Make the mounted tmpfs at ``target`` read-only (else ``chmod`` its folder 0500)."""
    remounted = (
        subprocess.run(
            ["mount", "-o", "remount,ro", str(target)], capture_output=True, timeout=slow(30)
        ).returncode
        == 0
    )
    if not remounted:
        os.chmod(target, 0o500)
    try:
        yield
    finally:
        if remounted:
            subprocess.run(["mount", "-o", "remount,rw", str(target)], capture_output=True, timeout=slow(30))
        else:
            os.chmod(target, 0o700)


def can_mount(tmp: Path) -> bool:
    """Whether this process can mount a tmpfs (root with CAP_SYS_ADMIN)."""
    probe = tmp / "probe-mount"
    with tiny_fs(probe, 64) as mounted:
        return mounted
