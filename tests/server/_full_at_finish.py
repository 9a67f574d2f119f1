"""Run the daemon (``python -P _full_at_finish.py --home H daemon``) with its disk filled just
before a benchmark's end is stored.

A test hook for timing only: the store's write then meets a real full disk (the tmpfs the
test mounted as the state folder; a filler file takes its last free byte), so the error is
SQLite's own ``SQLITE_FULL``. ``HRB_FILLER`` names the filler, written while the file
``HRB_FILLER.armed`` exists; once the test deletes the filler, the store can be written again.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any


def _fill(path: str) -> None:
    with open(path, "ab", buffering=0) as f:
        chunk = b"\0" * (1 << 16)
        while chunk:
            try:
                f.write(chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                chunk = chunk[: len(chunk) // 2]


def main() -> int:
    from hrbench.store import Store

    finish = Store.benchmark_finish

    def benchmark_finish(self: Store, benchmark_id: str, status: str, summary: Any) -> None:
        filler = os.environ["HRB_FILLER"]
        if os.path.exists(filler + ".armed"):  # the test arms it, and disarms it for a resume
            _fill(filler)
        finish(self, benchmark_id, status, summary)

    Store.benchmark_finish = benchmark_finish  # type: ignore[method-assign]
    from hrbench_server.__main__ import main as serve

    return serve(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
