"""``python -m hrbench_client.cli``: the same as ``hrb``."""

import sys

from hrbench_client.cli import main

sys.exit(main())
