"""``python -m hrbench_client.protocol SCHEMA_DIR``: write the JSON Schema files (``make schema``)."""

from hrbench_client.protocol.schema import _main

raise SystemExit(_main())
