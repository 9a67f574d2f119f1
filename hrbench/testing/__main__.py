"""``python -m hrbench.testing``: a loopback model server on 127.0.0.1 (``--help`` for its options)."""

from __future__ import annotations

if __name__ == "__main__":
    from hrbench.testing._loopback import _main

    _main()
