"""What a benchmark leaves, as people read it: the read-only views of stored benchmarks the daemon and the web view show (:mod:`~hrbench.results.browse`) and the rows file reader; the record types themselves are :mod:`hrbench.records`."""

__all__: list[str] = []
