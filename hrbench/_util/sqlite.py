"""``sqlite_utils``, imported without pandas.

sqlite-utils imports pandas at import time (if installed) only to map ``pd.Timestamp`` columns
to TEXT; hrbench never writes pandas values, and pandas brings pyarrow with it: about 70 MB of
resident memory in every daemon for nothing (an idle daemon stays under 80 MB).
While sqlite_utils is imported, ``pandas`` is marked missing; afterwards pandas imports as usual
(``Bench.to_pandas`` and reports still use it). Nothing changes when pandas or sqlite_utils
were imported before hrbench.

Example:
    >>> from hrbench._util.sqlite import sqlite_utils
    >>> sqlite_utils.Database(memory=True).execute("select 1").fetchone()
    (1,)
"""

from __future__ import annotations

import sys

__all__ = ["sqlite_utils"]

if "pandas" in sys.modules or "sqlite_utils" in sys.modules:
    import sqlite_utils
else:
    sys.modules["pandas"] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        import sqlite_utils
    finally:
        del sys.modules["pandas"]
