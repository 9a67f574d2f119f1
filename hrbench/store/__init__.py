"""The SQLite store: references, cache, recordings, benchmarks, rows, traces, governor ledger.

One file through sqlite-utils, WAL with ``synchronous=NORMAL``, a versioned schema. One writer
connection (opened with ``check_same_thread=False``) is used by one thread at a time under a
lock; async callers go through :meth:`Store.arun`, which runs the call in a worker thread so the
event loop never blocks on SQLite (``../shared/notes/stack.md`` §3).

The package: ``_open`` opens the file and holds the connection (:class:`~hrbench.store._open._Base`),
``_schema`` the tables and migrations, ``_errors`` the typed errors; one module per table family
(``references``, ``cache`` with recordings, ``benchmarks``, ``rows`` with traces, ``ledger``,
``leases``, ``housekeeping``, ``grades``, ``batches``), each a mixin of :class:`Store`'s methods over its tables.
"""

from __future__ import annotations

from hrbench.store._batches import _Batches
from hrbench.store._benchmarks import _Benchmarks
from hrbench.store._cache import _Cache
from hrbench.store._errors import store_error as store_error
from hrbench.store._grades import _Grades
from hrbench.store._housekeeping import _Housekeeping
from hrbench.store._ledger import _Ledger
from hrbench.store._open import default_home
from hrbench.store._references import _References
from hrbench.store._rows import _Rows
from hrbench.store._schema import SCHEMA_VERSION

__all__ = [
    "SCHEMA_VERSION",
    "Store",
    "default_home",
    "store_error",
]


class Store(_References, _Cache, _Benchmarks, _Rows, _Ledger, _Housekeeping, _Grades, _Batches):
    """One SQLite file holding hrbench's state.

    Args:
        path: the database file; ``None`` for ``default_home() / "hrbench.sqlite3"``;
            ``":memory:"`` for a private in-memory store (tests).

    Every call first checks that the file is still the one opened (its device and inode):
    a database deleted or replaced under a running process raises :class:`StoreGone` instead
    of writing to a file nobody will read again. SQLite failures that
    the user must act on raise typed errors naming the file and the fix.

    Raises:
        ConfigError: when the file's schema is newer than this hrbench knows.
        StoreGone: the file was deleted or replaced since it was opened.
        StoreFull: the disk is full.
        StoreCorrupt: the file is corrupt or not a database.
        StoreReadOnly: the file or its folder cannot be written.

    Example:
        >>> s = Store(":memory:")
        >>> s.cache_stats()["entries"]
        0
    """
