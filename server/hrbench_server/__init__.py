"""hrbench_server: the thin pygls JSON-RPC layer over the hrbench library.

Run it with ``python -m hrbench_server serve --stdio`` (editors) or ``python -m hrbench_server
daemon`` (a shared daemon on a Unix socket); ``hrb serve --stdio`` and ``hrb daemon start`` do
that for you. The wire Structs live in :mod:`hrbench_client.protocol`.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
