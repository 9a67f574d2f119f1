"""What a benchmark leaves: its rows and traces (:mod:`~hrbench.results.records`) and the read-only views of stored benchmarks the daemon and the web view show (:mod:`~hrbench.results.browse`)."""
